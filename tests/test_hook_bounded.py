"""A hook never blocks: a held root lock and a FIFO where a hook reads end it in seconds.

Each case runs ``python -m memls hook EVENT`` with Claude Code's JSON on stdin, as in
``test_hook.py``, and asserts exit status 0, one stderr line and a bounded wall time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memls.core.fsutil import LockTimeoutError, lock_wait, root_lock
from tests.agent_fixtures import make_project, payload, run_hook, write_turns

BOUND = 8.0
"""Seconds a hook may take here (interpreter start included); Claude Code's timeout is longer."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    folder = tmp_path / "claude-sessions"
    folder.mkdir()
    path = folder / "0f3c2a.jsonl"
    write_turns(path, [("How do we hash passwords?", "We use argon2id, decided after review.")])
    return path


def _hook_data(event: str, project: Path, transcript: Path) -> dict[str, object]:
    if event == "post-compact":
        return payload(
            "PostCompact", project, transcript, trigger="auto", compact_summary="Kept argon2id."
        )
    name = "PreCompact" if event == "pre-compact" else "SessionEnd"
    return payload(name, project, transcript, trigger="auto", reason="exit")


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("event", ["pre-compact", "post-compact", "session-end"])
def test_a_hook_gives_up_on_a_root_lock_held_by_another_process(
    event: str, project: Path, transcript: Path
) -> None:
    log_before = (project / "LOG.md").exists()
    with root_lock(project):  # another memls writer holds the root the whole time
        started = time.monotonic()
        proc = run_hook(
            event,
            _hook_data(event, project, transcript),
            cwd=project,
            env={"MEMLS_HOOK_LOCK_TIMEOUT": "0.5"},
        )
        elapsed = time.monotonic() - started
    assert proc.returncode == 0
    assert elapsed < BOUND, elapsed
    assert proc.stdout == ""
    line = _one_line(proc.stderr)
    assert line.startswith(f"memls hook {event}: ")
    assert "holds the lock" in line
    assert "gave up after 0.5 s" in line
    assert not (project / "transcripts" / transcript.name).exists()  # nothing written
    assert (project / "LOG.md").exists() == log_before
    # The lock released, the same hook goes through.
    again = run_hook(event, _hook_data(event, project, transcript), cwd=project)
    assert again.returncode == 0
    assert "holds the lock" not in again.stderr


def test_the_default_lock_wait_is_short(
    project: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMLS_HOOK_LOCK_TIMEOUT", raising=False)
    with root_lock(project):
        started = time.monotonic()
        proc = run_hook("pre-compact", _hook_data("pre-compact", project, transcript), cwd=project)
        elapsed = time.monotonic() - started
    assert proc.returncode == 0
    assert elapsed < BOUND, elapsed
    assert "gave up after 2 s" in _one_line(proc.stderr)


def test_a_fifo_at_the_archive_path_does_not_block_pre_compact(
    project: Path, transcript: Path
) -> None:
    folder = project / "transcripts"
    folder.mkdir(mode=0o700)
    os.mkfifo(folder / transcript.name)
    started = time.monotonic()
    proc = run_hook("pre-compact", _hook_data("pre-compact", project, transcript), cwd=project)
    assert time.monotonic() - started < BOUND
    assert proc.returncode == 0
    assert "not a regular file" in _one_line(proc.stderr)


def test_a_fifo_as_the_transcript_does_not_block_pre_compact(project: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    proc = run_hook("pre-compact", _hook_data("pre-compact", project, fifo), cwd=project)
    assert time.monotonic() - started < BOUND
    assert proc.returncode == 0
    assert "is not a file" in _one_line(proc.stderr)


@pytest.mark.parametrize("event", ["pre-compact", "post-compact", "session-end", "session-start"])
@pytest.mark.parametrize("name", [".handoff.md", "LOG.md"])
def test_a_fifo_where_a_hook_reads_a_memory_file_does_not_block_it(
    event: str, name: str, project: Path, transcript: Path
) -> None:
    os.mkfifo(project / name)
    data = (
        payload("SessionStart", project, transcript, source="compact")
        if event == "session-start"
        else _hook_data(event, project, transcript)
    )
    started = time.monotonic()
    proc = run_hook(event, data, cwd=project)
    assert time.monotonic() - started < BOUND
    assert proc.returncode == 0
    line = _one_line(proc.stderr)
    assert name in line
    assert "not a regular file" in line


def test_root_lock_waits_only_as_long_as_asked(tmp_path: Path) -> None:
    with root_lock(tmp_path):
        started = time.monotonic()
        with pytest.raises(LockTimeoutError), root_lock(tmp_path, timeout=0.2):
            pass
        assert time.monotonic() - started < 2
        with pytest.raises(LockTimeoutError), lock_wait(0.1), root_lock(tmp_path):
            pass
    with lock_wait(0.1), root_lock(tmp_path):  # free: taken at once
        pass
    with root_lock(tmp_path):  # outside lock_wait: the unbounded lock, as before
        pass
