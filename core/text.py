"""Decoding and position bookkeeping shared by the parser, the rules and every front.

Positions are 0-based (line, character) with characters counted in code points; the
LSP front converts to UTF-16 where the client needs it.
"""

from __future__ import annotations

import codecs
import threading
from bisect import bisect_right
from dataclasses import dataclass

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Decoded:
    """Text decoded from bytes, with where decoding had to substitute invalid sequences."""

    text: str
    bad_offsets: tuple[int, ...]  # code-point offsets of U+FFFD substitutions from invalid UTF-8
    had_bom: bool


def decode(data: bytes) -> Decoded:
    """Decode UTF-8 leniently: invalid sequences become U+FFFD and are remembered."""
    had_bom = data.startswith(b"\xef\xbb\xbf")
    if had_bom:
        data = data[3:]
    try:
        text = data.decode("utf-8")
        bad: tuple[int, ...] = ()
    except UnicodeDecodeError:
        text, bad = _decode_replacing(data)
    return Decoded(text, bad, had_bom)


def decode_lossless(data: bytes) -> tuple[str, bool]:
    """Text that encodes back to exactly ``data``: (text without a BOM, whether it had one).

    Bytes that are not UTF-8 become lone surrogates (``surrogateescape``), so a writer that
    edits some lines and encodes with :func:`encode_lossless` keeps every other byte.
    """
    had_bom = data.startswith(b"\xef\xbb\xbf")
    if had_bom:
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape"), had_bom


def encode_lossless(text: str, bom: bool = False) -> bytes:
    """Inverse of :func:`decode_lossless`."""
    data = text.encode("utf-8", errors="surrogateescape")
    return b"\xef\xbb\xbf" + data if bom else data


_MAX_REPORTED = 200
_errors: threading.local = threading.local()


def _record_error(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    spans: list[tuple[int, int]] = _errors.spans
    if len(spans) < _MAX_REPORTED:
        spans.append((exc.start, exc.end))
    return "\ufffd", exc.end


codecs.register_error("memls-record", _record_error)


def _decode_replacing(data: bytes) -> tuple[str, tuple[int, ...]]:
    """Decode with U+FFFD substitutions and return where (in code points) they happened."""
    _errors.spans = []
    text = data.decode("utf-8", errors="memls-record")
    spans: list[tuple[int, int]] = _errors.spans
    offsets: list[int] = []
    chars = 0
    prev_end = 0
    for start, end in spans:
        chars += len(data[prev_end:start].decode("utf-8", errors="replace"))
        offsets.append(chars)
        chars += 1
        prev_end = end
    return text, tuple(offsets)


class LineIndex:
    """Maps between string offsets and (line, character) positions.

    Lines are split on ``\\n``; a trailing ``\\r`` belongs to the line ending, not the line.
    """

    __slots__ = ("_starts", "lines", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        raw = text.split("\n")
        self.lines: list[str] = [ln[:-1] if ln.endswith("\r") else ln for ln in raw]
        starts = [0]
        total = 0
        for ln in raw[:-1]:
            total += len(ln) + 1
            starts.append(total)
        self._starts = starts

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def line_start(self, line: int) -> int:
        return self._starts[max(0, min(line, len(self._starts) - 1))]

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self._starts, offset) - 1
        char = offset - self._starts[line]
        return line, min(char, len(self.lines[line]))

    def offset(self, line: int, character: int) -> int:
        """String offset of a position, clamped into the document."""
        if line < 0:
            return 0
        if line >= len(self.lines):
            return len(self.text)
        return self._starts[line] + max(0, min(character, len(self.lines[line])))

    @property
    def eol(self) -> str:
        """The document's dominant line ending, used when memls inserts lines: CRLF when
        most of its lines end so (one stray CRLF line does not turn inserted lines CRLF)."""
        return dominant_eol(self.text)


def dominant_eol(text: str) -> str:
    """``"\\r\\n"`` when most line endings of ``text`` are CRLF, else ``"\\n"``."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"
