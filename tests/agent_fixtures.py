"""Projects, transcripts and hook payloads shaped like Claude Code's, for the agent tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BRANCH = "feature/login"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_project(tmp_path: Path, branch: str = BRANCH) -> Path:
    """A git repository on ``branch`` that is also a flat memory root (recall: memls-hash)."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", branch)
    git(
        project,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@e",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "init",
    )
    (project / "memls.toml").write_text('recall_model = "memls-hash"\n', encoding="utf-8")
    (project / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    return project


def turn(role: str, text: str, session: str = "sess-1", n: int = 0) -> str:
    """One Claude Code JSONL record (the fields a real session file has)."""
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    record = {
        "type": role,
        "uuid": f"{session}-{role}-{n}",
        "sessionId": session,
        "timestamp": f"2026-11-30T10:{n // 60:02d}:{n % 60:02d}.000Z",
        "cwd": "/work/project",
        "gitBranch": BRANCH,
        "message": {"role": role, "content": content},
    }
    return json.dumps(record) + "\n"


def write_turns(path: Path, pairs: list[tuple[str, str]], start: int = 0) -> None:
    """Append user/assistant pairs to a transcript file."""
    with path.open("a", encoding="utf-8") as handle:
        for i, (question, answer) in enumerate(pairs, start=start):
            handle.write(turn("user", question, n=2 * i))
            handle.write(turn("assistant", answer, n=2 * i + 1))


def payload(event: str, cwd: Path, transcript: Path | None = None, **extra: Any) -> dict[str, Any]:
    """A hook input as Claude Code sends it (common fields + the event's own)."""
    data: dict[str, Any] = {
        "session_id": "sess-1",
        "transcript_path": str(transcript) if transcript else "",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    data.update(extra)
    return data


def run_hook(
    event: str,
    data: dict[str, Any] | str,
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """``memls hook EVENT`` as Claude Code runs it: JSON on stdin, in the session's cwd."""
    full = {**os.environ, "MEMLS_HOOK_BACKFILL": "off", **(env or {})}
    stdin = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(
        [sys.executable, "-m", "memls", "hook", event, *args],
        input=stdin,
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def memls_json(cwd: Path, *args: str) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "memls", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    return json.loads(proc.stdout)


def diagnostics(check_json: Any) -> list[dict[str, Any]]:
    """The findings of ``memls check --format json`` (a list, or ``{"diagnostics": [...]}``)."""
    found = check_json["diagnostics"] if isinstance(check_json, dict) else check_json
    assert isinstance(found, list)
    return found
