"""The typed, immutable document model every rule, operation and front works on.

Parsing never fails: a ``Document`` always comes back, with ``problems`` for what could
not be read cleanly. All ranges are 0-based, end-exclusive, in code points.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple


class Position(NamedTuple):
    """A 0-based (line, character) position; a tuple, so it orders and hashes cheaply."""

    line: int
    character: int


class Range(NamedTuple):
    start: Position
    end: Position

    @classmethod
    def of(cls, line: int, start_char: int, end_line: int, end_char: int) -> Range:
        return cls(Position(line, start_char), Position(end_line, end_char))

    @classmethod
    def line(cls, line: int, length: int) -> Range:
        """The whole text of one line."""
        return cls(Position(line, 0), Position(line, length))

    @classmethod
    def point(cls, line: int, character: int = 0) -> Range:
        return cls(Position(line, character), Position(line, character))

    def contains(self, pos: Position) -> bool:
        return self.start <= pos <= self.end


@dataclass(frozen=True, slots=True)
class TextEdit:
    range: Range
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A safe, mechanical repair: text edits to the file the diagnostic is in."""

    title: str
    edits: tuple[TextEdit, ...]


class Severity(enum.IntEnum):
    """Ordered like LSP's DiagnosticSeverity so the front can convert by value."""

    ERROR = 1
    WARNING = 2
    INFO = 3
    HINT = 4

    @classmethod
    def parse(cls, name: str) -> Severity:
        return cls[name.strip().upper()]

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    path: Path
    range: Range
    fix: Fix | None = None


class FileKind(enum.Enum):
    CHECKPOINT = "checkpoint"
    INDEX = "index"
    TOPIC = "topic"
    HANDOFF = "handoff"
    LOG = "log"
    IDENTITY = "identity"
    TRANSCRIPT = "transcript"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    title: str  # text after the hashes, trailing closing hashes removed
    line: int
    title_range: Range


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the lines that belong to it (up to the next heading of the same or higher level)."""

    heading: Heading
    start_line: int  # the heading's line
    end_line: int  # first line after the section (exclusive)

    @property
    def level(self) -> int:
        return self.heading.level

    @property
    def title(self) -> str:
        return self.heading.title

    @property
    def body_start(self) -> int:
        return self.start_line + 1


@dataclass(frozen=True, slots=True)
class Field:
    """A ``- **Name:** value`` line (Branch, Saved, Plan …)."""

    name: str
    value: str  # stripped, surrounding backticks removed
    raw_value: str
    line: int
    range: Range  # the whole line
    value_range: Range


class ListItem:
    """A list or task item: ``text`` is what follows the marker (and the task box, if any);
    ``checked`` is None when the item is not a task.

    Immutable. ``text`` and ``text_range`` are made on use from the line the item is on (a
    reference, not a copy): an index of 400,000 bullets holds 400,000 items, and a copy of
    each text plus a range of three tuples per item doubled the memory a parse needs
    (issue 15, item 5). Compares, hashes and prints like the dataclass it replaces."""

    __slots__ = ("_end", "_source", "_start", "checked", "indent", "line", "marker")

    line: int
    indent: int
    marker: str
    checked: bool | None
    _source: str
    _start: int
    _end: int

    def __init__(
        self,
        line: int,
        indent: int,
        marker: str,
        source: str,
        start: int,
        end: int,
        checked: bool | None,
    ) -> None:
        """``source`` is the item's line; the text is ``source[start:end]``."""
        setter = object.__setattr__
        setter(self, "line", line)
        setter(self, "indent", indent)
        setter(self, "marker", marker)
        setter(self, "_source", source)
        setter(self, "_start", start)
        setter(self, "_end", end)
        setter(self, "checked", checked)

    @property
    def text(self) -> str:
        return self._source[self._start : self._end]

    @property
    def text_start(self) -> int:
        """The column ``text`` starts at."""
        return self._start

    @property
    def text_range(self) -> Range:
        return Range(Position(self.line, self._start), Position(self.line, self._end))

    def _key(self) -> tuple[int, int, str, str, int, int, bool | None]:
        return (
            self.line,
            self.indent,
            self.marker,
            self.text,
            self._start,
            self._end,
            self.checked,
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ListItem is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ListItem is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ListItem):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"ListItem(line={self.line!r}, indent={self.indent!r}, marker={self.marker!r}, "
            f"text={self.text!r}, text_range={self.text_range!r}, checked={self.checked!r})"
        )

    def __reduce__(self) -> tuple[type[ListItem], tuple[int, int, str, str, int, int, bool | None]]:
        return (
            ListItem,
            (
                self.line,
                self.indent,
                self.marker,
                self._source,
                self._start,
                self._end,
                self.checked,
            ),
        )


