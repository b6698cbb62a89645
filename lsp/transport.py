"""JSON-RPC over a byte stream, framed with ``Content-Length`` headers, that survives bad input.

pygls' reader trusts the framing: a header it cannot read (``Content-Length: abc``, or no
header at all) leaves it reading the following messages' bodies as headers, so the server
answers nothing more and ignores ``shutdown``/``exit``; and a message whose params do not
fit the method (``textDocument/hover`` with ``{"bogus": 1}``) is dropped without a response.

Here the bytes go through :class:`FrameReader`, which resynchronises on the next
``Content-Length`` header after anything it cannot frame (a JSON body never contains one:
JSON has no raw line breaks inside strings, and ``Content-Length:`` is no JSON token), and
each body through :func:`dispatch`, which answers every request it cannot run with a JSON-RPC
error: Parse error (-32700), Invalid Request (-32600, also for requests after ``shutdown``)
or Invalid Params (-32602, with what did not fit).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

MAX_HEADER_BYTES = 8_192
"""A header block longer than this is not a header."""
MAX_BODY_BYTES = 512 * 1024 * 1024
"""A ``Content-Length`` above this is refused as malformed (not waited for)."""

_SIGNATURE = b"Content-Length:"
_SIGNATURE_RE = re.compile(rb"Content-Length:[ \t]*\d+\r?\n")
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")
_HEADER_START = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]*(:|$)")


@dataclass(frozen=True)
class Body:
    """A well-framed message body."""

    data: bytes


@dataclass(frozen=True)
class Broken:
    """Bytes that could not be framed, dropped; ``data`` is what was skipped."""

    reason: str
    data: bytes


Frame = Body | Broken


class FrameReader:
    """Sans-IO framing: :meth:`feed` bytes as they arrive, get bodies and broken frames."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._length: int | None = None
        self._scanned = 0
        """How far the partial body has been searched for a header signature."""

    def feed(self, data: bytes) -> list[Frame]:
        self._buf += data
        out: list[Frame] = []
        while self._step(out):
            pass
        return out

    def pending(self) -> bytes:
        """Bytes not yet framed (at end of input: a truncated message)."""
        return bytes(self._buf)

    def _step(self, out: list[Frame]) -> bool:
        buf = self._buf
        if self._length is None:
            if not buf:
                return False
            if _HEADER_START.match(buf, 0, min(len(buf), 256)) is None:
                out.append(self._skip_garbage("bytes before a Content-Length header"))
                return True
            end = _HEADER_END.search(buf)
            if end is None:
                if len(buf) > MAX_HEADER_BYTES:
                    out.append(self._skip_garbage("a header block without an end"))
                    return True
                return False
            length, problem = _content_length(bytes(buf[: end.start()]))
            if problem is not None:
                out.append(self._skip_garbage(problem))
                return True
            del buf[: end.end()]
            self._length = length
            self._scanned = 0
        length = self._length
        assert length is not None
        # A header signature inside the body: the Content-Length was too large and the
        # next message already began (a JSON body never contains one).
        limit = min(len(buf), length)
        cut = _find_signature(buf, max(0, self._scanned - len(_SIGNATURE) - 24), limit)
        if cut is not None:
            out.append(Broken("a message shorter than its Content-Length", bytes(buf[:cut])))
            del buf[:cut]
            self._length = None
            return True
        if len(buf) < length:
            self._scanned = len(buf)
            return False
        out.append(Body(bytes(buf[:length])))
        del buf[:length]
        self._length = None
        return True

    def _skip_garbage(self, reason: str) -> Broken:
        """Drop bytes up to the next ``Content-Length`` (keeping a possible partial one)."""
        buf = self._buf
        at = buf.find(_SIGNATURE, 1)
        if at < 0:
            at = max(1, len(buf) - len(_SIGNATURE))
            at = next((i for i in range(at, len(buf)) if _SIGNATURE.startswith(buf[i:])), len(buf))
        skipped = bytes(buf[:at])
        del buf[:at]
        return Broken(reason, skipped)


def _find_signature(buf: bytearray, start: int, end: int) -> int | None:
    at = buf.find(_SIGNATURE, start, end)
    while at >= 0:
        if _SIGNATURE_RE.match(buf, at) is not None:
            return at
        at = buf.find(_SIGNATURE, at + 1, end)
    return None


def _content_length(block: bytes) -> tuple[int, str | None]:
    """The Content-Length of a header block, or why it has none."""
    length: int | None = None
    for raw in re.split(rb"\r?\n", block):
        m = _HEADER_LINE.fullmatch(raw)
        if m is None:
            return 0, f"malformed header line {raw[:80]!r}"
        if m.group(1).lower() == b"content-length":
            value = m.group(2)
            if not value.isdigit():
                return 0, f"Content-Length {value[:40].decode('latin-1')!r} is not a number"
            length = int(value)
    if length is None:
        return 0, "no Content-Length header"
    if length > MAX_BODY_BYTES:
        return 0, f"Content-Length {length} is over the {MAX_BODY_BYTES}-byte limit"
    return length, None


# -- dispatch --------------------------------------------------------------------------


def _valid_id(value: object) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def send_error(protocol: JsonRPCProtocol, msg_id: object, code: int, message: str) -> None:
    protocol._send_data(
        {
            "jsonrpc": "2.0",
            "id": msg_id if _valid_id(msg_id) else None,
            "error": {"code": code, "message": message},
        }
    )


