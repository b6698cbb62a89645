"""A ranked chunk as every search mode returns it (:class:`Hit`), and its snippet."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memls.core.recall.store import RecallStore

SNIPPET_CHARS = 200
WORD = re.compile(r"\w+", re.UNICODE)
"""A word of a query: what BM25 matches and what a snippet is centred on."""


@dataclass(frozen=True)
class Hit:
    """One ranked chunk from any mode (``rid`` is the chunk's row id)."""

    rid: int
    id: str
    score: float
    kind: str
    path: str
    start_line: int
    end_line: int
    heading: str | None
    snippet: str


def make_snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The chunk text around the first query word it contains (whitespace collapsed)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lowered = flat.casefold()
    positions = [lowered.find(w.casefold()) for w in WORD.findall(query)]
    hits = [p for p in positions if p >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


def hits_for(
    store: RecallStore, ranked: Sequence[tuple[int, float]], query: str, *, snippets: bool = True
) -> list[Hit]:
    """Fetch chunk metadata for ``(rid, score)`` pairs, keeping their order."""
    if not ranked:
        return []
    rids = [rid for rid, _ in ranked]
    marks = ",".join("?" for _ in rids)
    rows = {
        row[0]: row
        for row in store.db.execute(
            "select rid, id, kind, path, start_line, end_line, heading, text "
            f"from memls_chunks where rid in ({marks})",
            rids,
        ).fetchall()
    }
    hits: list[Hit] = []
    for rid, score in ranked:
        row = rows.get(rid)
        if row is None:
            continue
        hits.append(
            Hit(
                rid=rid,
                id=row[1],
                score=score,
                kind=row[2],
                path=row[3],
                start_line=row[4],
                end_line=row[5],
                heading=row[6],
                snippet=make_snippet(row[7], query) if snippets else "",
            )
        )
    return hits
