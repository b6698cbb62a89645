"""IX001–IX008: the index's structure — its title, the Active Checkpoints bullets (one per
checkpoint file, in the canonical form, agreeing with the checkpoint), the resume line, and
no volatile session state (which belongs in a checkpoint)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memls.core.formats.checkpoint import CheckpointFacts, checkpoint_facts
from memls.core.formats.index import (
    ACTIVE,
    DEFAULT_TITLE,
    RESUME_LINE,
    Bullet,
    active_section,
    bullet_for,
    bullets,
    format_bullet_date,
    is_entry,
    is_legacy,
    read_bullet,
)
from memls.core.model import Diagnostic, Document, Range, Section, TextEdit
from memls.core.rules import RuleContext
from memls.core.rules.checkpoint import foreign_checkpoints
from memls.core.workspace import Layout, is_claude_memory_dir, is_claude_project_memory


def check_structure(ctx: RuleContext) -> Iterator[Diagnostic]:
    """IX001–IX008 on MEMORY.md."""
    doc = ctx.doc
    section = active_section(doc)
    facts = _facts(ctx)
    first = _first_heading_problem(ctx)
    if (
        first is not None
        and not _headingless_list_index(doc)
        and not _after_autodream(ctx, section)
        and (section is not None or facts or first.message.startswith(_NO_SPACE))
    ):
        # memls's index starts with its title; another tool's (nanobot's, an agent's own
        # notes index) need not — only a heading written without its space is broken there
        yield first
    found = bullets(doc, section) if section is not None else []
    yield from _check_bullets(ctx, found, facts)
    if section is not None and found:
        yield from _check_unreadable(ctx, section)
    yield from _check_missing(ctx, section, found, facts)
    if section is not None:
        yield from _check_layout(ctx, section, found)
        for extra in doc.sections:
            if (
                extra.level == 2
                and extra is not section
                and extra.title.casefold() == ACTIVE.casefold()
            ):
                yield ctx.diag(
                    "IX006",
                    "a second `## Active Checkpoints` section: resume and memls read only the "
                    "first — move these bullets into it and delete this heading",
                    extra.heading.title_range,
                )
    if section is None and not ctx.workspace.checkpoints() and _claude_code_memory(ctx):
        return  # Claude Code's memory keeps no checkpoints: its current state is its index's
    for sec in doc.sections:
        if is_legacy(sec):
            yield ctx.diag(
                "IX007",
                f"`## {sec.title}` is volatile session state, which belongs in a checkpoint, "
                "not the index: run `memls index migrate` to move it into one",
                sec.heading.title_range,
            )


def _claude_code_memory(ctx: RuleContext) -> bool:
    """A project's ``.claude/memory/`` (a subagent's too) or Claude Code's auto memory: an
    index by Claude Code's convention, where the current state may live on purpose."""
    root = ctx.workspace.root
    return is_claude_project_memory(root) or is_claude_memory_dir(root)


_COMMENT_LINE = re.compile(r"^\s*<!--.*-->\s*$")


_AUTODREAM = re.compile(r"^\s*\[AutoDream\b[^\]]*\]\s*$")
"""The marker Claude Code's memory consolidation (auto-dream) writes on the index's first
line (``[AutoDream last run: 2026-04-23]``): Claude Code's own index, in its own form."""


def _after_autodream(ctx: RuleContext, section: Section | None) -> bool:
    """Claude Code's own index (its layout, no memls section) opening with the auto-dream
    marker: in Claude Code's form, no heading asked for."""
    doc = ctx.doc
    if ctx.workspace.layout is not Layout.CLAUDE or section is not None:
        return False
    first = doc.frontmatter.end_line + 1 if doc.frontmatter else 0
    return _AUTODREAM.match(doc.line_text(first)) is not None


def _headingless_list_index(doc: Document) -> bool:
    """The index Claude Code writes itself: a list of pointer lines, no heading at all."""
    if doc.headings or not doc.text.strip():
        return False
    start = doc.frontmatter.end_line + 1 if doc.frontmatter else 0
    first = next(
        (ln for ln in doc.lines[start:] if ln.strip() and not ln.lstrip().startswith("<!--")), ""
    )
    if not first:
        return True  # only a `<!-- … -->` note: the empty index Claude Code starts from
    return re.match(r"^\s*(?:[-*+]|\d{1,9}[.)])\s", first) is not None