@dataclass(frozen=True, slots=True)
class FrontmatterEntry:
    key: str
    value: str | list[str]
    line: int
    range: Range


@dataclass(frozen=True, slots=True)
class Frontmatter:
    entries: tuple[FrontmatterEntry, ...]
    start_line: int  # the opening ---
    end_line: int  # the closing --- (or last line when unterminated)
    terminated: bool

    def get(self, key: str) -> FrontmatterEntry | None:
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None


@dataclass(frozen=True, slots=True)
class Suppressions:
    """Inline ``memls-disable`` comments. An empty code set means every code."""

    file_codes: frozenset[str] = frozenset()
    file_all: bool = False
    next_line: tuple[tuple[int, frozenset[str]], ...] = ()

    def suppresses(self, code: str, line: int) -> bool:
        if self.file_all or code in self.file_codes:
            return True
        return self.suppresses_next_line(code, line)

    def suppresses_next_line(self, code: str, line: int) -> bool:
        """Only a ``memls-disable-next-line`` comment on the line before silences it."""
        if not self.next_line:
            return False
        return any(
            target == line and (not codes or code in codes) for target, codes in self.next_line
        )


@dataclass(frozen=True, slots=True)
class Problem:
    """Something the parser noticed while reading (e.g. invalid UTF-8); becomes a diagnostic."""

    code: str
    message: str
    range: Range


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed memory file. Its links to other files are not part of it: they are read by
    the link format, :func:`memls.core.formats.links.extract_links` (cached in ``extra``)."""

    path: Path
    kind: FileKind
    text: str
    lines: tuple[str, ...]
    headings: tuple[Heading, ...]
    sections: tuple[Section, ...]
    fields: tuple[Field, ...]
    items: tuple[ListItem, ...]
    fences: tuple[tuple[int, int], ...]  # (first line, last line) of code blocks
    html_blocks: tuple[tuple[int, int], ...]  # (first line, last line) of HTML blocks
    frontmatter: Frontmatter | None
    suppressions: Suppressions
    problems: tuple[Problem, ...]
    byte_size: int
    had_bom: bool = False
    eol: str = "\n"
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        return self.path.name

    def line_text(self, line: int) -> str:
        return self.lines[line] if 0 <= line < len(self.lines) else ""

    def sections_at(self, level: int) -> tuple[Section, ...]:
        return tuple(s for s in self.sections if s.level == level)

    def section(self, *titles: str, level: int | None = 2, prefix: bool = False) -> Section | None:
        """First section whose title matches one of ``titles`` (case-insensitive)."""
        wanted = tuple(t.casefold() for t in titles)
        for sec in self.sections:
            if level is not None and sec.level != level:
                continue
            title = sec.title.casefold()
            if title in wanted or (prefix and any(title.startswith(w) for w in wanted)):
                return sec
        return None

    def items_in(self, section: Section) -> tuple[ListItem, ...]:
        return tuple(i for i in self.items if section.body_start <= i.line < section.end_line)

    def fields_in(self, start: int, end: int) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if start <= f.line < end)

    def field(self, name: str) -> Field | None:
        """A header field: the first with this name before the first ``## `` section."""
        limit = next((s.start_line for s in self.sections if s.level >= 2), len(self.lines))
        for f in self.fields:
            if f.line >= limit:
                break
            if f.name.casefold() == name.casefold():
                return f
        return None

    def body_lines(self, section: Section) -> list[str]:
        return list(self.lines[section.body_start : section.end_line])

    def is_blank_section(self, section: Section) -> bool:
        return not any(
            ln.strip() and not ln.strip().startswith("<!--") for ln in self.body_lines(section)
        )

    def in_fence(self, line: int) -> bool:
        return any(a <= line <= b for a, b in self.fences)
