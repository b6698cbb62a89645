"""The adapted embedding space (core/recall/space.py): centring with a shrunk mean and soft
whitening, fitted on the store's vectors, saved with the matrix and refitted when missing.

Pinned: a generic row that carries only the store's common direction no longer outranks a
row that carries the query's specific direction; a small store's mean is shrunk toward zero;
scores stay cosines; the map lives beside the saved matrix and a cold ``memls recall search``
uses it; a store saved before the space existed gives the same results without writing a
file; models the space was not measured on keep plain cosine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from memls.core.recall import api, semantic, space
from memls.core.recall.store import db_path_for, open_existing
from tests.recall_fixtures.roots import write_root
from tests.recall_fixtures.weights import needs_minilm
from tests.test_recall_conversations import write_conversation

MEMLS = [sys.executable, "-m", "memls"]


def _store_with_a_hub() -> tuple[np.ndarray, np.ndarray]:
    """300 rows sharing one strong direction (e0), a hub (e0 alone) and a target (e0 + e5)."""
    rng = np.random.default_rng(3)
    dims = 32
    unit = np.eye(dims)
    rows = []
    for _ in range(300):
        noise = rng.standard_normal(dims)
        noise[0] = 0
        noise /= np.linalg.norm(noise)
        rows.append(0.8 * unit[0] + 0.6 * noise)
    rows += [unit[0], 0.8 * unit[0] + 0.6 * unit[5]]
    matrix = np.array(rows, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = 0.95 * unit[0] + 0.25 * unit[5]
    return matrix, (query / np.linalg.norm(query)).astype(np.float32)


def test_the_common_direction_no_longer_decides_the_ranking() -> None:
    matrix, query = _store_with_a_hub()
    hub, target = len(matrix) - 2, len(matrix) - 1
    plain = matrix @ query
    assert plain[hub] > plain[target]  # the generic row wins on raw cosine
    fitted = space.fit(matrix)
    assert fitted is not None
    adapted = fitted.rows(matrix) @ fitted.query(query)
    assert int(np.argmax(adapted)) == target
    assert adapted[target] > adapted[hub]
    assert float(np.abs(adapted).max()) <= 1.0 + 1e-5  # still cosines
    norms = np.linalg.norm(fitted.rows(matrix), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_a_small_store_mean_is_shrunk_toward_zero() -> None:
    matrix, _query = _store_with_a_hub()
    few = matrix[:5]
    fitted = space.fit(few)
    assert fitted is not None
    expected = few.mean(axis=0) * (5 / (5 + space.SHRINK_ROWS))
    assert np.allclose(fitted.mean, expected, atol=1e-6)
    assert space.fit(np.zeros((0, 8), dtype=np.float32)) is None


def test_identical_rows_do_not_break_the_fit() -> None:
    same = np.tile(np.eye(8, dtype=np.float32)[2], (60, 1))
    fitted = space.fit(same)
    assert fitted is not None
    assert np.isfinite(fitted.transform).all()
    assert np.isfinite(fitted.rows(same)).all()


def test_only_the_measured_model_is_adapted() -> None:
    assert space.adapts("memls-minilm")
    assert not space.adapts("memls-hash")
    assert not space.adapts("text-embedding-3-small")


def test_memls_hash_scores_stay_plain_cosine(tmp_path: Path) -> None:
    root = write_root(tmp_path, model="memls-hash")
    api.backfill(root)
    assert not list((root / ".memls").glob("recall.db.vectors-*.space"))
    store = open_existing(db_path_for(root))
    assert store is not None
    try:
        semantic.forget_cache()
        index = semantic.vector_index(store)
        assert index is not None
        assert index.space is None
        raw = store.db.execute(
            "select e.embedding from embeddings e join memls_chunks c on c.id = e.id "
            "where c.rid = ?",
            [int(index.rids[0])],
        ).fetchone()[0]
        vector = np.frombuffer(raw, dtype="<f4")
        assert np.allclose(index.matrix[0], vector / np.linalg.norm(vector), atol=1e-6)
    finally:
        store.close()


def _cli_search(root: Path, query: str) -> list[tuple[str, int, int]]:
    done = subprocess.run(
        [
            *MEMLS,
            "recall",
            "search",
            query,
            "--root",
            str(root),
            "--mode",
            "semantic",
            "--limit",
            "5",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    return [(r["path"], r["start_line"], r["end_line"]) for r in results]


@needs_minilm
def test_minilm_store_saves_its_space_and_a_cold_search_uses_it(tmp_path: Path) -> None:
    write_conversation(tmp_path)
    api.backfill(tmp_path, model="memls-minilm")
    saved = sorted((tmp_path / ".memls").glob("recall.db.vectors-*.space"))
    assert len(saved) == 1
    question = "Which animal joined someone's family recently?"
    semantic.forget_cache()
    warm = api.search(tmp_path, question, mode="semantic", limit=5)
    expected = [(r.path, r.start_line, r.end_line) for r in warm.results]
    assert expected
    assert expected[0] == ("transcripts/session_2.jsonl", 1, expected[0][2])
    assert _cli_search(tmp_path, question) == expected

    # A store saved before the adapted space existed: same results, refitted in memory,
    # and the search writes nothing (only a backfill saves the matrix).
    saved[0].unlink()
    before = sorted(p.name for p in (tmp_path / ".memls").iterdir())
    assert _cli_search(tmp_path, question) == expected
    assert sorted(p.name for p in (tmp_path / ".memls").iterdir()) == before
    api.backfill(tmp_path, model="memls-minilm")  # the next backfill saves it again
    assert len(list((tmp_path / ".memls").glob("recall.db.vectors-*.space"))) == 1
