"""Concurrent saves never lose a bullet; a SIGKILLed save leaves every file old or new.

The 16-way rounds run in a pool of long-lived worker processes (memls imported once),
released together by a barrier, so each save still races the others for the root's
inter-process lock. One round also goes through 16 real ``memls`` command processes.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from memls.core.formats.index import bullets
from memls.core.fsutil import TEMP_PREFIX
from memls.core.gitfacade import Git
from memls.core.ops.checkpoint import save_checkpoint
from memls.core.parse import parse_file
from memls.core.rules import check_document
from memls.core.workspace import Workspace

NOW = dt.datetime(2026, 11, 30, 12, 0)
WORKERS = 16
ROUNDS = 20
_barrier: Barrier | None = None


def _init(barrier: Barrier) -> None:
    global _barrier
    _barrier = barrier


def _save_one(job: tuple[str, str, str]) -> str:
    root, name, next_action = job
    assert _barrier is not None
    _barrier.wait()
    result = save_checkpoint(
        Path(root), name, next_action=next_action, now=NOW, git=Git(Path(root))
    )
    return str(result.data["name"])


def _assert_healthy(root: Path, expected: set[str], now: dt.datetime = NOW) -> None:
    """Every bullet is there once, and the rules find nothing at all in any file.

    No finding of any code or severity is tolerated, in MEMORY.md (IX: layout, duplicates,
    orphans, form) or in the checkpoints (CP). The checks use the clock the saves used
    (``now``), so CP004 (future) and CP022 (stale) cannot fire from a clock difference;
    tmp_path is outside any git repository, so CP020/CP021 (branch gone / other branch)
    have no git to consult. Nothing is excluded.
    """
    index = root / "MEMORY.md"
    doc = parse_file(index)
    names = [b.name for b in bullets(doc)]
    assert sorted(names) == sorted(expected), "a bullet was lost or duplicated"
    # The rules do not flag a repeated section (yet): count it here.
    assert doc.lines.count("## Active Checkpoints") == 1, "the section was written twice"
    ws = Workspace(root)
    findings = {
        path.name: [
            (d.code, d.severity.name, d.message)
            for d in check_document(ws, parse_file(path), now=now)
        ]
        for path in sorted(root.glob("*.md"))
    }
    assert findings == {p: [] for p in findings}
    assert set(findings) == {"MEMORY.md"} | {f"checkpoint-{n}.md" for n in expected}
    assert not [p.name for p in root.iterdir() if p.name.startswith(TEMP_PREFIX)]
    for name in expected:
        assert (root / f"checkpoint-{name}.md").read_text().startswith(f"# Checkpoint: {name}\n")


@pytest.fixture(scope="module")
def pool() -> Iterator[mp.pool.Pool]:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(WORKERS)
    with ctx.Pool(WORKERS, initializer=_init, initargs=(barrier,)) as workers:
        yield workers


def test_sixteen_concurrent_saves_twenty_rounds(tmp_path: Path, pool: mp.pool.Pool) -> None:
    started = time.monotonic()
    for round_no in range(ROUNDS):
        root = tmp_path / f"round-{round_no}"
        root.mkdir()
        if round_no % 2:
            (root / "MEMORY.md").write_text("# Memory\n\n## Stable\nkeep me\n")
        jobs = [(str(root), f"w{i:02d}", f"Task {i}") for i in range(WORKERS)]
        names = pool.map(_save_one, jobs, chunksize=1)
        _assert_healthy(root, set(names))
        if round_no % 2:
            assert (root / "MEMORY.md").read_text().endswith("\n## Stable\nkeep me\n")
    elapsed = time.monotonic() - started
    print(f"{ROUNDS} rounds x {WORKERS} concurrent saves: {elapsed:.1f}s")


def test_same_name_leaves_one_complete_version(tmp_path: Path, pool: mp.pool.Pool) -> None:
    variants = [f"Variant {i}" for i in range(WORKERS)]
    expected: set[str] = set()
    for i, variant in enumerate(variants):
        ref = tmp_path / f"ref-{i}"
        ref.mkdir()
        save_checkpoint(ref, "shared", next_action=variant, now=NOW, git=Git(ref))
        expected.add((ref / "checkpoint-shared.md").read_text())
    root = tmp_path / "race"
    root.mkdir()
    pool.map(_save_one, [(str(root), "shared", v) for v in variants], chunksize=1)
    assert (root / "checkpoint-shared.md").read_text() in expected
    assert [b.name for b in bullets(parse_file(root / "MEMORY.md"))] == ["shared"]


def _memls(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "memls", "checkpoint", "save", *args, "--root", str(root)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


def test_sixteen_cli_processes_at_once(tmp_path: Path) -> None:
    procs = [_memls(tmp_path, f"cli-{i}", "--next", f"Do {i}") for i in range(WORKERS)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    # The command processes read the real clock: check against it.
    _assert_healthy(tmp_path, {f"cli-{i}" for i in range(WORKERS)}, now=dt.datetime.now())


# -- crash safety --------------------------------------------------------------
TRIALS = 50
BATCH = 5
DELAY = 0.12  # seconds each atomic write sleeps between its temp file and the rename
OLD_INDEX = "# Memory\n\n## Stable\nkeep\n"


def _old_state(root: Path) -> None:
    root.mkdir()
    (root / "MEMORY.md").write_text(OLD_INDEX)
    save_checkpoint(root, "victim", next_action="Old action", now=NOW, git=Git(root))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(root.iterdir())
        if p.is_file() and not p.name.startswith(TEMP_PREFIX)
    }


def _new_states(template: Path, work: Path, minutes: set[dt.datetime]) -> list[dict[str, bytes]]:
    """What the save produces when it completes, for each minute it may have read the clock in."""
    out = []
    for i, minute in enumerate(sorted(minutes)):
        ref = work / f"ref-{i}"
        shutil.copytree(template, ref)
        save_checkpoint(
            ref, "victim", next_action="New action", failed=["it broke"], now=minute, git=Git(ref)
        )
        out.append(_snapshot(ref))
    return out


def _kill_in_write_path(
    procs: list[tuple[subprocess.Popen[bytes], float]], roots: list[Path]
) -> None:
    """SIGKILL each save a random time after its first temp file appears (or at once on exit).

    Waiting for the temp file puts the kills inside the write path — during the checkpoint
    write, between the two writes, during the index write, or just after — instead of
    mostly during interpreter start-up.
    """
    kill_at: list[float | None] = [None] * len(procs)
    done = [False] * len(procs)
    deadline = time.monotonic() + 60
    while not all(done) and time.monotonic() < deadline:
        now = time.monotonic()
        for i, ((proc, offset), root) in enumerate(zip(procs, roots, strict=True)):
            if done[i]:
                continue
            if proc.poll() is not None:
                done[i] = True
            elif kill_at[i] is None:
                if any(p.name.startswith(TEMP_PREFIX) for p in root.iterdir()):
                    kill_at[i] = now + offset
            elif now >= kill_at[i]:  # type: ignore[operator]
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
                done[i] = True
        time.sleep(0.003)
    for proc, _ in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def test_sigkill_mid_save_leaves_old_or_new_files(tmp_path: Path) -> None:
    template = tmp_path / "template"
    _old_state(template)
    old = _snapshot(template)
    env = {**os.environ, "MEMLS_TEST_WRITE_DELAY": str(DELAY)}
    rng = random.Random(4)
    outcomes: dict[str, int] = {}
    minutes: set[dt.datetime] = set()
    roots: list[Path] = []
    started = time.monotonic()
    for batch in range(TRIALS // BATCH):
        minutes.add(dt.datetime.now().replace(second=0, microsecond=0))
        procs = []
        for j in range(BATCH):
            root = tmp_path / f"trial-{batch}-{j}"
            shutil.copytree(template, root)
            roots.append(root)
            procs.append(
                (
                    _memls(root, "victim", "--next", "New action", "--failed", "it broke", env=env),
                    rng.uniform(0.0, 3.2 * DELAY),
                )
            )
        _kill_in_write_path(procs, roots[-BATCH:])
        minutes.add(dt.datetime.now().replace(second=0, microsecond=0))
    new_states = _new_states(template, tmp_path, minutes)
    for root in roots:
        state = _snapshot(root)
        for name, data in state.items():
            versions = [old.get(name)] + [s.get(name) for s in new_states]
            assert data in versions, f"{root.name}/{name} is neither its old nor its new version"
        assert set(state) == set(old)
        cp_new = state["checkpoint-victim.md"] != old["checkpoint-victim.md"]
        idx_new = state["MEMORY.md"] != old["MEMORY.md"]
        kind = {(False, False): "old", (True, False): "between", (True, True): "new"}.get(
            (cp_new, idx_new), "index-before-checkpoint"
        )
        assert kind != "index-before-checkpoint", "the index was written before the checkpoint"
        outcomes[kind] = outcomes.get(kind, 0) + 1
    print(f"{TRIALS} kills in {time.monotonic() - started:.1f}s: {outcomes}")
    assert sum(outcomes.values()) == TRIALS
    # The kills did land inside the write path, not only before it.
    assert outcomes.get("between", 0) + outcomes.get("new", 0) > 0
