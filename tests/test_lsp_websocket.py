"""``memls serve --ws HOST:PORT`` speaks LSP over a WebSocket (one JSON-RPC message per
text frame): a real client completes initialize, gets the indexing log, shuts the server
down and the process exits. This also proves ``websockets`` is there at runtime."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.lsp_helpers import make_project, uri

TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_command(port: int) -> list[str]:
    """The installed ``memls`` script beside this interpreter, else the same entry point."""
    script = shutil.which("memls", path=str(Path(sys.executable).parent))
    base = [script] if script else [sys.executable, "-c", "from memls.cli import main; main()"]
    return [*base, "serve", "--ws", f"127.0.0.1:{port}", "--log-level", "info"]


def wait_until_serving(proc: subprocess.Popen[str]) -> list[str]:
    """Read the server's log until it listens; then keep draining it in the background."""
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        if "Serving on" in line:
            break
    else:
        raise AssertionError("memls serve --ws exited before listening:\n" + "".join(lines))
    threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True).start()
    return lines


def test_initialize_over_a_websocket(tmp_path: Path) -> None:
    from websockets.sync.client import connect

    project, root = make_project(tmp_path)
    port = free_port()
    proc = subprocess.Popen(
        serve_command(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        log = wait_until_serving(proc)
        with connect(f"ws://127.0.0.1:{port}", open_timeout=TIMEOUT) as ws:

            def send(message: dict[str, Any]) -> None:
                ws.send(json.dumps({"jsonrpc": "2.0", **message}))

            def until(match: Any) -> dict[str, Any]:
                while True:
                    message = json.loads(ws.recv(timeout=TIMEOUT))
                    if match(message):
                        return message  # type: ignore[no-any-return]

            send(
                {
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "capabilities": {},
                        "workspaceFolders": [{"uri": uri(project), "name": "proj"}],
                    },
                }
            )
            init = until(lambda m: m.get("id") == 1)
            assert "error" not in init, init
            assert init["result"]["serverInfo"]["name"] == "memls"
            caps = init["result"]["capabilities"]
            assert caps["textDocumentSync"]["change"] == 2  # incremental
            assert "memls.index.migrate" in caps["executeCommandProvider"]["commands"]

            send({"method": "initialized", "params": {}})
            indexed = until(
                lambda m: (
                    m.get("method") == "window/logMessage" and "indexed" in m["params"]["message"]
                )
            )
            assert "in 1 memory root" in indexed["params"]["message"]

            # A request that touches the workspace is answered over the same socket.
            index = root / "MEMORY.md"
            send(
                {
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": uri(index),
                            "languageId": "markdown",
                            "version": 1,
                            "text": index.read_text(encoding="utf-8"),
                        }
                    },
                }
            )
            send(
                {
                    "id": 2,
                    "method": "textDocument/documentSymbol",
                    "params": {"textDocument": {"uri": uri(index)}},
                }
            )
            symbols = until(lambda m: m.get("id") == 2)
            # This client announces no hierarchical symbol support: a flat list with containers.
            flat = symbols["result"]
            assert flat[0]["name"] == "Project Memory"
            assert "children" not in flat[0]
            assert {
                "name": "Active Checkpoints",
                "containerName": "Project Memory",
            }.items() <= next(s for s in flat if s["name"] == "Active Checkpoints").items()

            send({"id": 3, "method": "shutdown"})
            assert until(lambda m: m.get("id") == 3)["result"] is None
            send({"method": "exit"})
        assert proc.wait(timeout=TIMEOUT) == 0, "".join(log)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
