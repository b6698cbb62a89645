"""JupyterLab integration: jupyter-lsp finds memls through its entry point and proxies it.

Starts a real Jupyter server on 127.0.0.1 (random port, no token), asks /lsp/status for the
memls spec, then opens /lsp/ws/memls and sends an LSP initialize over the WebSocket.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jupyter_server import running_jupyter

websockets = pytest.importorskip("websockets")
pytest.importorskip("jupyter_lsp")


@pytest.fixture
def jupyter(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "MEMORY.md").write_text("# Project Memory\n")
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
    }
    with running_jupyter("jupyter_server", tmp_path, env, tmp_path / "server.log") as base:
        yield base


def test_status_lists_memls_and_websocket_initializes(jupyter: str, tmp_path: Path) -> None:
    with urllib.request.urlopen(f"{jupyter}/lsp/status", timeout=10) as resp:
        status = json.load(resp)
    specs = status["specs"]
    assert "memls" in specs, sorted(specs)
    spec = specs[
        "memls"
    ]  # jupyter-lsp hides argv in /lsp/status; the spec function is checked below
    assert spec["display_name"] == "memls"
    assert "markdown" in spec["languages"]
    assert "memls" in status["sessions"]

    async def initialize() -> dict[str, object]:
        url = jupyter.replace("http://", "ws://") + "/lsp/ws/memls"
        async with websockets.connect(url) as ws:
            request = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
            }
            await ws.send(json.dumps(request))
            while True:
                message: dict[str, object] = json.loads(
                    await asyncio.wait_for(ws.recv(), timeout=60)
                )
                if message.get("id") == 1:
                    return message

    response = asyncio.run(initialize())
    assert "result" in response, response
    result = response["result"]
    assert isinstance(result, dict)
    assert result["serverInfo"]["name"] == "memls"
    assert "textDocumentSync" in result["capabilities"]


def test_spec_function_starts_this_interpreter() -> None:
    from memls.lsp.jupyter_spec import spec

    specs = spec(None)
    assert specs["memls"]["argv"] == [sys.executable, "-m", "memls.lsp"]
