"""Chaos: hypothesis-generated JSON-RPC traffic against a live ``memls serve`` over stdio.

Each example starts a fresh server on a small memory root and pipes a generated sequence at
it: opens (some documents large enough to be parsed off the worker and to get only the
cheap rules), random incremental and whole edits, closes, requests with valid and
out-of-range positions, requests with params that do not fit, unknown methods, cancels,
and broken framing (a non-numeric or missing ``Content-Length``, garbage between messages,
bodies shorter or longer than announced, bodies that are not JSON). Then ``shutdown`` and
``exit``.

The properties, with hard deadlines so a hang fails instead of stalling CI:

- every request sent with proper framing gets exactly one response;
- after the chaos, ``shutdown`` is answered and ``exit`` ends the process with code 0;
- nothing is logged at Error level (invalid input is the client's mistake, reported as a
  Warning; an Error would be a handler that crashed).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.lsp_helpers import make_project

SERVER = [sys.executable, "-m", "memls", "serve"]
DEADLINE = 40.0
"""Seconds one example may take from its first message to the server's exit."""

EXAMPLES = int(os.environ.get("MEMLS_CHAOS_EXAMPLES", "4"))

LARGE_LIMIT = 40_000
"""``largeDocumentBytes`` for the session: big generated documents get the cheap rules."""


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@dataclass
class Session:
    """A live server, a thread reading what it writes, and the requests awaiting answers."""

    proc: subprocess.Popen[bytes]
    messages: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)
    seen: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    next_id: int = 1000
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        self.messages.put(None)
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if length is None:
                    self.problems.append("the server wrote a message without Content-Length")
                    continue
                message = json.loads(out.read(length))
                if "method" in message and "id" in message:  # a request to the client
                    self.write(
                        frame(
                            json.dumps(
                                {"jsonrpc": "2.0", "id": message["id"], "result": None}
                            ).encode()
                        )
                    )
                self.messages.put(message)
        except (ValueError, OSError) as exc:
            self.problems.append(f"unreadable output from the server: {exc!r}")
            self.messages.put(None)

    def write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        with self.lock:
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, OSError) as exc:
                self.problems.append(f"could not write to the server: {exc!r}")

    def request(self, method: str, params: object) -> int:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.write(frame(json.dumps(body).encode()))
        return self.next_id

    def notify(self, method: str, params: object) -> None:
        self.write(
            frame(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode())
        )

    def wait_for(self, ids: set[int], deadline: float) -> None:
        """Until every id in ``ids`` is answered (fails at ``deadline`` or if the server ends)."""
        answered = {m.get("id") for m in self.seen if "result" in m or "error" in m}
        while not ids <= answered:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(ids - answered)
                raise AssertionError(f"no response within the deadline to requests {missing[:20]}")
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                missing = sorted(ids - answered)
                raise AssertionError(f"the server ended without answering {missing[:20]}")
            self.seen.append(message)
            if "result" in message or "error" in message:
                answered.add(message.get("id"))


# -- traffic ------------------------------------------------------------------------------

DOCS = ("MEMORY.md", "notes.md", "checkpoint-feat-login.md", "big.md", "../outside.md")
REQUESTS = (
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentSymbol",
    "textDocument/foldingRange",
    "textDocument/documentLink",
    "textDocument/codeAction",
    "textDocument/codeLens",
    "textDocument/prepareRename",
    "workspace/symbol",
)

texts = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.sampled_from(list("- *#`[]()\n\r\t:abc✓😀\u2028\x00")), max_size=300),
    st.sampled_from(
        [
            "# Project Memory\n\n## Active Checkpoints\n- **feat-login** (feat/login, Nov 30 12:00) — x\n",
            "- **Branch:** `main`\n- **Saved:** 2026-11-30 12:00\n## Next Action: go\n",
            "[a](notes.md) [[notes]] `checkpoint-feat-login.md` continue feat-login\n",
        ]
    ),
)
positions = st.fixed_dictionaries(
    {"line": st.integers(0, 60) | st.integers(0, 2**31 - 1), "character": st.integers(0, 300)}
)
ranges = st.fixed_dictionaries({"start": positions, "end": positions})
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def operations(draw: st.DrawFn, framing: bool) -> list[tuple[str, Any]]:
    ops: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(8, 30))):
        kinds = ["open", "change", "close", "request", "bad_params", "unknown", "cancel"]
        if framing:
            kinds += ["broken"] * 3
        kind = draw(st.sampled_from(kinds))
        doc = draw(st.sampled_from(DOCS))
        if kind == "open":
            big = doc == "big.md" and draw(st.booleans())
            text = "# Big\n" + "- a line of memory text\n" * 20_000 if big else draw(texts)
            ops.append(("open", (doc, text)))
        elif kind == "change":
            whole = draw(st.booleans())
            change: dict[str, Any] = {"text": draw(texts)}
            if not whole:
                change["range"] = draw(ranges)
            ops.append(("change", (doc, change)))
        elif kind == "close":
            ops.append(("close", doc))
        elif kind == "request":
            ops.append(
                ("request", (draw(st.sampled_from(REQUESTS)), doc, draw(positions), draw(ranges)))
            )
        elif kind == "bad_params":
            ops.append(("bad_params", (draw(st.sampled_from(REQUESTS)), draw(junk))))
        elif kind == "unknown":
            ops.append(
                ("unknown", draw(st.sampled_from(["memls/nope", "textDocument/inlayHint", "$/x"])))
            )
        elif kind == "cancel":
            ops.append(("cancel", draw(st.integers(0, 1100))))
        else:
            ops.append(("broken", draw(broken_frames())))
    return ops


