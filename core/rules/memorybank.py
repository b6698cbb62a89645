"""MB: a Cline / Cursor / Roo memory bank has the core files its agent reads, and is current.

A memory bank (``memory-bank/``: projectbrief.md, productContext.md, activeContext.md,
systemPatterns.md, techContext.md, progress.md; Kilo Code's brief.md, product.md, context.md,
architecture.md, tech.md) is read whole at the start of every task;
its agent updates activeContext.md and progress.md as work goes on. These rules apply only
to roots memls recognised as a memory bank (:class:`memls.core.workspace.RootKind`); the
rest of memls's format rules do not apply to them (see ``_NOT_FOR_KIND`` there).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from memls.core.gitfacade import history
from memls.core.model import Diagnostic, Range, Severity
from memls.core.rules import Rule, RuleContext
from memls.core.rules.stale import project_of
from memls.core.workspace import (
    KILO_BANK_FILES,
    MEMORY_BANK_FILES,
    RootKind,
    Workspace,
    bank_name,
    is_blank_template,
)

RULES = (
    Rule(
        "MB001",
        "memory-bank-core-missing",
        Severity.WARNING,
        "memory bank without its current-focus file (activeContext.md; Kilo Code's "
        "context.md), or without a core file its own files name; one note per bank",
        rationale="warning: the agent starts without a core file's context; what is there loads",
        doc="""
        A memory bank (Cline/Roo style) keeps core files its agent reads at the start of
        every task. Reported once per bank: activeContext.md (context.md in Kilo Code's
        bank: brief.md, product.md, context.md, architecture.md, tech.md) missing, or a core
        file the bank's own files name (e.g. systemPatterns.md) missing.

        Fix: create the file, or say in projectbrief.md why the bank does without it.
        """,
    ),
    Rule(
        "MB002",
        "memory-bank-core-empty",
        Severity.WARNING,
        "memory bank core file with no content (only headings, comments or placeholders)",
        rationale="warning: an empty core file says nothing; nothing is lost",
        doc="""
        A core file of the bank holds only headings, or nothing: the agent reads it for
        the bank's state and finds none.

        Fix: fill it in, or remove it.
        """,
    ),
    Rule(
        "MB003",
        "memory-bank-stale",
        Severity.WARNING,
        "activeContext.md / progress.md (Kilo: context.md) not changed for "
        "`stale_commits` commits (20) while those commits changed the project (git); "
        "dependency bumps (`chore(deps): update …`, `Bump x from 1 to 2`) do not count, "
        "and a bank holding an `OBSOLETE.md` (`DEPRECATED.md`, `ARCHIVED.md`) is a record",
        rationale="warning: the bank's current state may be old; nothing is broken",
        doc="""
        In a git repository, activeContext.md or progress.md (Kilo Code's context.md) was
        not changed for
        `stale_commits` (20) commits that changed the project: the bank's "current
        state" describes an older project.

        Fix: update the file to the project's current state.
        """,
    ),
)

ROO_FILES = (
    "productContext.md",
    "activeContext.md",
    "systemPatterns.md",
    "decisionLog.md",
    "progress.md",
)
"""Roo Code's memory bank: decisionLog.md, and no projectbrief.md / techContext.md."""
CURRENT_FILES = ("activeContext.md", "progress.md")
"""The files the agent keeps current as work goes on (what MB003 watches)."""
KILO_CURRENT = ("context.md",)
"""Kilo Code's bank keeps its current focus and recent changes in context.md."""


def _kilo(ws: Workspace) -> bool:
    """Kilo Code's flavour: brief.md / context.md, and none of Cline's focus files."""
    present = _present(ws)
    if "activecontext.md" in present or "projectbrief.md" in present:
        return False
    return "brief.md" in present or "context.md" in present


def current_files(ws: Workspace) -> tuple[str, ...]:
    """What this bank's agent keeps current (its focus file first)."""
    return KILO_CURRENT if _kilo(ws) else CURRENT_FILES


def _present(ws: Workspace) -> dict[str, Path]:
    """Files directly in the bank by their compared name (``bank_name``: lower case, no
    ``-`` or ``_``)."""
    return {bank_name(p.name): p for p in ws.paths() if p.parent == ws.root}


def expected_files(ws: Workspace) -> tuple[str, ...]:
    """The core files of this bank's flavour: Roo's when it keeps a decisionLog.md, Kilo
    Code's when it keeps brief.md / context.md."""
    present = _present(ws)
    if _kilo(ws):
        return KILO_BANK_FILES
    if "decisionlog.md" in present and "projectbrief.md" not in present:
        return ROO_FILES
    return MEMORY_BANK_FILES


def _anchor(ws: Workspace) -> Path | None:
    """The file the bank-wide note is reported on: activeContext.md, else the first file."""
    present = _present(ws)
    for name in (
        "activecontext.md", "projectbrief.md", "productcontext.md", "context.md", "brief.md"
    ):  # fmt: skip
        if name in present:
            return present[name]
    listed = sorted(present.values())
    return listed[0] if listed else None


def _named_in_bank(ws: Workspace) -> set[str]:
    """Core file names (as ``bank_name`` compares them) that the bank's files mention: a
    bank whose files say "see techContext.md" (or ``tech_context.md``) expects one; a bank
    that never names it may do without."""
    spellings: dict[str, str] = {}
    for name in (*MEMORY_BANK_FILES, *ROO_FILES, *KILO_BANK_FILES):
        words = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()
        for spelled in (name.lower(), words, words.replace("_", "-")):
            spellings[spelled] = bank_name(name)
    found: set[str] = set()
    for path in ws.paths():
        doc = ws.document(path)
        if doc is None:
            continue
        low = doc.text.lower()
        found.update(key for spelled, key in spellings.items() if spelled in low)
    return found


def _is_empty(text: str) -> bool:
    """Headings, comments and placeholders only (a template never filled in)."""
    return is_blank_template(text)


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    ws = ctx.workspace
    if ws.root_kind is not RootKind.MEMORY_BANK or _reference_copy(ws):
        return
    doc = ctx.doc
    top = Range.point(0)
    core = {bank_name(n): n for n in expected_files(ws)}
    current = tuple(bank_name(n) for n in current_files(ws))
    if doc.path == _anchor(ws):
        present = _present(ws)
        named = _named_in_bank(ws)
        missing = [
            name
            for low, name in core.items()
            if low not in present and (low == current[0] or low in named)
        ]
        if _own_layout(present, core):
            missing = [name for low, name in core.items() if low not in present and low in named]
        if missing:
            shown = ", ".join(missing)
            yield ctx.diag(
                "MB001",
                f"this memory bank has no {shown}: its agent reads every core file at the "
                "start of a task, so what belongs there is missing; create "
                f"{'it' if len(missing) == 1 else 'them'} or say in "
                f"{'brief.md' if _kilo(ws) else 'projectbrief.md'} why not",
                top,
            )
    if (
        doc.path.parent == ws.root
        and bank_name(doc.path.name) in core
        and _is_empty(doc.text)
        and not _unfilled_bank(ws, core)
    ):
        yield ctx.diag(
            "MB002",
            f"{doc.path.name} has no content (only headings, comments or placeholders): the "
            "agent reads it "
            "for the bank's state and finds nothing; fill it in or remove it",
            top,
        )
    if (
        doc.path.parent == ws.root
        and bank_name(doc.path.name) in current
        and not _is_empty(doc.text)
    ):  # an unfilled template holds no state to go stale (MB002 says it is empty)
        stale = _stale(ctx)
        if stale is not None:
            yield ctx.diag("MB003", stale, top)


def _own_layout(present: dict[str, Path], core: dict[str, str]) -> bool:
    """A bank of the owner's own layout: one core file among two or more files of other
    names (``PROJECT_BRIEF.md`` beside ``ARCHITECTURE.md`` and ``STACK.md``), or none in
    Markdown (``progress.yaml`` beside ``decisions.md``) — not Cline's
    set with files missing, so only the core files the bank itself names are expected."""
    names = [low for low in present if low.endswith(".md") and low != "readme.md"]
    own = sum(1 for low in names if low in core)
    return own == 0 or (own == 1 and len(names) - own >= 2)  # or its core kept as YAML only


def _unfilled_bank(ws: Workspace, core: dict[str, str]) -> bool:
    """Every core file at the bank's top is an unfilled template (headings, comments,
    placeholders): a bank set up and never started, or a template its real banks in
    subfolders are copied from — not one empty file of a bank in use (MB002's case)."""

    def compute() -> bool:
        files = [p for low, p in _present(ws).items() if low in core]
        for path in files:
            doc = ws.document(path)
            if doc is None or not _is_empty(doc.text):
                return False
        return len(files) >= 2

    return bool(ws.memo("memls.bank.unfilled", compute))


_RETIRED_MARKERS = frozenset({"obsolete.md", "deprecated.md", "archived.md", "retired.md"})


def _declared_retired(root: Path) -> bool:
    """A bank that says it is no longer kept: an ``OBSOLETE.md`` (``DEPRECATED.md``,
    ``ARCHIVED.md``, ``RETIRED.md``) among its files — kept as the record it was."""
    try:
        return any(e.name.lower() in _RETIRED_MARKERS for e in os.scandir(root) if e.is_file())
    except OSError:
        return False


def _stale(ctx: RuleContext) -> str | None:
    """How far behind the project the file is, from git; None when current or unknown."""
    ws = ctx.workspace
    repo = ws.repo_root
    if repo is None:
        return None
    limit = max(ctx.config.stale_commits, 1)
    hist = history(ws.git)
    if hist is None or not hist.commits:
        return None
    try:
        rel = ctx.doc.path.resolve().relative_to(repo.resolve()).as_posix()
        bank = ws.root.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return None
    pos = hist.last_change.get(rel)
    if pos is None:
        if hist.complete:
            return None  # not committed yet: being written
        pos = len(hist.commits)
    if pos < limit:
        return None
    from memls.core.rules.stale import path_in_history_folder

    if path_in_history_folder(ws, ctx.doc.path) or _declared_retired(ws.root):
        return None  # `docs/history/memory-bank/`, an `OBSOLETE.md`: the record it was
    project = project_of(ws.root, repo)
    newer = tuple(c for c in hist.commits[:pos] if not c.dependency_bump)  # not the work's
    if len(newer) < limit:
        return None

    def described(path: str) -> bool:  # the bank's own project, not the bank or a sibling's
        return not path.startswith(bank + "/") and (not project or path.startswith(project))

    outside = {p for c in newer for _, p in c.changes if described(p)}
    if not outside:
        return None  # only the bank (or other projects) changed since: nothing to describe
    if project:
        newer = tuple(c for c in newer if any(described(p) for _, p in c.changes))
        if len(newer) < limit:
            return None
    last = hist.commits[pos] if pos < len(hist.commits) else None
    when = f" ({last.short})" if last is not None else f" (more than {len(newer)} commits ago)"
    where = f"in {project.rstrip('/')}/" if project else "outside the memory bank"
    return (
        f"{ctx.doc.path.name} was last changed {pos} commits ago{when}; since then "
        f"{len(newer)} commits changed {len(outside)} files {where}: the "
        "state it describes may be old; update it (stale_commits sets the threshold)"
    )


_REFERENCE_FOLDERS = frozenset(
    {
        "docs", "doc", "documentation", "reference", "references", "examples", "example",
        "samples", "vendor", "vendored", "third_party", "third-party",
    }
)  # fmt: skip
"""Folders that keep a project of their own only as a copy (``docs/old-app/``)."""


def _reference_copy(ws: Workspace) -> bool:
    """A bank of a whole other project kept inside this one's docs, examples or vendored
    code (``docs/代碼參考/`` holding its own ``package.json``, ``src/`` and
    ``memory-bank/``): a reference copy, not the bank this project's agent keeps."""
    repo = ws.repo_root
    if repo is None:
        return False

    def compute() -> bool:
        prefix = project_of(ws.root, repo)
        return bool(prefix) and any(p.lower() in _REFERENCE_FOLDERS for p in prefix.split("/"))

    return bool(ws.memo("memls.bank.reference", compute))
