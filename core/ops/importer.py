"""`memls checkpoint import`: convert checkpoints written by another tool into memls's format.

CP050 names them ("19 checkpoint files in another format"); this rewrites each in place,
atomically, as ``# Checkpoint: {name}`` with Branch and Saved fields and memls's four
sections, and adds its bullet to MEMORY.md's Active Checkpoints. Nothing is dropped: a
section that maps to one of memls's keeps its body there, every other section and header
line is kept verbatim under its own heading after them, and the original title is kept
as the first line of ``## Notes``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memls.core.fsutil import atomic_write, root_lock
from memls.core.handoff import normalize_title
from memls.core.model import Document
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import (
    bullet_stamp,
    checked_file,
    encode,
    memory_index,
    read_text,
    require_config,
    saved_stamp,
)
from memls.core.ops.index import bullet_line, set_bullet
from memls.core.parse import parse_text
from memls.core.rules.checkpoint import is_native_checkpoint, parse_saved_lenient
from memls.core.workspace import checkpoint_name

SECTION_MAP: dict[str, tuple[str, ...]] = {
    "Done This Session": (
        "completed work",
        "completed",
        "done",
        "work completed",
        "what was done",
        "what was completed",
        "what was implemented",
        "what was built",
        "what shipped",
        "work shipped",
        "shipped",
        "accomplished",
        "accomplishments",
        "progress",
        "changes",
        "session summary",
        "summary",
    ),
    "Next Action": (
        "next steps",
        "next step",
        "next session tasks",
        "next session",
        "next actions",
        "next",
        "what remains",
        "remaining",
        "todo",
        "to do",
        "immediate next steps",
        "how to continue",
        "next pickup",
        "next phase",
    ),
    "Failed Approaches": (
        "failed approaches",
        "failed",
        "what didn t work",
        "what did not work",
        "dead ends",
        "failed paths",
        "gotchas",
    ),
    "Modified Files": (
        "files modified",
        "modified files",
        "files changed",
        "changed files",
        "files touched",
        "files created modified",
        "files modified created",
        "files",
    ),
}
_BY_KEY = {key: target for target, keys in SECTION_MAP.items() for key in keys}
_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?\*\*(?P<name>[^*:\n]{1,30}):\*\*\s*(?P<value>.*)$")
_DATE_NAMES = ("saved", "date", "updated", "created", "timestamp", "time", "when")
_BRANCH_IN_TEXT = re.compile(r"\bbranch\s+`(?P<branch>[^`\s]+)`", re.IGNORECASE)
_DAY = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}))?")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass
class Converted:
    """One imported checkpoint: its new text and what was mapped where."""

    path: Path
    name: str
    text: str
    branch: str | None
    saved: dt.datetime
    next_title: str
    mapped: dict[str, list[str]] = field(default_factory=dict)  # memls section ← original ones
    kept: list[str] = field(default_factory=list)  # original sections kept as they are


def convert(doc: Document, name: str, mtime: dt.datetime) -> Converted:
    """The memls-format text of a foreign checkpoint (pure: no disk access)."""
    lines = list(doc.lines)
    first_h2 = next((s.start_line for s in doc.sections if s.level == 2), len(lines))
    title = next((h for h in doc.headings if h.level == 1 and h.line < first_h2), None)
    branch: str | None = None
    saved: dt.datetime | None = None
    header_notes: list[str] = []
    for ln in range(first_h2):
        if title is not None and ln == title.line:
            continue
        line = lines[ln]
        label = _LABEL.match(line)
        if label is not None:
            key = label.group("name").strip().casefold()
            value = label.group("value").strip().strip("`").strip()
            if key == "branch" and value and branch is None:
                branch = value
                continue
            if key in _DATE_NAMES and saved is None:
                saved = _when(value)
                if saved is not None:
                    continue
        if branch is None and (m := _BRANCH_IN_TEXT.search(line)):
            branch = m.group("branch")
        header_notes.append(line)
    if saved is None and title is not None:
        saved = _when(title.title)
    saved = saved or mtime
    buckets: dict[str, list[str]] = {target: [] for target in SECTION_MAP}
    mapped: dict[str, list[str]] = {target: [] for target in SECTION_MAP}
    kept_blocks: list[list[str]] = []
    kept: list[str] = []
    for sec in doc.sections:
        if sec.level != 2:
            continue
        body = _trim(lines[sec.body_start : sec.end_line])
        target = _target(sec.title)
        if target is not None and not (target == "Done This Session" and mapped[target]):
            if mapped[target]:
                buckets[target].append(f"*{sec.title}:*")
            buckets[target].extend(body)
            mapped[target].append(sec.title)
        else:
            kept.append(sec.title)
            kept_blocks.append([lines[sec.start_line], *body])
    next_body = buckets["Next Action"]
    next_title = next((_ITEM.sub("", ln).strip() for ln in next_body if ln.strip()), "")
    next_title = next_title[:100].rstrip(":").strip() or "(none recorded in the original)"
    out = [f"# Checkpoint: {name}", ""]
    if branch:
        out.append(f"- **Branch:** `{branch}`")
    out += [f"- **Saved:** {saved_stamp(saved)}", ""]
    out += [f"## Next Action: {next_title}", *(next_body or ["(none recorded)"]), ""]
    out += ["## Done This Session", *(buckets["Done This Session"] or ["- (none recorded)"]), ""]
    out += ["## Failed Approaches", *(buckets["Failed Approaches"] or ["- None recorded"]), ""]
    out += ["## Modified Files", *(buckets["Modified Files"] or ["- (none recorded)"]), ""]
    for block in kept_blocks:
        out += [*block, ""]
    notes = _trim(header_notes)
    if title is not None or notes:
        out.append("## Notes")
        if title is not None:
            out.append(f"Imported from: {title.title}")
        out += notes
        out.append("")
    text = "\n".join(out).rstrip("\n") + "\n"
    if doc.eol != "\n":
        text = text.replace("\n", doc.eol)
    return Converted(
        doc.path,
        name,
        text,
        branch,
        saved,
        next_title,
        {k: v for k, v in mapped.items() if v},
        kept,
    )


def _target(title: str) -> str | None:
    """The memls section an original heading maps to: exact, else its longest leading key
    (``Next Phase: Phase 4`` → Next Action, ``Files Modified/Created`` → Modified Files)."""
    key = normalize_title(title)
    found = _BY_KEY.get(key)
    if found is not None:
        return found
    best = max((k for k in _BY_KEY if key.startswith(k + " ")), key=len, default=None)
    return _BY_KEY[best] if best is not None else None


def _when(text: str) -> dt.datetime | None:
    value = text.strip()
    found = parse_saved_lenient(value)
    if found is not None:
        return found
    m = _DAY.search(value)
    if m is None:
        return None
    try:
        day = dt.datetime.strptime(m.group(1), "%Y-%m-%d")
        if m.group(2):
            hour, minute = (int(x) for x in m.group(2).split(":"))
            day = day.replace(hour=hour, minute=minute)
        return day
    except ValueError:
        return None


def _trim(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def import_checkpoints(
    root: Path,
    files: Iterable[Path] = (),
    *,
    dry_run: bool = False,
    index: bool = True,
) -> OpResult:
    """Convert the root's checkpoints in another format (or the given files) in place."""
    root = root.resolve()
    require_config(root)
    chosen = [Path(f).resolve() for f in files]
    candidates = chosen or sorted(root.glob("checkpoint-*.md"))
    converted: list[Converted] = []
    skipped: list[str] = []
    with root_lock(root):
        for path in candidates:
            name = checkpoint_name(path)
            if name is None or path.parent != root:
                raise OpError(f"{path} is not a checkpoint-NAME.md file of the root {root}")
            checked_file(root, path, "checkpoint")
            text = read_text(path)
            if text is None:
                raise OpError(f"{path} does not exist")
            doc = parse_text(text, path)
            if is_native_checkpoint(doc):
                skipped.append(path.name)
                continue
            mtime = dt.datetime.fromtimestamp(path.stat().st_mtime).replace(second=0, microsecond=0)
            converted.append(convert(doc, name, mtime))
        if not dry_run:
            for item in converted:
                atomic_write(item.path, encode(item.text), root=root)
            idx = memory_index(root)
            if index and converted and idx.is_file():
                current = read_text(idx)
                new = current
                for item in converted:
                    bullet = bullet_line(
                        item.name,
                        item.branch or "unknown",
                        bullet_stamp(item.saved),
                        item.next_title,
                    )
                    new = set_bullet(new, idx, item.name, bullet)
                if new is not None and new != current:
                    atomic_write(idx, encode(new), root=root)
    verb = "Would convert" if dry_run else "Converted"
    lines = [f"{verb} {len(converted)} checkpoint file(s) to memls's format."]
    for item in converted:
        parts = [f"{k} ← {', '.join(v)}" for k, v in item.mapped.items()]
        if item.kept:
            parts.append(f"kept as they are: {', '.join(item.kept)}")
        lines.append(f"  {item.path.name}: " + ("; ".join(parts) or "no sections mapped"))
    if skipped:
        lines.append(f"Already in memls's format: {', '.join(skipped)}")
    return OpResult(
        "\n".join(lines),
        changed=bool(converted) and not dry_run,
        paths=tuple(item.path for item in converted),
        data={
            "converted": [
                {
                    "path": str(item.path),
                    "name": item.name,
                    "branch": item.branch,
                    "saved": saved_stamp(item.saved),
                    "mapped": item.mapped,
                    "kept": item.kept,
                }
                for item in converted
            ],
            "skipped": skipped,
            "dry_run": dry_run,
        },
    )


__all__ = ["Converted", "convert", "import_checkpoints"]
