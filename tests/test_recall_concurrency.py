"""Issue 15, defect 9: two `memls recall backfill` at once on a new store.

Before the fix one of them died with ``sqlite3.IntegrityError: UNIQUE constraint failed:
memls_chunks.id`` or ``database is locked`` in most rounds. Now the second waits for the
first (an inter-process lock with a timeout and a message), and both exit 0 with the store
whole.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memls.core.recall import api
from memls.core.recall.lock import RecallBusyError, backfill_lock
from memls.core.recall.store import db_path_for
from tests.recall_fixtures.roots import write_session

MEMLS = Path(sys.executable).parent / "memls"


def _root(path: Path, files: int = 60) -> Path:
    (path / "memory").mkdir(parents=True)
    (path / "memory" / "MEMORY.md").write_text("# Project Memory\n", encoding="utf-8")
    for n in range(files):
        (path / "memory" / f"topic-{n}.md").write_text(
            f"# Topic {n}\n\n## Decision {n}\n\nWe chose option {n} because of latency {n}.\n\n"
            f"## Follow-up {n}\n\nMeasure the cache again after change {n}.\n",
            encoding="utf-8",
        )
    (path / "transcripts").mkdir()
    write_session(
        path / "transcripts" / "s1.jsonl",
        [
            (f"question {n} about the parser", f"answer {n}: the parser skips fences")
            for n in range(20)
        ],
    )
    return path


def _chunks(root: Path) -> tuple[int, int, int]:
    """(chunk rows, distinct ids, embedding rows) of the root's store."""
    with sqlite3.connect(db_path_for(root)) as conn:
        rows = conn.execute("select count(*), count(distinct id) from memls_chunks").fetchone()
        vectors = conn.execute("select count(*) from embeddings").fetchone()[0]
    return int(rows[0]), int(rows[1]), int(vectors)


def test_two_backfills_on_a_new_store_both_exit_0(tmp_path: Path) -> None:
    """The defect's reproduction, as processes: several rounds, each on a fresh store."""
    env = {**os.environ, "MEMLS_RECALL_LOCK_TIMEOUT": "120"}
    for round_number in range(4):
        root = _root(tmp_path / f"round-{round_number}")
        command = [str(MEMLS), "recall", "backfill", "--root", str(root), "--model", "memls-hash"]
        procs = [
            subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
            for _ in range(2)
        ]
        outcomes = [p.communicate(timeout=180) for p in procs]
        for proc, (out, err) in zip(procs, outcomes, strict=True):
            assert proc.returncode == 0, f"round {round_number}: {out}\n{err}"
            assert "Traceback" not in err
        rows, distinct, vectors = _chunks(root)
        assert rows == distinct == vectors > 60
        # a third run finds nothing to do: the two did not leave half-written state
        again = api.backfill(root, model="memls-hash")
        assert again["changed"] == 0
        assert again["embedded"] == 0


def test_second_backfill_waits_with_a_message_then_finishes(tmp_path: Path) -> None:
    root = _root(tmp_path / "root", files=5)
    db = db_path_for(root)
    heard: list[str] = []
    release = threading.Event()
    holding = threading.Event()

    def hold() -> None:
        with backfill_lock(db):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    threading.Timer(0.5, release.set).start()
    result = api.backfill(root, model="memls-hash", lock_timeout=30, on_wait=heard.append)
    holder.join()
    assert result["complete"]
    assert not result["degraded"]
    assert len(heard) == 1
    assert "Another recall backfill" in heard[0]
    assert "waiting" in heard[0]


def test_backfill_gives_up_after_the_timeout_with_the_lock_named(tmp_path: Path) -> None:
    root = _root(tmp_path / "root", files=2)
    db = db_path_for(root)
    with backfill_lock(db), pytest.raises(RecallBusyError) as caught:
        api.backfill(root, model="memls-hash", lock_timeout=0.2)
    message = str(caught.value)
    assert f"pid {os.getpid()}" in message
    assert "recall.db.lock" in message
    assert "MEMLS_RECALL_LOCK_TIMEOUT" in message


def test_cli_reports_a_busy_store_in_json(tmp_path: Path) -> None:
    root = _root(tmp_path / "root", files=2)
    with backfill_lock(db_path_for(root)):
        proc = subprocess.run(
            [str(MEMLS), "recall", "backfill", "--root", str(root), "--wait", "0", "--json"],
            capture_output=True,
            check=False,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2
    payload = json.loads(proc.stdout)
    assert payload["status"] == "busy"
    assert "Another recall backfill" in payload["message"]
