"""Loading memls-minilm for one query stays cheap and changes no vector: the GELU
polynomial is kept as constants equal to its fit, and the fused query/key/value weights
are stacked as stored (transposed view) until a batch packs them contiguous."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from memls.core.recall import minilm
from memls.core.recall.minilm import resolve_model_dir
from tests.recall_fixtures.weights import needs_minilm


def test_the_kept_gelu_coefficients_are_the_fit() -> None:
    fitted = minilm._fit_erf_tanh_polynomial()
    kept = minilm._erf_tanh_polynomial()
    assert len(kept) == len(fitted) == minilm._ERF_TANH_DEGREE + 1
    assert np.allclose(np.array(kept), np.array(fitted), rtol=1e-6, atol=1e-12)


@needs_minilm
def test_unpacked_and_packed_weights_give_the_same_vectors() -> None:
    texts = [
        "why did the parser checkpoint fail on the recall branch",
        "Caroline went to the support group yesterday and felt accepted there",
        "ok",
    ]
    mapped = minilm.MiniLM(resolve_model_dir())
    assert not mapped._layers[0].qkv_w.flags["C_CONTIGUOUS"]
    before = np.vstack([mapped.encode([text]) for text in texts])
    mapped._pack()
    assert mapped._layers[0].qkv_w.flags["C_CONTIGUOUS"]
    after = np.vstack([mapped.encode([text]) for text in texts])
    assert np.allclose(before, after, atol=1e-6)


@needs_minilm
def test_one_query_loads_neither_numpy_polynomial_nor_tokenizers() -> None:
    code = (
        "import sys\n"
        "from memls.core.recall.minilm import load_minilm\n"
        "load_minilm().encode(['what did we decide about the parser'])\n"
        "print(sorted(m for m in ('numpy.polynomial', 'tokenizers') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
