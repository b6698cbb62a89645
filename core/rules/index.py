"""IX: the MEMORY.md index — its heading, Active Checkpoints bullets, pointers and load limits.

MEMORY.md is loaded at every session start, so it must stay a thin, correct index: one
bullet per checkpoint file, pointers that lead somewhere, nothing volatile, nothing past
the part Claude Code actually loads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase as fnmatch
from pathlib import Path
from urllib.parse import unquote

from memls.core.links import Link, distinct_links, extract_links, link_key
from memls.core.model import (
    Diagnostic,
    Document,
    FileKind,
    ListItem,
    Range,
    Section,
    Severity,
    TextEdit,
)
from memls.core.parse import parse_file
from memls.core.rules import Rule, RuleContext
from memls.core.rules.checkpoint import CheckpointFacts, checkpoint_facts, foreign_checkpoints
from memls.core.workspace import DOC_FOLDERS, Layout, Workspace, is_conventional_doc, is_dated

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
RESUME_LINE = "Resume any: `continue` or `continue {name}`"
DEFAULT_TITLE = "Project Memory"
_TARGETS_KEY = "memls.rules.index.pointer_targets"

RULES = (
    Rule(
        "IX001",
        "index-heading",
        Severity.WARNING,
        "MEMORY.md does not start with a `# ` heading",
        fixable=True,
    ),
    Rule(
        "IX002",
        "index-orphan-bullet",
        Severity.WARNING,
        "Active Checkpoints bullet names a checkpoint whose file is missing (orphan)",
        fixable=True,
    ),
    Rule(
        "IX003",
        "index-missing-bullet",
        Severity.WARNING,
        "a checkpoint file exists but has no bullet",
        fixable=True,
    ),
    Rule(
        "IX004",
        "index-bullet-form",
        Severity.WARNING,
        "bullet not in the `- **name** (branch, Mon DD HH:MM) — summary` form",
        fixable=True,
    ),
    Rule(
        "IX005",
        "index-bullet-stale",
        Severity.WARNING,
        "bullet's branch or date disagrees with its checkpoint file (stale index)",
        fixable=True,
    ),
    Rule(
        "IX006",
        "index-layout",
        Severity.WARNING,
        "resume line missing or not right after the bullets; section not right after the "
        "first heading",
        fixable=True,
    ),
    Rule(
        "IX007",
        "index-volatile-section",
        Severity.WARNING,
        "legacy volatile section in MEMORY.md (fix: `memls index migrate`)",
    ),
    Rule(
        "IX008",
        "index-duplicate-bullet",
        Severity.WARNING,
        "duplicate bullets for one name",
        fixable=True,
    ),
    Rule(
        "IX009",
        "index-broken-pointer",
        Severity.ERROR,
        "pointer/link in the index to a file that exists nowhere (not beside the index, in "
        "the root, the repository, or by wikilink name)",
    ),
    Rule(
        "IX010",
        "index-unreferenced-topic",
        Severity.WARNING,
        "topic file that no link reaches, from the index or through the topic files it links",
    ),
    Rule(
        "IX011",
        "index-past-load-limit",
        Severity.ERROR,
        "content past line 200 or 25 KB (Claude Code), or past 20,000 characters (an agent "
        "workspace): not loaded at session start",
    ),
    Rule(
        "IX012",
        "broken-link",
        Severity.WARNING,
        "link in a topic file (Markdown or `[[wikilink]]`) to a file that exists nowhere",
    ),
)

_BULLET_LOOSE = re.compile(
    r"^\*\*(?P<name>[^*]+)\*\*\s*"
    r"(?:\((?P<paren>[^()]*)\))?\s*"
    r"(?:(?P<sep>—|–|--|-|:)\s*(?P<summary>.*))?$"
)
_BULLET_STRICT = re.compile(
    r"^\*\*(?P<name>[^*\s][^*]*)\*\* \((?P<branch>[^,()\s][^,()]*), "
    r"(?P<date>(?:" + "|".join(MONTHS) + r") \d{1,2} \d{2}:\d{2})\) — (?P<summary>\S.*)$"
)
_DATE = re.compile(r"^(?P<mon>[A-Za-z]{3})\s+(?P<day>\d{1,2})\s+(?P<h>\d{1,2}):(?P<m>\d{2})$")
_VOLATILE = re.compile(
    r"^(?:current state|next action\b.*|session checkpoint|session\b.*\bsummary)$", re.IGNORECASE
)


@dataclass(frozen=True)
class Bullet:
    """An Active Checkpoints bullet, read leniently."""

    item: ListItem
    name: str
    branch: str | None
    date: tuple[int, int, int, int] | None  # month, day, hour, minute
    date_text: str | None
    summary: str | None
    paren_range: Range | None  # the "(branch, date)" part
    strict: bool
    readable: bool  # the lenient pattern matched, so a rewrite keeps every part


def format_bullet_date(month: int, day: int, hour: int, minute: int) -> str:
    """``Mon DD HH:MM`` with English month names, independent of the locale."""
    return f"{MONTHS[month - 1]} {day:02d} {hour:02d}:{minute:02d}"


def bullet_for(facts: CheckpointFacts) -> str | None:
    """The canonical bullet for a checkpoint, or ``None`` when it lacks branch, date or summary."""
    if facts.branch is None or facts.saved is None or not facts.next_action:
        return None
    s = facts.saved
    date = format_bullet_date(s.month, s.day, s.hour, s.minute)
    return f"- **{facts.name}** ({facts.branch}, {date}) — {facts.next_action}"


def parse_bullet_date(text: str) -> tuple[int, int, int, int] | None:
    m = _DATE.match(text.strip())
    if m is None:
        return None
    mon = m.group("mon").capitalize()
    if mon not in MONTHS:
        return None
    month, day, hour, minute = MONTHS.index(mon) + 1, int(m["day"]), int(m["h"]), int(m["m"])
    if not (1 <= day <= 31 and hour <= 23 and minute <= 59):
        return None
    return month, day, hour, minute


def read_bullet(item: ListItem) -> Bullet | None:
    """A bullet starting with ``**name**``; ``None`` for other list items."""
    text = item.text
    m = _BULLET_LOOSE.match(text)
    if m is None:
        named = re.match(r"^\*\*(?P<name>[^*]+)\*\*", text)
        if named is None:
            return None
        return Bullet(item, named["name"].strip(), None, None, None, None, None, False, False)
    branch = date = date_text = None
    paren_range = None
    if m.group("paren") is not None:
        parts = m.group("paren").rsplit(",", 1)
        if len(parts) == 2:
            branch = parts[0].strip() or None
            date_text = parts[1].strip()
            date = parse_bullet_date(date_text)
        start = item.text_range.start.character
        line = item.line
        paren_range = Range.of(line, start + m.start("paren") - 1, line, start + m.end("paren") + 1)
    summary = (m.group("summary") or "").strip() or None
    return Bullet(
        item,
        m["name"].strip(),
        branch,
        date,
        date_text,
        summary,
        paren_range,
        _BULLET_STRICT.match(text) is not None and date is not None,
        m.group("paren") is None or (branch is not None and date is not None),
    )


def active_section(doc: Document) -> Section | None:
    return doc.section("Active Checkpoints")


def bullets(doc: Document, section: Section) -> list[Bullet]:
    out = []
    for item in doc.items_in(section):
        if item.indent == 0 and item.marker in ("-", "*", "+"):
            b = read_bullet(item)
            if b is not None:
                out.append(b)
    return out


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is FileKind.TOPIC:
        from memls.core.rules.memoryfile import not_memory

        if not_memory(ctx.workspace, doc) is not None:
            return  # an Agent Skill or a project document: not memory
        yield from _check_unreferenced(ctx)
        yield from _check_topic_links(ctx)
        return
    if doc.kind is not FileKind.INDEX:
        return
    first = _first_heading_problem(ctx)
    if first is not None and not _headingless_list_index(doc):
        yield first
    section = active_section(doc)
    found = bullets(doc, section) if section is not None else []
    facts = _facts(ctx)
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
                and extra.title.casefold() == "active checkpoints"
            ):
                yield ctx.diag(
                    "IX006",
                    "a second `## Active Checkpoints` section: resume and memls read only the "
                    "first — move these bullets into it and delete this heading",
                    extra.heading.title_range,
                )
    for sec in doc.sections:
        if sec.level == 2 and _VOLATILE.match(sec.title.strip()):
            yield ctx.diag(
                "IX007",
                f"`## {sec.title}` is volatile session state, which belongs in a checkpoint, "
                "not the index: run `memls index migrate` to move it into one",
                sec.heading.title_range,
            )
    yield from _check_pointers(ctx)
    limit = _check_limits(ctx)
    if limit is not None:
        yield limit


_COMMENT_LINE = re.compile(r"^\s*<!--.*-->\s*$")


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
    rng = Range.line(start, min(len(line), 1000))
    eol = doc.eol
    msg = f"MEMORY.md does not start with a `# ` heading: add `# {DEFAULT_TITLE}` as line 1"
    if re.match(r"^#[^#\s]", line):
        edit = TextEdit(Range.point(start, 1), " ")
        return ctx.diag(
            "IX001",
            "MEMORY.md's first line lacks the space after `#`, so it is no heading: "
            "write `# ` at its start",
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
        name_range = _name_range(b)
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
        if item.indent or item.marker not in ("-", "*", "+") or not item.text.strip():
            continue
        if read_bullet(item) is None:
            yield ctx.diag(
                "IX004",
                "bullet is not in the `- **name** (branch, Mon DD HH:MM) — summary` form: "
                "resume cannot read it — rewrite it, or move it out of Active Checkpoints",
                item.text_range,
            )


def _name_range(b: Bullet) -> Range:
    start = b.item.text_range.start
    return Range.of(start.line, start.character + 2, start.line, start.character + 2 + len(b.name))


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
                block = eol * 2 + "## Active Checkpoints" + eol + bullet + eol * 2 + RESUME_LINE
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


def _check_pointers(ctx: RuleContext) -> Iterator[Diagnostic]:
    """IX009: pointers of the index that lead nowhere at all."""
    doc = ctx.doc
    resolver = ctx.workspace.links
    # An index of many pointers repeats its targets: each distinct one is resolved once,
    # and only when one leads nowhere are all the links made, to report each pointer to it.
    missing = {link_key(link) for link in distinct_links(doc) if resolver.resolve(link) is None}
    if not missing:
        return
    for link in extract_links(doc):
        if link_key(link) not in missing or not _reportable(ctx.workspace, link, doc):
            continue
        yield ctx.diag(
            "IX009",
            f"pointer to `{link.target}`, which exists nowhere (not beside {doc.name}, in the "
            "memory root or the repository): fix the path, create the file, or remove the "
            "pointer",
            link.range,
        )


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PLACEHOLDER = re.compile(
    r"(?i)kebab-case|snake_case|example|placeholder|your[-_]|xxx|yyyy|[-_]name\.md$|^name[-_]"
)
_POINTER_START = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\*\*)?`$")


def _reportable(ws: Workspace, link: Link, doc: Document | None = None) -> bool:
    """Whether a link that does not resolve is a finding (conservative for backtick paths)."""
    target = link.target
    if "\\" in target or _CONTROL.search(target):
        return False  # SZ005 reports it
    line = doc.line_text(link.line) if doc is not None else ""
    if link.kind in ("wikilink", "markdown") and _explains_syntax(link, line):
        return False  # `use the [[filename]] format`: an example of the syntax, no link
    if link.kind == "wikilink":
        return _norm_words(target) not in _SYNTAX_WORDS
    if _beyond_reach(ws, link, target):
        return False
    if link.kind in ("markdown", "reference"):
        return True
    if not target.casefold().endswith(".md") or target.startswith("~"):
        return False  # a home path is this machine's business, not the memory's
    if link.kind == "bullet":
        # `- NOW.md — what it holds` presents a pointer; `- NOW.md "lifeboat" file, an idea
        # from …` mentions a file name in prose.
        return doc is None or _presented_as_pointer(line, link)
    if _PLACEHOLDER.search(target.rsplit("/", 1)[-1]):
        return False  # `category/kebab-case-name.md`: a template, not a pointer
    # A backtick path is a pointer when it names a memory file (a bare name, or a path
    # under ``memory/``), or when its folder exists but the file does not; a template such
    # as `category/kebab-case-name.md` names a folder that exists nowhere either.
    parts = target.lstrip("./").split("/")
    leading = doc is not None and _POINTER_START.match(line[: link.start]) is not None
    if leading and not _presented_as_pointer(line, link):
        return False  # - `NOW.md` "lifeboat" file, …: a file name in prose
    if len(parts) == 1 or parts[0] == "memory" or ws.layout is Layout.WORKSPACE:
        return True  # an agent workspace's MEMORY.md names its files in backticks
    if leading:
        return True  # `- `path.md` — what it is`: a pointer bullet
    folder = "/".join(parts[:-1])
    bases = [link.source.parent, ws.root] + ([ws.repo_root] if ws.repo_root else [])
    return any(ws.links.exists(base / folder) for base in bases)


_SYNTAX_WORDS = frozenset({"wikilink", "wikilinks", "wiki link", "wiki links", "link", "links"})
"""`[[wikilinks]]` in prose mentions the syntax; it names no note."""
_PLACEHOLDER_NAMES = frozenset(
    {
        "filename",
        "file name",
        "file",
        "note",
        "note name",
        "notename",
        "page",
        "page name",
        "name",
        "title",
        "target",
        "path",
        "url",
        "slug",
        "topic",
        "something",
        "foo",
        "bar",
        "x",
    }
)
"""Targets that name a kind of thing, not a file: `[[filename]]`, `[text](url)`."""
_SYNTAX_TALK = re.compile(r"(?i)\b(?:syntax|format|formatted|notation|convention|wiki-?links?)\b")
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»"}


def _explains_syntax(link: Link, line: str) -> bool:
    """A link written as an example of the syntax: a placeholder target (``[[filename]]``,
    ``[text](url)``), a link in quotes, or a made-up target in a sentence about the format."""
    word = _norm_words(link.target.removesuffix(".md"))
    if word in _PLACEHOLDER_NAMES or _PLACEHOLDER.search(link.target.rsplit("/", 1)[-1]):
        return True
    if not line:
        return False
    open_at = line.rfind("[", 0, link.start)
    open_at = open_at - 1 if link.kind == "wikilink" and open_at > 0 else open_at
    close_at = line.find(")" if link.kind == "markdown" else "]]", link.end)
    if close_at != -1:
        close_at += 1 if link.kind == "markdown" else 2
    before = line[open_at - 1] if open_at > 0 else ""
    after = line[close_at] if 0 <= close_at < len(line) else ""
    if before in _QUOTES and after == _QUOTES[before]:
        return True  # "[[filename]]": quoted, as an example
    return link.kind == "wikilink" and _SYNTAX_TALK.search(line) is not None


_POINTER_AFTER = re.compile(r"^`?(?:\*\*)?\s*(?:$|[—–:(,;|→]|-{1,2}(?:\s|$)|->|\[)")


def _beyond_reach(ws: Workspace, link: Link, target: str) -> bool:
    """A path memls cannot judge from the repository: in the home folder (``~/…``, this
    machine's business), a site path with no file extension (``/automation/orders``), or a
    relative path that climbs out of the repository (``../../../plans/x.md`` from a copy of
    a home memory folder)."""
    if target.startswith("~"):
        return True
    if target.startswith("/"):
        return "." not in target.rsplit("/", 1)[-1]
    repo = ws.repo_root
    if repo is None or not target.startswith(".."):
        return False  # without a repository the path is on this machine: judged
    landed = os.path.normpath(os.path.join(str(link.source.parent), unquote(target)))
    if landed == str(repo) or landed.startswith(str(repo) + os.sep):
        return False
    # It leaves the repository. A copy of a home folder may come back in through a folder
    # the repository has (`../../../dotfiles/knowledge/x.md` → `knowledge/`): judged; a
    # folder the repository does not have (`../../../plans/`) is another machine's.
    parts = [p for p in unquote(target).split("/")[:-1] if p not in ("", ".", "..")]
    return not any((repo / "/".join(parts[i:])).is_dir() for i in range(len(parts)))


def _presented_as_pointer(line: str, link: Link) -> bool:
    """Whether a bullet's leading path is presented as a pointer: nothing after it, or a
    separator (`—`, `:`, `(` …) before what it is; a path followed by words is prose."""
    return _POINTER_AFTER.match(line[link.end :]) is not None


def _norm_words(text: str) -> str:
    return " ".join(re.split(r"[-_\s]+", text.strip().casefold()))


def _check_topic_links(ctx: RuleContext) -> Iterator[Diagnostic]:
    """IX012: Markdown links and wikilinks in a topic file that lead nowhere."""
    doc = ctx.doc
    resolver = ctx.workspace.links
    for link in extract_links(doc):
        if link.kind not in ("markdown", "reference", "wikilink"):
            continue
        if not _reportable(ctx.workspace, link, doc) or resolver.resolve(link) is not None:
            continue
        shown = f"[[{link.target}]]" if link.kind == "wikilink" else f"`{link.target}`"
        yield ctx.diag(
            "IX012",
            f"link to {shown}, which exists nowhere (not beside this file, in the memory root "
            "or the repository): fix the link, or create the file it names",
            link.range,
        )


def _check_unreferenced(ctx: RuleContext) -> Iterator[Diagnostic]:
    ws = ctx.workspace
    doc = ctx.doc
    if ws.layout is Layout.WORKSPACE or doc.path.parent.name == "transcripts":
        return  # an agent workspace's MEMORY.md is curated memory, not a pointer index
    if is_dated(doc.path) or is_conventional_doc(doc.path):
        return  # a daily log, or README.md / AGENTS.md: found by date or by name
    index = ws.index()
    if index is None:
        return
    reached = reachable(ws)
    if reached is None:
        return  # the index points at no file at all: it is not used as a pointer index
    if doc.path in reached:
        return
    rel = Path(os.path.relpath(doc.path, ws.index_path.parent)).as_posix()
    yield ctx.diag(
        "IX010",
        f"no link reaches {rel} (from {ws.index_path.name} or the topic files it links): add "
        f"a pointer (e.g. `- [{doc.path.stem}]({rel})`) so the memory is found, or delete "
        "the file",
        Range.line(0, min(len(doc.line_text(0)), 1000)),
    )


def reachable(ws: Workspace) -> frozenset[Path] | None:
    """Memory files reachable from the index through links (Markdown, wikilinks, bullets,
    backtick paths) of the index and of every file reached; None when the index links to
    no file at all. Computed once per workspace generation."""
    return ws.memo(_TARGETS_KEY, lambda: _reachable(ws))


def _reachable(ws: Workspace) -> frozenset[Path] | None:
    index = ws.index()
    if index is None:
        return None
    members = set(ws.paths())
    resolver = ws.links
    seen: set[Path] = {index.path}
    frontier = [index, *_agent_instructions(ws)]
    pointed = False
    stems: dict[str, list[Path]] | None = None
    while frontier:
        doc = frontier.pop()
        targets = [t for link in distinct_links(doc) if (t := resolver.resolve(link)) is not None]
        if doc is index and "`" in doc.text:  # the index lists `deploy-notes`, `p6a-*`
            if stems is None:
                stems = {}
                for p in members:
                    stems.setdefault(p.stem.casefold(), []).append(p)
            targets.extend(_named_by_stem(doc.text, stems))
        for target in targets:
            if doc is index and target != index.path and target in members:
                pointed = True
            if target in seen or target not in members:
                continue
            seen.add(target)
            nxt = ws.document(target)
            if nxt is not None:
                frontier.append(nxt)
    return frozenset(seen) if pointed else None


_STEM_SPAN = re.compile(r"`([\w*?-][\w.*?-]{1,80})`")
_STEM_RANGE = re.compile(r"`([\w-]{1,40})\*`\s*(?:…|\.\.\.?|–|—|to)\s*`([\w-]{1,40})\*`")


def _natural(text: str) -> list[str | int]:
    """``p6a-x`` < ``p11-y``: digits compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _named_by_stem(text: str, stems: dict[str, list[Path]]) -> list[Path]:
    """Files a text names in backticks by stem (`` `deploy-notes` ``) or by a glob of
    stems (`` `p6a-*` ``), as an index that lists its topic files by name does."""
    out: list[Path] = []
    for m in _STEM_RANGE.finditer(text):  # `p6a-*` … `p16-*`: the whole ladder between
        low, high = _natural(m.group(1).casefold()), _natural(m.group(2).casefold() + "\uffff")
        out.extend(
            p for stem, paths in stems.items() if low <= _natural(stem) <= high for p in paths
        )
    spans = (m.group(1).casefold().removesuffix(".md") for m in _STEM_SPAN.finditer(text))
    for token in dict.fromkeys(spans):
        if "*" in token or "?" in token:
            out.extend(p for stem, paths in stems.items() if fnmatch(stem, token) for p in paths)
        else:
            out.extend(stems.get(token, ()))
    return out


AGENT_INSTRUCTIONS = ("CLAUDE.md", "AGENTS.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
"""Files an agent loads by convention: a memory file they link is reachable too."""


def _agent_instructions(ws: Workspace) -> list[Document]:
    out: list[Document] = []
    bases = [ws.root] + ([ws.repo_root] if ws.repo_root is not None else [])
    for base in dict.fromkeys(bases):
        for rel in AGENT_INSTRUCTIONS:
            path = base / rel
            doc = ws.document(path) if ws.contains(path) else None
            if doc is None and path.is_file():
                try:
                    if path.stat().st_size <= 1_000_000:
                        doc = parse_file(path)
                except OSError:
                    doc = None
            if doc is not None:
                out.append(doc)
    return out


WORKSPACE_MAX_CHARS = 20_000
"""An agent workspace (OpenClaw) injects MEMORY.md up to this many characters per file."""


def _check_limits(ctx: RuleContext) -> Diagnostic | None:
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
    if ctx.doc.section("Active Checkpoints") is not None:
        return True
    return bool(ws.checkpoints())




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
