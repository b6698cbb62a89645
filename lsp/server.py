"""The memls language server: builds the pygls server, registers each LSP method once and
fans events out to the feature modules (the esbonio design).

Editor buffers reach the core ``Workspace`` through ``Workspace.set_text`` on the worker
thread of :class:`~memls.lsp.memory.MemoryState`; features answer requests from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId
from pygls.protocol.language_server import lsp_method

from memls import __version__
from memls.lsp.convert import PositionCodec, uri_to_path
from memls.lsp.features import LanguageFeature
from memls.lsp.memory import MemoryState
from memls.lsp.settings import Settings
from memls.lsp.textsync import apply_change
from memls.lsp.transport import serve, stdin_chunks

log = logging.getLogger(__name__)

EXIT_GRACE_SECONDS = 2.0
"""On ``exit``, how long work already running on the worker may take to finish."""


class MemlsProtocol(LanguageServerProtocol):
    """pygls' protocol with these changes: a didChange for a document that was never opened
    is ignored (logged) instead of raising, and is applied in time proportional to the edit
    (:mod:`memls.lsp.textsync`); command handlers receive the whole ``ExecuteCommandParams``
    (they need its ``workDoneToken``); ``$/cancelRequest`` also reaches a running command
    (pygls only cancels requests that have not started); and a request on a document whose
    newer text is still being parsed waits for that parse."""

    def __init__(self, server: LanguageServer, converter: Any) -> None:
        super().__init__(server, converter)
        self.cancel_hooks: dict[MsgId, Callable[[], None]] = {}

    def on_cancel(self, msg_id: MsgId, hook: Callable[[], None]) -> Callable[[], None]:
        """Call ``hook`` if the client cancels request ``msg_id``; returns the unregister."""
        self.cancel_hooks[msg_id] = hook

        def unregister() -> None:
            self.cancel_hooks.pop(msg_id, None)

        return unregister

    def _handle_request(self, msg_id: MsgId, method_name: str, params: Any) -> None:
        """A request on a document whose newer text is still being parsed (a big buffer,
        parsed off the worker) waits for that parse, so it never answers from old text;
        every other request runs at once."""
        document = getattr(params, "text_document", None)
        uri = getattr(document, "uri", None)
        path = uri_to_path(uri) if isinstance(uri, str) else None
        server = self._server
        parsing = (
            server.memory.parsing(path)
            if path is not None and isinstance(server, MemlsServer)
            else None
        )
        if parsing is None or parsing.done():
            super()._handle_request(msg_id, method_name, params)
            return

        def run(_: object) -> None:
            LanguageServerProtocol._handle_request(self, msg_id, method_name, params)

        parsing.add_done_callback(run)

    def _handle_cancel_notification(self, msg_id: MsgId) -> None:
        # A client cancels requests whose answer is already on its way (VS Code does so
        # all the time): routine, so logged at debug, not as pygls' warning.
        if msg_id in self._request_futures:
            super()._handle_cancel_notification(msg_id)
        else:
            log.debug("cancel for a request that is not pending: %s", msg_id)
        if (hook := self.cancel_hooks.pop(msg_id, None)) is not None:
            hook()

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents:
            self._server.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Warning, f"memls: ignoring didChange for unopened {uri}"
                )
            )
            return
        document = self.workspace.text_documents[uri]
        codec = self._server.codec if isinstance(self._server, MemlsServer) else PositionCodec()
        for change in params.content_changes:
            apply_change(document, change, codec)
        document.version = params.text_document.version
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams.of(ValueError(f"unknown command {params.command!r}"))
        result = yield handler, (params,), None
        return result


class MemlsServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "memls",
            __version__,
            protocol_cls=MemlsProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.memory = MemoryState()
        self.codec = PositionCodec()
        self.features: list[LanguageFeature] = []
        self.pull_diagnostics = False
        self.client_shows_command_results = False
        """Set by ``initializationOptions.clientShowsCommandResults`` (the VS Code extension
        shows each command's returned message itself, so the server does not repeat it)."""

    @property
    def memls_protocol(self) -> MemlsProtocol:
        assert isinstance(self.protocol, MemlsProtocol)
        return self.protocol

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio with memls' framing (:mod:`memls.lsp.transport`): bad input is
        answered or reported and skipped, never the end of the conversation. Returns at end
        of input; ``exit`` ends the process (code 0 after ``shutdown``, else 1), without
        waiting more than a moment for work still running on the worker."""
        self._stop_event = stop = threading.Event()
        # Big documents are parsed on a second thread; hand the interpreter lock over
        # more often than every 5 ms so requests answered meanwhile stay quick.
        sys.setswitchinterval(0.001)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        read = stdin_chunks(stdin or sys.stdin.buffer)
        code: int | str | None = None
        try:
            asyncio.run(serve(read, self.protocol, stop, self._report_loop_error))
        except BrokenPipeError:
            log.error("the client closed its end of the connection")
        except SystemExit as exc:  # pygls' exit handler
            code = exc.code
        except KeyboardInterrupt:
            pass
        finally:
            self.memory.close(timeout=EXIT_GRACE_SECONDS)
            self.shutdown()  # type: ignore[no-untyped-call]
        leave(code)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client at a time over TCP (for debugging) with the same framing as
        stdio; ``exit`` ends the process as it does there."""
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)

            async def read() -> bytes:
                return await reader.read(65_536)

            await serve(read, self.protocol, stop, self._report_loop_error)

        async def main() -> None:
            server = await asyncio.start_server(connection, host, port)
            addresses = ", ".join(str(s.getsockname()) for s in server.sockets)
            log.info("serving on %s", addresses)
            async with server:
                await server.serve_forever()

        code: int | str | None = None
        try:
            asyncio.run(main())
        except SystemExit as exc:
            code = exc.code
        except (KeyboardInterrupt, asyncio.CancelledError):
            pass
        finally:
            self.memory.close(timeout=EXIT_GRACE_SECONDS)
            self.shutdown()  # type: ignore[no-untyped-call]
        if code:
            raise SystemExit(code)

    def _report_loop_error(self, error: Exception) -> None:
        self.report_server_error(error, JsonRpcException)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log every handler failure to the client; requests are also answered as errors.

        An unsupported method is no failure: it is answered MethodNotFound and logged only
        at debug level on stderr.

        pygls reports a handler's unexpected exception as a new ``JsonRpcInternalError``
        that was never raised and carries the original frames only in ``data``: log those,
        or the message would name the error but not where it happened."""
        if isinstance(error, JsonRpcMethodNotFound) or getattr(error, "quiet", False):
            log.debug("%s", error)  # quiet: a refusal the client shows (features/rename.py)
            return
        text = "".join(traceback.format_exception(error)).strip()
        data = error.data if isinstance(error, JsonRpcException) else None
        frames = data.get("traceback") if isinstance(data, dict) else None
        if isinstance(frames, list) and frames and error.__traceback__ is None:
            text = "Traceback (most recent call last):\n" + "".join(map(str, frames)) + text
        try:
            self.window_log_message(
                types.LogMessageParams(types.MessageType.Error, f"memls: {text}")
            )
        except Exception:  # the transport itself may be what failed
            log.exception("could not report an error to the client")

    def log_info(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Info, message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(kind, message))

    def path_of(self, uri: str) -> Path | None:
        return uri_to_path(uri)

    def open_uris(self) -> list[str]:
        return list(self.workspace.text_documents)

    def open_text(self, uri: str) -> str | None:
        doc = self.workspace.text_documents.get(uri)
        return doc.source if doc is not None else None

    async def fan_out(self, hook: Callable[[LanguageFeature], Any]) -> None:
        """Call one hook on every feature; a failing feature is logged, the others still run."""
        for feature in self.features:
            try:
                await hook(feature)
            except Exception as exc:
                self.report_server_error(exc, type(feature))


def create_server() -> MemlsServer:
    """The server with every feature registered."""
    from memls.lsp.features.setup import register

    server = MemlsServer()
    register(server)
    return server


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m memls.lsp`` (stdio only; ``memls serve`` has more options)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    create_server().start_io()


__all__ = ["MemlsServer", "Settings", "create_server", "main"]


def leave(code: int | str | None) -> None:
    """End the process with ``code`` once serving is over.

    A library may leave a non-daemon thread behind (watchfiles' AnyIO worker threads stay
    parked when the loop ends while a watch was being restarted); the interpreter would
    wait for it forever and the editor would see a server that never exits. Output is
    flushed first, so no answer is lost."""
    stray = [
        t
        for t in threading.enumerate()
        if t is not threading.main_thread() and t.is_alive() and not t.daemon
    ]
    if stray:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code if isinstance(code, int) else (1 if code else 0))
    if code:
        raise SystemExit(code)
