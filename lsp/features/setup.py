"""Registers every LSP method once and routes it to the features (the esbonio pattern).

:data:`FEATURES` is the table: each row a feature class, the LSP methods it answers (with
their options) and the commands it runs; :func:`register` is the one generic loop over it,
plus the lifecycle methods that fan document and workspace events out to every feature.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.core.workspace import Workspace
from memls.lsp import convert
from memls.lsp.commands import SERVER_COMMANDS
from memls.lsp.convert import PositionCodec
from memls.lsp.features import LanguageFeature
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
"""How long a request routed ``after_indexing`` that arrives during the first indexing
waits for it."""


@dataclass(frozen=True)
class Route:
    """One LSP method a feature answers: the method, the name of the feature's coroutine
    that takes the request's params, and the options advertised with it.

    ``when`` (client capabilities → bool) makes the route conditional: it is registered
    during ``initialize``, only for a client it holds for. ``after_indexing``: a request
    that arrives during the first indexing waits for it (bounded by
    ``INDEXED_WAIT_SECONDS``)."""

    method: str
    handler: str
    options: Any = None
    when: Callable[[types.ClientCapabilities], bool] | None = None
    after_indexing: bool = False


class Feature:
    """A row of :data:`FEATURES`: a :class:`LanguageFeature` class, the LSP methods it
    answers, and the ``workspace/executeCommand`` commands it runs (through its
    ``handler(name)``)."""

    def __init__(
        self, cls: type[LanguageFeature], *routes: Route, commands: tuple[str, ...] = ()
    ) -> None:
        self.cls = cls
        self.routes = routes
        self.commands = commands


_PULL_OPTIONS = types.DiagnosticOptions(
    identifier="memls", inter_file_dependencies=True, workspace_diagnostics=True
)

FEATURES: tuple[Feature, ...] = (
    # Pull diagnostics are advertised only to clients that can also be asked to re-pull.
    # VS Code pulls the workspace's diagnostics as soon as the server is up, before it has
    # indexed the roots, and after an (empty) answer waits 2 s before pulling again,
    # whatever the refresh says: the first workspace pull waits for the indexing.
    Feature(
        Diagnostics,
        Route(types.TEXT_DOCUMENT_DIAGNOSTIC, "document_diagnostic", _PULL_OPTIONS, client_pulls),
        Route(types.WORKSPACE_DIAGNOSTIC, "workspace_diagnostic", None, client_pulls, True),
    ),
    Feature(Watch, Route(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, "did_change_watched_files")),
    Feature(
        Completion,
        Route(
            types.TEXT_DOCUMENT_COMPLETION,
            "completion",
            types.CompletionOptions(trigger_characters=list(TRIGGER_CHARACTERS)),
        ),
    ),
    Feature(
        CodeActions,
        Route(
            types.TEXT_DOCUMENT_CODE_ACTION,
            "code_actions",
            types.CodeActionOptions(code_action_kinds=list(CODE_ACTION_KINDS)),
        ),
    ),
    Feature(Commands, commands=SERVER_COMMANDS),
    Feature(Hover, Route(types.TEXT_DOCUMENT_HOVER, "hover")),
    Feature(Definition, Route(types.TEXT_DOCUMENT_DEFINITION, "definition")),
    Feature(Links, Route(types.TEXT_DOCUMENT_DOCUMENT_LINK, "document_links")),
    Feature(Symbols, Route(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, "document_symbols")),
    Feature(Folding, Route(types.TEXT_DOCUMENT_FOLDING_RANGE, "folding_ranges")),
    Feature(References, Route(types.TEXT_DOCUMENT_REFERENCES, "references")),
    Feature(
        CodeLens,
        Route(
            types.TEXT_DOCUMENT_CODE_LENS,
            "code_lens",
            types.CodeLensOptions(resolve_provider=False),
        ),
    ),
    Feature(
        Rename,
        Route(types.TEXT_DOCUMENT_PREPARE_RENAME, "prepare_rename"),
        Route(types.TEXT_DOCUMENT_RENAME, "rename"),
    ),
    Feature(
        FileOperations,
        Route(types.WORKSPACE_WILL_RENAME_FILES, "will_rename", FILE_OPERATIONS),
        Route(types.WORKSPACE_DID_RENAME_FILES, "did_rename", FILE_OPERATIONS),
    ),
    Feature(WorkspaceSymbols, Route(types.WORKSPACE_SYMBOL, "symbols")),
)
"""Every LSP feature, in the order document and workspace events reach them: adding a
feature is a module with its :class:`LanguageFeature` and one row here."""


def register(server: MemlsServer, features: tuple[Feature, ...] = FEATURES) -> None:
    """Instantiate every feature, route its methods and commands, and register the
    lifecycle methods that fan events out to all of them."""
    indexed = asyncio.Event()
    conditional: list[tuple[LanguageFeature, Route]] = []
    server.features = []
    for row in features:
        feature = row.cls(server)
        server.features.append(feature)
        for route in row.routes:
            if route.when is None:
                _route(server, feature, route, indexed)
            else:
                conditional.append((feature, route))
        for name in row.commands:
            server.command(name)(feature.handler(name))
    _register_lifecycle(server, indexed, conditional)


def _route(
    server: MemlsServer, feature: LanguageFeature, route: Route, indexed: asyncio.Event
) -> None:
    """Register ``route.method`` to call the feature's ``route.handler`` with the params."""
    answer = getattr(feature, route.handler)
    if route.after_indexing:

        async def handler(params: Any) -> Any:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(indexed.wait(), INDEXED_WAIT_SECONDS)
            return await answer(params)

    else:

        async def handler(params: Any) -> Any:
            return await answer(params)

    handler.__name__ = handler.__qualname__ = f"{type(feature).__name__}.{route.handler}"
    server.feature(route.method, route.options)(handler)


def _register_lifecycle(
    server: MemlsServer,
    indexed: asyncio.Event,
    conditional: list[tuple[LanguageFeature, Route]],
) -> None:
    """The methods every feature hears about: initialisation, configuration, document
    synchronisation and shutdown, fanned out to each feature's :class:`LanguageFeature`
    hooks."""

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
        for feature, route in conditional:
            assert route.when is not None
            if route.when(params.capabilities):
                _route(ls, feature, route, indexed)

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

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: MemlsServer, params: Any) -> None:
        await ls.fan_out(lambda f: f.shutdown())


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
