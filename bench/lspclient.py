"""The language client the LSP benches share: it answers the server's progress requests,
says when indexing is done, and prints the server's Error-level log messages."""

from __future__ import annotations

import asyncio
import sys

from lsprotocol import types
from pygls.lsp.client import LanguageClient


def indexing_client(name: str) -> tuple[LanguageClient, asyncio.Event]:
    """A client and the event set when the server's indexing progress ends."""
    client = LanguageClient(name, "1")
    ready = asyncio.Event()

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)  # type: ignore[untyped-decorator]
    def create(params: types.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(types.PROGRESS)  # type: ignore[untyped-decorator]
    def progress(params: types.ProgressParams) -> None:
        value = params.value
        kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
        if kind == "end":
            ready.set()

    @client.feature(types.WINDOW_LOG_MESSAGE)  # type: ignore[untyped-decorator]
    def log(params: types.LogMessageParams) -> None:
        if params.type == types.MessageType.Error:
            print("server error:", params.message[:500], file=sys.stderr)

    return client, ready
