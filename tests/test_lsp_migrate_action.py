"""The "Migrate legacy sections" code action on IX007, as an editor runs it: ask for code
actions on MEMORY.md's ``## Current State``, pick the action, execute its command; the
checkpoint file appears, the section leaves MEMORY.md, and the open buffer follows through
``workspace/applyEdit``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import (
    SERVER,
    apply_lsp_edits,
    git,
    make_project,
    open_params,
    start,
    uri,
    wait_for_diagnostics,
)

LEGACY = "\n## Current State\nThe zebra signup page half done; tests red.\n"
BRANCH = "feat/migrate"
NAME = "feat-migrate"


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    params=["visual_studio_code", "neovim"], config=ClientServerConfig(server_command=SERVER)
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path
) -> AsyncIterator[None]:
    project, root = make_project(tmp_path)
    # A branch without a checkpoint yet, so the migration names and creates a new one.
    git(project, "checkout", "-q", "-b", BRANCH)
    index = root / "MEMORY.md"
    index.write_text(index.read_text(encoding="utf-8") + LEGACY, encoding="utf-8")
    await start(lsp_client, request.param, project)
    yield
    await lsp_client.shutdown_session()


async def test_migrate_code_action_moves_current_state_into_a_checkpoint(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = tmp_path / "proj" / "mem"
    index = root / "MEMORY.md"
    before = index.read_text(encoding="utf-8")
    client.text_document_did_open(open_params(index))
    diags = await wait_for_diagnostics(client, index, lambda codes: "IX007" in codes)
    ix007 = next(d for d in diags if d.code == "IX007")
    assert before.splitlines()[ix007.range.start.line] == "## Current State"

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(index)),
            range=ix007.range,
            context=types.CodeActionContext(diagnostics=[ix007]),
        )
    )
    assert actions is not None
    action = next(
        a
        for a in actions
        if isinstance(a, types.CodeAction) and a.title.startswith("Migrate legacy sections")
    )
    assert action.kind == types.CodeActionKind.QuickFix
    assert action.diagnostics
    assert action.diagnostics[0].code == "IX007"
    assert action.edit is None
    assert action.command is not None

    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )
    assert isinstance(result, dict)
    assert result["changed"] is True

    checkpoint = root / f"checkpoint-{NAME}.md"
    assert checkpoint.is_file()
    saved = checkpoint.read_text(encoding="utf-8")
    assert f"`{BRANCH}`" in saved
    assert "zebra signup page" in saved
    after = index.read_text(encoding="utf-8")
    assert "## Current State" not in after
    assert "zebra signup page" not in after
    assert f"**{NAME}**" in after

    # The open buffer was brought to the new file content through workspace/applyEdit.
    applied: list[types.ApplyWorkspaceEditParams] = client.applied_edits  # type: ignore[attr-defined]
    edits = [e for a in applied for e in (a.edit.changes or {}).get(uri(index), [])]
    assert edits, "MEMORY.md's buffer was not updated"
    assert apply_lsp_edits(before, edits) == after
    # ...and the diagnostic is gone once the client reports the new buffer.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(index), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=after)],
        )
    )
    await wait_for_diagnostics(client, index, lambda codes: "IX007" not in codes)
