"""Applying incremental ``didChange`` edits to an open buffer in time proportional to the edit.

pygls splits the whole buffer into lines and writes every line back for each change: on a
10 MB document that is about half a second on the event loop per keystroke, during which no
other request is read. Here the start of the edited line is found by counting line breaks in
large slices (C speed), and only that line is decoded from the client's position encoding.

Lines end at ``\\n`` (a ``\\r`` before it belongs to the line ending), as in the core's
``LineIndex``, so the server's buffer and its parsed documents agree on line numbers.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import TextDocument

from memls.lsp.convert import PositionCodec

_SLICE = 1 << 16


def line_start(text: str, line: int) -> int | None:
    """Offset where ``line`` starts; None when the text has fewer lines."""
    if line <= 0:
        return 0
    pos = 0
    remaining = line
    size = len(text)
    while pos < size:
        end = min(size, pos + _SLICE)
        count = text.count("\n", pos, end)
        if count < remaining:
            remaining -= count
            pos = end
            continue
        while remaining:
            pos = text.index("\n", pos) + 1
            remaining -= 1
        return pos
    return None


def offset(text: str, position: types.Position, codec: PositionCodec) -> int:
    """String offset of a client position, clamped into the text."""
    start = line_start(text, position.line)
    if start is None:
        return len(text)
    end = text.find("\n", start)
    if end < 0:
        end = len(text)
    line = text[start:end]
    if line.endswith("\r"):
        line = line[:-1]
    return start + codec.column_from_client(line, position.character)


def apply_change(
    document: TextDocument,
    change: types.TextDocumentContentChangeEvent,
    codec: PositionCodec,
) -> None:
    """Apply one content change (incremental or whole-document) to an open buffer."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        document.apply_change(change)
        return
    text = document.source
    start = offset(text, change.range.start, codec)
    end = max(start, offset(text, change.range.end, codec))
    document._source = text[:start] + change.text + text[end:]
