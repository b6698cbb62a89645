"""HO: ``.handoff.md`` must tell the next agent what matters, what was verified, and be current."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterator
from pathlib import Path

from memls.core.formats.log import Stamp, find_stamp, newest_entry
from memls.core.handoff import (
    HANDOFF_SECTIONS,
    canonical_section,
    find_handoff_section,
    find_recent_tail,
    is_journal,
    is_native_handoff,
    section_skeleton,
)
from memls.core.model import Diagnostic, Document, FileKind, Range, Section, Severity, TextEdit
from memls.core.rules import Rule, RuleContext
from memls.core.workspace import Workspace, handoff_has_state

RULES = (
    Rule(
        "HO001",
        "handoff-section-missing",
        Severity.WARNING,
        "handoff section missing (Current State, Decisions, Open Work, Verified Commands, "
        "Non-Claims, Drift / Risk Flags, Next Steps) in a handoff that follows memls's "
        "protocol (not a journal or another format)",
        fixable=True,
        rationale="warning: the next agent misses a kind of state; what is written still loads",
        doc="""
        A handoff written to memls's protocol has seven sections: Current State,
        Decisions, Open Work, Verified Commands, Non-Claims, Drift / Risk Flags, Next
        Steps (synonyms from `handoff_synonyms` count). A running journal or a handoff in
        another format is read as it is and not reported.

        Wrong: a handoff with Current State and Next Steps only.
        Right: all seven sections.

        One finding per handoff names every missing section.

        Fix: add the sections (the quick fix inserts each `## NAME` in the canonical order).
        """,
    ),
    Rule(
        "HO002",
        "handoff-section-empty",
        Severity.WARNING,
        "handoff section empty",
        rationale="warning: an empty section says nothing; style, not loss",
        doc="""
        A handoff section has a heading and nothing under it; the next agent cannot tell
        "nothing" from "forgot".

        Wrong: `## Non-Claims` followed by the next heading.
        Right: its content, or `None` written explicitly.

        Fix: fill the section in, or write `None`.
        """,
    ),
    Rule(
        "HO003",
        "handoff-unrunnable-command",
        Severity.WARNING,
        "Verified Commands entry that is not a code span or block (cannot be re-run)",
        rationale="warning: the command cannot be re-run as written; nothing is lost",
        doc="""
        An entry of `## Verified Commands` holds no command in a code span or fenced
        block, so the next agent cannot re-run it exactly.

        Wrong: `- ran the tests, all green`.
        Right: `- `make test` — all green`.

        Fix: put the exact command in backticks (or a fenced block).
        """,
    ),
    Rule(
        "HO004",
        "handoff-outdated",
        Severity.WARNING,
        "handoff older than the newest checkpoint or LOG entry",
        rationale="warning: the handoff may be outdated; the newer state exists elsewhere",
        doc="""
        The handoff's date (its own date, else its file time) is older than the newest
        checkpoint `Saved:` or LOG entry of the root: newer state exists that the handoff
        does not carry.

        Fix: rewrite or refresh the handoff (`memls handoff refresh`).
        """,
    ),
    Rule(
        "HO005",
        "handoff-names-deleted-file",
        Severity.WARNING,
        "handoff names a file that a commit deleted (or moved) since it was written "
        "(with that commit)",
        rationale="warning: the next agent is sent to a file that is gone; git still has it",
        doc="""
        A file the handoff names was deleted or moved by a commit made after the handoff
        was written; the message names the commit.

        Fix: update the handoff so it names the files as the repository holds them now.
        """,
    ),
    Rule(
        "HO006",
        "handoff-behind-commits",
        Severity.WARNING,
        "`stale_commits` (20) or more commits on its branch since the handoff was written"
        " (for a handoff inside a sub-project, `proto/` with its own manifest or code, the "
        "commits that changed that sub-project)",
        rationale="warning: the repository moved on since the handoff; it may mislead",
        doc="""
        `stale_commits` (20) or more commits were made on the branch since the handoff
        was written (`stale_commits = 0` turns it off). A handoff inside a sub-project —
        a folder with its own manifest (`package.json`, `pyproject.toml` …), or a top
        folder with source files of its own — counts only the commits that changed that
        folder: the main project's work does not make it old.

        Fix: refresh it (`memls handoff refresh`) or rewrite its Current State and Next
        Steps.
        """,
    ),
    Rule(
        "HO008",
        "handoff-checkpoint-cleared",
        Severity.WARNING,
        "handoff sends the next agent to a checkpoint that MEMORY.md no longer lists and no "
        "file holds (cleared or renamed since the handoff was written)",
        rationale="warning: the next agent is sent to resume work the index says is gone",
        doc="""
        The handoff names a checkpoint — `checkpoint-NAME.md`, or a `memls checkpoint
        resume NAME` / `continue NAME` command — that the index's Active Checkpoints does
        not list and no `checkpoint-NAME.md` holds: the checkpoint was cleared or renamed
        after the handoff was written (a compaction handoff that contradicts MEMORY.md).
        Only in a root whose MEMORY.md keeps memls's Active Checkpoints; a handoff kept as
        history is not judged.

        Fix: rewrite the handoff's Next Steps for the checkpoints that are active now, or
        save the checkpoint again if its work is not done.
        """,
    ),
    Rule(
        "HO007",
        "handoff-branch-merged",
        Severity.WARNING,
        "the handoff's branch was merged into the default branch since it was written",
        rationale="warning: the work was merged; the handoff may describe finished work",
        doc="""
        The handoff's branch was merged into the default branch after it was written — by a
        merge commit, or squashed into one commit ("Squash and merge": the default branch
        holds all of the branch's work) — and the message names that commit; its open work
        may be done.

        Fix: check the open work, then rewrite or retire the handoff.
        """,
    ),
)

_CANONICAL_ORDER = [name for name, _ in HANDOFF_SECTIONS]
_CODE_SPAN = re.compile(r"`[^`\n]*[^`\s][^`\n]*`")
_NONE = re.compile(r"^(?:none|nothing|n/a)\b", re.IGNORECASE)
_STAMP_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?:saved|updated|written|date)(?:\*\*)?\s*:", re.IGNORECASE
)


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is not FileKind.HANDOFF:
        return
    if not handoff_has_state(doc.text):
        return  # named like a handoff, but no state for the next agent: not a handoff
    extra = ctx.config.handoff_synonyms
    found: dict[str, Section] = {}
    for name in _CANONICAL_ORDER:
        sec = find_handoff_section(doc, name, extra)
        if sec is not None:
            found[name] = sec
    anchor = _title_range(doc)
    # Missing sections are findings only in memls's own handoff protocol; a running
    # journal or a handoff in its own format is read as it is.
    protocol = is_native_handoff(doc, extra) and not is_journal(doc)
    missing = [name for name in _CANONICAL_ORDER if name not in found] if protocol else []
    if missing:
        # One finding per handoff: one cause (sections not written), one fix adding them all.
        edits = [_insert_section(doc, name, found) for name in missing]
        if len(missing) == 1:
            [name] = missing
            message = (
                f"the handoff has no '{name}' section: add `## {name}` so the next agent "
                f"knows {_why(name)}"
            )
            title = f"Add the '{name}' section"
        else:
            names = ", ".join(f"'{n}'" for n in missing[:-1]) + f" and '{missing[-1]}'"
            message = (
                f"the handoff has no {names} sections: add them so the next agent knows "
                + "; ".join(_why(n) for n in missing)
            )
            title = f"Add the {len(missing)} missing sections"
        yield ctx.diag("HO001", message, anchor, ctx.fix(title, *edits))
    for name, sec in found.items():
        if _is_empty(doc, sec):
            yield ctx.diag(
                "HO002",
                f"the handoff's '{sec.title}' section is empty: write {_why(name)} "
                "(say 'None' explicitly when there is nothing)",
                sec.heading.title_range,
            )
    verified = found.get("Verified Commands")
    if verified is not None and protocol:  # another format's "Verification" is its own
        yield from _unrunnable(ctx, verified)
    yield from _outdated(ctx)
    yield from _stale_in_git(ctx)
    yield from _cleared_checkpoints(ctx)


_NAMED_CHECKPOINT = re.compile(
    r"(?<![\w-])checkpoint-(?P<file>[A-Za-z0-9][\w.-]*?)\.md\b"
    r"|`(?:memls\s+checkpoint\s+resume|continue)\s+(?P<cmd>[A-Za-z0-9][\w./-]*)`"
)


def _cleared_checkpoints(ctx: RuleContext) -> Iterator[Diagnostic]:
    """HO008: checkpoints the handoff names that the index and the folder no longer hold."""
    if not ctx.config.enabled("HO008"):
        return
    from memls.core.formats.checkpoint import sanitized_name
    from memls.core.formats.index import active_section, bullets
    from memls.core.rules import stale
    from memls.core.workspace import RootKind

    doc, ws = ctx.doc, ctx.workspace
    index = ws.index()
    if ws.root_kind is not RootKind.MEMORY or index is None or active_section(index) is None:
        return  # not memls's index: nothing to contradict
    if stale.is_history(ws, doc):
        return
    listed = {sanitized_name(b.name) for b in bullets(index)}
    held = {sanitized_name(n) for n in ws.checkpoints()}
    seen: set[str] = set()
    for ln, line in enumerate(doc.lines):
        if doc.in_fence(ln) and "`" not in line:
            continue
        for m in _NAMED_CHECKPOINT.finditer(line):
            raw = m["file"] or m["cmd"] or ""
            name = sanitized_name(raw)
            if not name or name in seen or name in listed or name in held:
                continue
            seen.add(name)
            if _deleted_in_git(ws, doc, f"checkpoint-{name}.md"):
                continue  # HO005 says which commit deleted it
            start = m.start("file") if m["file"] else m.start("cmd")
            yield ctx.diag(
                "HO008",
                f"this handoff sends the next agent to checkpoint `{raw}`, but "
                f"{_rel(ws.root, index.path)}'s Active Checkpoints does not list it and no "
                f"checkpoint-{name}.md exists: it was cleared or renamed after the handoff was "
                "written — rewrite the handoff's Next Steps for the active checkpoints, or "
                "save the checkpoint again if its work is not done",
                Range.of(ln, start, ln, start + len(raw)),
            )


def _deleted_in_git(ws: Workspace, doc: Document, name: str) -> bool:
    from memls.core.gitfacade import history

    hist = history(ws.git) if ws.git.toplevel is not None else None
    return hist is not None and any(p.rsplit("/", 1)[-1] == name for p in hist.deleted)


def _stale_in_git(ctx: RuleContext) -> Iterator[Diagnostic]:
    """HO005–HO007: what changed in the repository since the handoff was written."""
    if not any(ctx.config.enabled(c) for c in ("HO005", "HO006", "HO007")):
        return
    from memls.core.rules import stale

    doc, ws = ctx.doc, ctx.workspace
    if stale.is_history(ws, doc):
        return  # an archived handoff, or one a newer handoff replaced: a record, not state
    own = handoff_stamp(doc)
    when = stale.written(ws, doc, own[0].when if own is not None else None)
    if when is None:
        return
    field = doc.field("Branch")
    named = field.value.strip().strip("`") if field is not None and field.value.strip() else None
    current = ws.git.current_branch()
    branch = named or current
    anchor = own[1] if own is not None else _title_range(doc)
    if branch is not None and branch == current:  # HEAD's history is the handoff's branch's
        for item in stale.deleted_since(ws, doc, when):
            yield ctx.diag(
                "HO005",
                f"this handoff names `{item.link.target}`, but {stale.describe_deleted(item)}, "
                f"after the handoff was written ({when.how}): update the handoff so the next "
                "agent is not sent to a file that is gone",
                item.link.range,
            )
        limit = ctx.config.stale_commits
        scope = stale.project_folder(ws, doc) if limit else None
        behind = stale.behind(ws, when, scope) if limit else 0
        if limit and behind >= limit:
            count = f"at least {behind}" if when.beyond_window else str(behind)
            changed = f" changed `{scope}/`" if scope else ""
            yield ctx.diag(
                "HO006",
                f"{count} commits on `{branch}`{changed} since this handoff was written "
                f"({when.how}): {stale.commits_since(ws, when, scope)} — refresh it "
                "(`memls handoff refresh`) or rewrite its Current State and Next Steps",
                anchor,
            )
    if branch is not None:
        merged = stale.merged_since(ws, branch, when)
        if merged is not None:
            where = field.value_range if field is not None and named else anchor
            yield ctx.diag(
                "HO007",
                f"branch `{branch}` was {stale.describe_merge(*merged)}, after this handoff "
                f"was written ({when.how}): its open work may be done — check it and "
                "rewrite or retire the handoff",
                where,
            )


def _why(name: str) -> str:
    return {
        "Current State": "where things stand",
        "Decisions": "which decisions are settled and why",
        "Open Work": "what is unfinished or unresolved",
        "Verified Commands": "which commands were run and passed",
        "Non-Claims": "what has not been verified or tested",
        "Drift / Risk Flags": "what has drifted or looks risky",
        "Next Steps": "how to resume",
    }.get(name, "this part of the state")


def _title_range(doc: Document) -> Range:
    for h in doc.headings:
        if h.level == 1:
            return h.title_range
    return Range.point(0)


def _is_empty(doc: Document, sec: Section) -> bool:
    """Blank apart from comments and sub-headings that are themselves empty."""
    for ln in range(sec.body_start, min(sec.end_line, len(doc.lines))):
        text = doc.lines[ln].strip()
        if not text or text.startswith("<!--"):
            continue
        if text.startswith("#") and not doc.in_fence(ln):
            continue
        return False
    return True


def _insert_section(doc: Document, name: str, found: dict[str, Section]) -> TextEdit:
    """Insert before the next present section in canonical order, else before RECENT TAIL, else at the end."""
    eol = doc.eol
    skeleton = section_skeleton(name, eol)
    later = _CANONICAL_ORDER[_CANONICAL_ORDER.index(name) + 1 :]
    for other in later:
        if other in found:
            line = found[other].start_line
            return TextEdit(Range.point(line), skeleton)
    tail = find_recent_tail(doc)
    if tail is not None:
        return TextEdit(Range.point(tail.start_line), skeleton)
    last = len(doc.lines) - 1
    last_text = doc.lines[last] if doc.lines else ""
    if last <= 0 and not last_text:
        return TextEdit(Range.point(0), skeleton)
    # Leave exactly one blank line before the new heading.
    prev_blank = last < 1 or not doc.lines[last - 1].strip()
    lead = eol + eol if last_text else ("" if prev_blank else eol)
    return TextEdit(Range.point(last, len(last_text)), lead + skeleton.rstrip("\r\n") + eol)


def _unrunnable(ctx: RuleContext, sec: Section) -> Iterator[Diagnostic]:
    """HO003: top-level entries of Verified Commands must carry the command as code."""
    doc = ctx.doc
    items = doc.items_in(sec)
    if not items:
        return
    top = min(i.indent for i in items)
    entries = [i for i in items if i.indent == top]
    for n, item in enumerate(entries):
        text = item.text.strip()
        if not text or _CODE_SPAN.search(text) or _NONE.match(text):
            continue
        upto = entries[n + 1].line if n + 1 < len(entries) else sec.end_line
        if any(item.line < a < upto for a, _ in doc.fences):
            continue  # the command follows in a code block
        yield ctx.diag(
            "HO003",
            "this Verified Commands entry has no command in a code span or block, so the next "
            "agent cannot re-run it: put the exact command in `backticks` (or a fenced block)",
            item.text_range,
        )


def handoff_stamp(doc: Document) -> tuple[Stamp, Range] | None:
    """The handoff's own date: a Saved/Updated field in the header, else a date in its title."""
    limit = next((s.start_line for s in doc.sections if s.level >= 2), len(doc.lines))
    for ln in range(min(limit, len(doc.lines))):
        line = doc.lines[ln]
        m = _STAMP_FIELD.match(line)
        if m is None:
            continue
        found = find_stamp(line[m.end() :])
        if found is not None:
            stamp, a, b = found
            return stamp, Range.of(ln, m.end() + a, ln, m.end() + b)
    for h in doc.headings:
        if h.level != 1:
            continue
        found = find_stamp(h.title)
        if found is not None:
            stamp, a, b = found
            col = h.title_range.start.character
            return stamp, Range.of(h.line, col + a, h.line, col + b)
        break
    return None


def _mtime_stamp(path: Path) -> Stamp | None:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return Stamp(_dt.datetime.fromtimestamp(mtime).replace(second=0, microsecond=0), True)


def _outdated(ctx: RuleContext) -> Iterator[Diagnostic]:
    """HO004: compare the handoff's date with every checkpoint's Saved and the newest LOG entry."""
    from memls.core.rules import stale

    doc = ctx.doc
    if stale.is_history(ctx.workspace, doc):
        return  # history is older than the state by design
    own = handoff_stamp(doc)
    if own is not None:
        stamp, rng = own
        source = "its date"
    else:
        mtime = _mtime_stamp(doc.path)
        if mtime is None:
            return
        stamp, rng, source = mtime, _title_range(doc), "its file time"
    newest = ctx.workspace.memo("memls.ho.newest", lambda: _newest_state(ctx.workspace))
    if newest is None or not stamp.before(newest[0]):
        return
    yield ctx.diag(
        "HO004",
        f"this handoff ({source}: {_show(stamp)}) is older than {newest[1]}: rewrite or "
        "refresh the handoff so the next agent does not resume from outdated state",
        rng,
    )


def _newest_state(ws: Workspace) -> tuple[Stamp, str] | None:
    """The latest checkpoint Saved or LOG entry date in the workspace, with a description."""
    newest: tuple[Stamp, str] | None = None
    for name, path in sorted(ws.checkpoints().items()):
        cp = ws.document(path)
        if cp is None:
            continue
        saved = cp.field("Saved")
        found = find_stamp(saved.value) if saved is not None else None
        if found is not None and (newest is None or newest[0].before(found[0])):
            newest = (found[0], f"checkpoint '{name}' (Saved {_show(found[0])})")
    for log in ws.documents(FileKind.LOG):
        entry = newest_entry(log)
        stamp_ = entry.stamp if entry is not None else None
        if stamp_ is not None and (newest is None or newest[0].before(stamp_)):
            rel = _rel(ws.root, log.path)
            newest = (stamp_, f"the {rel} entry of {_show(stamp_)}")
    return newest


def _show(stamp: Stamp) -> str:
    return stamp.when.strftime("%Y-%m-%d %H:%M" if stamp.has_time else "%Y-%m-%d")


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


__all__ = ["RULES", "canonical_section", "check", "handoff_stamp"]