_NO_SPACE = "MEMORY.md's first line lacks the space after `#`"


def _first_heading_problem(ctx: RuleContext) -> Diagnostic | None:
    doc = ctx.doc
    start = doc.frontmatter.end_line + 1 if doc.frontmatter else 0
    while start + 1 < len(doc.lines) and (
        _COMMENT_LINE.match(doc.line_text(start))
        or (doc.frontmatter is not None and not doc.line_text(start).strip())
    ):
        start += 1  # a leading `<!-- … -->` note, or the blank line after front matter
    line = doc.line_text(start)
    if line.startswith("# ") and doc.headings and doc.headings[0].line == start:
        return None
    if line.startswith(">"):  # a note quoted above the title (where the memory is synced)
        after = start
        while after + 1 < len(doc.lines) and (
            doc.line_text(after).startswith(">") or not doc.line_text(after).strip()
        ):
            after += 1
        if doc.line_text(after).startswith("# ") and doc.headings and doc.headings[0].line == after:
            return None
    rng = Range.line(start, min(len(line), 1000))
    eol = doc.eol
    msg = f"MEMORY.md does not start with a `# ` heading: add `# {DEFAULT_TITLE}` as line 1"
    if re.match(r"^#[^#\s]", line):
        edit = TextEdit(Range.point(start, 1), " ")
        return ctx.diag(
            "IX001",
            f"{_NO_SPACE}, so it is no heading: write `# ` at its start",
            rng,
            ctx.fix("Add the space after `#`", edit),
        )
    first = doc.headings[0] if doc.headings else None
    if (
        first is not None
        and first.level == 1
        and doc.line_text(first.line).startswith("# ")
        and all(not ln.strip() for ln in doc.lines[start : first.line])
    ):
        edit = TextEdit(Range.of(start, 0, first.line, 0), "")
        return ctx.diag(
            "IX001",
            "MEMORY.md starts with blank lines before its `# ` heading: remove them",
            rng,
            ctx.fix("Remove leading blank lines", edit),
        )
    text = f"# {DEFAULT_TITLE}{eol}" + (eol if doc.text.strip() else "")
    edit = TextEdit(Range.point(start, 0), text)
    return ctx.diag("IX001", msg, rng, ctx.fix(f"Insert `# {DEFAULT_TITLE}`", edit))


def _delete_line(doc: Document, line: int) -> TextEdit:
    if line + 1 < len(doc.lines):
        return TextEdit(Range.of(line, 0, line + 1, 0), "")
    prev = max(0, line - 1)
    return TextEdit(Range.of(prev, len(doc.line_text(prev)), line, len(doc.line_text(line))), "")


def _facts(ctx: RuleContext) -> dict[str, CheckpointFacts | None]:
    """Facts of every checkpoint of the root (``None`` when the file cannot be read);
    memoised, so typing in MEMORY.md does not revisit every checkpoint (do not mutate)."""
    ws = ctx.workspace

    def compute() -> dict[str, CheckpointFacts | None]:
        out: dict[str, CheckpointFacts | None] = {}
        foreign = set(foreign_checkpoints(ws))
        for name, path in ws.checkpoints().items():
            if path in foreign:
                continue  # another tool's checkpoint: CP050 notes it, the index need not list it
            cdoc = ws.document(path)
            out[name] = checkpoint_facts(cdoc, name) if cdoc is not None else None
        return out

    return ws.memo("memls.ix.facts", compute)


def _canonical_bullets(ctx: RuleContext) -> dict[str, str]:
    """The canonical bullet of every checkpoint that has one (memoised like the facts)."""

    def compute() -> dict[str, str]:
        return {n: b for n, f in _facts(ctx).items() if f is not None and (b := bullet_for(f))}

    return ctx.workspace.memo("memls.ix.bullets", compute)


