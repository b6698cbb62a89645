"""Code actions: a quick fix for every diagnostic whose rule has a safe fix (the same edits
``memls check --fix`` applies), "Add all missing sections", ``source.fixAll.memls``, and
the operations — "Save checkpoint…" from any memory file (a quick fix, and a source action
when asked for one), "Approve bundle" on a bundle
section, "Migrate legacy sections" on IX007 — which run server commands."""

from __future__ import annotations

from lsprotocol import types

from memls.core.bundle import BUNDLE_TITLE
from memls.core.fixes import apply_fixes, fix_text
from memls.core.model import Diagnostic, Document, FileKind
from memls.core.rules.secrets import known_fake_fix
from memls.core.workspace import Workspace, checkpoint_name
from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.features.file_ops import create_missing_actions

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.memls"
SAVE_CHECKPOINT = "source.memls.saveCheckpoint"
CODE_ACTION_KINDS = (types.CodeActionKind.QuickFix.value, FIX_ALL, SAVE_CHECKPOINT)
MISSING_SECTION_CODES = ("CP010", "HO001")
"""Rules whose fix adds a missing section: "Add all missing sections" applies them together."""


class CodeActions(LanguageFeature):
    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        path = self.server.path_of(uri)
        if path is None:
            return []
        memory = self.server.memory

        def compute() -> list[types.CodeAction]:
            found = self.locate(uri)
            if found is None:
                return []
            ws, doc = found
            checked = memory.check(path)
            return self._actions(uri, ws, doc, checked.diagnostics, params)

        actions = await memory.run(compute)
        only = params.context.only
        if only:
            actions = [a for a in actions if any(str(a.kind).startswith(str(k)) for k in only)]
        else:
            actions = [a for a in actions if a.kind != SAVE_CHECKPOINT]
        return actions

    def _actions(
        self,
        uri: str,
        ws: Workspace,
        doc: Document,
        diagnostics: list[Diagnostic],
        params: types.CodeActionParams,
    ) -> list[types.CodeAction]:
        codec = self.server.codec
        lines = doc.lines
        first, last = params.range.start.line, params.range.end.line
        in_context = {(str(d.code), d.range.start.line) for d in params.context.diagnostics}

        def lsp_diag(d: Diagnostic) -> types.Diagnostic:
            return convert.diagnostic(d, codec, lines)

        def edit(*edits: types.TextEdit) -> types.WorkspaceEdit:
            return types.WorkspaceEdit(changes={uri: list(edits)})

        actions: list[types.CodeAction] = []
        for d in diagnostics:
            touches = d.range.start.line <= last and d.range.end.line >= first
            if d.fix is None or not (touches or (d.code, d.range.start.line) in in_context):
                continue
            actions.append(
                types.CodeAction(
                    title=d.fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diag(d)],
                    edit=edit(*convert.text_edits(d.fix.edits, codec, lines)),
                    is_preferred=True,
                )
            )
            if d.code.startswith("SC"):
                fake = known_fake_fix(lines, d)
                actions.append(
                    types.CodeAction(
                        title=fake.title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diag(d)],
                        edit=edit(*convert.text_edits(fake.edits, codec, lines)),
                    )
                )
        missing = [d for d in diagnostics if d.code in MISSING_SECTION_CODES and d.fix is not None]
        if len(missing) > 1:
            new = apply_fixes(doc.text, [d.fix for d in missing if d.fix is not None])
            actions.append(
                types.CodeAction(
                    title="Add all missing sections",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diag(d) for d in missing],
                    edit=edit(convert.whole_document_edit(doc.text, new, codec)),
                )
            )
        if any(d.fix is not None for d in diagnostics):
            fixed, applied = fix_text(ws, doc.path, self.server.memory.now())
            if applied and fixed != doc.text:
                actions.append(
                    types.CodeAction(
                        title=f"Fix all memls problems ({applied})",
                        kind=FIX_ALL,
                        edit=edit(convert.whole_document_edit(doc.text, fixed, codec)),
                    )
                )
        actions.extend(
            self._operations(uri, ws, doc, diagnostics, first, last, in_context, lsp_diag)
        )
        actions.extend(create_missing_actions(ws, doc, first, last, diagnostics, lsp_diag))
        return actions

    def _operations(
        self,
        uri: str,
        ws: Workspace,
        doc: Document,
        diagnostics: list[Diagnostic],
        first: int,
        last: int,
        in_context: set[tuple[str, int]],
        lsp_diag: object,
    ) -> list[types.CodeAction]:
        assert callable(lsp_diag)
        out: list[types.CodeAction] = []
        legacy = [
            d
            for d in diagnostics
            if d.code == "IX007"
            and (
                (d.range.start.line <= last and d.range.end.line >= first)
                or (d.code, d.range.start.line) in in_context
            )
        ]
        if legacy:
            out.append(
                types.CodeAction(
                    title="Migrate legacy sections into a checkpoint",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diag(d) for d in legacy],
                    command=types.Command(
                        title="Migrate legacy sections",
                        command="memls.index.migrate",
                        arguments=[{"uri": uri}],
                    ),
                )
            )
        bundle = doc.section(BUNDLE_TITLE)
        if bundle is not None and bundle.start_line <= last and first < bundle.end_line:
            open_items = [i for i in doc.items_in(bundle) if i.checked is False]
            if open_items:
                bn = [d for d in diagnostics if d.code == "BN001"]
                out.append(
                    types.CodeAction(
                        title="Approve bundle",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diag(d) for d in bn],
                        command=types.Command(
                            title="Approve bundle",
                            command="memls.bundle.approve",
                            arguments=[{"uri": uri}],
                        ),
                    )
                )
        name = checkpoint_name(doc.path) if doc.kind is FileKind.CHECKPOINT else None
        if name is None:
            name = _branch_name(ws)
        args: dict[str, str] = {"uri": uri}
        if name is not None:
            args["name"] = name
        title = f'Save checkpoint "{name}"…' if name else "Save checkpoint…"
        # The same action twice: a quick fix, so it is in the Ctrl+. menu, and a source
        # action, for Source Action… and editor.codeActionsOnSave (code_actions() keeps the
        # source one only when asked for it). Editors ask for the next action before they
        # run it; the server refuses a new checkpoint without one rather than write a
        # placeholder.
        for kind in (types.CodeActionKind.QuickFix, SAVE_CHECKPOINT):
            out.append(
                types.CodeAction(
                    title=title,
                    kind=kind,
                    command=types.Command(
                        title=title, command="memls.checkpoint.save", arguments=[dict(args)]
                    ),
                )
            )
        return out


def _branch_name(ws: Workspace) -> str | None:
    from memls.core.ops.checkpoint import default_name

    try:
        return default_name(ws.git)
    except Exception:
        return None
