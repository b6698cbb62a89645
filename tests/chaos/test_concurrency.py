"""Every writer against every other, at once, on one memory root; invariants checked after.

Each round releases a mix of operations together (a barrier in a pool of forked worker
processes, so they race for real): checkpoint saves, clears, resume --consume, index
migrate, LOG appends, snapshot saves (compare-and-swap, retried on a lost race), recall
backfills, handoff refreshes, a bundle approval and a snapshot restore into another
folder. After the round:

- MEMORY.md's bullets are exactly the checkpoint files there are, each once, in one
  ``## Active Checkpoints`` section, the user's other sections are byte-identical, and
  the legacy section was moved into exactly one checkpoint;
- LOG.md starts with its old bytes and holds every appended entry exactly once;
- the snapshot ref is a chain with one commit per successful save, every commit a
  readable snapshot; HEAD, the branch, the index and the work tree are untouched;
- the recall store passes SQLite's integrity check, its chunks and embeddings agree, and
  every backfill finished (they wait for each other);
- no temp file is left and none is listed in a checkpoint's Modified Files; no byte was
  replaced by U+FFFD.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import multiprocessing as mp
import random
import sqlite3
import subprocess
from collections.abc import Iterator
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

from memls.core.formats.index import bullets
from memls.core.fsutil import TEMP_PREFIX
from memls.core.gitfacade import Git
from memls.core.ops import ConflictError
from memls.core.ops.bundle import approve_bundle
from memls.core.ops.checkpoint import clear_checkpoint, resume_checkpoint, save_checkpoint
from memls.core.ops.handoff import write_handoff
from memls.core.ops.index import migrate_index
from memls.core.ops.log import append_log
from memls.core.parse import parse_file
from memls.core.recall import api
from memls.core.snapshot import load_snapshot, restore_snapshot, save_snapshot, snapshot_head

NOW = dt.datetime(2026, 11, 30, 12, 0)
WORKERS = 14
ROUNDS = 3
STABLE = "## Stable\nkeep \u00e9 me\n"
LEGACY = "\n## Current State\nlegacy \u00e9 state, moved once\n"
LOG_START = "# Log\n\n## 2026-11-01 10:00 — first\n\nold é text\n".encode()
BUNDLE = """
## Checkpoint Bundle

