"""The handoff's section vocabulary (§2 of the spec), shared by the HO rules and the writer.

A handoff is a continuity prompt for the next agent state, not a summary; its sections are
matched case-insensitively and by synonym, so hand-written handoffs in the published
variants are read the same way as the ones memls writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memls.core.model import Document, Section

HANDOFF_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Current State",
        (
            "Current Objective",
            "Status",
            "Current Status",
            "State",
            "Where Things Stand",
            "Where We Are",
            "Committed State",
            "Aktueller Stand",
            "État actuel",
            "Estado actual",
            "当前状态",
            "现状",
        ),
    ),
    ("Decisions", ("Decisions Made", "Key Decisions", "Design Decisions", "Decision Log", "决策")),
    (
        "Open Work",
        (
            "Open Threads",
            "Open Questions",
            "Open Items",
            "Open",
            "Remaining",
            "Remaining Work",
            "What Remains",
            "Backlog",
            "In Progress",
            "Pending",
            "Outstanding",
            "Todo",
            "Known Issues",
            "Blockers",
            "Questions / Blockers",
            "Offene Punkte",
            "未完成的工作",
            "待办",
        ),
    ),
    ("Verified Commands", ("Verified", "Verification", "Commands Run", "Tests Run")),
    ("Non-Claims", ("Not Verified", "Untested", "Unverified", "Not Tested", "Known Gaps")),
    (
        "Drift / Risk Flags",
        ("Risks", "Drift", "Risk Flags", "Gotchas", "Failed Paths", "Failed Paths / Gotchas"),
    ),
    (
        "Next Steps",
        (
            "Next-Step Guidance",
            "Immediate Next Actions",
            "Immediate Next Steps",
            "Next",
            "Next Actions",
            "Next Action",
            "Next Session",
            "Next Session Tasks",
            "Next-Agent Starting Position",
            "Starting Position",
            "How to Continue",
            "What's Next",
            "Resume Here",
            "Nächste Schritte",
            "Prochaines étapes",
            "Próximos pasos",
            "下一步",
        ),
    ),
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
_NON_WORD = re.compile(r"[\W_]+")
_TRAILER = re.compile(r"\s*(?:\([^()]*\)|[-–—:]\s.*|\d{4}-\d{2}-\d{2}.*)$")


def normalize_title(title: str) -> str:
    """``"2. Drift/Risk  flags:"`` → ``"drift risk flags"``: the form headings are compared in
    (letters of every script kept; emoji and punctuation dropped)."""
    title = _NUMBERING.sub("", title.casefold().replace("’", "'").replace("'", ""))
    return _NON_WORD.sub(" ", title).strip()


_CANONICAL_BY_KEY: dict[str, str] = {
    normalize_title(alias): canonical
    for canonical, synonyms in HANDOFF_SECTIONS
    for alias in (canonical, *synonyms)
}


def canonical_section(title: str, extra: Mapping[str, tuple[str, ...]] | None = None) -> str | None:
    """The canonical handoff section a heading title stands for, if any.

    ``extra`` adds synonyms (``handoff_synonyms`` in memls.toml). A trailing date,
    parenthesis or `` — comment`` is ignored: ``## Current State (2026-08-12)``.
    """
    table = _CANONICAL_BY_KEY
    if extra:
        table = dict(table)
        for canonical, names in extra.items():
            for name in names:
                table[normalize_title(name)] = canonical
    found = table.get(normalize_title(title))
    if found is None:
        trimmed = _TRAILER.sub("", title.strip())
        if trimmed and trimmed != title.strip():
            found = table.get(normalize_title(trimmed))
    return found


def _exact_section(title: str) -> str | None:
    """The protocol section a title names word for word (no synonyms), if any."""
    key = normalize_title(_TRAILER.sub("", title.strip()) or title)
    return next((name for name in _PROTOCOL if normalize_title(name) == key), None)


def find_handoff_section(
    doc: Document, canonical: str, extra: Mapping[str, tuple[str, ...]] | None = None
) -> Section | None:
    """The first section (any level below the title, level 2 preferred) for ``canonical``."""
    best: Section | None = None
    for sec in doc.sections:
        if sec.level < 2 or canonical_section(sec.title, extra) != canonical:
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


_PROTOCOL = ("Verified Commands", "Non-Claims")
_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
_ENTRY_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?\**(?:status|next)\**\s*:", re.IGNORECASE)


def is_native_handoff(doc: Document, extra: Mapping[str, tuple[str, ...]] | None = None) -> bool:
    """Whether a handoff follows memls's protocol, so missing sections are findings.

    memls's handoff is recognised by the sections only its protocol has (Verified
    Commands, Non-Claims, and the canonical "Drift / Risk Flags"), by a RECENT TAIL, or
    by the `# Handoff` title with an `Updated:` stamp memls writes. A handoff with its own
    headings (Backlog, Next Session, 未完成的工作 …) is someone else's format: fine as it is.
    """
    if find_recent_tail(doc) is not None:
        return True
    # `.handoff.md` is memls's own file: a synonym (Verification → Verified Commands) counts;
    # another handoff (HANDOFF.md, PHASE3_HANDOFF.md) follows the protocol only by its titles.
    own = doc.path.name == ".handoff.md"
    # Only the handoff's own top sections: a "### Verified Commands" under another format's
    # "## Examples Verified" is that format's sub-heading, not memls's section.
    top = min((s.level for s in doc.sections if s.level >= 2), default=2)
    for sec in doc.sections:
        if sec.level != top:
            continue
        named = canonical_section(sec.title, extra) if own else _exact_section(sec.title)
        if named in _PROTOCOL:
            return True
        if normalize_title(sec.title) == "drift risk flags":
            return True
    title = next((h.title for h in doc.headings if h.level == 1), "")
    return normalize_title(title) == "handoff" and doc.field("Updated") is not None


def is_journal(doc: Document) -> bool:
    """A handoff kept as a running journal: most ``## `` entries carry a date, or each
    entry has its own ``STATUS:`` / ``NEXT:`` lines."""
    entries = [s for s in doc.sections if s.level == 2]
    if len(entries) < 3:
        return False
    dated = sum(1 for s in entries if _DATE.search(s.title))
    if dated * 2 > len(entries):
        return True
    with_fields = 0
    for sec in entries:
        body = doc.lines[sec.body_start : sec.end_line]
        if sum(1 for ln in body if _ENTRY_FIELD.match(ln)) >= 1:
            with_fields += 1
    return with_fields * 2 > len(entries)


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
    "is_journal",
    "is_native_handoff",
    "normalize_title",
    "section_skeleton",
]
