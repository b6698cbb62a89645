"""kill -9 at random points of a checkpoint save, a recall backfill and a snapshot save.

Each trial runs the real ``memls`` command in its own process and SIGKILLs it at a random
moment. The points that matter are widened with ``MEMLS_TEST_WRITE_DELAY`` (a pause at
each commit point: between a temp file and its rename, between a snapshot's commit and the
ref move), and the kill time is drawn around them, so kills land before, inside and after
the writes. After every kill:

- save: each file is byte for byte its old or its new version, never a bullet without its
  checkpoint, and the next save succeeds;
- snapshot: the ref holds the old commit or the new one (a full snapshot whose parent is
  the old), git's objects are sound (``git fsck``), HEAD, the index and the branches are
  untouched, and the next save succeeds;
- backfill: the store passes SQLite's integrity check, and the next backfill completes
  with chunks and embeddings in agreement.

Trials run a few at a time to stay within the suite's time bound.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memls.core.formats.index import bullets
from memls.core.fsutil import TEMP_PREFIX
from memls.core.gitfacade import Git
from memls.core.ops.checkpoint import save_checkpoint
from memls.core.parse import parse_file
from memls.core.recall import api
from memls.core.snapshot import load_snapshot, ref_commit, save_snapshot

DELAY = 0.15
BATCH = 4
SAVE_TRIALS = 8
SNAPSHOT_TRIALS = 8
BACKFILL_TRIALS = 4
TOPICS = 24
NOW = dt.datetime(2026, 11, 30, 12, 0)


def _memls(root: Path, *args: str, delay: float | None = DELAY) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    if delay:
        env["MEMLS_TEST_WRITE_DELAY"] = str(delay)
    return subprocess.Popen(
        [sys.executable, "-m", "memls", *args, "--root", str(root)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


def _kill_when(
    procs: list[subprocess.Popen[bytes]],
    started: Callable[[int], bool],
    offsets: list[float],
    deadline: float = 60.0,
) -> list[str]:
    """SIGKILL process i ``offsets[i]`` seconds after ``started(i)`` first holds.

    Returns per process "killed" or "finished" (it completed before its kill time).
    """
    kill_at: list[float | None] = [None] * len(procs)
    outcome = [""] * len(procs)
    end = time.monotonic() + deadline
    while not all(outcome) and time.monotonic() < end:
        now = time.monotonic()
        for i, proc in enumerate(procs):
            if outcome[i]:
                continue
            if proc.poll() is not None:
                outcome[i] = "finished"
            elif kill_at[i] is None:
                if started(i):
                    kill_at[i] = now + offsets[i]
            elif now >= kill_at[i]:  # type: ignore[operator]
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
                outcome[i] = "killed"
        time.sleep(0.003)
    for i, proc in enumerate(procs):
        if proc.poll() is None:
            proc.kill()
            outcome[i] = "killed"
        proc.wait(timeout=30)
    return outcome


def _temp_file_in(roots: list[Path]) -> Callable[[int], bool]:
    return lambda i: any(p.name.startswith(TEMP_PREFIX) for p in roots[i].iterdir())


def _new_object_in(roots: list[Path], counts: list[int]) -> Callable[[int], bool]:
    return lambda i: _objects(roots[i]) > counts[i]


def _store_in(roots: list[Path]) -> Callable[[int], bool]:
    return lambda i: (roots[i] / ".memls" / "recall.db").exists()


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(root.iterdir())
        if p.is_file() and not p.name.startswith(TEMP_PREFIX)
    }


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True, text=True)
    return proc.stdout.strip()


# -- checkpoint save -------------------------------------------------------------------
def test_kill_save_at_random_points(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "MEMORY.md").write_text("# Memory\n\n## Stable\nkeep é\n")
    save_checkpoint(template, "victim", next_action="Old", now=NOW, git=Git(template))
    old = _files(template)
    rng = random.Random(91)
    roots: list[Path] = []
    minutes: set[dt.datetime] = set()
    outcomes: dict[str, int] = {}
    for batch in range(SAVE_TRIALS // BATCH):
        minutes.add(dt.datetime.now().replace(second=0, microsecond=0))
        batch_roots = [tmp_path / f"save-{batch}-{j}" for j in range(BATCH)]
        for root in batch_roots:
            shutil.copytree(template, root)
        procs = [
            _memls(root, "checkpoint", "save", "victim", "--next", "New", "--failed", "x")
            for root in batch_roots
        ]
        # From the first temp file on: inside the checkpoint write, between the two
        # writes, inside the index write, or after.
        offsets = [rng.uniform(0.0, 2.6 * DELAY) for _ in procs]
        result = _kill_when(
            procs,
            _temp_file_in(batch_roots),
            offsets,
        )
        for r in result:
            outcomes[r] = outcomes.get(r, 0) + 1
        roots += batch_roots
        minutes.add(dt.datetime.now().replace(second=0, microsecond=0))
    news = []
    for n, minute in enumerate(sorted(minutes)):
        ref = tmp_path / f"ref-{n}"
        shutil.copytree(template, ref)
        save_checkpoint(ref, "victim", next_action="New", failed=["x"], now=minute, git=Git(ref))
        news.append(_files(ref))
    states = {"old": 0, "between": 0, "new": 0}
    for root in roots:
        now = _files(root)
        assert set(now) == set(old)
        for name, data in now.items():
            assert data in [old[name]] + [n[name] for n in news], f"{root.name}/{name} torn"
        cp_new = now["checkpoint-victim.md"] != old["checkpoint-victim.md"]
        idx_new = now["MEMORY.md"] != old["MEMORY.md"]
        assert cp_new or not idx_new, "the index was written before the checkpoint"
        states["new" if idx_new else "between" if cp_new else "old"] += 1
        # The next save repairs nothing by hand: it just works, and the root is clean.
        save_checkpoint(root, "victim", next_action="Again", now=NOW, git=Git(root))
        assert [b.name for b in bullets(parse_file(root / "MEMORY.md"))] == ["victim"]
    print(f"save kills: {outcomes}, states {states}")
    assert outcomes.get("killed", 0) >= SAVE_TRIALS // 2


# -- snapshot save ---------------------------------------------------------------------
def _objects(root: Path) -> int:
    """How many loose objects the repository holds (a new one means a save is writing)."""
    base = root / ".git" / "objects"
    return sum(len(os.listdir(d)) for d in base.iterdir() if len(d.name) == 2)


def test_kill_snapshot_save_at_random_points(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    _git(template, "init", "-q", "-b", "main")
    _git(template, "config", "user.name", "Chaos")
    _git(template, "config", "user.email", "chaos@example.com")
    (template / "MEMORY.md").write_text("# Memory\n\n- [notes](notes.md)\n")
    (template / "notes.md").write_text("# Notes\n\nfirst\n")
    _git(template, "add", "MEMORY.md")
    _git(template, "commit", "-q", "-m", "project")
    first = subprocess.run(
        [sys.executable, "-m", "memls", "snapshot", "save", "--initial", "--root", str(template)],
        capture_output=True,
        check=True,
    )
    assert first.returncode == 0
    ref = "refs/memls/template"
    old = ref_commit(template, ref)
    assert old is not None
    (template / "notes.md").write_text("# Notes\n\nsecond\n")
    head = _git(template, "rev-parse", "HEAD")
    rng = random.Random(17)
    outcomes: dict[str, int] = {}
    states = {"old": 0, "new": 0}
    for batch in range(SNAPSHOT_TRIALS // BATCH):
        roots = [tmp_path / f"snap-{batch}-{j}" for j in range(BATCH)]
        for root in roots:
            shutil.copytree(template, root)
        counts = [_objects(root) for root in roots]
        procs = [
            _memls(root, "snapshot", "save", "--expect", old, "--ref", "template", delay=0.3)
            for root in roots
        ]
        # From the first object written (a blob): while git writes blobs, tree and commit,
        # during the pause before the ref moves, or after it moved.
        offsets = [rng.uniform(0.0, 0.7) for _ in procs]
        result = _kill_when(procs, _new_object_in(roots, counts), offsets)
        for r in result:
            outcomes[r] = outcomes.get(r, 0) + 1
        for root in roots:
            time.sleep(0.05)  # a git child of the killed process may still be finishing
            now = ref_commit(root, ref)
            assert now is not None
            states["new" if now != old else "old"] += 1
            if now != old:
                assert _git(root, "rev-parse", f"{now}^") == old
                snap = load_snapshot(root, now)
                assert {i.path for i in snap.items} == {"MEMORY.md", "notes.md"}
            _git(root, "fsck", "--no-progress", "--no-dangling")
            assert _git(root, "rev-parse", "HEAD") == head
            assert _git(root, "symbolic-ref", "HEAD") == "refs/heads/main"
            assert _git(root, "for-each-ref", "--format=%(refname)", "refs/heads") == (
                "refs/heads/main"
            )
            assert _git(root, "status", "--porcelain") == "?? notes.md"
            assert not list(root.glob(".git/refs/memls/*.lock"))
            again = save_snapshot(root, expect=now, ref="template")
            assert again.status in ("saved", "unchanged"), again.message
    print(f"snapshot kills: {outcomes}, ref {states}")
    assert outcomes.get("killed", 0) >= 1


# -- recall backfill -------------------------------------------------------------------
def _store_sound(root: Path) -> None:
    db = root / ".memls" / "recall.db"
    if not db.exists():
        return
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()


def test_kill_backfill_at_random_points(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "MEMORY.md").write_text("# Memory\n")
    for n in range(TOPICS):
        sections = "\n".join(f"## Part {k}\n{f'word{n * 7 + k} ' * 30}\n" for k in range(6))
        (template / f"topic-{n:02d}.md").write_text(f"# Topic {n}\n\n{sections}")
    rng = random.Random(5)
    outcomes: dict[str, int] = {}
    for batch in range(BACKFILL_TRIALS // BATCH):
        roots = [tmp_path / f"fill-{batch}-{j}" for j in range(BATCH)]
        for root in roots:
            shutil.copytree(template, root)
        procs = [_memls(root, "recall", "backfill", "--model", "memls-hash") for root in roots]
        # Backfill pauses DELAY at its commit points (a file batch written, vectors made,
        # vectors stored): a kill within this span lands inside the backfill, at or
        # between those points.
        offsets = [rng.uniform(0.0, 3 * DELAY) for _ in procs]
        # Start the clock when the store appears: the kill lands inside the backfill.
        result = _kill_when(procs, _store_in(roots), offsets)
        for r in result:
            outcomes[r] = outcomes.get(r, 0) + 1
        for root in roots:
            _store_sound(root)
            api.backfill(root, model="memls-hash", lock_timeout=60)
            _store_sound(root)
            conn = sqlite3.connect(root / ".memls" / "recall.db")
            try:
                chunks = {r[0] for r in conn.execute("select id from memls_chunks")}
                vectors = {r[0] for r in conn.execute("select id from embeddings")}
            finally:
                conn.close()
            assert chunks == vectors
            assert len({c.split("#")[0] for c in chunks}) == TOPICS  # every topic file indexed
    print(f"backfill kills: {outcomes}")
    assert outcomes.get("killed", 0) >= 1
