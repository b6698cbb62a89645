"""The LOG.md format: append-only history, one dated ``## YYYY-MM-DD HH:MM — title`` entry
per event, growing at the end (oldest first, memls's default) or on top (newest first, as the
log declares near its top or as most of its entries do).

``log append`` (:mod:`memls.core.ops.log`) writes entries where the log grows and the LG
rules (:mod:`memls.core.rules.log`) check them; both read the entries and the order here.
"""

from __future__ import annotations

import datetime as _dt
import functools
import itertools
import re
from dataclasses import dataclass

from memls.core.bundle import is_bundle_section
from memls.core.model import Document, Range

LOG_NAME = "LOG.md"
LOG_TITLE = "# Log"
"""The first line of a LOG.md that ``log append`` creates."""


def entry_heading(stamp: str, title: str) -> str:
    """``## {YYYY-MM-DD HH:MM} — {title}``: the heading of an entry ``log append`` writes."""
    return f"## {stamp} — {title}"


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


_FILLER = (
    r"(?:\s+(?:entry|entries|ones?|items?|sessions?|changes?|notes?|is|are|go(?:es)?|comes?|"
    r"always|added|written|placed|appear|appears))*\s*"
)
_ORDER_WORDS = (
    "newest",
    "latest",
    "recent",
    "new entr",
    "newer entr",
    "reverse",
    "prepend",
    "oldest",
    "chronolog",
    "append",
)


@functools.cache
def _order_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(newest first, oldest first) declarations; compiled on first use (16 ms)."""
    newest = re.compile(
        r"(?i)\b(?:newest|latest|most[- ]recent|new(?:er)? (?:entry|entries))"
        + _FILLER
        + r"(?:first|on top|at (?:the )?top|above)\b"
        + r"|\breverse[- ]chronolog|\bprepend(?:ed)? (?:new )?entries"
    )
    oldest = re.compile(
        r"(?i)\boldest" + _FILLER + r"(?:first|on top|at (?:the )?top)\b"
        r"|\b(?:newest|latest|most[- ]recent|new(?:er)? (?:entry|entries))"
        + _FILLER
        + r"(?:last|at the (?:bottom|end)|at (?:the )?bottom|below)\b"
        + r"|\bappend(?:ed)?(?: new)?(?: entries)? (?:at|to) the (?:end|bottom)\b"
        + r"|(?<!reverse )(?<!reverse-)\bchronological(?:ly)?\b(?! *reverse)"
    )
    return newest, oldest


@dataclass(frozen=True, slots=True)
class LogOrder:
    """Which way a LOG grows, as the log itself says."""

    newest_first: bool
    declared_line: int | None  # the line that says so (0-based), None when read from entries
    why: str  # "line 3 says so", "as 12 of 14 entries are", "memls's default"
    clear: bool = True
    """False when the entries themselves disagree (neither way holds two thirds of the
    ordered pairs): the log keeps no one order, so no entry is out of it."""

    @property
    def name(self) -> str:
        return "newest first" if self.newest_first else "oldest first"


def declared_order(doc: Document) -> tuple[bool, int] | None:
    """(newest first?, line) when the text before the first dated entry (a preamble, or an
    undated "how to use" section) says how the log is ordered."""
    first = first_entry_line(doc)
    for ln in range(min(len(doc.lines) if first is None else first, 40)):
        if doc.in_fence(ln):
            continue
        line = doc.lines[ln]
        folded = line.casefold()
        if not any(word in folded for word in _ORDER_WORDS):
            continue
        newest, oldest = _order_patterns()
        if newest.search(line):
            return True, ln
        if oldest.search(line):
            return False, ln
    return None


_UNCLEAR_MIN_PAIRS = 6
"""A log's entries can disagree on its order only when there are this many ordered pairs:
fewer, and the majority (or memls's default) stands."""


def log_order(doc: Document) -> LogOrder:
    """The log's order: declared near the top, else what most of its dated entries do
    (oldest first, memls's own, when they do not tell)."""
    cached = doc.extra.get("memls.lg.order")
    if isinstance(cached, LogOrder):
        return cached
    declared = declared_order(doc)
    if declared is not None:
        order = LogOrder(declared[0], declared[1], f"line {declared[1] + 1} says so")
    else:
        stamps = [e.stamp for e in log_entries(doc) if e.stamp is not None]
        up = sum(1 for a, b in itertools.pairwise(stamps) if a.before(b))
        down = sum(1 for a, b in itertools.pairwise(stamps) if b.before(a))
        clear = up + down < _UNCLEAR_MIN_PAIRS or 3 * max(up, down) >= 2 * (up + down)
        if down > up:
            why = f"as {down} of {down + up} ordered pairs of entries are"
            order = LogOrder(True, None, why, clear)
        elif up:
            why = f"as {up} of {down + up} ordered pairs of entries are"
            order = LogOrder(False, None, why, clear)
        else:
            order = LogOrder(False, None, "memls's default")
    doc.extra["memls.lg.order"] = order
    return order


def first_entry_line(doc: Document) -> int | None:
    """The line of the first dated entry heading, else of the first entry: where a
    newest-first log grows (above its newest entry, below any undated preamble section)."""
    entries = log_entries(doc)
    first = next((e.line for e in entries if e.stamp is not None), None)
    return first if first is not None else next((e.line for e in entries), None)
