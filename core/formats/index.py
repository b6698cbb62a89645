"""The MEMORY.md index format: its title, ``## Active Checkpoints`` bullets, resume line and
the legacy volatile sections that belong in a checkpoint instead.

::

    # Project Memory

    ## Active Checkpoints
    - **{name}** ({branch}, Mon DD HH:MM) — {summary}

    Resume any: `continue` or `continue {name}`

The IX rules (:mod:`memls.core.rules.index`), the operations that write the section
(:mod:`memls.core.ops.checkpoint`, :mod:`memls.core.ops.index`), the workspace, the link
graph and the language server all read bullets with :func:`bullets`, and the writers here
rewrite only the Active Checkpoints section (or remove the legacy sections they are given):
all other lines keep their bytes.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.formats.checkpoint import CheckpointFacts
from memls.core.model import Document, ListItem, Range, Section
from memls.core.text import Lines, strip_blank_edges

INDEX_NAME = "MEMORY.md"
ACTIVE = "Active Checkpoints"
DEFAULT_TITLE = "Project Memory"
"""The ``# `` title a new index gets (and IX001's fix inserts)."""
RESUME_LINE = "Resume any: `continue` or `continue {name}`"
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# -- bullets -----------------------------------------------------------------
_BULLET_LOOSE = re.compile(
    r"^\*\*(?P<name>[^*]+)\*\*\s*"
    r"(?:\((?P<paren>[^()]*)\))?\s*"
    r"(?:(?P<sep>—|–|--|-|:)\s*(?P<summary>.*))?$"
)
_BULLET_NAMED = re.compile(r"^\*\*(?P<name>[^*]+)\*\*")
BULLET_STRICT = re.compile(
    r"^\*\*(?P<name>[^*\s][^*]*)\*\* \((?P<branch>[^,()\s][^,()]*), "
    r"(?P<date>(?:" + "|".join(MONTHS) + r") \d{1,2} \d{2}:\d{2})\) — (?P<summary>\S.*)$"
)
"""The canonical bullet's text (after the list marker): IX004 accepts it, and an operation
reads its summary."""
_DATE = re.compile(r"^(?P<mon>[A-Za-z]{3})\s+(?P<day>\d{1,2})\s+(?P<h>\d{1,2}):(?P<m>\d{2})$")


def format_bullet_date(month: int, day: int, hour: int, minute: int) -> str:
    """``Mon DD HH:MM`` with English month names, independent of the locale."""
    return f"{MONTHS[month - 1]} {day:02d} {hour:02d}:{minute:02d}"


def bullet_stamp(now: _dt.datetime) -> str:
    """``Mon DD HH:MM`` in English whatever the locale, as the index bullet wants."""
    return format_bullet_date(now.month, now.day, now.hour, now.minute)


def parse_bullet_date(text: str) -> tuple[int, int, int, int] | None:
    """(month, day, hour, minute) of a ``Mon D[D] HH:MM`` date, else ``None``."""
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


def bullet_line(name: str, branch: str, stamp: str, summary: str) -> str:
    """``- **{name}** ({branch}, {Mon DD HH:MM}) — {summary}`` with a one-line summary."""
    one_line = " ".join(summary.split()) or name
    return f"- **{name}** ({branch}, {stamp}) — {one_line}"


def bullet_for(facts: CheckpointFacts) -> str | None:
    """The canonical bullet for a checkpoint, or ``None`` when it lacks branch, date or summary."""
    if facts.branch is None or facts.saved is None or not facts.next_action:
        return None
    s = facts.saved
    date = format_bullet_date(s.month, s.day, s.hour, s.minute)
    return f"- **{facts.name}** ({facts.branch}, {date}) — {facts.next_action}"


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
    strict: bool  # in the canonical form (BULLET_STRICT, with a valid date)
    readable: bool  # the lenient pattern matched, so a rewrite keeps every part
    name_range: Range  # the name in the text, without the ``**``

    @property
    def line(self) -> int:
        return self.item.line

    @property
    def canonical_summary(self) -> str | None:
        """The summary of a bullet in the canonical form (what a save keeps), else None."""
        return self.summary if self.strict else None


def read_bullet(item: ListItem) -> Bullet | None:
    """A bullet starting with ``**name**``; ``None`` for other list items."""
    text = item.text
    named = _BULLET_NAMED.match(text)
    if named is None:
        return None
    raw_name = named["name"]
    name = raw_name.strip()
    start = item.text_range.start
    at = start.character + 2 + (len(raw_name) - len(raw_name.lstrip()))
    name_range = Range.of(start.line, at, start.line, at + len(name))
    m = _BULLET_LOOSE.match(text)
    if m is None:
        return Bullet(item, name, None, None, None, None, None, False, False, name_range)
    branch = date = date_text = None
    paren_range = None
    if m.group("paren") is not None:
        parts = m.group("paren").rsplit(",", 1)
        if len(parts) == 2:
            branch = parts[0].strip() or None
            date_text = parts[1].strip()
            date = parse_bullet_date(date_text)
        col = start.character
        line = item.line
        paren_range = Range.of(line, col + m.start("paren") - 1, line, col + m.end("paren") + 1)
    summary = (m.group("summary") or "").strip() or None
    return Bullet(
        item,
        name,
        branch,
        date,
        date_text,
        summary,
        paren_range,
        BULLET_STRICT.match(text) is not None and date is not None,
        m.group("paren") is None or (branch is not None and date is not None),
        name_range,
    )


def active_section(doc: Document) -> Section | None:
    """The first ``## Active Checkpoints`` section (resume and memls read only that one)."""
    return doc.section(ACTIVE)


