"""Registers every LSP method once and routes it to the features (the esbonio pattern)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.core.workspace import Workspace
from memls.lsp import convert
from memls.lsp.commands import SERVER_COMMANDS
from memls.lsp.convert import PositionCodec
from memls.lsp.features.code_actions import CODE_ACTION_KINDS, CodeActions
from memls.lsp.features.codelens import CodeLens
from memls.lsp.features.commands import Commands
from memls.lsp.features.completion import TRIGGER_CHARACTERS, Completion
from memls.lsp.features.definition import Definition
from memls.lsp.features.diagnostics import Diagnostics, client_pulls
from memls.lsp.features.file_ops import REGISTRATION as FILE_OPERATIONS
from memls.lsp.features.file_ops import FileOperations
from memls.lsp.features.folding import Folding
from memls.lsp.features.hover import Hover
from memls.lsp.features.links import Links
from memls.lsp.features.references import References
from memls.lsp.features.rename import Rename
from memls.lsp.features.symbols import Symbols
from memls.lsp.features.watch import Watch
from memls.lsp.features.workspace_symbols import WorkspaceSymbols
from memls.lsp.server import MemlsServer
from memls.lsp.settings import Settings

INDEXED_WAIT_SECONDS = 30.0
"""How long a workspace diagnostic pull that arrives during the first indexing waits for it."""


def register(server: MemlsServer) -> None:
    indexed = asyncio.Event()
    diagnostics = Diagnostics(server)
    watch = Watch(server)
    completion = Completion(server)
    code_actions = CodeActions(server)
    commands = Commands(server)
    hover = Hover(server)
    definition = Definition(server)
    links = Links(server)
    symbols = Symbols(server)
    folding = Folding(server)
    references = References(server)
    codelens = CodeLens(server)
    rename = Rename(server)
    file_ops = FileOperations(server)
    workspace_symbols = WorkspaceSymbols(server)
    server.features = [
        diagnostics,
        watch,
        completion,
        code_actions,
        commands,
        hover,
        definition,
        links,
        symbols,
        folding,
        references,
        codelens,
        rename,
        file_ops,
        workspace_symbols,
    ]

    @server.feature(types.INITIALIZE)
    def initialize(ls: MemlsServer, params: types.InitializeParams) -> None:
        ls.codec = PositionCodec(str(ls.workspace.position_encoding or "utf-16"))
        ls.memory.settings = Settings.from_object(params.initialization_options)
        options = params.initialization_options
        ls.client_shows_command_results = isinstance(options, dict) and (
            options.get("clientShowsCommandResults") is True
        )
        folders = [convert.uri_to_path(f.uri) for f in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [convert.uri_to_path(params.root_uri)]
        ls.memory.folders = [f.resolve() for f in folders if f is not None]
        ls.pull_diagnostics = client_pulls(params.capabilities)
        if ls.pull_diagnostics:
            _register_pull(ls, diagnostics, indexed)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemlsServer, params: types.InitializedParams) -> None:
        await _pull_configuration(ls)
        try:
            finish = await _index_roots(ls)
            ls.memory.settle_heap()
            await ls.fan_out(lambda f: f.initialized())
        finally:
            indexed.set()
        finish()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: MemlsServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if not await _pull_configuration(ls) and params.settings is not None:
            ls.memory.settings = Settings.from_object(params.settings)
        await ls.memory.run(ls.memory.reload_configs)
        await ls.memory.run(ls.memory.discover)
        paths = {p for uri in ls.open_uris() if (p := ls.path_of(uri)) is not None}
        await ls.fan_out(lambda f: f.affected(paths))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: MemlsServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        await _sync(ls, uri, params.text_document.text)
        await ls.fan_out(lambda f: f.document_open(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: MemlsServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        affected = await _sync(ls, uri, ls.open_text(uri))
        await ls.fan_out(lambda f: f.document_change(uri))
        path = ls.path_of(uri)
        others = affected - {path} if path is not None else affected
        if others:
            await ls.fan_out(lambda f: f.affected(others))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: MemlsServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        await ls.fan_out(lambda f: f.document_save(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: MemlsServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        affected = await _sync(ls, uri, None)
        await ls.fan_out(lambda f: f.document_close(uri))
        if affected:
            await ls.fan_out(lambda f: f.affected(affected))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(
        ls: MemlsServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        await watch.did_change_watched_files(params)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=list(TRIGGER_CHARACTERS)),
    )
    async def on_completion(
        ls: MemlsServer, params: types.CompletionParams
    ) -> types.CompletionList:
        return await completion.completion(params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=list(CODE_ACTION_KINDS)),
    )
    async def on_code_action(
        ls: MemlsServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        return await code_actions.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: MemlsServer, params: types.HoverParams) -> types.Hover | None:
        return await hover.hover(params)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(
        ls: MemlsServer, params: types.DefinitionParams
    ) -> list[types.Location]:
        return await definition.definition(params)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def on_links(
        ls: MemlsServer, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink]:
        return await links.document_links(params)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def on_symbols(
        ls: MemlsServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        return await symbols.document_symbols(params)

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    async def on_folding(
        ls: MemlsServer, params: types.FoldingRangeParams
    ) -> list[types.FoldingRange]:
        return await folding.folding_ranges(params)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def on_references(ls: MemlsServer, params: types.ReferenceParams) -> list[types.Location]:
        return await references.references(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def on_code_lens(ls: MemlsServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return await codelens.code_lens(params)

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    async def on_prepare_rename(
        ls: MemlsServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        return await rename.prepare_rename(params)

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def on_rename(ls: MemlsServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        return await rename.rename(params)

    @server.feature(types.WORKSPACE_WILL_RENAME_FILES, FILE_OPERATIONS)
    async def on_will_rename(
        ls: MemlsServer, params: types.RenameFilesParams
    ) -> types.WorkspaceEdit | None:
        return await file_ops.will_rename(params)

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, FILE_OPERATIONS)
    async def on_did_rename(ls: MemlsServer, params: types.RenameFilesParams) -> None:
        await file_ops.did_rename(params)

    @server.feature(types.WORKSPACE_SYMBOL)
    async def on_workspace_symbol(
        ls: MemlsServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        return await workspace_symbols.symbols(params)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: MemlsServer, params: Any) -> None:
        await watch.stop()

    for name in SERVER_COMMANDS:
        server.command(name)(commands.handler(name))


def _register_pull(ls: MemlsServer, diagnostics: Diagnostics, indexed: asyncio.Event) -> None:
    """Pull diagnostics are advertised only to clients that can also be asked to re-pull.

    VS Code pulls the workspace's diagnostics as soon as the server is up, before it has
    indexed the roots, and after an (empty) answer waits 2 s before pulling again, whatever
    the refresh says: the first pull waits for the indexing (bounded), so the Problems panel
    fills at once."""

    @ls.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="memls", inter_file_dependencies=True, workspace_diagnostics=True
        ),
    )
    async def document_diagnostic(
        _ls: MemlsServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        return await diagnostics.document_diagnostic(params)

    @ls.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(
        _ls: MemlsServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(indexed.wait(), INDEXED_WAIT_SECONDS)
        return await diagnostics.workspace_diagnostic(params)


async def _sync(ls: MemlsServer, uri: str, text: str | None) -> set[Path]:
    """Hand an editor buffer (or its closing) to the workspace; returns the affected files."""
    path = ls.path_of(uri)
    if path is None:
        return set()
    return await ls.memory.update(path, text)


async def _pull_configuration(ls: MemlsServer) -> bool:
    """Ask the client for the ``memls`` section; False when it cannot answer."""
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return False
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="memls")])
        )
    except Exception as exc:
        ls.log_info(f"memls: workspace/configuration failed: {exc}")
        return False
    if result and isinstance(result[0], dict):
        # Keys the client leaves unset keep their initializationOptions value.
        merged = {**_as_dict(ls.memory.settings), **result[0]}
        ls.memory.settings = Settings.from_object(merged)
        return True
    return False


def _as_dict(settings: Settings) -> dict[str, Any]:
    return {
        "roots": list(settings.roots),
        "staleDays": settings.stale_days,
        "select": list(settings.select),
        "ignore": list(settings.ignore),
        "recall": {"model": settings.recall_model or ""},
        "debounceMs": settings.debounce_ms,
        "largeDocumentBytes": settings.large_document_bytes,
    }


async def _index_roots(ls: MemlsServer) -> Callable[[], None]:
    """Find and parse every memory root under the workspace folders, with progress.

    Returns the call that ends the progress (and logs "memls: indexed …"): the server is
    ready once every feature has also seen ``initialized``."""
    token = "memls-index"
    progress = bool(get_capability(ls.client_capabilities, "window.work_done_progress", False))
    if progress:
        try:
            await ls.work_done_progress.create_async(token)
        except Exception:
            progress = False
    if progress:
        ls.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="memls: indexing memory", percentage=0)
        )
    memory = ls.memory
    workspaces = await memory.run(memory.discover)
    total_files = 0
    for number, ws in enumerate(workspaces, start=1):
        paths = await memory.run(ws.paths)
        await memory.run(_parse_all, ws, paths)
        total_files += len(paths)
        if progress:
            ls.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(
                    message=str(ws.root), percentage=int(100 * number / len(workspaces))
                ),
            )
    message = f"indexed {_count(total_files, 'file')} in {_count(len(workspaces), 'memory root')}"
    for root, error in memory.config_errors.items():
        ls.show(f"memls: {root}: {error}", types.MessageType.Warning)

    def finish() -> None:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        ls.log_info(f"memls: {message}")

    return finish


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _parse_all(ws: Workspace, paths: list[Path]) -> None:
    for path in paths:
        ws.document(path)
