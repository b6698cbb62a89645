"""LG: LOG.md is append-only history, one dated ``## `` entry per event, oldest first."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterator
from dataclasses import dataclass

from memls.core.bundle import is_bundle_section
from memls.core.model import Diagnostic, Document, FileKind, Range, Severity
from memls.core.rules import Rule, RuleContext

RULES = (
    Rule(
        "LG001",
        "log-not-append-only",
        Severity.ERROR,
        "LOG.md not append-only: text that existed in the last committed version was changed or removed",
    ),
    Rule(
        "LG002",
        "log-entry-date",
        Severity.WARNING,
        "LOG entry heading without a date (in a LOG whose entries are mostly dated), or "
        "entries out of chronological order",
    ),
)

DATE_RE = re.compile(
    r"(?<!\d)(?P<date>\d{4}-\d{2}-\d{2})(?:[ T]+(?P<time>\d{1,2}:\d{2})(?::\d{2})?)?(?!\d)"
)


@dataclass(frozen=True, slots=True)
class Stamp:
    """A date with an optional time; compared at day precision when either lacks a time."""

    when: _dt.datetime
    has_time: bool

    def before(self, other: Stamp) -> bool:
        if self.has_time and other.has_time:
            return self.when < other.when
        return self.when.date() < other.when.date()


def find_stamp(text: str) -> tuple[Stamp, int, int] | None:
    """The first valid ``YYYY-MM-DD[ HH:MM]`` in ``text``, with its start and end offsets."""
    for m in DATE_RE.finditer(text):
        try:
            day = _dt.datetime.strptime(m.group("date"), "%Y-%m-%d")
        except ValueError:
            continue
        time = m.group("time")
        if time:
            hh, mm = (int(x) for x in time.split(":"))
            if hh < 24 and mm < 60:
                return Stamp(day.replace(hour=hh, minute=mm), True), m.start(), m.end()
        return Stamp(day, False), m.start(), m.start("date") + 10
    return None


@dataclass(frozen=True, slots=True)
class LogEntry:
    line: int
    title: str
    stamp: Stamp | None
    range: Range  # the date in the heading, else the heading title


def log_entries(doc: Document) -> list[LogEntry]:
    """The ``## `` entries of a LOG (bundle sections inside entries are not entries)."""
    out: list[LogEntry] = []
    for sec in doc.sections:
        if sec.level != 2 or is_bundle_section(sec):
            continue
        h = sec.heading
        found = find_stamp(h.title)
        if found is None:
            out.append(LogEntry(h.line, h.title, None, h.title_range))
            continue
        stamp, a, b = found
        col = h.title_range.start.character
        out.append(LogEntry(h.line, h.title, stamp, Range.of(h.line, col + a, h.line, col + b)))
    return out


def newest_entry(doc: Document) -> LogEntry | None:
    """The entry with the latest date (the last one on ties)."""
    best: LogEntry | None = None
    for entry in log_entries(doc):
        if entry.stamp is None:
            continue
        if best is None or best.stamp is None or not entry.stamp.before(best.stamp):
            best = entry
    return best


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    doc = ctx.doc
    if doc.kind is not FileKind.LOG:
        return
    diag = _append_only(ctx)
    if diag is not None:
        yield diag
    latest: LogEntry | None = None
    entries = log_entries(doc)
    dated = sum(1 for e in entries if e.stamp is not None)
    journal = dated * 2 >= len(entries)  # a numbered review document is not a dated journal
    for entry in entries:
        if entry.stamp is None and not journal:
            continue
        if entry.stamp is None:
            yield ctx.diag(
                "LG002",
                f"LOG entry '{entry.title}' has no valid date: start the heading with "
                "`YYYY-MM-DD HH:MM — title` so the history can be ordered",
                entry.range,
            )
            continue
        if latest is not None and latest.stamp is not None and entry.stamp.before(latest.stamp):
            yield ctx.diag(
                "LG002",
                f"LOG entry dated {_show(entry.stamp)} comes after one dated "
                f"{_show(latest.stamp)} (line {latest.line + 1}): LOG.md is oldest first — "
                "append new entries at the end and check this entry's date",
                entry.range,
            )
            continue
        latest = entry


def _show(stamp: Stamp) -> str:
    return stamp.when.strftime("%Y-%m-%d %H:%M" if stamp.has_time else "%Y-%m-%d")


def _normalize(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


_PLACEHOLDER = re.compile(
    r"<[^<>\n]{1,80}: keep it in \.env or a secret manager, not in memory>"
    r"|\n\(private key removed: keep it in ~/\.ssh or your secret manager, not in memory\)\n"
)


def _without_secrets(text: str) -> str:
    """The text with each secret, and each placeholder SC's fix wrote, as one mark."""
    from memls.core.secrets import find_secrets

    parts: list[str] = []
    last = 0
    for secret in find_secrets(text):
        parts.append(text[last : secret.start])
        parts.append("\x00secret\x00")
        last = secret.end
    parts.append(text[last:])
    return _PLACEHOLDER.sub("\x00secret\x00", "".join(parts))


def _append_only(ctx: RuleContext) -> Diagnostic | None:
    """LG001: the committed LOG must be a prefix of the current one."""
    doc = ctx.doc
    committed = ctx.workspace.git.committed_text(doc.path)
    if committed is None:
        return None
    before = _normalize(committed).rstrip()
    now = _normalize(doc.text)
    if now.startswith(before):
        return None
    if _without_secrets(now).startswith(_without_secrets(before).rstrip()):
        return None  # only secrets were replaced (SC's fix): the history is otherwise intact
    old_lines = before.split("\n")
    new_lines = now.split("\n")
    line = len(old_lines)
    for i, old in enumerate(old_lines):
        new = new_lines[i] if i < len(new_lines) else None
        last = i == len(old_lines) - 1
        if new is None or (new.rstrip() != old.rstrip() if last else new != old):
            line = i
            break
    removed = line >= len(new_lines) or (line == len(new_lines) - 1 and not new_lines[line])
    line = max(0, min(line, len(doc.lines) - 1))
    what = "removed" if removed else "changed"
    return ctx.diag(
        "LG001",
        f"LOG.md is append-only, but committed text was {what} at line {line + 1}: "
        f"restore the last committed version (`git diff -- {doc.name}` shows what changed) "
        "and record corrections as a new entry at the end",
        Range.line(line, len(doc.line_text(line))),
    )
