"""Where a memory file names a checkpoint: Active Checkpoints bullets and ``continue name``.

Hover, definition and document links all ask the same question, so it is answered once here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from memls.core.formats.index import bullets
from memls.core.graph import CONTINUE_NAME
from memls.core.model import Document, FileKind, Position, Range
from memls.core.workspace import Workspace


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
        for bullet in bullets(doc):
            if only_line is None or bullet.line == only_line:
                bullet_lines.add(bullet.line)
                yield CheckpointRef(bullet.name, bullet.name_range, bullet.line)
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
    bullet_lines = {b.line for b in bullets(doc)} if doc.kind is FileKind.INDEX else set()
    for ref in checkpoint_refs(ws, doc, pos.line):
        if ref.line != pos.line:
            continue
        if ref.range.contains(pos) or ref.line in bullet_lines:
            return ref
    return None
