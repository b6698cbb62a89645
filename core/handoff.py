"""The handoff's section vocabulary (§2 of the spec), shared by the HO rules and the writer.

A handoff is a continuity prompt for the next agent state, not a summary; its sections are
matched case-insensitively and by synonym, so hand-written handoffs in the published
variants are read the same way as the ones memls writes.
"""

from __future__ import annotations

import re

from memls.core.model import Document, Section

HANDOFF_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Current State", ("Current Objective", "Status")),
    ("Decisions", ("Decisions Made",)),
    ("Open Work", ("Open Threads", "Open Questions")),
    ("Verified Commands", ("Verified",)),
    ("Non-Claims", ("Not Verified", "Untested")),
    ("Drift / Risk Flags", ("Risks", "Drift")),
    ("Next Steps", ("Next-Step Guidance", "Immediate Next Actions")),
)
"""(canonical name, synonyms), in the order a handoff presents them."""

RECENT_TAIL = "RECENT TAIL (since rich handoff)"
"""The optional, mechanically refreshed last section."""

SECTION_HINTS: dict[str, str] = {
    "Current State": "what is true right now: objective, branch, what works and what does not",
    "Decisions": "decisions made and why, so the next agent does not reopen them",
    "Open Work": "unfinished threads and open questions",
    "Verified Commands": "commands that were run and passed, each in `code` so it can be re-run",
    "Non-Claims": "what has NOT been verified or tested; do not claim it works",
    "Drift / Risk Flags": "drift from the plan, risks, things that look wrong",
    "Next Steps": "the first concrete actions for the next agent",
}
"""One-line guidance the skeleton of each section carries as an HTML comment."""

_NUMBERING = re.compile(r"^\s*\d{1,3}[.)]\s*")
_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalize_title(title: str) -> str:
    """``"2. Drift/Risk  flags:"`` → ``"drift risk flags"``: the form headings are compared in."""
    title = _NUMBERING.sub("", title.casefold())
    return _NON_WORD.sub(" ", title).strip()


_CANONICAL_BY_KEY: dict[str, str] = {
    normalize_title(alias): canonical
    for canonical, synonyms in HANDOFF_SECTIONS
    for alias in (canonical, *synonyms)
}


def canonical_section(title: str) -> str | None:
    """The canonical handoff section a heading title stands for, if any."""
    return _CANONICAL_BY_KEY.get(normalize_title(title))


def find_handoff_section(doc: Document, canonical: str) -> Section | None:
    """The first section (any level below the title, level 2 preferred) for ``canonical``."""
    best: Section | None = None
    for sec in doc.sections:
        if sec.level < 2 or canonical_section(sec.title) != canonical:
            continue
        if sec.level == 2:
            return sec
        if best is None:
            best = sec
    return best


def find_recent_tail(doc: Document) -> Section | None:
    """The optional ``## RECENT TAIL (since rich handoff)`` section."""
    for sec in doc.sections:
        if sec.level == 2 and normalize_title(sec.title).startswith("recent tail"):
            return sec
    return None


def section_skeleton(canonical: str, eol: str = "\n") -> str:
    """The text of an empty section for ``canonical``: heading, guidance comment, blank line."""
    hint = SECTION_HINTS.get(canonical, "")
    body = f"<!-- {hint} -->{eol}" if hint else ""
    return f"## {canonical}{eol}{eol}{body}{eol}"


__all__ = [
    "HANDOFF_SECTIONS",
    "RECENT_TAIL",
    "SECTION_HINTS",
    "canonical_section",
    "find_handoff_section",
    "find_recent_tail",
    "normalize_title",
    "section_skeleton",
]
