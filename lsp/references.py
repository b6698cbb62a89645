"""Where a memory file names a checkpoint: Active Checkpoints bullets and ``continue name``.

Hover, definition and document links all ask the same question, so it is answered once here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from memls.core.graph import CONTINUE_NAME
from memls.core.model import Document, FileKind, Position, Range
from memls.core.workspace import Workspace

_BULLET_NAME = re.compile(r"^\s*[-*+]\s+\*\*(?P<name>[^*]+)\*\*")


@dataclass(frozen=True)
class CheckpointRef:
    name: str
    range: Range  # the name in the text
    line: int


def checkpoint_refs(
    ws: Workspace, doc: Document, only_line: int | None = None
) -> Iterator[CheckpointRef]:
    """Every checkpoint name the document mentions, in line order (``only_line``: the
    ones on that line, without scanning the rest of the document)."""
    bullet_lines: set[int] = set()
    if doc.kind is FileKind.INDEX:
        section = doc.section("Active Checkpoints")
        if section is not None:
            for item in doc.items_in(section):
                if only_line is not None and item.line != only_line:
                    continue
                m = _BULLET_NAME.match(doc.line_text(item.line))
                if m:
                    bullet_lines.add(item.line)
                    name = m.group("name").strip()
                    start = m.start("name") + (len(m.group("name")) - len(m.group("name").lstrip()))
                    yield CheckpointRef(
                        name, Range.of(item.line, start, item.line, start + len(name)), item.line
                    )
    numbered = (
        enumerate(doc.lines) if only_line is None else [(only_line, doc.line_text(only_line))]
    )
    for number, text in numbered:
        if "continue" not in text or number in bullet_lines or doc.in_fence(number):
            continue
        for m in CONTINUE_NAME.finditer(text):
            yield CheckpointRef(
                m.group("name"), Range.of(number, m.start("name"), number, m.end("name")), number
            )


def checkpoint_ref_at(ws: Workspace, doc: Document, pos: Position) -> CheckpointRef | None:
    """The reference on ``pos``'s line; for a bullet, anywhere on its line counts."""
    for ref in checkpoint_refs(ws, doc, pos.line):
        if ref.line != pos.line:
            continue
        if ref.range.contains(pos) or _BULLET_NAME.match(doc.line_text(pos.line)):
            return ref
    return None
