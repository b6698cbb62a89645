"""The first workspace diagnostic pull, which VS Code sends as soon as the server is up and
before the roots are indexed, answers with the diagnostics rather than nothing (VS Code
waits 2 s before pulling again: this was most of "open folder -> first diagnostic")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import SERVER, make_project, uri
from tests.test_lsp_diagnostics import pull_capabilities

TOPICS = 300


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))  # type: ignore[untyped-decorator]
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)  # type: ignore[untyped-decorator]
    def register(params: types.RegistrationParams) -> None:
        return None

    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow
async def test_first_workspace_pull_waits_for_the_indexing(
    client: LanguageClient, tmp_path: Path
) -> None:
    project, root = make_project(tmp_path)
    index = root / "MEMORY.md"
    index.write_text(index.read_text(encoding="utf-8") + "- [Gone](gone.md)\n", encoding="utf-8")
    for n in range(TOPICS):  # enough for the indexing to be under way when the pull arrives
        (root / f"topic-{n:03d}.md").write_text(f"# Topic {n}\n\nNotes.\n", encoding="utf-8")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pull_capabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=uri(project), name=project.name)],
        )
    )
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    by_uri = {
        item.uri: [str(d.code) for d in item.items]
        for item in report.items
        if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
    }
    assert "IX009" in by_uri.get(uri(index), []), by_uri.get(uri(index))
    assert len(by_uri) >= TOPICS
