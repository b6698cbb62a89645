"""Language server diagnostics end to end: push and pull, quick fixes, cross-file updates
and configuration changes, with the VS Code and Neovim client profiles."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp_helpers import (
    NAME,
    SERVER,
    apply_lsp_edits,
    change_all,
    open_params,
    root_of,
    start,
    uri,
    wait_for_diagnostics,
)

assert sys.executable


async def test_push_diagnostics_for_a_broken_checkpoint(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    text = path.read_text().replace("## Modified Files\n- src/login.py\n", "")
    client.text_document_did_open(open_params(path, text))
    diags = await wait_for_diagnostics(client, path, lambda codes: "CP010" in codes)
    cp010 = next(d for d in diags if d.code == "CP010")
    assert "Modified Files" in cp010.message
    assert cp010.source == "memls"


async def test_healthy_root_publishes_no_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = root_of(tmp_path) / "MEMORY.md"
    client.text_document_did_open(open_params(path))
    assert await wait_for_diagnostics(client, path, lambda codes: True) == []


def broken_checkpoint(tmp_path: Path) -> tuple[Path, str]:
    path = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    return path, path.read_text().replace("## Modified Files\n- src/login.py\n", "")


async def test_quick_fix_makes_the_diagnostic_disappear(
    client: LanguageClient, tmp_path: Path
) -> None:
    path, text = broken_checkpoint(tmp_path)
    client.text_document_did_open(open_params(path, text))
    diags = await wait_for_diagnostics(client, path, lambda codes: "CP010" in codes)
    target = next(d for d in diags if d.code == "CP010")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=target.range,
            context=types.CodeActionContext(diagnostics=[target]),
        )
    )
    assert actions is not None
    fix = next(
        a
        for a in actions
        if isinstance(a, types.CodeAction)
        and a.kind == types.CodeActionKind.QuickFix
        and a.diagnostics
        and a.diagnostics[0].code == "CP010"
    )
    assert fix.edit is not None
    assert fix.edit.changes is not None
    fixed = apply_lsp_edits(text, list(fix.edit.changes[uri(path)]))
    assert "## Modified Files" in fixed
    client.text_document_did_change(change_all(path, fixed, 2))
    await wait_for_diagnostics(client, path, lambda codes: "CP010" not in codes)


async def test_fix_all_source_action(client: LanguageClient, tmp_path: Path) -> None:
    path, text = broken_checkpoint(tmp_path)
    text = text.replace("## Failed Approaches\n- None\n\n", "")
    client.text_document_did_open(open_params(path, text))
    await wait_for_diagnostics(client, path, lambda codes: codes.count("CP010") == 2)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(
                diagnostics=[], only=[types.CodeActionKind.SourceFixAll]
            ),
        )
    )
    assert actions is not None
    (fix_all,) = [a for a in actions if isinstance(a, types.CodeAction)]
    assert fix_all.kind == "source.fixAll.memls"
    assert fix_all.edit is not None
    assert fix_all.edit.changes is not None
    fixed = apply_lsp_edits(text, list(fix_all.edit.changes[uri(path)]))
    client.text_document_did_change(change_all(path, fixed, 2))
    await wait_for_diagnostics(client, path, lambda codes: "CP010" not in codes)


async def test_deleting_a_checkpoint_on_disk_updates_memory_md(
    client: LanguageClient, tmp_path: Path
) -> None:
    index = root_of(tmp_path) / "MEMORY.md"
    checkpoint = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    client.text_document_did_open(open_params(index))
    assert await wait_for_diagnostics(client, index, lambda codes: True) == []
    checkpoint.unlink()
    if getattr(client, "registrations", None):  # the client watches files: it reports the delete
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=uri(checkpoint), type=types.FileChangeType.Deleted)]
            )
        )
    diags = await wait_for_diagnostics(client, index, lambda codes: "IX002" in codes)
    assert any(NAME in d.message for d in diags if d.code == "IX002")


async def test_watchers_registered_only_where_the_client_can(client: LanguageClient) -> None:
    caps = client.capabilities
    assert caps is not None
    assert caps.workspace is not None
    assert caps.workspace.did_change_watched_files is not None
    dynamic = caps.workspace.did_change_watched_files.dynamic_registration
    registrations = getattr(client, "registrations", None)
    if dynamic:
        assert registrations
        assert registrations[0].method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    else:
        assert registrations is None


async def test_configuration_change_changes_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    path, text = broken_checkpoint(tmp_path)
    client.text_document_did_open(open_params(path, text))
    await wait_for_diagnostics(client, path, lambda codes: "CP010" in codes)
    client.set_configuration({"ignore": ["CP010"]}, section="memls")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_for_diagnostics(client, path, lambda codes: "CP010" not in codes)
    client.set_configuration({"ignore": []}, section="memls")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_for_diagnostics(client, path, lambda codes: "CP010" in codes)


def pull_capabilities() -> types.ClientCapabilities:
    from pytest_lsp import client_capabilities

    caps = client_capabilities("visual_studio_code")
    assert caps.text_document is not None
    assert caps.workspace is not None
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(dynamic_registration=False)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))  # type: ignore[untyped-decorator]
async def pull_client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[None]:
    from tests.lsp_helpers import make_project

    project, _ = make_project(tmp_path)
    await start(lsp_client, "visual_studio_code", project, capabilities=pull_capabilities())
    yield
    await lsp_client.shutdown_session()


async def test_pull_diagnostics_with_result_ids(
    pull_client: LanguageClient, tmp_path: Path
) -> None:
    client = pull_client
    path, text = broken_checkpoint(tmp_path)
    client.text_document_did_open(open_params(path, text))
    ident = types.TextDocumentIdentifier(uri=uri(path))
    first = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident)
    )
    assert isinstance(first, types.RelatedFullDocumentDiagnosticReport)
    assert "CP010" in [d.code for d in first.items]
    assert first.result_id
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=first.result_id)
    )
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    assert again.result_id == first.result_id
    assert client.diagnostics == {}  # nothing is pushed to a pulling client

    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(
            previous_result_ids=[types.PreviousResultId(uri=uri(path), value=first.result_id)]
        )
    )
    by_uri = {r.uri: r for r in report.items}
    assert isinstance(by_uri[uri(path)], types.WorkspaceUnchangedDocumentDiagnosticReport)
    index = by_uri[uri(root_of(tmp_path) / "MEMORY.md")]
    assert isinstance(index, types.WorkspaceFullDocumentDiagnosticReport)
    assert list(index.items) == []

    checkpoint = root_of(tmp_path) / f"checkpoint-{NAME}.md"
    client.text_document_did_close(types.DidCloseTextDocumentParams(ident))
    checkpoint.unlink()
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(checkpoint), type=types.FileChangeType.Deleted)]
        )
    )
    index_ident = types.TextDocumentIdentifier(uri=uri(root_of(tmp_path) / "MEMORY.md"))
    after = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=index_ident)
    )
    assert isinstance(after, types.RelatedFullDocumentDiagnosticReport)
    assert "IX002" in [d.code for d in after.items]
