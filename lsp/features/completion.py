"""Completions (§7): section headings the file kind still lacks, branch names after
``Branch:``, checkpoint names in Active Checkpoints bullets and after ``continue ``, bundle
item kinds, memory file paths in pointers, ``Saved:`` now, ``[Title](path)`` links after
``[`` and heading anchors after ``file.md#`` (or ``[[name#``)."""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

from lsprotocol import types

from memls.core.bundle import BUNDLE_TITLE, STEP_TEMPLATES, STEPS
from memls.core.formats.checkpoint import REQUIRED_SECTIONS, checkpoint_facts, saved_stamp
from memls.core.formats.index import ACTIVE, active_section, bullet_line, bullet_stamp
from memls.core.graph import file_title, slug
from memls.core.handoff import HANDOFF_SECTIONS, canonical_section
from memls.core.model import Document, FileKind, Position, Range, Section
from memls.core.parse import kind_for
from memls.core.workspace import Workspace
from memls.lsp.convert import PositionCodec
from memls.lsp.features import LanguageFeature

TRIGGER_CHARACTERS = ("#", " ", "*", "(", "`", "]", "/", "[")

_HEADING = re.compile(r"^#{1,2}(?:\s+(?P<title>.*))?$|^#$")
_FIELD = re.compile(r"^\s*[-*+]\s+\*\*(?P<name>Branch|Saved):\*\*[ \t]*(?P<value>`?[^`]*)$", re.I)
_BULLET = re.compile(r"^\s*[-*+]\s+(?:\*\*)?(?P<partial>[\w.-]*)$")
_CONTINUE = re.compile(r"\bcontinue\s+`?(?P<partial>[\w.-]*)$")
_TASK = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s*(?P<partial>\w*)$")
_POINTER = re.compile(r"(?:\]\(|`)(?P<partial>[^`()\s]*)$")
_ANCHOR = re.compile(
    r"(?:\]\(\s*<?(?P<path>[^()\s#<>]*)|\[\[(?P<wiki>[^\[\]|#\n]*))#(?P<partial>[^()\s\]#]*)$"
)
_OPEN_LINK = re.compile(r"(?<![\[\]!\\])\[(?P<partial>[^\[\]()`]*)$")


class Completion(LanguageFeature):
    async def completion(self, params: types.CompletionParams) -> types.CompletionList:
        def compute() -> list[types.CompletionItem]:
            found = self.locate(params.text_document.uri)
            if found is None:
                return []
            ws, doc = found
            codec = self.server.codec
            pos = codec.from_lsp(params.position, doc.lines)
            return complete(ws, doc, pos, self.server.memory.now(), codec)

        items = await self.server.memory.run(compute)
        return types.CompletionList(is_incomplete=False, items=items)


def complete(
    ws: Workspace, doc: Document, pos: Position, now: _dt.datetime, codec: PositionCodec
) -> list[types.CompletionItem]:
    """Completion items for ``pos`` (core coordinates)."""
    line = doc.line_text(pos.line)
    prefix = line[: pos.character]
    if doc.in_fence(pos.line):
        return []

    def replacing(start: int) -> types.Range:
        return codec.range_to_lsp(Range.of(pos.line, start, pos.line, pos.character), doc.lines)

    if _HEADING.match(prefix):
        return [
            _item(label, types.CompletionItemKind.Module, replacing(0), f"## {text}", detail)
            for label, text, detail in missing_sections(ws, doc, now)
        ]
    if m := _FIELD.match(prefix):
        start = m.start("value")
        if m.group("name").casefold() == "saved":
            stamp = saved_stamp(now)
            return [_item(stamp, types.CompletionItemKind.Value, replacing(start), stamp, "now")]
        return [
            _item(name, types.CompletionItemKind.Reference, replacing(start), f"`{name}`", where)
            for name, where in branch_names(ws)
        ]
    section = _section_at(doc, pos.line)
    title = section.title.casefold() if section else ""
    if m := _CONTINUE.search(prefix):
        start = m.start("partial")
        return [
            _item(
                name, types.CompletionItemKind.File, replacing(start), name, f"checkpoint-{name}.md"
            )
            for name in sorted(ws.checkpoints())
        ]
    if title == BUNDLE_TITLE.casefold() and (m := _TASK.match(prefix)):
        start = m.start("partial")
        return [
            _item(
                kind,
                types.CompletionItemKind.Enum,
                replacing(start),
                STEP_TEMPLATES[kind],
                "bundle step",
            )
            for kind in STEPS
        ]
    if (
        doc.kind is FileKind.INDEX
        and title == "active checkpoints"
        and (m := _BULLET.match(prefix))
    ):
        start = m.start("partial") - (2 if prefix[: m.start("partial")].endswith("**") else 0)
        return [
            _item(name, types.CompletionItemKind.File, replacing(start), text, "checkpoint bullet")
            for name, text in checkpoint_bullets(ws)
        ]
    if m := _ANCHOR.search(prefix):
        target = anchor_file(ws, doc, m.group("path"), m.group("wiki"))
        start = m.start("partial")
        return [
            _item(title, types.CompletionItemKind.Reference, replacing(start), anchor, where)
            for title, anchor, where in heading_anchors(ws, target)
        ]
    if m := _OPEN_LINK.search(prefix):
        start = m.start()
        end = pos.character + (1 if line[pos.character : pos.character + 1] == "]" else 0)
        rng = codec.range_to_lsp(Range.of(pos.line, start, pos.line, end), doc.lines)
        return [
            _item(title, types.CompletionItemKind.File, rng, f"[{title}]({rel})", rel)
            for title, rel in link_choices(ws, doc)
        ]
    if m := _POINTER.search(prefix):
        start = m.start("partial")
        return [
            _item(rel, types.CompletionItemKind.File, replacing(start), rel, "memory file")
            for rel in pointer_paths(ws, doc)
        ]
    return []


