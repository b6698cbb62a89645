"""File operations: when the editor moves or renames memory files (its explorer, a refactor),
``workspace/willRenameFiles`` answers with the edits that keep every link, index bullet and
``continue`` line pointing at them; ``didRenameFiles`` refreshes the workspaces. Also the
"create the missing file" quick fix on a broken link or an orphan bullet: a ``CreateFile``
that never overwrites (``ignoreIfExists``) with a template the rules accept."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from memls.core.fsutil import UnsafePathError
from memls.core.model import Diagnostic, Document, TextEdit
from memls.core.ops import OpError
from memls.core.ops.move import MovePlan, plan_file_move
from memls.core.templates import missing_files
from memls.core.workspace import Workspace
from memls.lsp import convert
from memls.lsp.features import LanguageFeature

if TYPE_CHECKING:
    from memls.lsp.server import MemlsServer

BROKEN_CODES = frozenset(("IX002", "IX009", "IX012", "IX013"))
"""Diagnostics the create-missing action answers (orphan bullet, broken pointer or link)."""

FILE_FILTERS = [
    types.FileOperationFilter(
        scheme="file",
        pattern=types.FileOperationPattern(
            glob="**/*.md", matches=types.FileOperationPatternKind.File
        ),
    ),
    types.FileOperationFilter(
        scheme="file",
        pattern=types.FileOperationPattern(
            glob="**/memory", matches=types.FileOperationPatternKind.Folder
        ),
    ),
]
REGISTRATION = types.FileOperationRegistrationOptions(filters=FILE_FILTERS)


class FileOperations(LanguageFeature):
    def __init__(self, server: MemlsServer) -> None:
        super().__init__(server)
        self._edited: set[Path] = set()
        """Files the last willRenameFiles answer edited (re-read on didRenameFiles)."""

    async def will_rename(self, params: types.RenameFilesParams) -> types.WorkspaceEdit | None:
        pairs = [
            (old, new)
            for f in params.files
            if (old := self.server.path_of(f.old_uri)) is not None
            and (new := self.server.path_of(f.new_uri)) is not None
        ]

        kept: list[str] = []

        def compute() -> types.WorkspaceEdit | None:
            merged: dict[Path, list[TextEdit]] = {}
            lines: dict[Path, tuple[str, ...]] = {}
            for ws, old, new in self._moves(pairs):
                try:
                    plan = plan_file_move(ws, old, new, strict=False)
                except (OpError, UnsafePathError) as exc:
                    self.server.log_info(f"memls: not rewriting links for {old.name}: {exc}")
                    continue
                kept.extend(plan.kept)
                for path, edits in plan.edits.items():
                    merged.setdefault(path, []).extend(edits)
                    doc = ws.document(path)
                    lines[path] = doc.lines if doc is not None else ()
            self._edited = set(merged)
            if not merged:
                return None
            plan = MovePlan("file", "", "", (), {p: tuple(e) for p, e in merged.items()})
            return convert.plan_edit(
                plan, lambda p: lines.get(p, ()), self.server.codec, lambda p: None, False
            )

        edit = await self.server.memory.run(compute)
        for note in kept:  # committed LOG text the move leaves as it is (append-only)
            self.server.show(f"memls: {note}")
        return edit

    def _moves(self, pairs: Sequence[tuple[Path, Path]]) -> list[tuple[Workspace, Path, Path]]:
        """Each memory file being moved, with its workspace (a folder: the files in it)."""
        memory = self.server.memory
        out: list[tuple[Workspace, Path, Path]] = []
        for old, new in pairs:
            for ws in list(memory.workspaces.values()):
                for path in ws.paths():
                    if path == old:
                        out.append((ws, old, new))
                    elif old in path.parents:
                        out.append((ws, path, new / path.relative_to(old)))
        return out

    async def did_rename(self, params: types.RenameFilesParams) -> None:
        paths: set[Path] = set(self._edited)
        self._edited = set()
        for f in params.files:
            for uri in (f.old_uri, f.new_uri):
                if (p := self.server.path_of(uri)) is not None:
                    paths.add(p)
        memory = self.server.memory

        def refresh() -> set[Path]:
            if any(p.is_dir() or p.suffix != ".md" for p in paths):
                for ws in memory.workspaces.values():
                    ws.refresh()
                return set(memory.all_paths())
            return memory.invalidate_many(paths)

        affected = await memory.run(refresh)
        await self.server.fan_out(lambda f: f.affected(affected))


def create_missing_actions(
    ws: Workspace,
    doc: Document,
    first: int,
    last: int,
    diagnostics: Sequence[Diagnostic],
    to_lsp: object,
) -> list[types.CodeAction]:
    """ "Create …" quick fixes for missing files named on lines ``first..last``."""
    assert callable(to_lsp)
    out: list[types.CodeAction] = []
    for new in missing_files(ws, doc, first, last):
        related = [
            d for d in diagnostics if d.code in BROKEN_CODES and d.range.start.line == new.ref.line
        ]
        rel = Path(os.path.relpath(new.path, doc.path.parent)).as_posix()
        what = "checkpoint" if new.kind == "checkpoint" else "memory file"
        out.append(
            types.CodeAction(
                title=f"Create {what} {rel}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[to_lsp(d) for d in related] or None,
                edit=convert.create_file_edit(new.path, new.content),
                is_preferred=not related or None,
            )
        )
    return out
