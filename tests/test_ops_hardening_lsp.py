"""Issue 15 defect 2 through the language server: the snapshot command never moves a branch."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import SERVER, git, start, uri
from tests.test_lsp_commands import OPTIONS, execute, project_for, root_of


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))  # type: ignore[untyped-decorator]
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    project, _ = project_for(tmp_path)
    await start(lsp_client, "visual_studio_code", project, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def test_defect2_lsp_snapshot_ref_is_never_a_branch(
    client: LanguageClient, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    branch = git(project, "symbolic-ref", "--short", "HEAD").strip()
    head = git(project, "rev-parse", "HEAD").strip()
    porcelain = git(project, "status", "--porcelain")
    target = {"uri": uri(root_of(tmp_path))}
    # A bare name that is also a branch: the snapshot goes to refs/memls/<name>.
    saved = await execute(client, "memls.snapshot.save", {**target, "ref": branch})
    assert saved["status"] == "saved", saved
    assert saved["ref"] == f"refs/memls/{branch}"
    # The branch itself, spelled out: refused, with the reason in the result.
    refused = await execute(
        client, "memls.snapshot.save", {**target, "ref": f"refs/heads/{branch}"}
    )
    assert refused["status"] == "invalid"
    assert "outside the snapshot namespace" in refused["error"]
    assert git(project, "rev-parse", "HEAD").strip() == head
    assert git(project, "rev-parse", f"refs/heads/{branch}").strip() == head
    assert git(project, "status", "--porcelain") == porcelain
