"""The ``## Active Checkpoints`` part of MEMORY.md, and migrating legacy volatile sections.

Every function here rewrites only the Active Checkpoints section (or removes the legacy
sections it is asked to move); all other lines keep their bytes. The caller holds the
root lock around read, edit and write.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from memls.core.gitfacade import Git
from memls.core.model import Document, Section
from memls.core.ops import OpResult
from memls.core.ops._text import (
    Lines,
    memory_index,
    read_text,
    refuse_oversize,
    require_config,
    strip_blank_edges,
)

ACTIVE = "Active Checkpoints"
DEFAULT_TITLE = "# Project Memory"
RESUME_LINE = "Resume any: `continue` or `continue {name}`"
_BULLET_NAME = re.compile(r"^\s*[-*+]\s+\*\*(?P<name>[^*]+)\*\*")
BULLET = re.compile(
    r"^- \*\*(?P<name>[^*]+)\*\* \((?P<branch>[^,()]*), "
    r"(?P<when>[A-Z][a-z]{2} \d{2} \d{2}:\d{2})\) — (?P<summary>.*)$"
)
_LIST_LINE = re.compile(r"^\s*[-*+]\s")
_LEGACY_EXACT = {"current state", "session checkpoint"}
_LEGACY_SESSION = re.compile(r"^session\b.*\bsummary$")


def bullet_line(name: str, branch: str, stamp: str, summary: str) -> str:
    """``- **{name}** ({branch}, {Mon DD HH:MM}) — {summary}`` with a one-line summary."""
    one_line = " ".join(summary.split()) or name
    return f"- **{name}** ({branch}, {stamp}) — {one_line}"


@dataclass(frozen=True)
class Bullet:
    name: str
    line: int  # raw line number in MEMORY.md
    text: str
    summary: str | None  # None when the bullet is not in the canonical form


def bullets(doc: Document) -> list[Bullet]:
    """The named bullets of ``## Active Checkpoints`` (any list marker)."""
    section = doc.section(ACTIVE)
    if section is None:
        return []
    out = []
    for ln in range(section.body_start, section.end_line):
        text = doc.line_text(ln)
        m = _BULLET_NAME.match(text)
        if m:
            full = BULLET.match(text.strip())
            out.append(
                Bullet(m.group("name").strip(), ln, text, full.group("summary") if full else None)
            )
    return out


def is_legacy(section: Section) -> bool:
    """A volatile section that belongs in a checkpoint, not in the index (IX007)."""
    if section.level != 2:
        return False
    title = section.title.casefold().strip()
    return (
        title in _LEGACY_EXACT
        or title == "next action"
        or title.startswith("next action:")
        or bool(_LEGACY_SESSION.match(title))
    )


def legacy_sections(doc: Document) -> list[Section]:
    return [s for s in doc.sections if is_legacy(s)]


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
    if text is None or not text.strip():
        if bullet is None:
            return text or ""
        return f"{DEFAULT_TITLE}\n\n## {ACTIVE}\n{bullet}\n\n{RESUME_LINE}\n"
    lines = Lines(text)
    doc = lines.doc(path)
    section = doc.section(ACTIVE)
    if section is not None:
        _rewrite_section(lines, section, name, bullet)
        return lines.text()
    if bullet is None:
        return text
    h1 = next((h for h in doc.headings if h.level == 1), None)
    if h1 is None:
        lines.replace(0, 0, [DEFAULT_TITLE, ""])
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


def _rewrite_section(lines: Lines, section: Section, name: str, bullet: str | None) -> None:
    entries: list[tuple[str | None, str]] = []
    others: list[str] = []
    for ln in range(section.body_start, section.end_line):
        text = lines.plain(ln)
        m = _BULLET_NAME.match(text)
        if text.startswith("Resume any:"):
            continue
        if m and not others:
            entries.append((m.group("name").strip(), text))
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


def migrate_index(
    root: Path,
    name: str | None = None,
    *,
    now: dt.datetime | None = None,
    git: Git | None = None,
) -> OpResult:
    """Move MEMORY.md's legacy volatile sections into a checkpoint (the save procedure's first run)."""
    from memls.core.ops.checkpoint import default_name, save_checkpoint

    root = root.resolve()
    require_config(root)
    path = memory_index(root)
    text = read_text(path)
    refuse_oversize(path, text, "migrate its sections")
    legacy = legacy_sections(Lines(text).doc(path)) if text is not None else []
    if not legacy:
        return OpResult(
            f"Nothing to migrate: {path.name} has no legacy volatile sections.",
            changed=False,
            data={"migrated": []},
        )
    if name is None:
        name = default_name(git or Git(root)) or "migrated"
    return save_checkpoint(root, name, now=now, git=git)
