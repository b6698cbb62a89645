"""BN: a checkpoint bundle is complete only when all five steps are approved and done, in order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from memls.core.bundle import (
    STEP_TEMPLATES,
    STEPS,
    Bundle,
    BundleItem,
    find_bundles,
    items_end_line,
)
from memls.core.fsutil import UnsafePathError, check_relative
from memls.core.model import Diagnostic, FileKind, Range, Severity, TextEdit
from memls.core.rules import Rule, RuleContext

RULES = (
    Rule(
        "BN001",
        "bundle-unapproved",
        Severity.WARNING,
        "unapproved bundle item",
        operation="bundle.approve",
        rationale="warning: an unapproved item is pending work, nothing is lost yet",
        doc="""
        A checkpoint bundle needs a human's `Approved: YYYY-MM-DD HH:MM` stamp under its
        heading, and each item is ticked when done. Reported: a bundle with no stamp, and
        an item that is not approved/done.

        Wrong: `- [ ] memory: …` left unticked after the work.
        Right: `- [x] memory: …`, and the Approved stamp.

        Fix: complete and tick the item, or remove it to narrow the approval; add the
        stamp once the human approves.
        """,
    ),
    Rule(
        "BN002",
        "bundle-incomplete",
        Severity.WARNING,
        "bundle incomplete: a step of the five is missing, or LOG appended while archive "
        "or recall verification is still open",
        fixable=True,
        rationale="warning: the bundle is unfinished; memory already written stays intact",
        doc="""
        A checkpoint bundle has five steps: memory, index, log, transcript, recall. One
        missing is reported (the quick fix adds the missing steps, unticked), and so is a
        ticked LOG step while the transcript or recall step is still open: a LOG entry
        does not complete a checkpoint.

        Fix: add the missing steps; finish the transcript archive/backfill and recall
        verification.
        """,
    ),
    Rule(
        "BN003",
        "bundle-target-missing",
        Severity.ERROR,
        "approved memory/index item whose target file or pointer does not exist",
        rationale="error: an approved item points at nothing — the approved memory is missing",
        doc="""
        A ticked memory step names a file that does not exist, or a ticked index step
        while the index is missing or has no pointer to the new memory: the bundle says
        memory was written that is not there.

        Fix: write the memory file (or fix its path), add the pointer to the index, then
        tick the step.
        """,
    ),
    Rule(
        "BN004",
        "bundle-recall-before-archive",
        Severity.WARNING,
        "recall verification ticked before transcript archive/backfill",
        rationale="warning: order of steps; recall may verify stale data, nothing is lost",
        doc="""
        The recall step is ticked while the transcript archive/backfill step is not:
        recall was verified against a store that does not hold the session yet.

        Fix: archive and backfill the session first, then verify recall again.
        """,
    ),
)

_SPAN = re.compile(r"`([^`\n]+)`")
_POINTER_FOR = re.compile(r"\bpointers?\s+(?:for|to)\s+`?(?P<name>[\w./-]+?)`?(?:[\s,;.)]|$)")


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind not in (FileKind.CHECKPOINT, FileKind.LOG):
        return
    for bundle in find_bundles(doc):
        yield from _check_bundle(ctx, bundle)


def _check_bundle(ctx: RuleContext, bundle: Bundle) -> Iterator[Diagnostic]:
    heading = bundle.section.heading.title_range
    if not bundle.approved:
        rng = (
            Range.line(bundle.approved_line, len(ctx.doc.line_text(bundle.approved_line)))
            if bundle.approved_line is not None
            else heading
        )
        yield ctx.diag(
            "BN001",
            "this checkpoint bundle has no `Approved:` stamp: once the human approves it, add "
            "`Approved: YYYY-MM-DD HH:MM` under the heading (one approval covers the bundle)",
            rng,
        )
    for item in bundle.items:
        if not item.checked:
            yield ctx.diag(
                "BN001",
                f"bundle item '{item.kind}' is not approved/done: complete it and tick the box, "
                "or narrow the approval by removing it",
                item.range,
            )
    yield from _completeness(ctx, bundle)
    for item in bundle.items:
        if item.checked and item.kind == "memory":
            yield from _memory_targets(ctx, item)
        elif item.checked and item.kind == "index":
            yield from _index_pointers(ctx, bundle, item)
    recall = [i for i in bundle.items if i.kind == "recall" and i.checked]
    archived = any(i.kind == "transcript" and i.checked for i in bundle.items)
    if recall and not archived:
        yield ctx.diag(
            "BN004",
            "recall verification is ticked but the transcript archive/backfill is not: "
            "archive and backfill the session first, then verify recall again",
            recall[0].range,
        )


def _completeness(ctx: RuleContext, bundle: Bundle) -> Iterator[Diagnostic]:
    kinds = {i.kind for i in bundle.items}
    missing = [k for k in STEPS if k not in kinds]
    if missing:
        eol = ctx.doc.eol
        at = items_end_line(ctx.doc, bundle)
        text = "".join(f"- [ ] {STEP_TEMPLATES[k]}{eol}" for k in missing)
        if at >= len(ctx.doc.lines):  # the bundle ends the file without a final line break
            last = len(ctx.doc.lines) - 1
            edit = TextEdit(
                Range.point(last, len(ctx.doc.line_text(last))), eol + text.rstrip("\r\n")
            )
        else:
            edit = TextEdit(Range.point(at), text)
        names = ", ".join(missing)
        yield ctx.diag(
            "BN002",
            f"the checkpoint bundle lacks the {names} step{'s' if len(missing) > 1 else ''}: "
            "a checkpoint is complete only with memory, index, log, transcript and recall "
            "all done — add the missing items",
            bundle.section.heading.title_range,
            ctx.fix("Add the missing bundle steps (unticked)", edit),
        )
    log = bundle.step("log")
    if log is not None and log.checked:
        still_open = [
            i.kind for i in bundle.items if i.kind in ("transcript", "recall") and not i.checked
        ]
        if still_open:
            yield ctx.diag(
                "BN002",
                f"the LOG step is ticked while {' and '.join(still_open)} "
                f"{'are' if len(still_open) > 1 else 'is'} still open: a LOG "
                "entry does not complete a checkpoint — finish the transcript archive/backfill "
                "and recall verification",
                log.range,
            )


def _paths_in(text: str) -> list[str]:
    """Code spans in an item that name files (``memory/x.md``, ``notes/y``)."""
    out = []
    for m in _SPAN.finditer(text):
        span = m.group(1).strip()
        if span.endswith(".md") or ("/" in span and " " not in span):
            out.append(span)
    return out


def _memory_targets(ctx: RuleContext, item: BundleItem) -> Iterator[Diagnostic]:
    for target in _paths_in(item.text):
        if _resolve(ctx, target) is None:
            yield ctx.diag(
                "BN003",
                f"the memory step is ticked but `{target}` does not exist: write the memory "
                "file (or fix the path) before ticking the step",
                _span_range(item, target),
            )


def _index_pointers(ctx: RuleContext, bundle: Bundle, item: BundleItem) -> Iterator[Diagnostic]:
    ws = ctx.workspace
    index = ws.index()
    if index is None:
        yield ctx.diag(
            "BN003",
            f"the index step is ticked but {ws.index_path.name} does not exist: create the "
            "index with a pointer to the new memory, then tick the step",
            item.range,
        )
        return
    targets = ws.memo("memls.bn.pointer_targets", ws.pointer_targets)
    wanted: list[str] = [t for t in _paths_in(item.text) if Path(t).name != "MEMORY.md"]
    for other in bundle.items:
        if other.kind == "memory":
            wanted.extend(t for t in _paths_in(other.text) if t not in wanted)
    for target in wanted:
        path = _resolve(ctx, target)
        if path is None:
            continue  # a missing memory file is reported on its own item
        if path.resolve() not in targets:
            yield ctx.diag(
                "BN003",
                f"the index step is ticked but {ws.index_path.name} has no pointer to "
                f"`{target}`: add a pointer line for it to the index",
                item.range,
            )
    m = _POINTER_FOR.search(item.text)
    if m and not wanted:
        name = m.group("name").removesuffix(".md")
        if not any(t.stem == Path(name).name for t in targets):
            yield ctx.diag(
                "BN003",
                f"the index step is ticked but {ws.index_path.name} has no pointer for "
                f"'{name}': add the pointer line to the index",
                item.range,
            )


def _resolve(ctx: RuleContext, target: str) -> Path | None:
    try:
        check_relative(target, "bundle target")
    except UnsafePathError:
        return None
    found = ctx.workspace.links.resolve_written(ctx.doc.path, target)
    return found if found is not None and not found.is_dir() else None


def _span_range(item: BundleItem, target: str) -> Range:
    text = item.text
    at = text.find(f"`{target}")
    if at < 0:
        return item.range
    col = item.range.start.character + at + 1
    return Range.of(item.line, col, item.line, col + len(target))
