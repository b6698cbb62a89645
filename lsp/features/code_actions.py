"""Code actions: a quick fix for every diagnostic whose rule has a safe fix (the same edits
``memls check --fix`` applies), "Mark as a known fake", one action per fix group ("Add all
missing sections"), ``source.fixAll.memls``, and the operations — "Save checkpoint…" from
any memory file (a quick fix, and a source action when asked for one), "Approve bundle" on a
bundle section, and the operation a finding's rule names (``Rule.operation``, e.g. "Migrate
legacy sections") — which run server commands.

Which action a finding gets is the rule's data (``Rule.fix_group``, ``Rule.known_fake``,
``Rule.operation``); this module names no rule code."""

from __future__ import annotations

from lsprotocol import types

from memls.core.bundle import BUNDLE_TITLE
from memls.core.fixes import apply_fixes, fix_text
from memls.core.model import Diagnostic, Document, FileKind
from memls.core.rules import Rule, registry
from memls.core.rules.secrets import known_fake_fix
from memls.core.workspace import Workspace, checkpoint_name
from memls.lsp import convert
from memls.lsp.features import LanguageFeature
from memls.lsp.features.file_ops import create_missing_actions

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.memls"
SAVE_CHECKPOINT = "source.memls.saveCheckpoint"
CODE_ACTION_KINDS = (types.CodeActionKind.QuickFix.value, FIX_ALL, SAVE_CHECKPOINT)
FINDING_OPERATIONS: dict[str, tuple[str, str]] = {
    "index.migrate": ("Migrate legacy sections into a checkpoint", "Migrate legacy sections"),
}
"""Operations offered on the findings whose rule names them (``Rule.operation``): the
action's title and its command's title; the server command is ``memls.`` + the operation.
("bundle.approve" is offered on a bundle section, with the findings it resolves.)"""


def _rule(d: Diagnostic) -> Rule | None:
    return registry().get(d.code)


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
            if (rule := _rule(d)) is not None and rule.known_fake:
                fake = known_fake_fix(lines, d)
                actions.append(
                    types.CodeAction(
                        title=fake.title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diag(d)],
                        edit=edit(*convert.text_edits(fake.edits, codec, lines)),
                    )
                )
        groups: dict[str, list[Diagnostic]] = {}
        for d in diagnostics:
            if d.fix is not None and (rule := _rule(d)) is not None and rule.fix_group:
                groups.setdefault(rule.fix_group, []).append(d)
        for group, together in groups.items():
            if len(together) < 2:
                continue
            new = apply_fixes(doc.text, [d.fix for d in together if d.fix is not None])
            actions.append(
                types.CodeAction(
                    title=group,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diag(d) for d in together],
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

        def resolved_by(operation: str) -> list[Diagnostic]:
            return [
                d for d in diagnostics if (r := _rule(d)) is not None and r.operation == operation
            ]

        for operation, (title, command_title) in FINDING_OPERATIONS.items():
            here = [
                d
                for d in resolved_by(operation)
                if (d.range.start.line <= last and d.range.end.line >= first)
                or (d.code, d.range.start.line) in in_context
            ]
            if here:
                out.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diag(d) for d in here],
                        command=types.Command(
                            title=command_title,
                            command=f"memls.{operation}",
                            arguments=[{"uri": uri}],
                        ),
                    )
                )
        bundle = doc.section(BUNDLE_TITLE)
        if bundle is not None and bundle.start_line <= last and first < bundle.end_line:
            open_items = [i for i in doc.items_in(bundle) if i.checked is False]
            if open_items:
                bn = resolved_by("bundle.approve")
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
