"""A memls-hash backfill stores exactly what the plain computation gives.

Pins the batched write path: every chunk's stored vector is memls-hash of its embed text,
each topic file's MF003 vector is the normalised mean of its chunks' unit vectors, and an
interrupted run (vectors missing here and there, not only at the end) is completed.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memls.core.recall import api, store
from memls.core.recall.chunking import chunk_embed_text
from memls.core.recall.hashmodel import hash_matrix


def _root(tmp_path: Path, files: int = 30) -> Path:
    root = tmp_path / "root"
    (root / "memory").mkdir(parents=True)
    (root / "memls.toml").write_text('recall_model = "memls-hash"\n')
    (root / "memory" / "MEMORY.md").write_text("# Project Memory\n")
    for i in range(files):
        sections = "".join(
            f"## Part {j} of {i}\nThe parser {'cache ' * j}kept notes on branch b{i}.\n\n"
            for j in range(1 + i % 4)
        )
        (root / "memory" / f"topic-{i:03d}.md").write_text(
            f"---\nname: t{i}\ndescription: topic {i} — notes\n---\n# Topic {i}\n\n{sections}"
        )
    return root


def _conn(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / ".memls" / "recall.db")


def _check_vectors(root: Path) -> None:
    conn = _conn(root)
    try:
        rows = conn.execute(
            "select c.id, c.kind, c.header, c.text, c.path, e.embedding from memls_chunks c "
            "join embeddings e on e.id = c.id order by c.rid"
        ).fetchall()
        chunks = conn.execute("select count(*) from memls_chunks").fetchone()[0]
        files = dict(conn.execute("select path, vector from memls_files").fetchall())
    finally:
        conn.close()
    assert len(rows) == chunks > 0
    stored = np.array([np.frombuffer(r[5], dtype="<f4") for r in rows])
    expected = hash_matrix([chunk_embed_text(r[1], r[2], r[3]) for r in rows])
    np.testing.assert_allclose(stored, expected, atol=1e-6)
    by_path: dict[str, list[np.ndarray]] = {}
    for row, vector in zip(rows, stored, strict=True):
        by_path.setdefault(str(row[4]), []).append(vector.astype(np.float64))
    assert set(by_path) == {p for p in files if p.startswith("memory/topic-")}
    for path, vectors in by_path.items():
        unit = [v / np.linalg.norm(v) for v in vectors]
        mean = np.mean(unit, axis=0)
        assert files[path] is not None, path
        np.testing.assert_allclose(
            np.frombuffer(files[path], dtype="<f4"), mean / np.linalg.norm(mean), atol=1e-6
        )


@pytest.mark.parametrize("few_files", [500, 0], ids=["by-path", "full-scan"])
def test_hash_backfill_stores_plain_vectors_and_file_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, few_files: int
) -> None:
    monkeypatch.setattr(store, "FEW_FILES", few_files)
    root = _root(tmp_path)
    result = api.backfill(root)
    assert result["model"] == "memls-hash"
    assert result["embedded"] == result["chunks_added"] > 30
    _check_vectors(root)


def test_batched_chunk_inserts_keep_the_text_index_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk rows go in by multi-row statements (several per file batch here): the FTS
    index must still hold every row, exactly as a per-row insert would leave it."""
    monkeypatch.setattr(store, "INSERT_ROWS", 7)
    root = _root(tmp_path, files=40)
    api.backfill(root)
    conn = _conn(root)
    try:
        conn.execute("insert into memls_fts (memls_fts, rank) values ('integrity-check', 1)")
        rows = conn.execute("select rid, text, path, ordinal from memls_chunks").fetchall()
        for word in ("parser", "cache", "b17"):
            found = {
                r[0]
                for r in conn.execute(
                    "select rowid from memls_fts where memls_fts match ?", [f"text : {word}"]
                )
            }
            assert found == {r[0] for r in rows if word in re.findall(r"\w+", str(r[1]))}, word
        ordered = [(r[2], r[3]) for r in sorted(rows)]  # row order = file order, then chunk order
    finally:
        conn.close()
    assert ordered == sorted(ordered)


def test_interrupted_hash_backfill_is_completed(tmp_path: Path) -> None:
    root = _root(tmp_path, files=90)
    first = api.backfill(root)
    conn = _conn(root)
    try:
        with conn:  # lose every third vector, spread over the whole table, and the file vectors
            conn.execute(
                "delete from embeddings where id in (select id from memls_chunks where rid % 3 = 1)"
            )
            conn.execute("update memls_files set vector = null")
        lost = first["embedded"] - conn.execute("select count(*) from embeddings").fetchone()[0]
    finally:
        conn.close()
    assert lost > 64  # more than one embedding batch
    again = api.backfill(root)
    assert again["embedded"] == lost
    _check_vectors(root)
