"""The one place core types become LSP types (and LSP positions become core positions).

Core positions count code points. The client counts in the negotiated position encoding
(UTF-16 by default, UTF-8 for Neovim, UTF-32 = code points), so every conversion needs the
text of the line it is on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memls.core.model import Diagnostic, Position, Range, Severity, TextEdit
from memls.core.ops.move import MovePlan

SOURCE = "memls"


def _units(ch: str, encoding: str) -> int:
    cp = ord(ch)
    if encoding == "utf-16":
        return 2 if cp > 0xFFFF else 1
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    return 3 if cp < 0x10000 else 4


class PositionCodec:
    """Converts columns between code points (core) and the client's encoding."""

    def __init__(self, encoding: str = "utf-16") -> None:
        self.encoding = str(encoding)
        self.identity = self.encoding == "utf-32"

    def column_to_client(self, line: str, character: int) -> int:
        character = max(0, min(character, len(line)))
        if self.identity or line.isascii():
            return character
        return sum(_units(ch, self.encoding) for ch in line[:character])

    def column_from_client(self, line: str, units: int) -> int:
        if self.identity or line.isascii():
            return max(0, min(units, len(line)))
        seen = 0
        for index, ch in enumerate(line):
            if seen >= units:
                return index
            seen += _units(ch, self.encoding)
        return len(line)

    def to_lsp(self, pos: Position, lines: Sequence[str]) -> types.Position:
        line = lines[pos.line] if 0 <= pos.line < len(lines) else ""
        return types.Position(max(0, pos.line), self.column_to_client(line, pos.character))

    def from_lsp(self, pos: types.Position, lines: Sequence[str]) -> Position:
        """A core position, clamped into the document (clients may send positions past the end)."""
        if not lines:
            return Position(0, 0)
        if pos.line >= len(lines):
            last = len(lines) - 1
            return Position(last, len(lines[last]))
        return Position(pos.line, self.column_from_client(lines[pos.line], pos.character))

    def range_to_lsp(self, rng: Range, lines: Sequence[str]) -> types.Range:
        return types.Range(self.to_lsp(rng.start, lines), self.to_lsp(rng.end, lines))


def severity(sev: Severity) -> types.DiagnosticSeverity:
    return types.DiagnosticSeverity(int(sev))


def diagnostic(diag: Diagnostic, codec: PositionCodec, lines: Sequence[str]) -> types.Diagnostic:
    return types.Diagnostic(
        range=codec.range_to_lsp(diag.range, lines),
        message=diag.message,
        severity=severity(diag.severity),
        code=diag.code,
        source=SOURCE,
        data={"fixable": diag.fix is not None},
    )


def text_edit(edit: TextEdit, codec: PositionCodec, lines: Sequence[str]) -> types.TextEdit:
    return types.TextEdit(range=codec.range_to_lsp(edit.range, lines), new_text=edit.new_text)


def text_edits(
    edits: Sequence[TextEdit], codec: PositionCodec, lines: Sequence[str]
) -> list[types.TextEdit]:
    return [text_edit(e, codec, lines) for e in edits]


def whole_document_edit(old: str, new: str, codec: PositionCodec) -> types.TextEdit:
    """One edit that turns ``old`` into ``new``, trimmed to the lines that differ."""
    old_lines = old.split("\n")
    new_lines = new.split("\n")
    shortest = min(len(old_lines), len(new_lines))
    head = 0
    while head < shortest - 1 and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < shortest - head - 1 and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    middle = new_lines[head : len(new_lines) - tail]
    start = types.Position(head, 0)
    if tail:
        end = types.Position(len(old_lines) - tail, 0)
        replacement = "".join(line + "\n" for line in middle)
    else:
        last = old_lines[-1]
        end = types.Position(len(old_lines) - 1, codec.column_to_client(last, len(last)))
        replacement = "\n".join(middle)
    return types.TextEdit(types.Range(start, end), replacement)


def uri_to_path(uri: str) -> Path | None:
    """The file behind a ``file:`` URI; None for other schemes."""
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def path_to_uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    return uri if uri is not None else path.as_uri()


def location(path: Path, rng: Range, codec: PositionCodec, lines: Sequence[str]) -> types.Location:
    return types.Location(uri=path_to_uri(path), range=codec.range_to_lsp(rng, lines))


def plan_edit(
    plan: MovePlan,
    lines_of: Callable[[Path], Sequence[str]],
    codec: PositionCodec,
    version_of: Callable[[Path], int | None],
    document_changes: bool,
) -> types.WorkspaceEdit:
    """A core rename plan as one WorkspaceEdit: every text edit (on the files' current
    URIs), then the file moves. Clients without ``documentChanges`` get ``changes``; a plan
    that moves files needs ``documentChanges`` (the caller checks the client can rename)."""
    if not document_changes:
        return types.WorkspaceEdit(
            changes={
                path_to_uri(path): text_edits(edits, codec, lines_of(path))
                for path, edits in plan.edits.items()
            }
        )
    changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = []
    for path, edits in sorted(plan.edits.items()):
        lines = lines_of(path)
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=path_to_uri(path), version=version_of(path)
                ),
                edits=list(text_edits(edits, codec, lines)),
            )
        )
    for old, new in plan.moves:
        changes.append(
            types.RenameFile(
                old_uri=path_to_uri(old),
                new_uri=path_to_uri(new),
                options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
            )
        )
    return types.WorkspaceEdit(document_changes=changes)


def create_file_edit(path: Path, content: str) -> types.WorkspaceEdit:
    """Create ``path`` — never over an existing file (``ignoreIfExists``) — with ``content``."""
    uri = path_to_uri(path)
    return types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(
                uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
            ),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[
                    types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 0)), content)
                ],
            ),
        ]
    )
