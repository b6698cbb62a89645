"""Backfill: the llm collection, incremental skips, deletion on change, transcript tails."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import cast

import pytest

from memls.core.recall import api
from memls.core.recall.store import COLLECTION
from tests.recall_fixtures import FAKE_ID, FakePlugin
from tests.recall_fixtures.roots import append_session, write_root, write_session


def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / ".memls" / "recall.db")


def _rows(root: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    conn = _db(root)
    try:
        return list(conn.execute(sql, args).fetchall())
    finally:
        conn.close()


def _ids(root: Path) -> set[str]:
    return {str(r[0]) for r in _rows(root, "select id from memls_chunks")}


def _embedding_ids(root: Path) -> set[str]:
    return {str(r[0]) for r in _rows(root, "select id from embeddings")}


def _fts_ids(root: Path, word: str) -> set[str]:
    """Chunks whose own text (not a neighbour's context) holds ``word`` in the FTS index."""
    return {
        str(r[0])
        for r in _rows(
            root,
            "select c.id from memls_fts join memls_chunks c on c.rid = memls_fts.rowid "
            "where memls_fts match ?",
            f"text : {word}",
        )
    }


def test_first_backfill_builds_an_llm_collection(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    result = api.backfill(root)
    assert result["degraded"] is False
    assert result["files"] == 5  # topic, checkpoint, handoff, LOG, transcript (not MEMORY.md)
    assert (root / ".memls" / ".gitignore").read_text() == "*\n"
    assert _rows(root, "select name, model from collections") == [(COLLECTION, FAKE_ID)]
    ids = _ids(root)
    assert ids == _embedding_ids(root)
    assert "memory/garden.md#schedule" in ids
    assert "transcripts/s1.jsonl#turn-0" in ids
    assert "transcripts/s1.jsonl#turn-1" in ids
    assert not any(i.startswith("memory/MEMORY.md") for i in ids)
    kinds = {str(r[0]) for r in _rows(root, "select distinct kind from memls_chunks")}
    assert kinds == {"topic", "checkpoint", "handoff", "log", "transcript"}
    assert len(fake_model.calls) == len(ids)
    # llm's own reader sees the rows: metadata and stored content
    import llm
    from sqlite_utils import Database

    collection = llm.Collection(COLLECTION, Database(root / ".memls" / "recall.db"))
    assert collection.model_id == FAKE_ID
    assert collection.count() == len(ids)
    top = collection.similar("drip line every morning at six", number=1)[0]
    assert top.id == "memory/garden.md#schedule"
    assert top.metadata is not None
    assert top.metadata["path"] == "memory/garden.md"


def test_unchanged_files_are_skipped(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    fake_model.calls.clear()
    again = api.backfill(root)
    assert again["unchanged"] == again["files"] == 5
    assert again["embedded"] == 0
    assert fake_model.calls == []
    # touched but identical content: hashed, found equal, still nothing embedded
    for path in (root / "memory" / "garden.md", root / "LOG.md"):
        os.utime(path, ns=(1, 1))
    touched = api.backfill(root)
    assert touched["changed"] == 0
    assert touched["unchanged"] == 5
    assert fake_model.calls == []


def test_changed_section_replaces_only_its_rows(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    topic = root / "memory" / "garden.md"
    assert _fts_ids(root, "August") == {"memory/garden.md#failures"}
    fake_model.calls.clear()
    topic.write_text(topic.read_text().replace("died in August", "died in September"))
    result = api.backfill(root)
    assert result["changed"] == 1
    assert result["embedded"] == 1
    assert len(fake_model.calls) == 1
    assert "September" in fake_model.calls[0]
    assert _fts_ids(root, "August") == set()
    assert _fts_ids(root, "September") == {"memory/garden.md#failures"}
    assert _ids(root) == _embedding_ids(root)
    [(stored,)] = _rows(
        root, "select content from embeddings where id = ?", "memory/garden.md#failures"
    )
    assert "September" in str(stored)


def test_removed_section_and_file_leave_no_rows(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    api.backfill(root)
    topic = root / "memory" / "garden.md"
    text = topic.read_text()
    topic.write_text(text[: text.index("## Failures")])
    (root / "checkpoint-fix-parser.md").unlink()
    result = api.backfill(root)
    assert result["removed"] == 1
    ids = _ids(root)
    assert "memory/garden.md#failures" not in ids
    assert not any(i.startswith("checkpoint-") for i in ids)
    assert ids == _embedding_ids(root)
    assert _fts_ids(root, "battery") == {
        "transcripts/s1.jsonl#turn-0",
        "transcripts/s1.jsonl#turn-1",
    }
    assert _fts_ids(root, "pipe") == {"transcripts/.handoff.md#current-state"}
    files = {str(r[0]) for r in _rows(root, "select path from memls_files")}
    assert "checkpoint-fix-parser.md" not in files
    # the FTS index agrees with the chunk table (no orphans)
    assert _rows(root, "insert into memls_fts(memls_fts) values('integrity-check')") == []


def test_appended_transcript_embeds_only_new_turns(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    session = root / "transcripts" / "s1.jsonl"
    api.backfill(root)
    before = dict(
        cast(
            "list[tuple[str, object]]",
            _rows(root, "select id, rid from memls_chunks where path = ?", "transcripts/s1.jsonl"),
        )
    )
    fake_model.calls.clear()
    append_session(session, [("Which bed gets the new hose?", "Bed 5, near the compost bins.")], 2)
    result = api.backfill(root)
    assert result["embedded"] == 1
    assert len(fake_model.calls) == 1
    assert "new hose" in fake_model.calls[0]
    after = dict(
        cast(
            "list[tuple[str, object]]",
            _rows(root, "select id, rid from memls_chunks where path = ?", "transcripts/s1.jsonl"),
        )
    )
    assert set(after) == {f"transcripts/s1.jsonl#turn-{i}" for i in range(3)}
    assert all(after[k] == v for k, v in before.items())  # earlier turns kept their rows
    [(start, end, stamp)] = _rows(
        root,
        "select start_line, end_line, timestamp from memls_chunks where id = ?",
        "transcripts/s1.jsonl#turn-2",
    )
    assert (start, end) == (5, 6)
    assert stamp == "2026-11-21T09:02:00"
    [(offset,)] = _rows(
        root, "select byte_offset from memls_files where path = ?", "transcripts/s1.jsonl"
    )
    assert offset == session.stat().st_size


def test_reply_completing_the_last_turn_reembeds_only_that_turn(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    root = write_root(tmp_path)
    session = root / "transcripts" / "s1.jsonl"
    lines = session.read_text().splitlines(keepends=True)
    session.write_text("".join(lines[:3]))  # turn 1 has its question but no reply yet
    api.backfill(root)
    fake_model.calls.clear()
    session.write_text("".join(lines))
    api.backfill(root)
    assert len(fake_model.calls) == 1
    assert "battery check" in fake_model.calls[0]
    assert _ids(root) >= {"transcripts/s1.jsonl#turn-0", "transcripts/s1.jsonl#turn-1"}


def test_rewritten_transcript_is_reindexed_from_the_start(
    tmp_path: Path, fake_model: FakePlugin
) -> None:
    root = write_root(tmp_path)
    session = root / "transcripts" / "s1.jsonl"
    api.backfill(root)
    write_session(
        session,
        [
            ("Totally different opening question about pumpkins?", "Pumpkins need room."),
            ("Second?", "Yes."),
            ("Third question here?", "Third answer."),
        ],
    )
    api.backfill(root)
    assert _fts_ids(root, "seedlings") <= {"memory/garden.md#failures"}
    assert "transcripts/s1.jsonl#turn-2" in _ids(root)
    assert _fts_ids(root, "pumpkins") == {"transcripts/s1.jsonl#turn-0"}


def test_full_rebuild_and_model_switch(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    first = api.backfill(root)
    count = first["chunks_added"]
    fake_model.calls.clear()
    full = api.backfill(root, full=True)
    assert full["embedded"] == count
    assert len(fake_model.calls) == count


def test_recall_db_config_and_cancel(tmp_path: Path, fake_model: FakePlugin) -> None:
    root = write_root(tmp_path)
    (root / "memls.toml").write_text('recall_model = "fake-embed"\nrecall_db = "elsewhere/r.db"\n')
    cancel = threading.Event()
    seen: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, label: str) -> None:
        seen.append((done, total, label))
        if label.startswith("index ") and done == 1:
            cancel.set()  # after the first file: the rest waits for the next run

    result = api.backfill(root, progress=progress, cancel=cancel)
    assert result["cancelled"] is True
    assert (root / "elsewhere" / "r.db").is_file()
    assert not (root / ".memls").exists()
    assert not any(label == "embed" for _, _, label in seen)
    assert api.status(root)["chunks_total"] > 0  # the first file's chunks were kept
    resumed = api.backfill(root)
    assert resumed["cancelled"] is False
    assert 0 < resumed["changed"] < resumed["files"]
    assert resumed["embedded"] > 0
    status = api.status(root)
    assert status["pending"] == 0
    assert status["db"] == str(root / "elsewhere" / "r.db")


@pytest.mark.parametrize("kind_file", ["IDENTITY.md", "USER.md"])
def test_identity_files_are_not_indexed(
    tmp_path: Path, fake_model: FakePlugin, kind_file: str
) -> None:
    root = write_root(tmp_path)
    (root / kind_file).write_text("# Me\n\n## Who\nI garden.\n")
    api.backfill(root)
    assert not any(i.startswith(kind_file) for i in _ids(root))
