"""Decoding, line editing and position bookkeeping shared by the parser, the rules, the
operations and every front: the one text codec of memls.

Two decodings: :func:`decode` for reading (invalid UTF-8 becomes U+FFFD, and where is
remembered), :func:`decode_lossless` / :func:`encode_lossless` for writing (every byte
round-trips). :class:`Lines` edits a text by line ranges and keeps every other byte.

Positions are 0-based (line, character) with characters counted in code points; the
LSP front converts to UTF-16 where the client needs it.
"""

from __future__ import annotations

import codecs
import threading
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memls.core.model import Document

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


class Lines:
    """A text as raw lines (split on ``\\n``) that can be edited by line ranges.

    A ``\\r`` stays with its line, so untouched lines keep their line endings; inserted
    lines take the text's dominant line ending.
    """

    def __init__(self, text: str) -> None:
        self.raw = text.split("\n")
        self.eol_cr = dominant_eol(text) == "\r\n"

    def doc(self, path: Path) -> Document:
        from memls.core.parse import parse_text

        return parse_text(self.text(), path)

    def text(self) -> str:
        return "\n".join(self.raw)

    def replace(self, start: int, end: int, new: list[str]) -> None:
        """Replace raw lines ``[start, end)`` with ``new`` (given without line endings)."""
        cr = "\r" if self.eol_cr else ""
        self.raw[start:end] = [line + cr for line in new]

    def plain(self, line: int) -> str:
        raw = self.raw[line]
        return raw[:-1] if raw.endswith("\r") else raw


def strip_blank_edges(lines: list[str]) -> list[str]:
    """``lines`` without the blank lines at its start and end."""
    start = 0
    end = len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def also_on(lines: list[int]) -> str:
    """` (also on lines 31 and 118)`: the other lines (0-based, shown 1-based) where one
    cause was found — a dead target named again (IX009, IX012), a file's bad bytes (SZ001)."""
    if not lines:
        return ""
    shown = [str(n + 1) for n in lines[:5]]
    more = f" and {len(lines) - 5} more" if len(lines) > 5 else ""
    if len(shown) == 1:
        return f" (also on line {shown[0]})"
    words = ", ".join(shown[:-1]) + (f", {shown[-1]}{more}" if more else f" and {shown[-1]}")
    return f" (also on lines {words})"