def is_entry(item: ListItem) -> bool:
    """A top-level ``-``/``*``/``+`` item: where a checkpoint bullet can be."""
    return item.indent == 0 and item.marker in ("-", "*", "+")


def bullets(doc: Document, section: Section | None = None) -> list[Bullet]:
    """The named bullets (``- **name** …``, top level) of ``section``, by default of the
    index's Active Checkpoints — the one reading every reader of the index shares."""
    if section is None:
        section = active_section(doc)
        if section is None:
            return []
    out = []
    for item in doc.items_in(section):
        if is_entry(item):
            b = read_bullet(item)
            if b is not None:
                out.append(b)
    return out


# -- legacy volatile sections ------------------------------------------------
_VOLATILE = re.compile(
    r"^(?:current state|next action\b.*|session checkpoint|session\b.*\bsummary)$", re.IGNORECASE
)
"""Titles of the ``## `` sections older memory indexes kept session state in."""
_NEXT_ACTION = re.compile(r"^next action\b", re.IGNORECASE)


def is_legacy(section: Section) -> bool:
    """A volatile section that belongs in a checkpoint, not in the index: IX007 reports it
    and ``memls index migrate`` (or a save) moves it, by this one test."""
    return section.level == 2 and _VOLATILE.match(section.title.strip()) is not None


def legacy_sections(doc: Document) -> list[Section]:
    return [s for s in doc.sections if is_legacy(s)]


def is_legacy_next_action(heading: str) -> bool:
    """Whether a legacy section's heading line (``## Next Action …``) holds the next action."""
    return _NEXT_ACTION.match(heading.lstrip("#").strip()) is not None


# -- writers -----------------------------------------------------------------
_LINE_NAME = re.compile(r"^\s*[-*+]\s+\*\*(?P<name>[^*]+)\*\*")
_LIST_LINE = re.compile(r"^\s*[-*+]\s")


def _remove_range(lines: Lines, start: int, end: int) -> None:
    at_eof = end >= len(lines.raw)
    lines.replace(start, end, [])
    if at_eof:
        while lines.raw and not lines.raw[-1].strip():
            lines.raw.pop()
        lines.raw.append("")


def remove_sections(text: str, path: Path, sections: list[Section]) -> str:
    """``text`` without the given sections (heading to the next heading of its level)."""
    lines = Lines(text)
    for section in sorted(sections, key=lambda s: s.start_line, reverse=True):
        _remove_range(lines, section.start_line, section.end_line)
    return lines.text()


def set_bullet(text: str | None, path: Path, name: str, bullet: str | None) -> str:
    """Put (or, with ``bullet=None``, remove) the bullet for ``name`` in Active Checkpoints.

    Creates ``# Project Memory`` and/or the section (after the first heading and its
    introduction) when absent; removes the whole section when its last bullet goes.
    """
    title = f"# {DEFAULT_TITLE}"
    if text is None or not text.strip():
        if bullet is None:
            return text or ""
        return f"{title}\n\n## {ACTIVE}\n{bullet}\n\n{RESUME_LINE}\n"
    lines = Lines(text)
    doc = lines.doc(path)
    section = active_section(doc)
    if section is not None:
        _rewrite_section(lines, doc, section, name, bullet)
        return lines.text()
    if bullet is None:
        return text
    h1 = next((h for h in doc.headings if h.level == 1), None)
    if h1 is None:
        lines.replace(0, 0, [title, ""])
        h1_line = 0
        doc = lines.doc(path)
    else:
        h1_line = h1.line
    following = next((h.line for h in doc.headings if h.line > h1_line), None)
    block = [f"## {ACTIVE}", bullet, "", RESUME_LINE]
    if following is not None:
        at = following
        block.append("")
    else:
        at = len(lines.raw) - 1 if lines.raw[-1] == "" else len(lines.raw)
        if at == len(lines.raw):
            block.append("")
    if at > 0 and lines.plain(at - 1).strip():
        block.insert(0, "")
    lines.replace(at, at, block)
    return lines.text()


def _rewrite_section(
    lines: Lines, doc: Document, section: Section, name: str, bullet: str | None
) -> None:
    """Rewrite the section's leading list with ``name``'s bullet put, replaced or removed.

    A line is ``name``'s bullet when :func:`bullets` reads it as one, so the writer changes
    exactly the bullets every reader sees (a nested ``**x**`` item is no checkpoint's).
    """
    named = {b.line: b.name for b in bullets(doc, section)}
    entries: list[tuple[str | None, str]] = []
    others: list[str] = []
    for ln in range(section.body_start, section.end_line):
        text = lines.plain(ln)
        if text.startswith("Resume any:"):
            continue
        if _LINE_NAME.match(text) and not others:
            entries.append((named.get(ln), text))
        elif _LIST_LINE.match(text) and not others:
            entries.append((None, text))
        elif text.strip() or others:
            others.append(text)
    new_entries: list[str] = []
    placed = False
    for key, text in entries:
        if key == name:
            if bullet is not None and not placed:
                new_entries.append(bullet)
            placed = True
        else:
            new_entries.append(text)
    if bullet is not None and not placed:
        new_entries.append(bullet)
    others = strip_blank_edges(others)
    if not new_entries and not others:
        _remove_range(lines, section.start_line, section.end_line)
        return
    heading = lines.plain(section.start_line)
    block = [heading, *new_entries, "", RESUME_LINE]
    if others:
        block += ["", *others]
    block.append("")
    lines.replace(section.start_line, section.end_line, block)