def _check_bullets(
    ctx: RuleContext, found: list[Bullet], facts: dict[str, CheckpointFacts | None]
) -> Iterator[Diagnostic]:
    doc = ctx.doc
    seen: set[str] = set()
    for b in found:
        item = b.item
        name_range = b.name_range
        if b.name in seen:
            yield ctx.diag(
                "IX008",
                f"checkpoint `{b.name}` has more than one bullet: keep the first, delete this one",
                name_range,
                ctx.fix("Delete the duplicate bullet", _delete_line(doc, item.line)),
            )
            continue
        seen.add(b.name)
        if b.name not in facts:
            yield ctx.diag(
                "IX002",
                f"bullet names checkpoint `{b.name}` but checkpoint-{b.name}.md does not exist: "
                "delete the bullet (or restore the file)",
                name_range,
                ctx.fix("Delete the orphan bullet", _delete_line(doc, item.line)),
            )
            continue
        fact = facts[b.name]
        if not b.strict:
            yield _form_problem(ctx, b, fact)
        if fact is None or b.paren_range is None:
            continue
        saved = fact.saved
        want = (saved.month, saved.day, saved.hour, saved.minute) if saved else None
        stale_branch = fact.branch is not None and b.branch is not None and b.branch != fact.branch
        stale_date = want is not None and b.date is not None and b.date != want
        if not (stale_branch or stale_date):
            continue
        branch = fact.branch or b.branch
        date = want or b.date
        assert date is not None
        paren = f"({branch}, {format_bullet_date(*date)})"
        what = []
        if stale_branch:
            what.append(f"branch `{fact.branch}`")
        if stale_date:
            what.append(f"saved {format_bullet_date(*date)}")
        yield ctx.diag(
            "IX005",
            f"bullet disagrees with checkpoint-{b.name}.md ({' and '.join(what)}): "
            f"update it to `{paren}`",
            b.paren_range,
            ctx.fix(f"Rewrite as `{paren}`", TextEdit(b.paren_range, paren)),
        )


def _check_unreadable(ctx: RuleContext, section: Section) -> Iterator[Diagnostic]:
    """IX004 for a top-level list item of a memls-format Active Checkpoints section (one
    that holds ``**name**`` bullets) that names no checkpoint the way resume reads it, such
    as ``- old-experiment: see notes``."""
    for item in ctx.doc.items_in(section):
        if not is_entry(item) or not item.text.strip():
            continue
        if read_bullet(item) is None:
            yield ctx.diag(
                "IX004",
                "bullet is not in the `- **name** (branch, Mon DD HH:MM) — summary` form: "
                "resume cannot read it — rewrite it, or move it out of Active Checkpoints",
                item.text_range,
            )


def _form_problem(ctx: RuleContext, b: Bullet, fact: CheckpointFacts | None) -> Diagnostic:
    """IX004, with a fix when the parts can be read from the bullet or its checkpoint."""
    branch = b.branch or (fact.branch if fact else None)
    saved = fact.saved if fact else None
    date = b.date or ((saved.month, saved.day, saved.hour, saved.minute) if saved else None)
    summary = b.summary or (fact.next_action if fact else None)
    fix = None
    if b.readable and branch and date is not None and summary:
        canonical = f"**{b.name}** ({branch}, {format_bullet_date(*date)}) — {summary}"
        if canonical != b.item.text:
            fix = ctx.fix(
                "Rewrite the bullet in canonical form", TextEdit(b.item.text_range, canonical)
            )
    return ctx.diag(
        "IX004",
        "bullet is not in the `- **name** (branch, Mon DD HH:MM) — summary` form: "
        "rewrite it so resume and `memls` can read it",
        b.item.text_range,
        fix,
    )


