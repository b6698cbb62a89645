"""Search: semantic equals brute force, BM25 snippets, fusion, MMR, filters, result objects."""

from __future__ import annotations

from pathlib import Path

import llm
import pytest
from sqlite_utils import Database

from memls.core.recall import api, filters, fulltext, ranking, semantic, vectorindex
from memls.core.recall.filters import Filters
from memls.core.recall.hits import Hit
from memls.core.recall.store import COLLECTION, RecallStore, open_existing
from tests.recall_fixtures import RESULT_KEYS, FakePlugin, fake_vector
from tests.recall_fixtures.roots import write_root


@pytest.fixture
def root(tmp_path: Path, fake_model: FakePlugin) -> Path:
    root = write_root(tmp_path)
    api.backfill(root)
    return root


def test_fuse_adds_weighted_z_scores() -> None:
    def hit(rid: int, score: float) -> Hit:
        return Hit(rid, str(rid), score, "topic", "a.md", 1, 1, None, "")

    text = [hit(1, 3.0), hit(2, 1.0)]  # z: +1, -1
    semantic = [hit(2, 0.9), hit(3, 0.5)]  # z: +1, -1
    fused = {h.rid: h.score for h in ranking.fuse(text, semantic, text_weight=0.6)}
    assert fused[1] == pytest.approx(0.6 * 1 + 0.4 * -1)  # absent from semantic: its lowest
    assert fused[2] == pytest.approx(0.6 * -1 + 0.4 * 1)
    assert fused[3] == pytest.approx(0.6 * -1 + 0.4 * -1)  # absent from text: its lowest
    assert [h.rid for h in ranking.fuse(text, semantic, text_weight=0.6)] == [1, 2, 3]


def test_semantic_matches_llm_brute_force(root: Path) -> None:
    query = "why did the seedlings wilt when the battery died"
    vector = fake_vector(query)
    db = root / ".memls" / "recall.db"
    expected = [e.id for e in llm.Collection(COLLECTION, Database(db)).similar_by_vector(vector, 5)]
    with RecallStore(db) as store:
        ours = semantic.search(store, vector, query=query, limit=5)
    assert [h.id for h in ours] == expected
    response = api.search(root, query, mode="semantic", limit=5)
    assert [r.id for r in response.results] == expected
    assert response.mode == "semantic"
    assert response.degraded is False
    assert response.model == "fake-embed"
    assert "not verified" in response.message


def test_text_mode_bm25_with_snippets(root: Path) -> None:
    response = api.search(root, "pipe tables", mode="text")
    assert response.mode == "text"
    assert response.degraded is False
    top = response.results[0]
    assert top.id in {
        "transcripts/.handoff.md#current-state",
        "checkpoint-fix-parser.md#next-action-handle-tables-in-the-parser",
    }
    assert "[pipe]" in top.snippet
    assert "[tables]" in top.snippet
    hostile = api.search(root, 'NEAR( "pipe" ); drop table memls_chunks; -- *', mode="text")
    assert hostile.results  # FTS5 syntax is quoted away: the words are searched for, no error
    assert api.search(root, "pipe tables", mode="text").results[0].id == top.id
    assert api.search(root, "!!! ---", mode="text").results == []


def test_hybrid_is_default_and_returns_result_objects(root: Path) -> None:
    response = api.search(root, "drip line watering schedule", limit=3)
    assert response.mode == "hybrid"
    assert len(response.results) == 3
    top = response.results[0]
    assert top.id == "memory/garden.md#schedule"
    data = top.to_dict()
    assert set(data) == RESULT_KEYS
    assert data["path"] == "memory/garden.md"
    assert (data["start_line"], data["end_line"]) == (12, 13)
    assert data["heading"] == "Schedule"
    text = (root / "memory" / "garden.md").read_text().splitlines()
    assert text[data["start_line"] - 1] == "## Schedule"


def test_filters_in_every_mode(root: Path) -> None:
    for mode in ("text", "semantic", "hybrid"):
        kinds = {
            r.kind
            for r in api.search(root, "battery seedlings", mode=mode, kinds=["transcript"]).results
        }
        assert kinds == {"transcript"}, mode
        paths = {
            r.path
            for r in api.search(root, "battery seedlings", mode=mode, path_glob="memory/*").results
        }
        assert paths == {"memory/garden.md"}, mode
        folder = {
            r.path for r in api.search(root, "battery", mode=mode, path_glob="transcripts").results
        }
        assert folder <= {"transcripts/s1.jsonl", "transcripts/.handoff.md"}, mode
        assert folder
        dated = api.search(
            root, "compost fallback decision", mode=mode, kinds=["log"], since="2026-11-25"
        )
        assert [r.heading for r in dated.results] == ["2026-11-28 09:00 — Compost bins"], mode
        until = api.search(
            root, "compost fallback decision", mode=mode, kinds=["log"], until="2026-11-20"
        )
        assert [r.heading for r in until.results] == [
            "2026-11-20 10:05 — Recall fallback decision"
        ], mode
    assert api.search(root, "battery", limit=1).results[0]
    assert len(api.search(root, "the", mode="semantic", limit=2).results) == 2


