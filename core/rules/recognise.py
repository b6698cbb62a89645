"""What memls recognised in a root before judging it (for `memls check --verbose` and JSON).

The rules apply memls's format rules only to files in memls's format; this module says, in
one line each, what was found in another format and therefore read as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memls.core.formats.log import log_entries, log_order
from memls.core.handoff import is_journal, is_native_handoff
from memls.core.model import FileKind
from memls.core.rules import stale
from memls.core.rules.checkpoint import foreign_sessions, plan_checkpoints
from memls.core.rules.memoryfile import not_memory
from memls.core.workspace import RootKind, Workspace, handoff_has_state, is_dated, is_root


def recognised(ws: Workspace, files: Iterable[Path]) -> list[str]:
    """One line per finding of the form "what was recognised: what memls does with it"."""
    notes: list[str] = []
    foreign = foreign_sessions(ws)
    if foreign:
        notes.append(
            f"{len(foreign)} checkpoint file(s) in another format: checkpoint rules not "
            "applied (`memls checkpoint import` converts them)"
        )
    plans = plan_checkpoints(ws)
    if plans:
        notes.append(
            f"{len(plans)} checkpoint file(s) that are steps of a plan, not session records: "
            "not judged"
        )
    dated = 0
    for path in files:
        doc = ws.document(path)
        if doc is None:
            continue
        rel = _rel(ws.root, path)
        if doc.kind is FileKind.HANDOFF:
            extra = ws.config.handoff_synonyms
            if not handoff_has_state(doc.text):
                notes.append(
                    f"{rel}: named like a handoff, but no date, branch, commit or state "
                    "section: not judged as a handoff"
                )
                continue
            if stale.is_history(ws, doc):
                notes.append(
                    f"{rel}: kept as history (an archive folder, or a newer handoff "
                    "replaced it): its age and staleness are not judged"
                )
                continue
            if is_journal(doc):
                notes.append(f"{rel}: a running journal (dated entries): read as it is")
            elif not is_native_handoff(doc, extra):
                notes.append(
                    f"{rel}: a handoff in its own format: only empty sections, commands and "
                    "its age are checked"
                )
        elif doc.kind is FileKind.LOG:
            entries = log_entries(doc)
            if entries and sum(1 for e in entries if e.stamp is not None) * 2 < len(entries):
                notes.append(f"{rel}: not a dated journal: undated headings are not reported")
            order = log_order(doc)
            if order.newest_first:
                notes.append(
                    f"{rel}: newest first ({order.why}): entries are checked against that "
                    "order, and `memls log append` adds on top"
                )
        elif doc.kind is FileKind.INDEX and not doc.headings and doc.text.strip():
            notes.append(f"{rel}: a headingless pointer list (as Claude Code writes it)")
        elif doc.kind is FileKind.TOPIC and is_dated(path):
            dated += 1
        elif doc.kind is FileKind.TOPIC and (why := not_memory(ws, doc)) is not None:
            notes.append(f"{rel}: {why}: not judged as memory")
    if dated:
        notes.append(
            f"{dated} dated daily log(s): not expected to be linked or to carry frontmatter"
        )
    if ws.root_kind is RootKind.MEMORY and not is_root(ws.root):
        notes.append(
            "no MEMORY.md index, LOG.md or checkpoints: the notes are judged for their "
            "links, secrets, size and encoding only"
        )
    return notes


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


__all__ = ["recognised"]
