"""Operation code actions and commands end to end: "Save checkpoint" and "Approve bundle"."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp_helpers import (
    NAME,
    apply_lsp_edits,
    change_all,
    open_params,
    root_of,
    uri,
    wait_for_diagnostics,
)


async def actions_at(client: LanguageClient, path: Path, line: int) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


async def run(client: LanguageClient, action: types.CodeAction) -> object:
    assert action.command is not None
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )


async def test_save_checkpoint_action_creates_the_file_and_updates_memory_md(
    client: LanguageClient, tmp_path: Path
) -> None:
    root = root_of(tmp_path)
    (root / f"checkpoint-{NAME}.md").unlink()
    index = root / "MEMORY.md"
    index.write_text("# Project Memory\n\n## Decisions\n- Use pytest\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=uri(root / f"checkpoint-{NAME}.md"), type=types.FileChangeType.Deleted
                ),
                types.FileEvent(uri=uri(index), type=types.FileChangeType.Changed),
            ]
        )
    )
    client.text_document_did_open(open_params(index))
    await wait_for_diagnostics(client, index, lambda codes: True)
    actions = await actions_at(client, index, 0)
    save = next(a for a in actions if a.command and a.command.command == "memls.checkpoint.save")
    assert save.title == f'Save checkpoint "{NAME}"…'
    assert save.kind == types.CodeActionKind.QuickFix  # in the Ctrl+. menu
    assert save.command is not None
    assert save.command.arguments is not None
    arg = save.command.arguments[0]
    assert isinstance(arg, dict)
    arg["next"] = "Wire the login form"  # what the editor asked for
    result = await run(client, save)
    assert isinstance(result, dict)
    assert result["name"] == NAME
    checkpoint = root / f"checkpoint-{NAME}.md"
    assert checkpoint.is_file()
    text = index.read_text()
    assert f"- **{NAME}** (" in text
    assert "## Decisions\n- Use pytest" in text
    # the open MEMORY.md buffer was brought up to date through workspace/applyEdit
    (edit,) = client.applied_edits  # type: ignore[attr-defined]
    buffer = apply_lsp_edits(
        "# Project Memory\n\n## Decisions\n- Use pytest\n", list(edit.edit.changes[uri(index)])
    )
    assert buffer == text
    # and the saved checkpoint was shown
    assert [d.uri for d in client.shown_documents] == [uri(checkpoint)]
    client.text_document_did_change(change_all(index, buffer, 2))
    client.text_document_did_open(open_params(checkpoint))
    assert await wait_for_diagnostics(client, index, lambda codes: codes == []) == []
    assert await wait_for_diagnostics(client, checkpoint, lambda codes: codes == []) == []


async def test_approve_bundle_clears_bn001(client: LanguageClient, tmp_path: Path) -> None:
    root = root_of(tmp_path)
    path = root / f"checkpoint-{NAME}.md"
    stamp = dt.datetime.now().strftime("%Y-%m-%d")
    bundle = (
        "\n## Checkpoint Bundle\n"
        "- [ ] memory: `testing.md`\n"
        "- [ ] index: `MEMORY.md` pointer for testing\n"
        f'- [ ] log: LOG.md entry "{stamp}"\n'
        "- [ ] transcript: archive + backfill session\n"
        "- [ ] recall: verify `memls recall verify`\n"
    )
    text = path.read_text() + bundle
    path.write_text(text, encoding="utf-8")
    client.text_document_did_open(open_params(path))
    await wait_for_diagnostics(client, path, lambda codes: "BN001" in codes)
    line = text.splitlines().index("## Checkpoint Bundle") + 1
    approve = next(a for a in await actions_at(client, path, line) if a.title == "Approve bundle")
    await run(client, approve)
    assert "- [x] memory:" in path.read_text()
    (edit,) = client.applied_edits  # type: ignore[attr-defined]
    buffer = apply_lsp_edits(text, list(edit.edit.changes[uri(path)]))
    assert buffer == path.read_text()
    client.text_document_did_change(change_all(path, buffer, 2))
    await wait_for_diagnostics(client, path, lambda codes: "BN001" not in codes)


async def test_save_refuses_over_unsaved_changes(client: LanguageClient, tmp_path: Path) -> None:
    index = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(index, index.read_text() + "\nunsaved words\n"))
    before = index.read_text()
    with pytest.raises(Exception, match=r"save MEMORY\.md first"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="memls.checkpoint.save", arguments=[{"uri": uri(index)}]
            )
        )
    assert index.read_text() == before
    assert any("save MEMORY.md first" in m.message for m in client.messages)