@st.composite
def broken_frames(draw: st.DrawFn) -> bytes:
    request = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": draw(st.integers(1, 999)),
            "method": "textDocument/hover",
            "params": {},
        }
    ).encode()
    return draw(
        st.sampled_from(
            [
                b"Content-Length: abc\r\n\r\n" + request,
                request,  # no header at all
                b"Content-Length: 5\r\n\r\n" + request,  # shorter than the body
                b"Content-Length: 99999\r\n\r\n" + request[:20],  # longer than what follows
                b"Content-Length: 12\r\n\r\nnot json at!",
                b"Content-Length: 7\r\n\r\n[1,2,3]",
                b"\r\n\r\n",
                b"Content-Type: text/plain\r\n\r\n" + request,
                b"Content-Length: -4\r\n\r\n",
                b"Content-Length: 99999999999999\r\n\r\n",
            ]
        )
        | st.binary(max_size=60)
    )


def uri_of(root: Path, doc: str) -> str:
    return (root / doc).resolve().as_uri()


def run_session(root: Path, ops: list[tuple[str, Any]]) -> None:
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    session = Session(proc)
    session.start()
    deadline = time.monotonic() + DEADLINE
    try:
        pending: set[int] = set()
        init = session.request(
            "initialize",
            {
                "capabilities": {},
                "rootUri": root.parent.resolve().as_uri(),
                "initializationOptions": {"largeDocumentBytes": LARGE_LIMIT},
            },
        )
        session.wait_for({init}, deadline)
        session.notify("initialized", {})
        versions: dict[str, int] = {}
        for kind, arg in ops:
            if kind == "open":
                doc, text = arg
                versions[doc] = versions.get(doc, 0) + 1
                session.notify(
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": uri_of(root, doc),
                            "languageId": "markdown",
                            "version": versions[doc],
                            "text": text,
                        }
                    },
                )
            elif kind == "change":
                doc, change = arg
                versions[doc] = versions.get(doc, 0) + 1
                session.notify(
                    "textDocument/didChange",
                    {
                        "textDocument": {"uri": uri_of(root, doc), "version": versions[doc]},
                        "contentChanges": [change],
                    },
                )
            elif kind == "close":
                session.notify(
                    "textDocument/didClose", {"textDocument": {"uri": uri_of(root, arg)}}
                )
            elif kind == "request":
                method, doc, pos, rng = arg
                ident = {"uri": uri_of(root, doc)}
                params: dict[str, Any] = {"textDocument": ident, "position": pos}
                if method in (
                    "textDocument/documentSymbol",
                    "textDocument/foldingRange",
                    "textDocument/documentLink",
                    "textDocument/codeLens",
                ):
                    params = {"textDocument": ident}
                elif method == "textDocument/codeAction":
                    params = {"textDocument": ident, "range": rng, "context": {"diagnostics": []}}
                elif method == "textDocument/references":
                    params["context"] = {"includeDeclaration": True}
                elif method == "workspace/symbol":
                    params = {"query": "feat"}
                pending.add(session.request(method, params))
            elif kind == "bad_params":
                method, params = arg
                pending.add(session.request(method, params))
            elif kind == "unknown":
                pending.add(session.request(arg, {}))
            elif kind == "cancel":
                session.notify("$/cancelRequest", {"id": arg})
            else:
                session.write(arg)
        # A frame announcing more bytes than were sent swallows what follows until the next
        # header: a last well-formed message makes sure that header comes.
        session.notify("$/memls/chaos", {})
        session.wait_for(pending, deadline)
        shutdown = session.request("shutdown", None)
        session.wait_for({shutdown}, deadline)
        session.notify("exit", None)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        assert code == 0, f"exit code {code}"
        assert session.problems == []
        errors = [
            m["params"].get("message", "")[:300]
            for m in session.seen
            if m.get("method") == "window/logMessage"
            and isinstance(m.get("params"), dict)
            and m["params"].get("type") == 1
        ]
        assert errors == [], errors
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def chaos_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _, root = make_project(tmp_path_factory.mktemp("chaos"))
    (root / "notes.md").write_text("# Notes\n\nSee [testing](testing.md).\n", encoding="utf-8")
    return root


CHAOS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)


@CHAOS
@given(ops=operations(framing=False))
def test_every_request_is_answered_under_random_traffic(
    chaos_root: Path, ops: list[tuple[str, Any]]
) -> None:
    run_session(chaos_root, ops)


@CHAOS
@given(ops=operations(framing=True))
def test_broken_framing_never_silences_the_server(
    chaos_root: Path, ops: list[tuple[str, Any]]
) -> None:
    run_session(chaos_root, ops)
