"""One module per LSP feature. Each holds a :class:`LanguageFeature` subclass.

``setup.FEATURES`` lists every feature with the LSP methods it answers and their options;
``setup.register`` registers each method once and fans document and workspace events out
to every feature's hooks; request methods go to the one feature that answers them. A
feature gets the server in its constructor and nothing else. Adding a feature: a module
here with its class, and one row in ``FEATURES``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memls.core.model import Document
from memls.core.workspace import Workspace

if TYPE_CHECKING:
    from memls.lsp.server import MemlsServer


class LanguageFeature:
    """Hooks with no-op defaults; a feature overrides the ones it cares about."""

    def __init__(self, server: MemlsServer) -> None:
        self.server = server

    async def initialized(self) -> None:
        """The client is ready and the roots are indexed."""

    async def document_open(self, uri: str) -> None:
        """A document was opened (its text is already in the workspace)."""

    async def document_change(self, uri: str) -> None:
        """An open document changed (its new text is already queued for the workspace)."""

    async def document_save(self, uri: str) -> None:
        """An open document was saved."""

    async def document_close(self, uri: str) -> None:
        """A document was closed (the workspace falls back to the file on disk)."""

    async def affected(self, paths: set[Path]) -> None:
        """These files' diagnostics may have changed (cross-file, disk, git or settings)."""

    async def shutdown(self) -> None:
        """The client asked the server to shut down: stop background work."""

    def handler(self, name: str) -> Callable[..., Awaitable[Any]]:
        """The ``workspace/executeCommand`` handler of command ``name``, for a feature
        whose row in ``setup.FEATURES`` lists commands. Asked at registration, so a row
        that lists a command its feature does not run stops the server at start-up."""
        raise TypeError(
            f"setup.FEATURES lists command {name!r} for {type(self).__name__}, which runs none"
        )

    def locate(self, uri: str) -> tuple[Workspace, Document] | None:
        """The workspace and parsed document behind ``uri`` (worker thread only)."""
        path = self.server.path_of(uri)
        if path is None:
            return None
        ws = self.server.memory.workspace_for(path)
        if ws is None:
            return None
        doc = ws.document(path)
        return (ws, doc) if doc is not None else None
