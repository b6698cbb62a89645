"""CP: named checkpoint files (``checkpoint-{name}.md``), their header, sections and branch.

The format — names, the name policy, the plan lookup and the readers, among them
:func:`~memls.core.formats.checkpoint.checkpoint_facts` (branch, saved time, next action),
which the index rules share — is :mod:`memls.core.formats.checkpoint`.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memls.core.formats.checkpoint import (
    REQUIRED_SECTIONS,
    SAVED_FORMAT,
    TITLE_RE,
    checkpoint_facts,
    checkpoint_name,
    is_native_checkpoint,
    parse_saved,
    parse_saved_lenient,
    plan_exists,
    sanitized_name,
    split_plan,
)
from memls.core.model import (
    Diagnostic,
    Document,
    Field,
    FileKind,
    Range,
    Severity,
    TextEdit,
)
from memls.core.rules import Rule, RuleContext
from memls.core.workspace import Workspace

FUTURE_TOLERANCE = _dt.timedelta(minutes=5)
"""CP004: clocks of two machines may disagree a little; beyond this a Saved time is wrong."""

RULES = (
    Rule(
        "CP001",
        "checkpoint-title",
        Severity.WARNING,
        "checkpoint title missing, or `{name}` differs from the file name",
        fixable=True,
        rationale="warning: format; resume still reads the file by its name",
        doc="""
        A checkpoint file `checkpoint-NAME.md` starts with the title `# Checkpoint: NAME`,
        the name of its file. A title that names another checkpoint misleads whoever
        reads it; resume itself goes by the file name. (When only the file name is not
        sanitized, CP040 asks to rename the file instead.)

        Wrong: `# Checkpoint: login` in checkpoint-auth.md, or no title at all.
        Right: `# Checkpoint: auth`.

        Fix: retitle it, or insert the title (the quick fix), or rename the file.
        """,
    ),
    Rule(
        "CP002",
        "checkpoint-branch-missing",
        Severity.WARNING,
        "`Branch:` line missing",
        fixable=True,
        rationale="warning: resume cannot warn about a branch switch, but the checkpoint loads",
        doc="""
        A checkpoint records the branch it was saved on, `- **Branch:** `name``. Resume
        compares it with the current branch (CP021) and git (CP020, CP023–CP025); without
        it those checks are off.

        Wrong: a header with only `- **Saved:** 2026-03-05 09:30`.
        Right: `- **Branch:** `feat/auth`` above it.

        Fix: add the Branch line; in a git repository the quick fix inserts the current
        branch at the top of the header block.
        """,
    ),
    Rule(
        "CP003",
        "checkpoint-saved-format",
        Severity.WARNING,
        "`Saved:` missing or not `YYYY-MM-DD HH:MM`",
        fixable=True,
        rationale="warning: ordering and staleness checks are off; the checkpoint loads",
        doc="""
        `- **Saved:** YYYY-MM-DD HH:MM` (local time) says when the checkpoint was written;
        the index bullets, staleness (CP022) and ordering read it in that exact form.

        Wrong: `- **Saved:** March 5, 9:30am` or no Saved line.
        Right: `- **Saved:** 2026-03-05 09:30`.

        Fix: write the time in that form; when another common form can be read
        unambiguously, the quick fix rewrites it.
        """,
    ),
    Rule(
        "CP004",
        "checkpoint-saved-future",
        Severity.WARNING,
        "`Saved:` time in the future",
        rationale="warning: a clock problem; the content is intact",
        doc="""
        The `Saved:` time is later than now (beyond a small tolerance): a typo, or a
        machine whose clock is wrong. Staleness and ordering are then wrong.

        Wrong: `- **Saved:** 2036-03-05 09:30` on 2026-03-05.
        Right: the actual save time.

        Fix: correct the Saved time or the machine's clock.
        """,
    ),
    Rule(
        "CP010",
        "checkpoint-section-missing",
        Severity.WARNING,
        "required section missing (Next Action/Left Off, Done This Session, "
        "Failed Approaches, Modified Files)",
        fixable=True,
        fix_group="Add all missing sections",
        rationale="warning: a section resume expects is missing; what is there still loads",
        doc="""
        A checkpoint has four sections a resumed session reads: `## Next Action` (or
        `## Left Off`), `## Done This Session`, `## Failed Approaches`, `## Modified Files`.

        Wrong: a checkpoint with only `## Next Action`.
        Right: all four sections, each filled in.

        Fix: add the section (the quick fix appends its heading) and fill it in.
        """,
    ),
    Rule(
        "CP011",
        "checkpoint-section-empty",
        Severity.WARNING,
        'required section empty (Failed Approaches says "None" when there are none)',
        fixable=True,
        rationale="warning: an empty section says nothing; style, not loss",
        doc="""
        A required section has a heading and nothing under it. An empty
        `## Failed Approaches` cannot be told from one that was forgotten.

        Wrong: `## Failed Approaches` followed by the next heading.
        Right: what failed and why, or `- None`.

        Fix: fill the section in; for Failed Approaches the quick fix writes `- None`.
        """,
    ),
    Rule(
        "CP020",
        "checkpoint-branch-gone",
        Severity.WARNING,
        "stale branch: the checkpoint's branch no longer exists locally or on a remote",
        rationale="warning: the branch is gone, but the checkpoint's content is intact",
        doc="""
        In a git repository, the checkpoint's `Branch:` names a branch that exists neither
        locally nor on a remote: it was merged and deleted, renamed, or mistyped. (When it
        was merged since the save, CP025 reports that instead.) Not checked outside git.

        Wrong: `- **Branch:** `feat/old-auth`` after that branch was deleted.
        Right: the branch the work is on.

        Fix: finish or clear the checkpoint, or correct the Branch line.
        """,
    ),
    Rule(
        "CP021",
        "checkpoint-other-branch",
        Severity.INFO,
        "you are on another branch than the checkpoint's (with the `git checkout` to run)",
        rationale="info: a reminder of the `git checkout` to run, not a problem",
        doc="""
        In a git repository, the checkpoint's branch exists but the working tree is on
        another one. Resuming on the wrong branch applies the Next Action to other code.

        Example: on `main`, with `- **Branch:** `feat/auth``.

        Fix: `git checkout feat/auth` before resuming (nothing to change in the file).
        """,
    ),
    Rule(
        "CP022",
        "checkpoint-stale",
        Severity.WARNING,
        "checkpoint older than N days (14)",
        rationale="warning: an old checkpoint may mislead; nothing is broken",
        doc="""
        The checkpoint was saved more than `stale_days` (14) days ago. An old Next Action
        may have been done, or no longer apply.

        Wrong: `- **Saved:** 2026-01-02 10:00` on 2026-03-05, never resumed.
        Right: a checkpoint resumed and saved again, or cleared when done.

        Fix: resume it (`continue NAME`) and save again, or clear it.
        """,
    ),
    Rule(
        "CP023",
        "checkpoint-names-deleted-file",
        Severity.WARNING,
        "checkpoint names a file that a commit on its branch deleted (or moved) since it was "
        "saved (with that commit)",
        rationale="warning: the checkpoint sends resume to a file that is gone; git still has it",
        doc="""
        On the checkpoint's branch, a file the checkpoint names (a link or a path) was
        deleted or moved by a commit made after the checkpoint was saved; the message
        names the commit.

        Wrong: `## Modified Files` lists `src/auth/session.py`, which a later commit moved
        to `src/session.py`.
        Right: the checkpoint names files as the repository holds them now.

        Fix: resume from what the repository holds, and update or clear the checkpoint.
        """,
    ),
    Rule(
        "CP024",
        "checkpoint-behind-commits",
        Severity.WARNING,
        "`stale_commits` (20) or more commits on its branch since the checkpoint was saved",
        rationale="warning: the branch moved on since the save; the checkpoint may mislead",
        doc="""
        On the checkpoint's branch, `stale_commits` (20) or more commits were made since
        it was saved (not reported when CP022 already says it is old; `stale_commits = 0`
        turns it off). Its Next Action may be done or moot.

        Fix: resume it (`continue NAME`) and save again, or clear it.
        """,
    ),
    Rule(
        "CP025",
        "checkpoint-branch-merged",
        Severity.WARNING,
        "the checkpoint's branch was merged into the default branch since it was saved",
        rationale="warning: the work was merged; the checkpoint may describe finished work",
        doc="""
        The checkpoint's branch was merged into the default branch after the checkpoint
        was saved — by a merge commit, or squashed into one commit — and the message names
        that commit. Its work may be finished.

        Fix: clear the checkpoint (`memls checkpoint clear NAME`) if nothing is left.
        """,
    ),
    Rule(
        "CP030",
        "checkpoint-plan-missing",
        Severity.WARNING,
        "`Plan:` file missing",
        rationale="warning: the plan file is gone; the checkpoint still resumes",
        doc="""
        The `- **Plan:**` line names a file that does not exist (`~` expanded; a relative
        path is looked up against the memory root and the checkpoint's folder).

        Wrong: `- **Plan:** `plans/auth.md` (step 2 of 5)` with no plans/auth.md.
        Right: the plan's actual path.

        Fix: correct the Plan path or remove the Plan line.
        """,
    ),
    Rule(
        "CP031",
        "checkpoint-plan-step",
        Severity.WARNING,
        '"step N of M" with N > M or malformed',
        fixable=True,
        rationale="warning: a malformed step counter; cosmetic for resume",
        doc="""
        The step counter after the Plan path reads `(step N of M)` with 1 ≤ N ≤ M.

        Wrong: `(step 6 of 5)`, `step 2/5`, `(step two)`.
        Right: `(step 2 of 5)`.

        Fix: correct the step from the plan; a readable form like `step 2/5` is rewritten
        by the quick fix.
        """,
    ),
    Rule(
        "CP040",
        "checkpoint-file-name",
        Severity.WARNING,
        "checkpoint file name not in sanitized form (lowercase, `/` → `-`, no leading `-`)",
        rationale="warning: `continue NAME` may not find it; the file itself is fine",
        doc="""
        Checkpoint names are sanitized: lowercase, `/`, `\\` and whitespace become `-`,
        no leading `-`. `continue feat/Auth` looks for checkpoint-feat-auth.md; a file
        named otherwise is not found.

        Wrong: `checkpoint-Feat-Auth.md` (uppercase), `checkpoint--auth.md` (leading `-`).
        Right: `checkpoint-feat-auth.md`.

        Fix: rename the file to the name the message gives.
        """,
    ),
    Rule(
        "CP050",
        "checkpoint-foreign-format",
        Severity.INFO,
        "checkpoint files in another tool's format: not checked (one note per root, with "
        "the conversion command)",
        rationale="info: another tool's checkpoints are not wrong, only not memls's format",
        doc="""
        The root holds `checkpoint-*.md` files written by another tool (no memls header
        or sections). memls's checkpoint rules are not applied to them; one note, on the
        first such file, says so and lists the fields and sections seen.

        Fix: none needed; `memls checkpoint import` converts them to memls's format.
        """,
    ),
)

_STEP_STRICT = re.compile(r"\(step (?P<n>\d+) of (?P<m>\d+)\)")
_STEP_LOOSE = re.compile(
    r"(?:\(\s*)?step\s*(?P<n>\d+)\s*(?:of|/)\s*(?P<m>\d+)\s*\)?", re.IGNORECASE
)
_STEP_WORD = re.compile(r"(?:\(\s*)?step\b[^)]*\)?", re.IGNORECASE)


def foreign_checkpoints(ws: Workspace) -> list[Path]:
    """The root's checkpoint files in another format, sorted (once per workspace generation)."""

    def compute() -> list[Path]:
        out = []
        for path in sorted(ws.checkpoints().values()):
            cdoc = ws.document(path)
            if cdoc is not None and not is_native_checkpoint(cdoc):
                out.append(path)
        return out

    return ws.memo("memls.cp.foreign", compute)


def foreign_sessions(ws: Workspace) -> list[Path]:
    """The checkpoints in another format that read as session records
    (:func:`reads_as_session`): CP050 and `memls checkpoint import` are for these."""

    def compute() -> list[Path]:
        out = []
        other: dict[Path, list[bool]] = {}
        for path in foreign_checkpoints(ws):
            cdoc = ws.document(path)
            if cdoc is None:
                continue
            other.setdefault(path.parent, []).append(_names_another_kind(cdoc))
            if reads_as_session(cdoc):
                out.append(path)
        # a folder whose checkpoints mostly name themselves reports, results or plans
        # (`checkpoint-12-results.md`, `checkpoint-13-retrospective.md`) is a project's
        # milestone documents, its plainly named `checkpoint-3.md` too
        milestones = {f for f, kinds in other.items() if 2 * sum(kinds) >= len(kinds)}
        return [p for p in out if p.parent not in milestones]

    return ws.memo("memls.cp.sessions", compute)


def plan_checkpoints(ws: Workspace) -> list[Path]:
    """The checkpoints in another format that are the numbered steps of a plan (Scope,
    Implementation, Checklist, Next Checkpoint), not session records: not judged."""
    sessions = set(foreign_sessions(ws))
    return [p for p in foreign_checkpoints(ws) if p not in sessions]


_SESSION_STAMP = re.compile(
    r"(?<!\d)(?:19|20)\d{2}-\d{2}-\d{2}(?!\d)|\b\d{1,2}:\d{2}\b|\b(?:branch|commit)\b"
    r"|(?<![\w-])[0-9a-f]{7,40}(?![\w-])",
    re.IGNORECASE,
)
_SESSION_SECTION = re.compile(
    r"(?i)\b(?:done|completed|accomplished|what was (?:done|changed|built)|changes made"
    r"|progress|session|left off|next steps?|next actions?|pending|open work|in progress"
    r"|current state|status|work log|resume)\b"
)
_PLAN_SECTION = re.compile(
    r"(?i)^(?:\d+(?:\.\d+)*[.)]?\s*)?(?:scope|implementation\b.*|.*\bchecklist|next checkpoint"
    r"|files to (?:inspect|create|change|modify)|milestones?|deliverables|acceptance criteria"
    r"|goals?|objectives?|target structure)\s*$"
)


def reads_as_session(doc: Document) -> bool:
    """Whether a checkpoint in another format is a record of a session (what memls's
    checkpoints are): a date or time, a branch or a commit in its header, or sections of
    what was done and what is next, and none of a plan's. A numbered, forward-looking plan
    step (Scope, Implementation Details, Parity Checklist, Next Checkpoint) is not."""
    if _names_another_kind(doc):
        return False
    limit = next((s.start_line for s in doc.sections if s.level >= 2), len(doc.lines))
    header = "\n".join(doc.lines[: min(limit, 40)])
    if _SESSION_STAMP.search(header):
        return True
    titles = [sec.title for sec in doc.sections if sec.level == 2]
    if any(_PLAN_SECTION.match(t.strip()) for t in titles):
        return False
    return any(_SESSION_SECTION.search(t) for t in titles)


_OTHER_KIND_WORDS = frozenset(
    {
        "report", "results", "retrospective", "retro", "planning", "example", "sample",
        "learnings", "lessons", "template",
    }
)  # fmt: skip
"""Words by which a checkpoint's name or title says it is a milestone's report, results or
retrospective, a plan, an example or what was learned — not the record of a session."""


def _names_another_kind(doc: Document) -> bool:
    """``checkpoint-12-results.md``, ``checkpoint-8-example.md``, ``# Checkpoint 1 Status
    Report``: a project's milestone documents named checkpoints, not session records."""
    words = set(re.split(r"[^a-z]+", doc.path.stem.lower()))
    title = next((h.title for h in doc.headings if h.level == 1), "")
    words |= set(re.split(r"[^a-z]+", title.lower()))
    return bool(words & _OTHER_KIND_WORDS)


_HEADER_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?\*\*(?P<name>[^*:\n]{1,30}):\*\*")


def _foreign_note(ctx: RuleContext, foreign: list[Path]) -> Diagnostic:
    doc = ctx.doc
    fields: dict[str, None] = {}
    sections: dict[str, None] = {}
    for path in foreign[:50]:
        other = ctx.workspace.document(path)
        if other is None:
            continue
        limit = next((s.start_line for s in other.sections if s.level >= 2), len(other.lines))
        for line in other.lines[: min(limit, 40)]:
            m = _HEADER_LABEL.match(line)
            if m:
                fields.setdefault(f"`**{m.group('name').strip()}:**`", None)
        for sec in other.sections:
            if sec.level == 2:
                sections.setdefault(f"`## {sec.title}`", None)
    seen = []
    if fields:
        seen.append(", ".join(list(fields)[:3]) + " fields")
    if sections:
        seen.append(", ".join(list(sections)[:3]) + " sections")
    what = f" ({'; '.join(seen)})" if seen else ""
    count = len(foreign)
    files = "checkpoint file" if count == 1 else "checkpoint files"
    return ctx.diag(
        "CP050",
        f"{count} {files} in another format{what}: memls's checkpoint rules are not applied "
        "to them; `memls checkpoint import` converts them to memls's format (Branch, Saved, "
        "Next Action, Done This Session, Failed Approaches, Modified Files)",
        _line0(doc),
    )


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is not FileKind.CHECKPOINT:
        return
    name = checkpoint_name(doc.path)
    if name is None:
        return
    if not is_native_checkpoint(doc):
        foreign = foreign_sessions(ctx.workspace)  # a plan's steps get no note to convert
        if foreign and foreign[0] == doc.path:
            yield _foreign_note(ctx, foreign)
        return
    if not doc.text.strip():
        # one finding for one cause: not a title, a Branch, a Saved line and four sections
        yield from _check_title(ctx, name, None)
        return
    title = _title(doc)
    anchor = title.title_range if title is not None else _line0(doc)
    yield from _check_title(ctx, name, title)
    yield from _check_branch(ctx, anchor, title)
    yield from _check_saved(ctx, name, anchor)
    yield from _check_sections(ctx, anchor)
    yield from _check_plan(ctx)
    yield from _stale_in_git(ctx, name, anchor)
    clean = sanitized_name(name)
    if clean != name or not clean:
        target = f"checkpoint-{clean}.md" if clean else "checkpoint-<name>.md"
        yield ctx.diag(
            "CP040",
            f"file name {doc.name} is not in sanitized form: rename it to {target} "
            "(lowercase, `/` replaced by `-`, no leading `-`)"
            + (f" so `continue {clean}` finds it" if clean else ""),
            anchor,
        )


@dataclass(frozen=True)
class _Title:
    line: int
    title: str
    title_range: Range


def _title(doc: Document) -> _Title | None:
    """The first heading, when it is a level-1 heading."""
    if not doc.headings or doc.headings[0].level != 1:
        return None
    h = doc.headings[0]
    return _Title(h.line, h.title, h.title_range)


def _line0(doc: Document) -> Range:
    return Range.line(0, min(len(doc.line_text(0)), 1000))


def _check_title(ctx: RuleContext, name: str, title: _Title | None) -> Iterator[Diagnostic]:
    doc = ctx.doc
    wanted = f"Checkpoint: {name}"
    if title is None:
        start = doc.frontmatter.end_line + 1 if doc.frontmatter else 0
        start = min(start, len(doc.lines) - 1)
        text = f"# {wanted}{doc.eol}" + (doc.eol if doc.text.strip() else "")
        yield ctx.diag(
            "CP001",
            f"checkpoint has no `# {wanted}` title: add it as the first line",
            _line0(doc),
            ctx.fix(f"Insert title `# {wanted}`", TextEdit(Range.point(start, 0), text)),
        )
        return
    if title.title == wanted:
        return
    m = TITLE_RE.match(title.title)
    if m and sanitized_name(name) != name and m.group("name").strip() == sanitized_name(name):
        return  # the title already has the sanitized name; CP040 asks to rename the file
    if m and m.group("name").strip() and m.group("name").strip() != name:
        what = f"title names checkpoint `{m.group('name').strip()}` but the file is {doc.name}"
    else:
        what = f"title `{title.title}` is not `{wanted}`"
    yield ctx.diag(
        "CP001",
        f"{what}: retitle it `# {wanted}` (or rename the file)",
        title.title_range,
        ctx.fix(f"Retitle `# {wanted}`", TextEdit(title.title_range, wanted)),
    )


def _check_branch(ctx: RuleContext, anchor: Range, title: _Title | None) -> Iterator[Diagnostic]:
    doc = ctx.doc
    git = ctx.workspace.git
    field = doc.field("Branch")
    if field is None or not field.value.strip():
        current = git.current_branch()
        fix = None
        if current is not None:
            line = f"- **Branch:** `{current}`"
            if field is not None:
                fix = ctx.fix(f"Set Branch to `{current}`", TextEdit(field.range, line))
            elif title is not None:
                header = [f for f in _header_fields(doc) if f.line > title.line]
                if header:  # keep the header block together: Branch goes first
                    edit = TextEdit(Range.point(header[0].line, 0), line + doc.eol)
                else:
                    end = Range.point(title.line, len(doc.line_text(title.line)))
                    edit = TextEdit(end, doc.eol * 2 + line)
                fix = ctx.fix(f"Insert Branch `{current}`", edit)
        where = field.range if field is not None else anchor
        yield ctx.diag(
            "CP002",
            "checkpoint has no Branch line (- **Branch:** `name`): add the branch it was "
            "saved on so resume can warn about switching",
            where,
            fix,
        )
        return
    branch = field.value.strip()
    branches = git.branches()
    if branches is None:
        return
    if not branches.exists(branch):
        if ctx.config.enabled("CP025") and _merged_gone(ctx, branch):
            return  # CP025 says when and by which commit it was merged
        yield ctx.diag(
            "CP020",
            f"branch `{branch}` exists neither locally nor on a remote (merged or deleted?): "
            "finish or clear this checkpoint, or correct the Branch line",
            field.value_range,
        )
        return
    current = git.current_branch()
    if current is not None and current != branch:
        yield ctx.diag(
            "CP021",
            f"you're on `{current}` but this checkpoint was saved on `{branch}`: "
            f"switch with `git checkout {branch}` before resuming",
            field.value_range,
        )


def _merged_gone(ctx: RuleContext, branch: str) -> bool:
    from memls.core.rules import stale

    name = checkpoint_name(ctx.doc.path) or ctx.doc.path.stem
    when = stale.written(ctx.workspace, ctx.doc, checkpoint_facts(ctx.doc, name).saved)
    return when is not None and stale.merged_since(ctx.workspace, branch, when) is not None


def _stale_in_git(ctx: RuleContext, name: str, anchor: Range) -> Iterator[Diagnostic]:
    """CP023–CP025: what changed in the repository since the checkpoint was saved."""
    if not any(ctx.config.enabled(c) for c in ("CP023", "CP024", "CP025")):
        return
    from memls.core.rules import stale

    doc, ws = ctx.doc, ctx.workspace
    if stale.in_history_folder(ws, doc):
        return  # an archived checkpoint: kept as a record, not as the state to resume
    facts = checkpoint_facts(doc, name)
    when = stale.written(ws, doc, facts.saved)
    if when is None:
        return
    field = doc.field("Branch")
    where = field.value_range if field is not None and facts.branch else anchor
    if facts.branch is not None and facts.branch == ws.git.current_branch():
        for item in stale.deleted_since(ws, doc, when):
            yield ctx.diag(
                "CP023",
                f"this checkpoint names `{item.link.target}`, but "
                f"{stale.describe_deleted(item)}, after it was saved ({when.how}): resume "
                "from what the repository holds now, and update or clear the checkpoint",
                item.link.range,
            )
        limit = ctx.config.stale_commits
        old = (
            facts.saved is not None
            and ctx.config.enabled("CP022")
            and ctx.now - facts.saved > _dt.timedelta(days=ctx.config.stale_days)
        )  # CP022 already says it is stale
        scope = stale.project_folder(ws, doc) if limit and not old else None
        behind = stale.behind(ws, when, scope) if limit and not old else 0
        if limit and behind >= limit and not old:
            count = f"at least {behind}" if when.beyond_window else str(behind)
            changed = f" changed `{scope}/`" if scope else ""
            yield ctx.diag(
                "CP024",
                f"{count} commits on `{facts.branch}`{changed} since this checkpoint was saved "
                f"({when.how}): {stale.commits_since(ws, when, scope)} — its Next Action may be done "
                f"or moot; resume it (`continue {name}`) and save again, or clear it",
                where,
            )
    if facts.branch is not None:
        merged = stale.merged_since(ws, facts.branch, when)
        if merged is not None:
            yield ctx.diag(
                "CP025",
                f"branch `{facts.branch}` was {stale.describe_merge(*merged)}, after this "
                f"checkpoint was saved ({when.how}): its work may be finished — clear the "
                f"checkpoint (`memls checkpoint clear {name}`) if nothing is left",
                where,
            )


def _header_fields(doc: Document) -> list[Field]:
    limit = next((s.start_line for s in doc.sections if s.level >= 2), len(doc.lines))
    return [f for f in doc.fields if f.line < limit and f.range.start.character == 0]


def _check_saved(ctx: RuleContext, name: str, anchor: Range) -> Iterator[Diagnostic]:
    field = ctx.doc.field("Saved")
    if field is None:
        yield ctx.diag(
            "CP003",
            "checkpoint has no `- **Saved:** YYYY-MM-DD HH:MM` line: add when it was saved",
            anchor,
        )
        return
    saved = parse_saved(field.value)
    if saved is None:
        lenient = parse_saved_lenient(field.value)
        fix = None
        if lenient is not None:
            norm = lenient.strftime(SAVED_FORMAT)
            fix = ctx.fix(f"Write Saved as `{norm}`", TextEdit(field.value_range, norm))
        shown = field.raw_value if len(field.raw_value) <= 60 else field.raw_value[:57] + "..."
        yield ctx.diag(
            "CP003",
            f"Saved `{shown}` is not in `YYYY-MM-DD HH:MM` form: write it like 2026-11-30 14:05",
            field.value_range,
            fix,
        )
        saved = lenient
    if saved is None:
        return
    if saved > ctx.now + FUTURE_TOLERANCE:
        yield ctx.diag(
            "CP004",
            f"Saved {saved:%Y-%m-%d %H:%M} is in the future (now {ctx.now:%Y-%m-%d %H:%M}): "
            "correct the Saved time or the machine's clock",
            field.value_range,
        )
        return
    limit = ctx.config.stale_days
    age = ctx.now - saved
    if age > _dt.timedelta(days=limit):
        yield ctx.diag(
            "CP022",
            f"checkpoint saved {age.days} days ago, over the {limit}-day limit: resume it "
            f"(`continue {name}`) or clear it (`clear checkpoint {name}`)",
            field.value_range,
        )


def _check_sections(ctx: RuleContext, anchor: Range) -> Iterator[Diagnostic]:
    doc = ctx.doc
    for label, titles, prefix in REQUIRED_SECTIONS:
        sec = doc.section(*titles, prefix=prefix)
        if sec is None:
            yield ctx.diag(
                "CP010",
                f"checkpoint has no `## {label}` section: add it"
                + (" with the concrete next step and file paths" if prefix else ""),
                anchor,
                ctx.fix(f"Add section `## {label}`", _append(doc, f"## {label}")),
            )
            continue
        if not doc.is_blank_section(sec):
            continue
        if label == "Failed Approaches":
            end = Range.point(sec.start_line, len(doc.line_text(sec.start_line)))
            yield ctx.diag(
                "CP011",
                '`## Failed Approaches` is empty: list what failed and why, or write "- None"',
                sec.heading.title_range,
                ctx.fix("Write `- None`", TextEdit(end, doc.eol + "- None")),
            )
        else:
            yield ctx.diag(
                "CP011",
                f"`## {sec.title}` is empty: fill it in so a resumed session knows "
                + ("what to do next" if prefix else "what happened"),
                sec.heading.title_range,
            )


def _append(doc: Document, block: str) -> TextEdit:
    """An edit that appends ``block`` as its own paragraph at the end of the document.

    Appends compose: several at once (one fix-all pass) give the same text as one by one.
    A file without a final newline keeps having none.
    """
    last = len(doc.lines) - 1
    end = Range.point(last, len(doc.lines[last]))
    eol = doc.eol
    if not doc.text.strip():
        return TextEdit(Range.of(0, 0, last, len(doc.lines[last])), block + eol)
    if doc.lines[last]:
        return TextEdit(end, eol * 2 + block)
    if last >= 1 and doc.lines[last - 1].strip():
        return TextEdit(end, eol + block + eol)
    return TextEdit(end, block + eol * 2)


def _check_plan(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    field = doc.field("Plan")
    if field is None:
        return
    raw = field.raw_value
    base = field.value_range.start
    plan = split_plan(raw)
    path_text, p_start, rest_start = plan.path, plan.path_start, plan.rest_start
    if path_text and not plan_exists(ctx.workspace.root, path_text):
        rng = Range.of(
            base.line,
            base.character + p_start,
            base.line,
            base.character + p_start + len(path_text),
        )
        yield ctx.diag(
            "CP030",
            f"plan file `{path_text}` does not exist: correct the Plan path "
            "or remove the Plan line",
            rng,
        )
    rest = raw[rest_start:]
    off = base.character + rest_start
    strict = _STEP_STRICT.search(rest)
    if strict is not None:
        n, m = int(strict.group("n")), int(strict.group("m"))
        if 1 <= n <= m:
            return
        yield ctx.diag(
            "CP031",
            f"plan step {n} of {m} is impossible: N must be between 1 and M; "
            "re-read the plan and correct the step",
            Range.of(base.line, off + strict.start(), base.line, off + strict.end()),
        )
        return
    loose = _STEP_LOOSE.search(rest)
    if loose is not None:
        n, m = int(loose.group("n")), int(loose.group("m"))
        rng = Range.of(base.line, off + loose.start(), base.line, off + loose.end())
        if 1 <= n <= m:
            canonical = f"(step {n} of {m})"
            yield ctx.diag(
                "CP031",
                f"plan step `{loose.group(0).strip()}` is not in `(step N of M)` form: "
                f"write `{canonical}`",
                rng,
                ctx.fix(f"Write `{canonical}`", TextEdit(rng, canonical)),
            )
        else:
            yield ctx.diag(
                "CP031",
                f"plan step {n} of {m} is impossible: N must be between 1 and M; "
                "re-read the plan and correct the step",
                rng,
            )
        return
    word = _STEP_WORD.search(rest)
    if word is not None:
        yield ctx.diag(
            "CP031",
            f"plan step `{word.group(0).strip()}` is malformed: write `(step N of M)` "
            "with numbers from the plan",
            Range.of(base.line, off + word.start(), base.line, off + word.end()),
        )
