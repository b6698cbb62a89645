"""Roots the language server finds on its own in a workspace folder: Claude Code's project
memory in ``.claude/memory`` is served before any of its files is opened."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import git, start

INDEX = "- [Auth notes](auth.md) — how tokens are refreshed\n"
AUTH = (
    "---\nname: auth notes\ndescription: token refresh\ntype: project\n---\n\n"
    "# Auth notes\n\n## Token refresh rotation\nRotate on every use.\n"
)


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "memls.lsp"]),
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    project = tmp_path / "repo"
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("# A project\n", encoding="utf-8")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "init")
    (memory / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (memory / "auth.md").write_text(AUTH, encoding="utf-8")
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


async def test_claude_project_memory_is_found_without_opening_a_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="tokrefresh"))
    assert found is not None
    names = {(s.name, Path(s.location.uri).name) for s in found}
    assert ("Token refresh rotation", "auth.md") in names
