"""Diagnostics: pushed (``textDocument/publishDiagnostics``) or pulled
(``textDocument/diagnostic`` and ``workspace/diagnostic``, with result ids so an unchanged
document answers "unchanged").

Pull is used when the client supports it *and* can be told to re-pull
(``workspace/diagnostic/refresh``): cross-file checks change documents the user is not
editing, and a pull-only client would never learn of it. Otherwise diagnostics are pushed.

Edits are debounced per document by coalescing: while a document is being checked, further
edits only mark it dirty and one follow-up check runs — no fixed delay is added to typing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.memory import Checked

if TYPE_CHECKING:
    from memls.lsp.server import MemlsServer

AFFECTED_DELAY = 0.1
"""Seconds to wait before re-checking documents affected by a change elsewhere."""


def client_pulls(capabilities: types.ClientCapabilities) -> bool:
    pull = get_capability(capabilities, "text_document.diagnostic", None)
    refresh = get_capability(capabilities, "workspace.diagnostics.refresh_support", False)
    return pull is not None and bool(refresh)


class Diagnostics(LanguageFeature):
    def __init__(self, server: MemlsServer) -> None:
        super().__init__(server)
        self._running: set[str] = set()
        self._dirty: set[str] = set()
        self._refresh_pending = False
        self._tasks: set[asyncio.Future[None]] = set()

    # -- hooks ---------------------------------------------------------------
    async def initialized(self) -> None:
        if self.server.pull_diagnostics:
            self._request_refresh()
        else:
            for uri in self.server.open_uris():
                self.schedule(uri)

    async def document_open(self, uri: str) -> None:
        if not self.server.pull_diagnostics:
            self.schedule(uri)

    async def document_change(self, uri: str) -> None:
        if not self.server.pull_diagnostics:
            self.schedule(uri, self.server.memory.settings.debounce_ms / 1000)

    async def document_close(self, uri: str) -> None:
        if not self.server.pull_diagnostics:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    async def affected(self, paths: set[Path]) -> None:
        if self.server.pull_diagnostics:
            self._request_refresh()
            return
        for uri in self.server.open_uris():
            if self.server.path_of(uri) in paths:
                self.schedule(uri, AFFECTED_DELAY)

    # -- push ----------------------------------------------------------------
    def schedule(self, uri: str, delay: float = 0.0) -> None:
        if uri in self._running:
            self._dirty.add(uri)
            return
        self._running.add(uri)
        self._keep(asyncio.ensure_future(self._publish_loop(uri, delay)))

    def _keep(self, task: asyncio.Future[None]) -> None:
        """Hold a reference until the task finishes (the loop keeps only weak ones)."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish_loop(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            while True:
                self._dirty.discard(uri)
                await self.publish(uri)
                if uri not in self._dirty:
                    break
        except Exception as exc:
            self.server.report_server_error(exc, Diagnostics)
        finally:
            self._running.discard(uri)

    async def publish(self, uri: str) -> None:
        path = self.server.path_of(uri)
        while path is not None and (pending := self.server.memory.parsing(path)) is not None:
            if pending.done():
                break
            await pending  # a newer big buffer is on its way into the workspace
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None:
            return  # closed meanwhile
        version = doc.version
        items: list[types.Diagnostic] = []
        if path is not None:
            checked = await self.server.memory.run(self.server.memory.check, path)
            items = self.to_lsp(checked)
        if uri in self.server.workspace.text_documents:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)
            )

    def to_lsp(self, checked: Checked) -> list[types.Diagnostic]:
        if checked.doc is None:
            return []
        lines = checked.doc.lines
        return [convert.diagnostic(d, self.server.codec, lines) for d in checked.diagnostics]

    # -- pull ----------------------------------------------------------------
    def _request_refresh(self) -> None:
        if self._refresh_pending:
            return
        self._refresh_pending = True

        async def later() -> None:
            await asyncio.sleep(AFFECTED_DELAY)
            self._refresh_pending = False
            try:
                await self.server.workspace_diagnostic_refresh_async(None)
            except Exception as exc:
                self.server.report_server_error(exc, Diagnostics)

        self._keep(asyncio.ensure_future(later()))

    async def document_diagnostic(
        self, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        path = self.server.path_of(params.text_document.uri)
        if path is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        while (pending := self.server.memory.parsing(path)) is not None and not pending.done():
            await pending
        checked = await self.server.memory.run(self.server.memory.check, path)
        if params.previous_result_id == checked.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=checked.result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=self.to_lsp(checked), result_id=checked.result_id
        )

    async def workspace_diagnostic(
        self, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        previous = {p.uri: p.value for p in params.previous_result_ids}
        memory = self.server.memory

        def compute() -> list[tuple[Path, Checked]]:
            return [(p, memory.check(p)) for p in memory.all_paths()]

        reports: list[
            types.WorkspaceFullDocumentDiagnosticReport
            | types.WorkspaceUnchangedDocumentDiagnosticReport
        ] = []
        for path, checked in await memory.run(compute):
            uri = convert.path_to_uri(path)
            version = None
            if (open_doc := self.server.workspace.text_documents.get(uri)) is not None:
                version = open_doc.version
            if previous.get(uri) == checked.result_id:
                reports.append(
                    types.WorkspaceUnchangedDocumentDiagnosticReport(
                        uri=uri, result_id=checked.result_id, version=version
                    )
                )
            else:
                reports.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri,
                        items=self.to_lsp(checked),
                        result_id=checked.result_id,
                        version=version,
                    )
                )
        return types.WorkspaceDiagnosticReport(items=reports)
