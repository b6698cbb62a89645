"""Rename: a checkpoint (from its bullet, a ``continue`` line or its ``# Checkpoint:``
title), a memory file (from a link to it) or a heading (from a ``file.md#anchor`` link or
the heading itself). ``prepareRename`` says what the position renames; ``rename`` answers
with one WorkspaceEdit — every text edit in every file, then the file move — planned by
core (:mod:`memls.core.ops.move`, the same plan ``memls mv`` applies). A name that
``checkpoint save`` would refuse, or a file that would overwrite another, is a clear
error and no edit."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException

from memls.core.fsutil import UnsafePathError
from memls.core.model import Document
from memls.core.ops import OpError
from memls.core.ops.move import MovePlan, RenameTarget, plan_rename, rename_at
from memls.core.workspace import Workspace
from memls.lsp import convert
from memls.lsp.features import LanguageFeature


class Refused(JsonRpcException):
    """A request memls will not carry out; the message says why (LSP RequestFailed)."""

    CODE = -32803
    quiet = True
    """Expected user-facing refusal: the client shows the message; not a server error."""


class Rename(LanguageFeature):
    def target(
        self, uri: str, position: types.Position
    ) -> tuple[Workspace, Document, RenameTarget] | None:
        """What ``position`` renames (worker thread); a refusal raises :class:`Refused`."""
        found = self.locate(uri)
        if found is None:
            return None
        ws, doc = found
        pos = self.server.codec.from_lsp(position, doc.lines)
        try:
            target = rename_at(ws, doc, pos)
        except (OpError, UnsafePathError) as exc:
            raise Refused(str(exc)) from None
        return (ws, doc, target) if target is not None else None

    async def prepare_rename(
        self, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        def compute() -> types.PrepareRenamePlaceholder | None:
            found = self.target(params.text_document.uri, params.position)
            if found is None:
                return None
            _, doc, target = found
            return types.PrepareRenamePlaceholder(
                range=self.server.codec.range_to_lsp(target.range, doc.lines),
                placeholder=target.placeholder,
            )

        return await self.server.memory.run(compute)

    async def rename(self, params: types.RenameParams) -> types.WorkspaceEdit | None:
        def compute() -> tuple[types.WorkspaceEdit, tuple[str, ...]]:
            found = self.target(params.text_document.uri, params.position)
            if found is None:
                raise Refused("nothing to rename here")
            ws, _, target = found
            try:
                plan = plan_rename(ws, target, params.new_name)
            except (OpError, UnsafePathError) as exc:
                raise Refused(str(exc)) from None
            return self.workspace_edit(ws, plan), plan.kept

        edit, kept = await self.server.memory.run(compute)
        for note in kept:  # committed LOG text the rename leaves as it is (append-only)
            self.server.show(f"memls: {note}")
        return edit

    def workspace_edit(self, ws: Workspace, plan: MovePlan) -> types.WorkspaceEdit:
        """The plan in the form the client can apply (worker thread)."""
        caps = self.server.client_capabilities
        operations = get_capability(caps, "workspace.workspace_edit.resource_operations", None)
        # Resource operations only exist inside documentChanges: a client that announces
        # them (Neovim does, without the documentChanges flag) applies documentChanges.
        document_changes = bool(
            get_capability(caps, "workspace.workspace_edit.document_changes", False) or operations
        )
        can_rename = operations is not None and types.ResourceOperationKind.Rename in operations
        if plan.moves and not can_rename:
            raise Refused(
                "this editor cannot rename files through a language server; "
                f"run `memls mv {plan.old} {plan.new}` instead"
            )
        return convert.plan_edit(
            plan,
            lambda path: _lines(ws, path),
            self.server.codec,
            self.version_of,
            document_changes,
        )

    def version_of(self, path: Path) -> int | None:
        doc = self.server.workspace.text_documents.get(convert.path_to_uri(path))
        return doc.version if doc is not None else None


def _lines(ws: Workspace, path: Path) -> tuple[str, ...]:
    doc = ws.document(path)
    return doc.lines if doc is not None else ()
