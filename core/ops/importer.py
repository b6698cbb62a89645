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
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memls.core.formats.checkpoint import (
    checkpoint_name,
    is_native_checkpoint,
    parse_saved_lenient,
    saved_stamp,
)
from memls.core.formats.index import bullet_line, bullet_stamp, bullets, set_bullet
from memls.core.fsutil import (
    atomic_delete,
    atomic_write,
    open_private,
    refuse_link,
    root_lock,
    state_dir,
    write_private,
)
from memls.core.handoff import normalize_title
from memls.core.model import Document, Section
from memls.core.ops import OpError, OpResult
from memls.core.ops._text import (
    checked_file,
    memory_index,
    read_text,
    refuse_oversize,
    require_config,
)
from memls.core.parse import parse_text
from memls.core.text import encode_lossless

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
    """The memls-format text of a foreign checkpoint (pure: no disk access).

    Every line is kept: the header lines before the first ``##`` (as Notes, the title as
    ``Imported from:``, Branch and the date as fields), each ``##`` section (mapped onto
    memls's or kept as it is) and whatever lies outside them (a ``# Appendix`` and its
    body, kept as it is, in order, after the Notes). Each kept line keeps its own line
    ending (a mixed file stays mixed; lines memls adds take the dominant one) and a BOM
    stays.
    """
    lines = list(doc.lines)
    cr = "\r" if doc.eol == "\r\n" else ""
    raw = doc.text.split("\n")  # each line with its own "\r", if it had one
    if raw and raw[-1] and not raw[-1].endswith("\r"):
        raw[-1] += cr  # the last line had no ending: it gets the file's
    if len(raw) < len(lines):  # cannot happen (both split on "\n"); keep indexes safe
        raw += [""] * (len(lines) - len(raw))
    level2 = [s for s in doc.sections if s.level == 2]
    first_h2 = level2[0].start_line if level2 else len(lines)
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
        header_notes.append(raw[ln])
    if saved is None and title is not None:
        saved = _when(title.title)
    saved = saved or mtime
    buckets: dict[str, list[str]] = {target: [] for target in SECTION_MAP}
    mapped: dict[str, list[str]] = {target: [] for target in SECTION_MAP}
    kept_blocks: list[list[str]] = []
    outside_at: int | None = None  # index in kept_blocks of the first block outside a ##
    kept: list[str] = []
    for sec, outside in _units(doc, level2, first_h2, len(lines)):
        if sec is None:  # lines after the first ## that no ## section holds (a # Appendix)
            block = _trim(raw[outside.start : outside.stop])
            if block:
                heading = next((h for h in doc.headings if h.line in outside), None)
                kept.append(heading.title if heading is not None else "(text between sections)")
                if outside_at is None:
                    outside_at = len(kept_blocks)
                kept_blocks.append(block)
            continue
        body = _trim(raw[sec.body_start : sec.end_line])
        target = _target(sec.title)
        if target is not None and not (target == "Done This Session" and mapped[target]):
            if mapped[target]:
                buckets[target].append(f"*{sec.title}:*{cr}")
            buckets[target].extend(body)
            mapped[target].append(sec.title)
        else:
            kept.append(sec.title)
            kept_blocks.append([raw[sec.start_line], *body])
    next_body = buckets["Next Action"]
    next_title = next((_ITEM.sub("", ln).strip() for ln in next_body if ln.strip()), "")
    next_title = next_title[:100].rstrip(":").strip() or "(none recorded in the original)"

    def new(*added: str) -> list[str]:
        return [line + cr for line in added]

    out = new(f"# Checkpoint: {name}", "")
    if branch:
        out += new(f"- **Branch:** `{branch}`")
    out += new(f"- **Saved:** {saved_stamp(saved)}", "")
    out += [*new(f"## Next Action: {next_title}"), *(next_body or new("(none recorded)")), cr]
    done = buckets["Done This Session"] or new("- (none recorded)")
    out += [*new("## Done This Session"), *done, cr]
    failed = buckets["Failed Approaches"] or new("- None recorded")
    out += [*new("## Failed Approaches"), *failed, cr]
    files = buckets["Modified Files"] or new("- (none recorded)")
    out += [*new("## Modified Files"), *files, cr]
    notes_block: list[str] = []
    notes = _trim(header_notes)
    if title is not None or notes:
        notes_block += new("## Notes")
        if title is not None:
            notes_block += new(f"Imported from: {title.title}")
        notes_block += [*notes, cr]
    # The Notes stay under the checkpoint's title: before a kept block with a # heading.
    at = outside_at if outside_at is not None else len(kept_blocks)
    for i, block in enumerate(kept_blocks):
        if i == at:
            out += notes_block
        out += [*block, cr]
    if at == len(kept_blocks):
        out += notes_block
    while out and not out[-1].strip():
        out.pop()
    text = "\n".join(out) + "\n"
    if doc.had_bom:
        text = "\ufeff" + text
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


def _units(
    doc: Document, level2: list[Section], first_h2: int, end: int
) -> Iterator[tuple[Section, range] | tuple[None, range]]:
    """From the first ``##`` on, in order: each ``##`` section, and each stretch of lines
    no ``##`` section holds (a ``#`` heading and its body up to the next ``##``)."""
    at = first_h2
    for sec in level2:
        if sec.start_line > at:
            yield None, range(at, sec.start_line)
        yield sec, range(sec.start_line, sec.end_line)
        at = max(at, sec.end_line)
    if at < end:
        yield None, range(at, end)


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


