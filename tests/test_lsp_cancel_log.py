"""VS Code cancels requests whose answer is already on its way; the server treats that as
routine (debug), where pygls logs a warning for every one (issue 24 item 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_cancel_for_a_finished_request_is_not_logged(tmp_path: Path) -> None:
    messages: list[dict[str, object]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 9999}},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "memls.lsp"],
        input=b"".join(frame(m) for m in messages),
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert b'"serverInfo"' in proc.stdout  # initialized, then read both cancels
    assert b"Cancel notification" not in proc.stderr, proc.stderr.decode(errors="replace")
