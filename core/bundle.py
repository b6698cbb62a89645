"""``## Checkpoint Bundle`` sections: the approval stamp and the five governed steps.

A pure reader over a parsed :class:`Document`; the BN rules judge the result and the
bundle operations (approve, status) edit the lines it points at.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from memls.core.model import Document, ListItem, Range, Section

STEPS: tuple[str, ...] = ("memory", "index", "log", "transcript", "recall")
"""The five steps of a complete bundle, in the order the spec lists them."""

STEP_TEMPLATES: dict[str, str] = {
    "memory": "memory: approved memory file writes/updates",
    "index": "index: approved MEMORY.md index updates",
    "log": "log: approved LOG.md append",
    "transcript": "transcript: archive + backfill session",
    "recall": "recall: verify `memls recall verify`",
}
"""Default item text for a step (after ``- [ ] ``), used when adding a missing step."""

BUNDLE_TITLE = "Checkpoint Bundle"

_APPROVED = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?approved(?:\*\*)?\s*:\s*(?:\*\*)?\s*(?P<value>.*?)\s*$",
    re.IGNORECASE,
)
_BOX = re.compile(r"\[[ xX]\]")


@dataclass(frozen=True, slots=True)
class BundleItem:
    kind: str  # one of STEPS, or "other"
    text: str  # the item text after the task box
    checked: bool
    line: int
    range: Range  # the item text
    box: Range  # the ``[ ]`` / ``[x]`` box, for toggling


@dataclass(frozen=True, slots=True)
class Bundle:
    approved: str | None  # the stamp's value ("" when the line is there but empty)
    approved_line: int | None
    items: tuple[BundleItem, ...]
    section: Section

    def step(self, kind: str) -> BundleItem | None:
        """The first item for a step."""
        return next((i for i in self.items if i.kind == kind), None)

    def open_items(self) -> tuple[BundleItem, ...]:
        return tuple(i for i in self.items if not i.checked)


def item_kind(text: str) -> str:
    """The step an item belongs to, from the words before its first colon."""
    head, sep, _ = text.partition(":")
    if not sep:
        return "other"
    word = re.sub(r"[`*_]", "", head).strip().casefold()
    for kind in STEPS:
        if word.startswith(kind):
            return kind
    return "other"


def is_bundle_section(section: Section) -> bool:
    return section.level >= 2 and section.title.strip().casefold().startswith("checkpoint bundle")


def parse_bundle(doc: Document, section: Section) -> Bundle:
    """Read the stamp and task items of one bundle section (never raises)."""
    approved: str | None = None
    approved_line: int | None = None
    end = min(section.end_line, len(doc.lines))
    for ln in range(section.body_start, end):
        if doc.in_fence(ln):
            continue
        m = _APPROVED.match(doc.lines[ln])
        if m:
            approved = m.group("value").strip().strip("*").strip()
            approved_line = ln
            break
    items: list[BundleItem] = []
    for item in _items_between(doc, section.body_start, section.end_line):
        if item.checked is None or item.line == approved_line:
            continue
        line = doc.line_text(item.line)
        box_at = _BOX.search(line, 0, item.text_range.start.character)
        start = box_at.start() if box_at else item.text_range.start.character
        box = Range.of(item.line, start, item.line, start + 3 if box_at else start)
        items.append(
            BundleItem(
                item_kind(item.text), item.text, item.checked, item.line, item.text_range, box
            )
        )
    return Bundle(approved, approved_line, tuple(items), section)


def _items_between(doc: Document, start: int, end: int) -> list[ListItem]:
    """Items on lines [start, end): a bisection, since a LOG may hold thousands of bundles."""
    items = doc.items
    i = bisect_left(items, start, key=lambda it: it.line)
    out: list[ListItem] = []
    while i < len(items) and items[i].line < end:
        out.append(items[i])
        i += 1
    return out


def find_bundles(doc: Document) -> list[Bundle]:
    """Every ``## Checkpoint Bundle`` section of a document (a LOG may hold one per entry)."""
    return [parse_bundle(doc, s) for s in doc.sections if is_bundle_section(s)]


def items_end_line(doc: Document, bundle: Bundle) -> int:
    """The line after the bundle's last item or stamp (where a new item goes)."""
    last = bundle.section.start_line
    if bundle.approved_line is not None:
        last = max(last, bundle.approved_line)
    for item in bundle.items:
        last = max(last, item.line)
    return last + 1


__all__ = [
    "BUNDLE_TITLE",
    "STEPS",
    "STEP_TEMPLATES",
    "Bundle",
    "BundleItem",
    "find_bundles",
    "is_bundle_section",
    "item_kind",
    "items_end_line",
    "parse_bundle",
]