def _check_missing(
    ctx: RuleContext,
    section: Section | None,
    found: list[Bullet],
    facts: dict[str, CheckpointFacts | None],
) -> Iterator[Diagnostic]:
    doc = ctx.doc
    named = {b.name for b in found}
    missing = [name for name in sorted(facts) if name not in named]
    if not missing:
        return
    eol = doc.eol
    listed, rest = missing[:MAX_LISTED_MISSING], missing[MAX_LISTED_MISSING:]
    after = found[-1].item.line if found else (section.start_line if section else 0)
    for name in listed:
        fact = facts.get(name)
        bullet = bullet_for(fact) if fact is not None else None
        fix = None
        if section is not None:
            rng = section.heading.title_range
            if bullet is not None:
                at = Range.point(after, len(doc.line_text(after)))
                fix = ctx.fix(f"Add the bullet for `{name}`", TextEdit(at, eol + bullet))
        else:
            rng = Range.point(0, 0)
            h1 = doc.headings[0] if doc.headings and doc.headings[0].level == 1 else None
            if bullet is not None and h1 is not None:
                at = Range.point(h1.line, len(doc.line_text(h1.line)))
                block = eol * 2 + f"## {ACTIVE}" + eol + bullet + eol * 2 + RESUME_LINE
                fix = ctx.fix(f"Add Active Checkpoints with `{name}`", TextEdit(at, block))
        hint = (
            "add its bullet to `## Active Checkpoints`"
            if bullet is not None
            else "give the checkpoint a Branch, Saved and Next Action, then add its bullet"
        )
        yield ctx.diag(
            "IX003", f"checkpoint-{name}.md has no bullet in the index: {hint}", rng, fix
        )
    if rest:
        yield _missing_summary(ctx, section, rest, facts, after)


MAX_LISTED_MISSING = 25
"""IX003 lists this many checkpoints one by one; the rest share one diagnostic (and one fix)."""


def _missing_summary(
    ctx: RuleContext,
    section: Section | None,
    rest: list[str],
    facts: dict[str, CheckpointFacts | None],
    after: int,
) -> Diagnostic:
    doc = ctx.doc
    canonical = _canonical_bullets(ctx)
    bullets = [b for name in rest if (b := canonical.get(name)) is not None]
    fix = None
    if section is not None and bullets:
        at = Range.point(after, len(doc.line_text(after)))
        edit = TextEdit(at, "".join(doc.eol + b for b in bullets))
        fix = ctx.fix(f"Add the bullets for {len(bullets)} more checkpoints", edit)
    sample = ", ".join(rest[:3])
    return ctx.diag(
        "IX003",
        f"{len(rest)} more checkpoint files have no bullet in the index ({sample}, …): "
        "add their bullets, or clear the checkpoints you no longer need "
        "(`memls checkpoint clear NAME`)",
        section.heading.title_range if section is not None else Range.point(0, 0),
        fix,
    )


def _check_layout(ctx: RuleContext, section: Section, found: list[Bullet]) -> Iterator[Diagnostic]:
    doc = ctx.doc
    eol = doc.eol
    first = doc.headings[0] if doc.headings else None
    if first is not None and first.level == 1:
        following = next((h for h in doc.headings if h.line > first.line), None)
        if following is not None and following.line != section.start_line:
            yield ctx.diag(
                "IX006",
                "`## Active Checkpoints` is not the first section after the title: "
                "move it directly under the `# ` heading so it loads first",
                section.heading.title_range,
            )
    items = [i for i in doc.items_in(section) if i.indent == 0]
    last = items[-1].line if items else section.start_line
    resume = next(
        (
            ln
            for ln in range(section.body_start, section.end_line)
            if doc.lines[ln].lstrip().casefold().startswith("resume any:")
        ),
        None,
    )
    insert = TextEdit(Range.point(last, len(doc.line_text(last))), eol * 2 + RESUME_LINE)
    if resume is None:
        yield ctx.diag(
            "IX006",
            f"`## Active Checkpoints` has no resume line: add `{RESUME_LINE}` after the bullets",
            section.heading.title_range,
            ctx.fix("Add the resume line", insert),
        )
        return
    if resume > last and all(not doc.lines[ln].strip() for ln in range(last + 1, resume)):
        return
    yield ctx.diag(
        "IX006",
        "the resume line is not right after the Active Checkpoints bullets: move it there",
        Range.line(resume, min(len(doc.lines[resume]), 1000)),
        ctx.fix("Move the resume line after the bullets", _delete_line(doc, resume), insert),
    )