def warn(protocol: JsonRPCProtocol, message: str) -> None:
    """A Warning-level ``window/logMessage`` (the client's input was wrong, not the server)."""
    log.warning("%s", message)
    try:
        protocol.notify(
            types.WINDOW_LOG_MESSAGE,
            types.LogMessageParams(types.MessageType.Warning, f"memls: {message}"),
        )
    except Exception:  # the transport itself may be what failed
        log.exception("could not report to the client")


def broken(protocol: JsonRPCProtocol, frame: Broken) -> None:
    """Report bytes that were dropped; every request recognisable in them is answered."""
    warn(protocol, f"dropped {len(frame.data)} bytes of unframed input: {frame.reason}")
    for msg_id in _request_ids(frame.data):
        send_error(protocol, msg_id, INVALID_REQUEST, f"message not framed: {frame.reason}")


_MESSAGE_START = re.compile(r'\{\s*"(?:jsonrpc|id|method)"')
_SCAN_BYTES = 1 << 20


def _request_ids(data: bytes) -> list[object]:
    """Ids of the JSON-RPC requests found whole in ``data`` (its first megabyte)."""
    text = data[:_SCAN_BYTES].decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    ids: list[object] = []
    pos = 0
    while (m := _MESSAGE_START.search(text, pos)) is not None:
        try:
            found, end = decoder.raw_decode(text, m.start())
        except ValueError:
            pos = m.start() + 1
            continue
        if (
            isinstance(found, dict)
            and isinstance(found.get("method"), str)
            and _valid_id(found.get("id"))
        ):
            ids.append(found["id"])
        pos = end
    return ids


def dispatch(protocol: JsonRPCProtocol, body: bytes, on_error: Callable[[Exception], Any]) -> None:
    """Decode, validate and hand one message to pygls; answer what cannot be handled."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        warn(protocol, f"a message that is not JSON: {exc}")
        send_error(protocol, None, PARSE_ERROR, f"Parse error: {exc}")
        return
    if not isinstance(data, dict):
        warn(protocol, "a message that is not a JSON object (batches are not supported)")
        send_error(protocol, None, INVALID_REQUEST, "expected a JSON-RPC object")
        return
    method = data.get("method")
    msg_id = data.get("id")
    is_request = "method" in data and "id" in data
    problem = None
    if data.get("jsonrpc") != "2.0":
        problem = '"jsonrpc" must be "2.0"'
    elif "method" in data and not isinstance(method, str):
        problem = '"method" must be a string'
    elif "id" in data and not _valid_id(msg_id) and not (msg_id is None and "error" in data):
        problem = '"id" must be an integer or a string'
    elif "method" not in data and "id" not in data:
        problem = 'neither "method" nor "id"'
    if problem is not None:
        warn(protocol, f"an invalid JSON-RPC message: {problem}")
        if is_request or "method" not in data:
            send_error(protocol, msg_id, INVALID_REQUEST, f"Invalid Request: {problem}")
        return
    if protocol._shutdown and method != types.EXIT:
        if is_request:
            send_error(protocol, msg_id, INVALID_REQUEST, "the server is shutting down")
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        detail = _describe(exc.__cause__) or str(exc)
        if is_request:
            send_error(protocol, msg_id, INVALID_PARAMS, f"Invalid params for {method}: {detail}")
        else:
            warn(protocol, f"ignoring {method or 'a response'} with invalid params: {detail}")
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:  # pygls answers requests itself; this is a last resort
        on_error(exc)


def _describe(exc: BaseException | None) -> str:
    if isinstance(exc, ClassValidationError):
        return "; ".join(transform_error(exc, path="request")[:5])
    return str(exc) if exc is not None else ""


# -- loops -----------------------------------------------------------------------------

ReadChunk = Callable[[], Awaitable[bytes]]


async def serve(
    read: ReadChunk,
    protocol: JsonRPCProtocol,
    stop: threading.Event,
    on_error: Callable[[Exception], Any],
) -> None:
    """Read chunks until end of input (or ``stop``), dispatching every framed message."""
    reader = FrameReader()
    while not stop.is_set():
        chunk = await read()
        if not chunk:
            break
        for frame in reader.feed(chunk):
            if isinstance(frame, Body):
                dispatch(protocol, frame.data, on_error)
            else:
                broken(protocol, frame)
            if stop.is_set():
                break
            # Let the handler just started take its first step (a didOpen hands its text
            # to the worker there) before the next message of the same chunk is read, so
            # messages take effect in the order they were sent.
            await asyncio.sleep(0)
    if reader.pending().strip():
        log.warning("input ended inside a message (%d bytes)", len(reader.pending()))


def stdin_chunks(stdin: BinaryIO) -> ReadChunk:
    """Chunks of ``stdin`` as they arrive, read by a daemon thread (so a blocked read never
    keeps the process alive after ``exit``)."""
    queue: asyncio.Queue[bytes] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def pump() -> None:
        assert loop is not None
        assert queue is not None
        # The file descriptor, not the buffered object: a daemon thread blocked inside
        # a BufferedReader holds its lock, which aborts the interpreter at exit.
        try:
            fd: int | None = stdin.fileno()
        except (OSError, ValueError, AttributeError):
            fd = None
        read1 = getattr(stdin, "read1", None)
        while True:
            try:
                if fd is not None:
                    chunk = os.read(fd, 65_536)
                else:
                    chunk = read1(65_536) if read1 is not None else stdin.read(65_536)
            except (OSError, ValueError):
                chunk = b""
            try:
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
            except RuntimeError:  # the loop has closed
                return
            if not chunk:
                return

    async def read() -> bytes:
        nonlocal queue, loop
        if queue is None:
            loop = asyncio.get_running_loop()
            queue = asyncio.Queue()
            threading.Thread(target=pump, name="memls-stdin", daemon=True).start()
        return await queue.get()

    return read