### 1. Memory
- [ ] memory
### 2. Index
- [ ] index
### 3. Log
- [ ] log
### 4. Transcript
- [ ] transcript
### 5. Recall
- [ ] recall
"""

_barrier: Barrier | None = None


def _init(barrier: Barrier) -> None:
    global _barrier
    _barrier = barrier


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True, text=True)
    return proc.stdout.strip()


def _snapshot_until_saved(root: Path) -> str:
    """A snapshot save as a careful client does it: expect what the ref holds, retry on a race."""
    for _ in range(60):
        head = snapshot_head(root)
        result = save_snapshot(root, expect=head, initial=head is None)
        if result.status in ("saved", "unchanged"):
            return f"{result.status}:{result.commit}"
        assert result.status == "conflict", result.message
    raise AssertionError("60 lost races in a row")


def _work(job: tuple[str, str, int]) -> tuple[str, str]:
    kind, root_text, n = job
    root = Path(root_text)
    assert _barrier is not None
    _barrier.wait()
    git = Git(root)
    if kind == "save":
        save_checkpoint(root, f"w{n}", next_action=f"Task {n}", now=NOW, git=git)
        return kind, f"w{n}"
    if kind == "clear":
        cleared = clear_checkpoint(root, f"old{n}")
        return kind, ",".join(cleared.data["cleared"])
    if kind == "log":
        append_log(root, f"entry {n}", f"body {n}", now=NOW)
        return kind, f"entry {n}"
    if kind == "snapshot":
        return kind, _snapshot_until_saved(root)
    if kind == "backfill":
        result = api.backfill(root, model="memls-hash", lock_timeout=120)
        return kind, str(result.get("files"))
    if kind == "migrate":
        migrate_index(root, "moved", now=NOW, git=git)
        return kind, "ok"
    if kind == "consume":
        resume_checkpoint(root, f"old{2 + n}", consume=True, git=git)
        return kind, f"old{2 + n}"
    if kind == "handoff":
        write_handoff(root, refresh=True, now=NOW, git=git)
        return kind, "ok"
    if kind == "approve":
        approve_bundle(root, root / "checkpoint-bundle.md", now=NOW)
        return kind, "ok"
    if kind == "restore":
        head = snapshot_head(root)
        if head is None:
            return kind, "none"
        restore_snapshot(root, head, to=root.parent / f"restored-{n}")
        return kind, head
    raise AssertionError(kind)


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(WORKERS)
    with ctx.Pool(WORKERS, initializer=_init, initargs=(barrier,)) as workers:
        yield workers


def _make_root(base: Path) -> tuple[Path, str]:
    root = base / "repo"
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Chaos")
    _git(root, "config", "user.email", "chaos@example.com")
    (root / "src.py").write_text("x = 1\n")
    (root / "notes.md").write_text("# Notes\n\n## Garden\nwater the tomatoes\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "project")
    (root / "src.py").write_text("x = 2\n")  # the session's work: a modified file
    (root / "MEMORY.md").write_text("# Memory\n\n" + STABLE)
    for n in range(3):
        save_checkpoint(root, f"old{n}", next_action=f"Old {n}", now=NOW, git=Git(root))
    (root / "LOG.md").write_bytes(LOG_START)
    save_checkpoint(root, "bundle", next_action="Approve it", now=NOW, git=Git(root))
    with (root / "checkpoint-bundle.md").open("a") as handle:
        handle.write(BUNDLE)
    write_handoff(root, now=NOW, git=Git(root))
    # A legacy section: the first save or migrate to run moves it into its checkpoint.
    with (root / "MEMORY.md").open("a") as handle:
        handle.write(LEGACY)
    return root, _git(root, "rev-parse", "HEAD")


def _jobs(root: Path, rng: random.Random) -> list[tuple[str, str, int]]:
    kinds = ["save"] * 3 + ["clear", "clear", "log", "log", "snapshot", "snapshot"]
    kinds += ["backfill", "backfill", "handoff", "migrate", "consume"]
    rng.shuffle(kinds)
    kinds = [*kinds[: WORKERS - 1], rng.choice(["approve", "restore"])]
    counters: dict[str, int] = {}
    jobs = []
    for kind in kinds:
        n = counters.get(kind, 0)
        counters[kind] = n + 1
        jobs.append((kind, str(root), n))
    return jobs


def _check(root: Path, head: str, results: list[tuple[str, str]], legacy: bool = True) -> None:
    done = {kind: [v for k, v in results if k == kind] for kind in {k for k, _ in results}}
    files = {
        p.name.removeprefix("checkpoint-").removesuffix(".md") for p in root.glob("checkpoint-*.md")
    }
    # MEMORY.md: bullets == checkpoint files, one section, the user's section intact.
    index = parse_file(root / "MEMORY.md")
    names = [b.name for b in bullets(index)]
    assert sorted(names) == sorted(set(names)), "a bullet is duplicated"
    assert set(names) == files, "bullets and checkpoint files disagree"
    for name in done.get("save", []):
        assert name in files
    cleared = {c for value in done.get("clear", []) for c in value.split(",") if c}
    assert not cleared & files
    assert index.lines.count("## Active Checkpoints") == 1
    index_text = (root / "MEMORY.md").read_text()
    assert STABLE in index_text
    moved_to = [p.name for p in root.glob("checkpoint-*.md") if "legacy é state" in p.read_text()]
    if not legacy:
        assert not moved_to
    elif "## Current State" in index_text:  # nothing that migrates ran this time
        assert not moved_to
        assert not done.get("save")
        assert not done.get("migrate")
    else:
        where = [p.name for p in root.rglob("*") if p.is_file() and b"legacy" in p.read_bytes()]
        assert len(moved_to) == 1, f"the legacy section was moved {len(moved_to)} times: {where}"
    for name in done.get("consume", []):
        assert name not in files
    # LOG.md: old bytes first, every entry once.
    log = (root / "LOG.md").read_bytes()
    assert log.startswith(LOG_START)
    for entry in done.get("log", []):
        assert log.count(f" \u2014 {entry}\n".encode()) == 1, entry
    # Snapshots: a chain, one commit per save; git's own state untouched.
    saved = [v.split(":", 1)[1] for v in done.get("snapshot", []) if v.startswith("saved:")]
    tip = snapshot_head(root)
    if saved:
        assert tip is not None
        chain = _git(root, "rev-list", tip).split()
        assert set(saved) <= set(chain), "a saved snapshot is not on the ref"
        for commit in chain:
            load_snapshot(root, commit)
    assert _git(root, "rev-parse", "HEAD") == head
    assert _git(root, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert _git(root, "diff", "--cached", "--name-only") == ""
    assert _git(root, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags") == (
        "refs/heads/main"
    )
    # Recall: a sound store.
    db = root / ".memls" / "recall.db"
    if db.exists():
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
            chunks = {r[0] for r in conn.execute("select id from memls_chunks")}
            vectors = {r[0] for r in conn.execute("select id from embeddings")}
            assert chunks == vectors
        finally:
            conn.close()
    # The other writers did their part.
    if done.get("approve"):
        assert "Approved: 2026-11-30 12:00" in (root / "checkpoint-bundle.md").read_text()
    for value in done.get("backfill", []):
        assert value != "None"
    for n, commit in enumerate(done.get("restore", [])):
        if commit != "none":
            snap = load_snapshot(root, commit)
            for item in snap.items:
                restored = (root.parent / f"restored-{n}" / item.path).read_bytes()
                assert hashlib.sha256(restored).hexdigest() == item.sha256
    # No temp files anywhere, none recorded as work; no replacement characters.
    assert not list(root.rglob(f"{TEMP_PREFIX}*"))
    for path in root.glob("*.md"):
        data = path.read_bytes()
        assert TEMP_PREFIX.encode() not in data, f"{path.name} lists a temp file"
        assert b"\xef\xbf\xbd" not in data, path.name


def test_every_writer_against_every_other(tmp_path: Path, pool: Any) -> None:
    rng = random.Random(15)
    for round_no in range(ROUNDS):
        root, head = _make_root(tmp_path / f"round-{round_no}")
        results = pool.map(_work, _jobs(root, rng), chunksize=1)
        _check(root, head, results)
        # The store is usable afterwards: one more backfill changes nothing it should not.
        again = api.backfill(root, model="memls-hash")
        assert again["files"] is not None


def test_parallel_saves_record_no_temp_files(tmp_path: Path, pool: Any) -> None:
    """Issue 15 item 8 under load: saves of other processes never show in Modified Files."""
    root, head = _make_root(tmp_path)
    jobs = [("save", str(root), n) for n in range(WORKERS)]
    results = pool.map(_work, jobs, chunksize=1)
    _check(root, head, results)
    for n in range(WORKERS):
        text = (root / f"checkpoint-w{n}.md").read_text()
        assert "- src.py (M)" in text.split("## Modified Files", 1)[1]


def test_same_checkpoint_saved_while_cleared(tmp_path: Path, pool: Any) -> None:
    """Saves and clears of one name interleave: at the end file and bullet agree."""
    root, head = _make_root(tmp_path)
    path = root / "MEMORY.md"  # no legacy section: a clear may delete where a save moved it
    path.write_text(path.read_text().replace(LEGACY, ""))
    jobs: list[tuple[str, str, int]] = []
    for n in range(WORKERS):
        jobs.append(("save", str(root), 0) if n % 2 else ("clear", str(root), 0))
    results = pool.map(_work_same, jobs, chunksize=1)
    assert all(isinstance(r, str) for r in results)
    index = parse_file(root / "MEMORY.md")
    names = [b.name for b in bullets(index)]
    present = (root / "checkpoint-shared.md").exists()
    assert names.count("shared") == (1 if present else 0)
    _check(root, head, [], legacy=False)


def _work_same(job: tuple[str, str, int]) -> str:
    kind, root_text, _ = job
    root = Path(root_text)
    assert _barrier is not None
    _barrier.wait()
    try:
        if kind == "save":
            save_checkpoint(root, "shared", next_action="Same", now=NOW, git=Git(root))
        else:
            clear_checkpoint(root, "shared")
    except ConflictError as exc:  # pragma: no cover - saves here never pass --expect-sha
        return f"conflict {exc}"
    return kind
