"""kill -9 during `memls mv` at each of its writes: the rerun finishes the move.

The move writes the moved file at its new place, then each file linking to it, then removes
the old file; ``MEMLS_TEST_WRITE_DELAY`` holds each write between its temp file and its
rename (``crash_point``), and the test SIGKILLs the command while the k-th temp file
exists, for every k. The same `memls mv` run again must succeed and leave every file byte
for byte as an uninterrupted move does, with no intent left in ``.memls/``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memls.core.fsutil import TEMP_PREFIX
from memls.core.ops.move import INTENT_FILE

DELAY = 0.3
MOVE = ("testing.md", "memory/testing.md")
WRITES = 4  # memory/testing.md, MEMORY.md, deploy.md, notes.md


def _root(base: Path) -> Path:
    root = base / "mem"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Project Memory\n\n## Memory Files\n- [Testing](testing.md)\n- [Deploy](deploy.md)\n",
        encoding="utf-8",
    )
    (root / "testing.md").write_text(
        "# Testing\n\nBefore a release read [Deploy](deploy.md).\n", encoding="utf-8"
    )
    (root / "deploy.md").write_text("# Deploy\n\nRun [the tests](testing.md).\n", "utf-8")
    (root / "notes.md").write_bytes(b"# Notes\n\n- caf\xe2\x80 see [Testing](testing.md) now\n")
    return root


def _run(root: Path, delay: float | None = None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("MEMLS_TEST_WRITE_DELAY", None)
    if delay:
        env["MEMLS_TEST_WRITE_DELAY"] = str(delay)
    return subprocess.Popen(
        [sys.executable, "-m", "memls", "mv", *MOVE, "--root", str(root)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memls" not in p.parts
    }


def _temps(root: Path) -> set[str]:
    found: set[str] = set()
    for folder in (root, root / "memory"):
        with_temp = [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIX)]
        found.update(f"{folder.name}/{n}" for n in with_temp)
    return found


def _kill_at_write(proc: subprocess.Popen[bytes], root: Path, k: int) -> bool:
    """SIGKILL ``proc`` while its k-th write (0-based) is held; False if it finished first."""
    seen: set[str] = set()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        seen |= _temps(root)
        if len(seen) > k:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.002)
    proc.kill()
    raise AssertionError("mv neither wrote nor finished in time")


@pytest.fixture
def expected(tmp_path: Path) -> dict[str, bytes]:
    root = _root(tmp_path / "reference")
    proc = _run(root)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    files = _files(root)
    assert "testing.md" not in files
    assert b"[Testing](memory/testing.md)" in files["notes.md"]
    return files


@pytest.mark.parametrize("k", range(WRITES))
def test_mv_killed_at_each_write_converges_on_rerun(
    tmp_path: Path, expected: dict[str, bytes], k: int
) -> None:
    root = _root(tmp_path / "trial")
    before = _files(root)
    proc = _run(root, DELAY)
    killed = _kill_at_write(proc, root, k)
    assert killed, f"mv finished before its write {k}"
    after_kill = _files(root)
    intent = root / ".memls" / INTENT_FILE
    assert intent.exists()  # recorded before the first write
    for name, data in after_kill.items():  # every file is its old or its new version
        if TEMP_PREFIX in name:
            continue
        assert data in (before.get(name), expected.get(name)), name

    rerun = _run(root)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, (out + err).decode()
    assert b"Finished the interrupted move" in out
    assert not intent.exists()
    assert {n: d for n, d in _files(root).items() if TEMP_PREFIX not in n} == expected

    again = _run(root)
    again.communicate(timeout=120)
    assert again.returncode == 2  # done: there is no testing.md to move any more
    assert {n: d for n, d in _files(root).items() if TEMP_PREFIX not in n} == expected
