"""Code lens: "N references" over each topic file's title and each checkpoint's
``# Checkpoint:`` heading; clicking lists them (the client command ``memls.showReferences``,
which the VS Code extension and the Neovim config provide). When an edit, a save or a change
on disk adds or removes an edge, the server asks the client to refresh its lenses."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from memls.core.graph import file_title, graph_of
from memls.core.model import Document, FileKind, Range
from memls.core.workspace import Workspace
from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.features.references import locations

if TYPE_CHECKING:
    from memls.lsp.server import MemlsServer

SHOW_REFERENCES = "memls.showReferences"
"""Client-side command: arguments are (uri, position, locations), as VS Code's
``editor.action.showReferences`` takes them."""
LENS_KINDS = frozenset((FileKind.TOPIC, FileKind.CHECKPOINT, FileKind.LOG, FileKind.IDENTITY))
REFRESH_DELAY = 0.4
"""Seconds after the last edit before the graph is compared (keeps typing cheap)."""


class CodeLens(LanguageFeature):
    def __init__(self, server: MemlsServer) -> None:
        super().__init__(server)
        self._seen: tuple[int, ...] | None = None
        self._pending: asyncio.Task[None] | None = None

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri

        def compute() -> list[types.CodeLens]:
            found = self.locate(uri)
            if found is None:
                return []
            ws, doc = found
            lenses = lenses_for(ws, doc, uri, self.server.codec)
            self._seen = self._versions()
            return lenses

        return await self.server.memory.run(compute)

    # -- refresh -----------------------------------------------------------------
    def _versions(self) -> tuple[int, ...]:
        """Each workspace's graph version (worker thread)."""
        return tuple(graph_of(ws).version for ws in list(self.server.memory.workspaces.values()))

    def _can_refresh(self) -> bool:
        return bool(
            get_capability(
                self.server.client_capabilities, "workspace.code_lens.refresh_support", False
            )
        )

    async def initialized(self) -> None:
        self._seen = await self.server.memory.run(self._versions)

    async def document_change(self, uri: str) -> None:
        self._schedule()

    async def document_close(self, uri: str) -> None:
        self._schedule()

    async def affected(self, paths: set[Path]) -> None:
        self._schedule()

    def _schedule(self) -> None:
        if not self._can_refresh():
            return
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()
        self._pending = asyncio.ensure_future(self._refresh_later())

    async def _refresh_later(self) -> None:
        await asyncio.sleep(REFRESH_DELAY)
        versions = await self.server.memory.run(self._versions)
        if versions != self._seen:
            self._seen = versions
            self.server.workspace_code_lens_refresh(None)


def lenses_for(
    ws: Workspace, doc: Document, uri: str, codec: convert.PositionCodec
) -> list[types.CodeLens]:
    """The reference count over the file's title (topic files, checkpoints, LOG, identity)."""
    if doc.kind not in LENS_KINDS:
        return []
    title = file_title(doc)
    rng = title.title_range if title is not None else Range.point(0)
    if title is None and doc.kind is FileKind.CHECKPOINT:
        return []
    found = locations(ws, doc.path, None, codec)
    count = len(found)
    label = f"{count} reference{'s' if count != 1 else ''}" if count else "no references"
    lsp_range = codec.range_to_lsp(rng, doc.lines)
    return [
        types.CodeLens(
            range=lsp_range,
            command=types.Command(
                title=label,
                command=SHOW_REFERENCES,
                arguments=[uri, lsp_range.start, found],
            ),
        )
    ]