def _item(
    label: str, kind: types.CompletionItemKind, rng: types.Range, text: str, detail: str
) -> types.CompletionItem:
    return types.CompletionItem(
        label=label,
        kind=kind,
        detail=detail,
        filter_text=text,
        text_edit=types.TextEdit(range=rng, new_text=text),
    )


def _section_at(doc: Document, line: int) -> Section | None:
    found: Section | None = None
    for section in doc.sections:
        if section.start_line <= line < section.end_line and section.level >= 2:
            found = section
    return found


def missing_sections(ws: Workspace, doc: Document, now: _dt.datetime) -> list[tuple[str, str, str]]:
    """(label, heading text, detail) for each section the file kind wants and lacks."""
    out: list[tuple[str, str, str]] = []
    if doc.kind is FileKind.CHECKPOINT:
        for title, accepted, prefix in REQUIRED_SECTIONS:
            if doc.section(*accepted, prefix=prefix) is None:
                text = f"{title}: " if prefix else title
                out.append((title, text, "required checkpoint section"))
        if doc.section(BUNDLE_TITLE) is None:
            out.append((BUNDLE_TITLE, BUNDLE_TITLE, "optional: the governed synthesis step"))
    elif doc.kind is FileKind.HANDOFF:
        present = {canonical_section(s.title) for s in doc.sections}
        out.extend(
            (name, name, "handoff section") for name, _ in HANDOFF_SECTIONS if name not in present
        )
    elif doc.kind is FileKind.INDEX:
        if active_section(doc) is None:
            out.append((ACTIVE, ACTIVE, "one bullet per checkpoint"))
        if doc.section("Memory Files") is None:
            out.append(("Memory Files", "Memory Files", "pointers to topic files"))
    elif doc.kind is FileKind.LOG:
        stamp = saved_stamp(now)
        out.append((f"{stamp} — entry", f"{stamp} — ", "new log entry (append at the end)"))
    return out


def branch_names(ws: Workspace) -> list[tuple[str, str]]:
    branches = ws.git.branches()
    if branches is None:
        return []
    current = ws.git.current_branch()
    names = [
        (b, "current branch" if b == current else "local branch") for b in sorted(branches.local)
    ]
    names += [(b, "remote branch") for b in sorted(branches.remote - branches.local)]
    names.sort(key=lambda n: n[1] != "current branch")
    return names


def checkpoint_bullets(ws: Workspace) -> list[tuple[str, str]]:
    """Checkpoints without a bullet yet, with the whole bullet text from their file."""
    listed = {e.name for e in ws.index_entries()}
    out: list[tuple[str, str]] = []
    for name, path in sorted(ws.checkpoints().items()):
        if name in listed:
            continue
        doc = ws.document(path)
        facts = checkpoint_facts(doc, name) if doc is not None else None
        branch = (facts.branch if facts else None) or "no-branch"
        saved = facts.saved if facts else None
        stamp = bullet_stamp(saved) if saved else "?"
        summary = (facts.next_action if facts else None) or name
        out.append((name, bullet_line(name, branch, stamp, summary).removeprefix("- ")))
    return out


def pointer_paths(ws: Workspace, doc: Document) -> list[str]:
    """Memory files relative to the document's folder (POSIX), the document itself left out."""
    base = doc.path.parent
    out = []
    for path in ws.paths():
        if path == doc.path:
            continue
        out.append(Path(os.path.relpath(path, base)).as_posix())
    return sorted(out)


def anchor_file(ws: Workspace, doc: Document, path: str | None, wiki: str | None) -> Path | None:
    """The memory file a ``path#`` or ``[[name#`` being typed names (``#`` alone: this file)."""
    known = set(ws.paths())
    if wiki is not None:
        stem = wiki.strip()
        stem = stem[:-3] if stem.casefold().endswith(".md") else stem
        key = stem.rsplit("/", 1)[-1].casefold()
        return next((p for p in sorted(known) if p.stem.casefold() == key), None)
    if not path:
        return doc.path
    for base in (doc.path.parent, ws.root):
        candidate = Path(os.path.normpath(base / path))
        if candidate in known:
            return candidate
    return None


def heading_anchors(ws: Workspace, path: Path | None) -> list[tuple[str, str, str]]:
    """(heading title, anchor, detail) for each heading of ``path``."""
    if path is None:
        return []
    target = ws.document(path)
    if target is None:
        return []
    return [
        (h.title, slug(h.title), f"{'#' * h.level} heading in {path.name}")
        for h in target.headings
        if h.title
    ]


def link_choices(ws: Workspace, doc: Document) -> list[tuple[str, str]]:
    """(title, relative path) of every other memory file, for ``[Title](path)``."""
    base = doc.path.parent
    out = []
    for path in ws.paths():
        if path == doc.path or kind_for(path) is FileKind.TRANSCRIPT:
            continue
        target = ws.document(path)
        title = file_title(target) if target is not None else None
        label = title.title if title is not None and title.title else path.stem
        out.append((label, Path(os.path.relpath(path, base)).as_posix()))
    return sorted(out, key=lambda item: (item[1].count("/"), item[0].casefold()))
