"""IX011: the index's load limits — content past what is loaded at session start (200 lines
or 25 KB in Claude Code, 20,000 characters in an agent workspace)."""

from __future__ import annotations

from memls.core.formats.index import active_section
from memls.core.model import Diagnostic, Range
from memls.core.rules import RuleContext
from memls.core.workspace import DOC_FOLDERS, Layout

WORKSPACE_MAX_CHARS = 20_000
"""An agent workspace (OpenClaw) injects MEMORY.md up to this many characters per file."""


def check_limits(ctx: RuleContext) -> Diagnostic | None:
    doc = ctx.doc
    layout = ctx.workspace.layout
    if layout is Layout.WORKSPACE:
        return _check_workspace_limit(ctx)
    max_lines = ctx.config.index_max_lines
    max_bytes = ctx.config.index_max_bytes
    eol_bytes = len(doc.eol)
    used = 0
    first_out: int | None = None
    reason = ""
    for ln, line in enumerate(doc.lines):
        if ln >= max_lines:
            first_out, reason = ln, f"line {max_lines}"
            break
        used += len(line.encode("utf-8", "replace")) + eol_bytes
        if used > max_bytes:
            first_out, reason = ln, f"{max_bytes:,} bytes"
            break
    if first_out is None or layout not in (Layout.FLAT, Layout.CLAUDE):
        return None  # the 200-line / 25 KB cut is Claude Code's
    if doc.path.parent.name.casefold() in DOC_FOLDERS and layout is not Layout.CLAUDE:
        return None  # docs/MEMORY.md is read when an instruction says so, not cut at start
    if _read_by_instruction(ctx):
        return None  # CLAUDE.md: "read `.claude/MEMORY.md`": the agent reads it whole
    if layout is Layout.FLAT and not _cut_at_session_start(ctx):
        return None
    if not any(ln.strip() for ln in doc.lines[first_out:]):
        return None
    line = doc.lines[first_out]
    return ctx.diag(
        "IX011",
        f"MEMORY.md content from line {first_out + 1} on is past {reason} and is not loaded "
        "at session start: move detail into topic files and keep only pointers here",
        Range.line(first_out, min(len(line), 1000)),
    )


def _cut_at_session_start(ctx: RuleContext) -> bool:
    """Is this flat root's MEMORY.md one Claude Code cuts at 200 lines / 25 KB?

    Claude Code cuts its own memory index (``~/.claude/projects/<slug>/memory``, a
    ``.claude`` folder, the folder memls keeps checkpoints in). A ``MEMORY.md`` in some
    folder of a repository that holds no checkpoint and no ``## Active Checkpoints`` (a
    persona's notes, a project's own memory folder) is read whole by whatever reads it.
    """
    ws = ctx.workspace
    if ws.repo_root is None or ".claude" in ws.root.parts:
        return True
    if active_section(ctx.doc) is not None:
        return True
    return bool(ws.checkpoints())


def _read_by_instruction(ctx: RuleContext) -> bool:
    """A MEMORY.md in the repository that its agent instructions name to read (``lee
    `.claude/MEMORY.md```): the agent opens it with its file tool, whole; Claude Code cuts
    only its own auto-memory index, which lives in the home folder."""
    from memls.core.instructed import instructed_for

    ws = ctx.workspace
    if ws.repo_root is None or ws.repo_root not in (ws.root, *ws.root.parents):
        return False
    if ws.root.name == "memory" and ws.root.parent.name == ".claude":
        return False  # `.claude/memory/`: the auto-memory folder's shape (it may be the live one)
    return ctx.doc.path in instructed_for(ws.root).files


def _check_workspace_limit(ctx: RuleContext) -> Diagnostic | None:
    """IX011 in an agent workspace: the file is injected whole, up to a character cap."""
    doc = ctx.doc
    if len(doc.text) <= WORKSPACE_MAX_CHARS:
        return None
    used = 0
    for ln, line in enumerate(doc.lines):
        used += len(line) + len(doc.eol)
        if used > WORKSPACE_MAX_CHARS:
            if not any(rest.strip() for rest in doc.lines[ln:]):
                return None
            return ctx.diag(
                "IX011",
                f"MEMORY.md is {len(doc.text):,} characters; an agent workspace injects the "
                f"first {WORKSPACE_MAX_CHARS:,}, so from line {ln + 1} on it is not loaded at "
                "session start: move detail into memory/ notes",
                Range.line(ln, min(len(line), 1000)),
            )
    return None
