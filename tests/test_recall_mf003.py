"""MF003's recall part: near-duplicate topic files found from precomputed file vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from memls.core.recall import api, similarity
from memls.core.recall.similarity import recall_similarity, similar_pairs
from memls.core.rules import check_document
from memls.core.rules.memoryfile import SIMILARITY_PROVIDERS
from memls.core.workspace import Workspace
from tests.recall_fixtures import FakePlugin
from tests.recall_fixtures.roots import TOPIC, write_root


def _mf003(ws: Workspace, rel: str) -> list[str]:
    doc = ws.document(ws.root / rel)
    assert doc is not None
    return [d.message for d in check_document(ws, doc) if d.code == "MF003"]


def test_provider_is_registered() -> None:
    assert recall_similarity in SIMILARITY_PROVIDERS


def test_near_duplicate_topic_files_are_reported(
    tmp_path: Path, fake_model: FakePlugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_root(tmp_path)
    near = TOPIC.replace("every morning at six", "each morning at six").replace(
        "died in August", "died in late August"
    )
    (root / "memory" / "watering.md").write_text(near)
    (root / "memory" / "compost.md").write_text(
        "# Compost\n\n## Bins\nThe compost bins moved behind the shed in November.\n"
    )
    ws = Workspace(root)
    assert _mf003(ws, "memory/watering.md") == []  # no store yet: nothing to say
    api.backfill(root)
    calls = len(fake_model.calls)
    pairs = similar_pairs(root / ".memls" / "recall.db")
    scores = {(a, b): s for a, b, s in pairs}
    assert scores[("memory/garden.md", "memory/watering.md")] >= 0.92
    assert ("memory/compost.md", "memory/garden.md") not in scores or scores[
        ("memory/compost.md", "memory/garden.md")
    ] < 0.92
    ws = Workspace(root)
    messages = _mf003(ws, "memory/watering.md")
    assert len(messages) == 1
    assert messages[0].startswith("near-duplicate of memory/garden.md (similarity")
    assert _mf003(ws, "memory/compost.md") == []
    assert len(fake_model.calls) == calls  # checking never embeds
    # cheap: answered from the cache while the store does not change (no pairwise pass)
    computed: list[int] = []
    real_pairs = similarity._pairs

    def counting_pairs(conn: object) -> object:
        computed.append(1)
        return real_pairs(conn)  # type: ignore[arg-type]

    monkeypatch.setattr(similarity, "_pairs", counting_pairs)
    first = list(recall_similarity(ws))
    for _ in range(200):
        assert list(recall_similarity(ws)) == first
    assert computed == []
    # a store change (new generation) is computed once, then cached again
    (root / "memory" / "compost.md").write_text(
        "# Compost\n\n## Bins\nThe compost bins moved behind the greenhouse in May.\n"
    )
    api.backfill(root)
    for _ in range(50):
        list(recall_similarity(ws))
    assert computed == [1]


def test_removed_partner_is_not_reported(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    (root / "memory" / "watering.md").write_text(TOPIC.replace("at six", "at 6"))
    api.backfill(root)
    (root / "memory" / "garden.md").unlink()
    assert _mf003(Workspace(root), "memory/watering.md") == []