def test_bad_arguments(root: Path) -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        api.search(root, "x", mode="fuzzy")
    with pytest.raises(ValueError, match="unknown kind"):
        api.search(root, "x", kinds=["index"])
    with pytest.raises(ValueError, match="cannot read"):
        api.search(root, "x", since="last tuesday")


def test_parse_time() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert filters.parse_time("7d", now=now) == "2026-11-23T12:00:00"
    assert filters.parse_time("12h", now=now) == "2026-11-30T00:00:00"
    assert filters.parse_time("2026-11-20", end=True) == "2026-11-20T23:59:59"
    assert filters.parse_time("2026-11-20T10:00:00+01:00") == "2026-11-20T09:00:00"


def test_mmr_prefers_diverse_results() -> None:
    import numpy as np

    same = np.array([1.0, 0.0], dtype=np.float32)
    other = np.array([0.0, 1.0], dtype=np.float32)
    hits = [
        Hit(1, "a", 0.9, "topic", "a.md", 1, 1, None, ""),
        Hit(2, "a-copy", 0.89, "topic", "b.md", 1, 1, None, ""),
        Hit(3, "different", 0.7, "topic", "c.md", 1, 1, None, ""),
    ]
    picked = ranking.mmr(hits, {1: same, 2: same, 3: other}, limit=2)
    assert [h.id for h in picked] == ["a", "different"]


def test_mmr_through_the_api(root: Path) -> None:
    topic = root / "memory" / "copy.md"
    topic.write_text((root / "memory" / "garden.md").read_text())
    api.backfill(root)
    plain = api.search(root, "drip line every morning at six", mode="semantic", limit=2)
    assert {r.path for r in plain.results} == {"memory/garden.md", "memory/copy.md"}
    diverse = api.search(root, "drip line every morning at six", mode="semantic", limit=2, mmr=True)
    assert len({r.path for r in diverse.results}) == 2
    assert diverse.results[0].id == plain.results[0].id
    assert diverse.results[1].id != plain.results[1].id


def test_cache_follows_store_changes(root: Path) -> None:
    before = api.search(root, "pumpkins", mode="semantic", limit=50)
    assert all("pumpkin" not in r.snippet.lower() for r in before.results)
    (root / "memory" / "pumpkins.md").write_text(
        "# Pumpkins\n\n## Sowing\nPumpkins need room and sun.\n"
    )
    api.backfill(root)
    after = api.search(root, "pumpkins room sun", mode="semantic", limit=1)
    assert after.results[0].path == "memory/pumpkins.md"


def test_threaded_scoring_matches_single_block(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((1000, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    labels = np.array(["topic"] * 1000)
    index = vectorindex.VectorIndex(np.arange(1000, dtype=np.int64), labels, labels, labels, matrix)
    query = rng.standard_normal(16).tolist()
    single = index.top(query, 10)
    monkeypatch.setattr(vectorindex, "_PARALLEL_ROWS", 10)
    assert index.top(query, 10) == single
    expected = np.argsort(-(matrix @ (np.array(query) / np.linalg.norm(query))))[:10]
    assert [row for row, _ in single] == expected.tolist()


def test_text_ranks_inside_the_index_like_the_filtered_join(root: Path) -> None:
    """Without filters the text search ranks inside FTS5 and joins only the top rows; the
    answer must equal the filtered join's when the filter admits every chunk."""
    store = open_existing(root / ".memls" / "recall.db")
    assert store is not None
    try:
        kinds = tuple(store.chunk_counts())
        for query in ("pipe tables", "battery", "the parser tables seedlings"):
            for limit in (1, 3, 50):
                fast = fulltext.search(store, query, limit=limit)
                joined = fulltext.search(store, query, filters=Filters(kinds=kinds), limit=limit)
                assert fast == joined, (query, limit)
                assert fast, query
    finally:
        store.close()


def test_merge_adjacent_joins_only_touching_hits_of_one_file() -> None:
    def hit(rid: int, path: str, start: int, end: int) -> Hit:
        return Hit(rid, f"{path}#{rid}", 1.0 / rid, "transcript", path, start, end, None, "")

    hits = [hit(1, "a", 10, 10), hit(2, "b", 11, 11), hit(3, "a", 11, 11), hit(4, "a", 9, 9)]
    hits += [hit(5, "a", 13, 13), hit(6, "a", 12, 12), hit(7, "b", 12, 12)]
    merged = ranking.merge_adjacent(hits, max_lines=4)
    assert [(h.rid, h.path, h.start_line, h.end_line) for h in merged] == [
        (1, "a", 9, 12),
        (2, "b", 11, 12),
        (5, "a", 13, 13),
    ]