INTENT_FILE = ".memls/import-intent.json"
"""The bullets an import is about to add, written before its first checkpoint is rewritten
and removed once MEMORY.md has them: a run killed between the two leaves it, and the next
run adds the bullets its converted files (now in memls's format, so not converted again)
are still missing."""


def _read_intent(root: Path) -> dict[str, tuple[str, str]]:
    """name → (file name, bullet) of an interrupted import; empty when there is none (or it
    cannot be read: it only ever completes what a run already did)."""
    path = root / INTENT_FILE
    try:
        fd = open_private(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    try:
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read(1 << 22).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    found: dict[str, tuple[str, str]] = {}
    for entry in data.get("bullets", []) if isinstance(data, dict) else []:
        if isinstance(entry, dict) and all(
            isinstance(entry.get(k), str) for k in ("name", "file", "bullet")
        ):
            found[entry["name"]] = (entry["file"], entry["bullet"])
    return found


def _write_intent(root: Path, pending: dict[str, tuple[str, str]]) -> None:
    state_dir(root)
    entries = [{"name": n, "file": f, "bullet": b} for n, (f, b) in pending.items()]
    data = json.dumps({"bullets": entries}, ensure_ascii=False, indent=1) + "\n"
    write_private(root / INTENT_FILE, data.encode("utf-8"))


def _drop_intent(root: Path) -> None:
    path = root / INTENT_FILE
    if refuse_link(path) is not None:
        atomic_delete(path, root=root)


def import_checkpoints(
    root: Path,
    files: Iterable[Path] = (),
    *,
    dry_run: bool = False,
    index: bool = True,
) -> OpResult:
    """Convert the root's checkpoints in another format (or the given files) in place.

    A run killed before MEMORY.md got its bullets is completed by the next one: the
    bullets are recorded (:data:`INTENT_FILE`) before the first file is rewritten, and a
    converted file whose bullet is still missing gets it then.
    """
    root = root.resolve()
    require_config(root)
    chosen = [Path(f).resolve() for f in files]
    candidates = chosen or sorted(root.glob("checkpoint-*.md"))
    converted: list[Converted] = []
    skipped: list[str] = []
    finished: list[str] = []  # bullets an interrupted import left out, added now
    with root_lock(root):
        for path in candidates:
            name = checkpoint_name(path)
            if name is None or path.parent != root:
                raise OpError(f"{path} is not a checkpoint-NAME.md file of the root {root}")
            checked_file(root, path, "checkpoint")
            text = read_text(path)
            if text is None:
                if path.exists() or path.is_symlink():
                    raise OpError(
                        f"{path} is not a regular file (a FIFO, device or socket): "
                        "memls reads checkpoints from regular files only"
                    )
                raise OpError(f"{path} does not exist")
            refuse_oversize(path, text, "convert it")
            doc = parse_text(text, path)
            if is_native_checkpoint(doc):
                skipped.append(path.name)
                continue
            mtime = dt.datetime.fromtimestamp(path.stat().st_mtime).replace(second=0, microsecond=0)
            item = convert(doc, name, mtime)
            refuse_oversize(item.path, item.text, "convert it", would=True)
            converted.append(item)
        idx = memory_index(root)
        indexing = index and idx.is_file()
        pending = _read_intent(root) if indexing else {}
        wanted = {
            item.name: (
                item.path.name,
                bullet_line(
                    item.name, item.branch or "unknown", bullet_stamp(item.saved), item.next_title
                ),
            )
            for item in converted
        }
        current = read_text(idx) if indexing else None
        refuse_oversize(idx, current, "index the imported checkpoints")
        have = {b.name for b in bullets(parse_text(current, idx))} if current is not None else set()
        for name, (file_name, _bullet) in pending.items():
            if name not in wanted and name not in have and (root / file_name).is_file():
                finished.append(name)
        if not dry_run:
            if indexing and converted:
                _write_intent(root, {**pending, **wanted})
            for item in converted:
                atomic_write(item.path, encode_lossless(item.text), root=root)
            if current is not None:
                new: str = current
                for name in [*wanted, *finished]:
                    bullet = wanted[name][1] if name in wanted else pending[name][1]
                    new = set_bullet(new, idx, name, bullet)
                if new != current:
                    atomic_write(idx, encode_lossless(new), root=root)
            if pending or (indexing and converted):
                _drop_intent(root)
    verb = "Would convert" if dry_run else "Converted"
    lines = [f"{verb} {len(converted)} checkpoint file(s) to memls's format."]
    for item in converted:
        parts = [f"{k} ← {', '.join(v)}" for k, v in item.mapped.items()]
        if item.kept:
            parts.append(f"kept as they are: {', '.join(item.kept)}")
        lines.append(f"  {item.path.name}: " + ("; ".join(parts) or "no sections mapped"))
    if skipped:
        lines.append(f"Already in memls's format: {', '.join(skipped)}")
    if finished:
        verb_added = "Would add" if dry_run else "Added"
        lines.append(
            f"{verb_added} the MEMORY.md bullet an interrupted import left out: "
            + ", ".join(finished)
        )
    return OpResult(
        "\n".join(lines),
        changed=bool(converted or finished) and not dry_run,
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
            "finished": finished,
            "dry_run": dry_run,
        },
    )


__all__ = ["INTENT_FILE", "Converted", "convert", "import_checkpoints"]
