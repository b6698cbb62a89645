"""memls-minilm's fast paths give the vectors of the plain ones.

Threaded batches, the softmax without max subtraction, the fused feed-forward blocks and
the BLAS thread switch are speed-ups only: these tests pin that they change nothing.
"""

from __future__ import annotations

import json
import math
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memls.core.recall import blasthreads, minilm
from memls.core.recall.minilm import MiniLM, load_minilm
from tests.recall_fixtures.weights import needs_minilm

REFERENCE = Path(__file__).parent / "data" / "minilm-reference.json"


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return load_minilm()


def _textbook_attention(qkv: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Softmax attention with max subtraction, in float64 after float32 scores (as the
    model computes them: their rounding is not the softmax's to fix); Q already scaled."""
    n = qkv.shape[0]
    q, k, v = qkv.reshape(n, 3, 12, 32).transpose(1, 2, 0, 3)
    scores = (q @ k.transpose(0, 2, 1)).astype(np.float64)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out: np.ndarray[Any, Any] = (weights @ v).transpose(1, 0, 2).reshape(n, 384)
    return out


@pytest.mark.parametrize("spread", [1.0, 6.0, 40.0])
def test_attention_matches_textbook_softmax(spread: float) -> None:
    """Ordinary scores take the fast path, huge ones (exp overflows) the fallback."""
    rng = np.random.default_rng(7)
    n = 37
    qkv = rng.standard_normal((n, 1152)).astype(np.float32)
    qkv[:, :384] *= np.float32(spread / math.sqrt(32))
    out = np.empty((n, 384), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in the fast path must stay silent
        minilm._attend(qkv, out, np.empty(12 * n * n, dtype=np.float32))
    np.testing.assert_allclose(out, _textbook_attention(qkv), rtol=0, atol=2e-6)


@needs_minilm
def test_threaded_and_serial_batches_match_sentence_transformers(model: MiniLM) -> None:
    """The 12 reference texts run on worker threads, each alone serially: both stay
    within 1e-6 of sentence-transformers' vectors (float32 noise; the old code's too)."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    expected = np.array(reference["embeddings"])
    texts = reference["texts"]
    threads_used: list[int] = []
    forward = model._forward

    def spy(batch: list[list[int]]) -> Any:
        threads_used.append(threading.get_ident())
        return forward(batch)

    model._forward = spy  # type: ignore[method-assign]
    try:
        together = model.encode(texts)
    finally:
        del model._forward
    alone = np.concatenate([model.encode([text]) for text in texts])
    assert np.abs(together - expected).max() < 1e-6
    assert np.abs(alone - expected).max() < 1e-6
    if blasthreads.blas_threads() > 1:
        assert len(threads_used) > 1
        assert threading.get_ident() not in threads_used


@needs_minilm
def test_threaded_encode_restores_blas_threads(model: MiniLM) -> None:
    before = blasthreads.blas_threads()
    model.encode([f"text number {i} about checkpoints" for i in range(20)])
    assert blasthreads.blas_threads() == before


def test_single_threaded_sections_nest_and_restore() -> None:
    controls = blasthreads._controls()
    if controls is None:
        pytest.skip("numpy does not link a findable OpenBLAS")
    _, get = controls
    before = get()
    with blasthreads.single_threaded():
        assert get() == 1
        with blasthreads.single_threaded():
            assert get() == 1
            assert blasthreads.blas_threads() == before
        assert get() == 1
    assert get() == before


def test_gelu_block_in_place_equals_gelu() -> None:
    x = np.linspace(-12, 12, 3000, dtype=np.float32).reshape(30, 100)
    expected = minilm.gelu(x)
    scratch = [np.empty_like(x) for _ in range(3)]
    minilm._gelu_float32_inplace(x, *scratch)
    np.testing.assert_array_equal(x, expected)


@pytest.mark.parametrize("rows", [1, 5, 40, 300])
def test_matmul_on_stored_layout_equals_plain_product(rows: int) -> None:
    """A query multiplies by the transposed view of the stored weights the other way round;
    the result is the plain product's, and the packed (contiguous) case is that product."""
    rng = np.random.default_rng(rows)
    stored = rng.standard_normal((1536, 384)).astype(np.float32)  # (out, in), as on disk
    x = rng.standard_normal((rows, 384)).astype(np.float32)
    out = np.empty((rows, 1536), dtype=np.float32)
    minilm._matmul(x, stored.T, out)
    np.testing.assert_allclose(out, x.astype(np.float64) @ stored.T, rtol=1e-5, atol=1e-4)
    packed = np.empty_like(out)
    minilm._matmul(x, np.ascontiguousarray(stored.T), packed)
    np.testing.assert_array_equal(packed, x @ np.ascontiguousarray(stored.T))


@needs_minilm
def test_concurrent_encodes_match_and_restore_blas_threads(model: MiniLM) -> None:
    """Two callers (a backfill and a search, say) encode at once: each gets its own
    vectors and OpenBLAS's thread count comes back when the last one finishes."""
    before = blasthreads.blas_threads()
    texts = [
        [f"caller {c} text {i}: checkpoints, branches and {i * c} tests" for i in range(12)]
        for c in (1, 2)
    ]
    expected = [np.concatenate([model.encode([t]) for t in group]) for group in texts]
    got: dict[int, np.ndarray[Any, Any]] = {}
    callers = [
        threading.Thread(target=lambda c=c: got.__setitem__(c, model.encode(texts[c])))
        for c in (0, 1)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    for c in (0, 1):
        assert np.abs(got[c] - expected[c]).max() < 1e-6
    assert blasthreads.blas_threads() == before
    controls = blasthreads._controls()
    if controls is not None:
        assert controls[1]() == before
