"""Projects, transcripts and hook payloads shaped like Claude Code's, for the agent tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BRANCH = "feature/login"
CLAUDE_CODE_ENV = frozenset(
    {
        "CLAUDE_CONFIG_DIR",
        "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS",
        "CLAUDE_CODE_REMOTE_MEMORY_DIR",
    }
)
"""Claude Code's settings in the environment, kept from the hooks a test runs."""


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
    inherited = {k: v for k, v in os.environ.items() if k not in CLAUDE_CODE_ENV}
    full = {**inherited, "MEMLS_HOOK_BACKFILL": "off", **(env or {})}
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
    assert proc.stdout.strip(), f"memls {' '.join(args)} printed nothing: {proc.stderr}"
    return json.loads(proc.stdout)


def diagnostics(check_json: Any) -> list[dict[str, Any]]:
    """The findings of ``memls check --format json`` (a list, or ``{"diagnostics": [...]}``)."""
    found = check_json["diagnostics"] if isinstance(check_json, dict) else check_json
    assert isinstance(found, list)
    return found


# --- a fake Anthropic API on 127.0.0.1, for the real Claude Code CLI ---------------------------

COMPACT_SUMMARY = (
    "<analysis>\nScratch notes the summariser wrote first.\n</analysis>\n\n"
    "<summary>\n1. Primary Request and Intent:\n   Finish the platypus migration.\n"
    "2. Current Work:\n   The signup form.\n</summary>"
)
"""What the fake model answers a compaction request with (Claude Code's two-part shape)."""


class FakeAnthropic:
    """``POST /v1/messages`` (streamed or not) answered with a short text — a compaction
    request (its prompt asks for an ``<analysis>`` and a ``<summary>`` block) with
    :data:`COMPACT_SUMMARY` — and every request body kept in :attr:`requests`. Each answer
    has its own message id (Claude Code groups a conversation by them)."""

    def __init__(self, answer: str = "OK, noted.", summary: str = COMPACT_SUMMARY) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[dict[str, Any]] = []
        lock = threading.Lock()
        counter = iter(range(1, 1_000_000))
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, data: Any) -> None:
                out = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._json({})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                with lock:
                    fake.requests.append({"path": self.path, "body": body})
                    number = next(counter)
                if "count_tokens" in self.path:
                    self._json({"input_tokens": 100})
                    return
                text = summary if is_compaction(body) else answer
                message = {
                    "id": f"msg_fake_{number:05d}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                }
                if not body.get("stream"):
                    message.update(content=[{"type": "text", "text": text}], stop_reason="end_turn")
                    self._json(message)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                delta = {"type": "text_delta", "text": text}
                end = {"stop_reason": "end_turn", "stop_sequence": None}
                events: list[tuple[str, dict[str, Any]]] = [
                    ("message_start", {"message": message}),
                    (
                        "content_block_start",
                        {"index": 0, "content_block": {"type": "text", "text": ""}},
                    ),
                    ("content_block_delta", {"index": 0, "delta": delta}),
                    ("content_block_stop", {"index": 0}),
                    ("message_delta", {"delta": end, "usage": {"output_tokens": 5}}),
                    ("message_stop", {}),
                ]
                for event, data in events:
                    payload = json.dumps({"type": event, **data})
                    self.wfile.write(f"event: {event}\ndata: {payload}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the ``/v1/messages`` requests (not token counts), in order."""
        return [
            r["body"]
            for r in self.requests
            if r["path"].startswith("/v1/messages") and "count_tokens" not in r["path"]
        ]


def message_text(body: dict[str, Any]) -> str:
    """Every text block of a request's messages, joined."""
    out: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [b.get("text", "") for b in content if isinstance(b, dict)]
    return "\n".join(out)


def is_compaction(body: dict[str, Any]) -> bool:
    """A compaction request: its last message asks for an <analysis> and a <summary>."""
    messages = body.get("messages") or [{}]
    last = message_text({"messages": messages[-1:]})
    return "<analysis>" in last and "<summary>" in last
