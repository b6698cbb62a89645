"""A deterministic fake ``llm`` embedding model for recall tests, registered as a plugin.

``fake_model`` (import ``fake_model_fixture`` into a test module) registers the plugin with ``llm``'s plugin manager for one test and
unregisters it afterwards, the way ``llm``'s own tests register mock models. The model
hashes word stems into 64 dimensions (bag of words), so texts sharing words are close and
identical texts are identical; it records every text it embeds so tests can count work.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import llm
from llm.models import EmbeddingModel

FAKE_ID = "fake-embed"
DIMS = 64
# The keys of one search result, in ``--json`` output and ``SearchResult.to_dict()`` alike.
RESULT_KEYS = frozenset(
    {"id", "score", "kind", "path", "start_line", "end_line", "heading", "snippet", "lines"}
)
_WORD = re.compile(r"[a-z0-9]+")


def fake_vector(text: str) -> list[float]:
    """Bag of (5-letter-prefix) words hashed into DIMS buckets, L2-normalised."""
    vec = [0.0] * DIMS
    for word in _WORD.findall(text.lower()):
        digest = hashlib.md5(word[:5].encode()).digest()
        vec[digest[0] % DIMS] += 1.0 if digest[1] % 2 else -1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


class FakeEmbed(EmbeddingModel):
    """Deterministic embedding model; ``calls`` lists every text embedded."""

    batch_size = 16

    def __init__(self, model_id: str, calls: list[str], broken: bool = False) -> None:
        self.model_id = model_id
        self.calls = calls
        self.broken = broken

    def embed_batch(
        self, items: Iterable[str | bytes], *, key: str | None = None
    ) -> Iterator[list[float]]:
        for item in items:
            text = item.decode() if isinstance(item, bytes) else item
            if self.broken:
                raise RuntimeError("fake model is broken")
            self.calls.append(text)
            yield fake_vector(text)


@dataclass
class FakePlugin:
    """The llm plugin object: registers ``fake-embed`` and ``fake-broken``."""

    calls: list[str] = field(default_factory=list)

    @llm.hookimpl
    def register_embedding_models(self, register):  # type: ignore[no-untyped-def]
        register(FakeEmbed(FAKE_ID, self.calls))
        register(FakeEmbed("fake-broken", self.calls, broken=True))
