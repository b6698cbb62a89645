"""Full-text search: FTS5 BM25 over the query's words, its snippets and message lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memls.core.recall.filters import NO_FILTERS, Filters, path_matcher
from memls.core.recall.hits import WORD, Hit, make_snippet
from memls.core.recall.ranking import MERGE_LINES

if TYPE_CHECKING:
    from memls.core.recall.store import RecallStore


BM25_WEIGHTS = (1.0, 2.0, 0.5, 0.7)
"""BM25 column weights: chunk text, heading, path, and context (a turn's neighbours)."""

_STOP_TEXT = """when what who whom where why how which did does do is was were has have had"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Question words and their auxiliaries: left out of BM25 queries (unless nothing else is
left). Articles and prepositions stay: dropping them too gained 0.02 recall@5 on LoCoMo but
cost 0.08 nDCG@10 on bench/quality.py's small set."""


def query_words(query: str) -> list[str]:
    """The words of a query BM25 should match: distinct, stop and question words dropped.

    A query made only of stop words keeps them all (``"how are we"`` still searches).
    """
    words = WORD.findall(query)
    kept = [w for w in words if w.casefold() not in STOP_WORDS] or words
    seen: list[str] = []
    folded: set[str] = set()
    for word in kept:
        if word.casefold() not in folded:
            folded.add(word.casefold())
            seen.append(word)
    return seen


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression: every word quoted (no syntax injection), OR-ed for BM25."""
    words = query_words(query)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def search(
    store: RecallStore,
    query: str,
    *,
    filters: Filters = NO_FILTERS,
    limit: int = 10,
    snippets: bool = True,
) -> list[Hit]:
    """Chunks by FTS5 BM25 (heading weighted over body and path), with highlighted snippets
    (``snippets=False``: empty, for candidates :func:`with_snippets` completes later)."""
    match = fts_query(query)
    if match is None or limit <= 0:
        return []
    where = ["memls_fts match ?"]
    args: list[Any] = [match]
    if filters.kinds:
        where.append(f"c.kind in ({','.join('?' for _ in filters.kinds)})")
        args.extend(filters.kinds)
    if filters.since:
        where.append("c.timestamp >= ?")
        args.append(filters.since)
    if filters.until:
        where.append("c.timestamp <= ?")
        args.append(filters.until)
    matcher = path_matcher(filters.path_glob)
    if matcher is not None:
        store.db.conn.create_function("memls_path_ok", 1, matcher, deterministic=True)
        where.append("memls_path_ok(c.path)")
    args.append(limit)
    snippet = "snippet(memls_fts, 0, '[', ']', '…', 24)" if snippets else "''"
    rank = f"bm25(memls_fts, {', '.join(str(w) for w in BM25_WEIGHTS)})"
    columns = "c.rid, c.id, c.kind, c.path, c.start_line, c.end_line, c.heading"
    if len(where) == 1:
        # No filter on the chunk table: rank inside the full-text index and join only the
        # top ``limit`` rows (a common word matches most chunks; joining them all is slow).
        sql = (
            f"select {columns}, r.snippet, r.rank from (select rowid, {snippet} as snippet, "
            f"{rank} as rank from memls_fts where memls_fts match ? order by rank, rowid "
            "limit ?) r join memls_chunks c on c.rid = r.rowid order by r.rank, c.rid"
        )
    else:
        sql = (
            f"select {columns}, {snippet}, {rank} as rank from memls_fts join memls_chunks c "
            f"on c.rid = memls_fts.rowid where {' and '.join(where)} order by rank, c.rid limit ?"
        )
    rows = store.db.execute(sql, args).fetchall()
    return [
        Hit(
            rid=row[0],
            id=row[1],
            score=-float(row[8]),
            kind=row[2],
            path=row[3],
            start_line=row[4],
            end_line=row[5],
            heading=row[6],
            snippet=" ".join(str(row[7]).split()),
        )
        for row in rows
    ]


def with_snippets(store: RecallStore, hits: Sequence[Hit], query: str) -> list[Hit]:
    """Fill in the snippets of the final hits: FTS's highlighted one where the query's
    words match the chunk, else the chunk text around the first query word."""
    missing = [h.rid for h in hits if not h.snippet]
    if not missing:
        return list(hits)
    marks = ",".join("?" for _ in missing)
    found: dict[int, str] = {}
    match = fts_query(query)
    if match is not None:
        found = {
            int(rid): " ".join(str(snippet).split())
            for rid, snippet in store.db.execute(
                "select rowid, snippet(memls_fts, 0, '[', ']', '…', 24) from memls_fts "
                f"where memls_fts match ? and rowid in ({marks})",
                [match, *missing],
            ).fetchall()
        }
    texts = dict(
        store.db.execute(
            f"select rid, text from memls_chunks where rid in ({marks})", missing
        ).fetchall()
    )
    out: list[Hit] = []
    for hit in hits:
        if hit.snippet:
            out.append(hit)
            continue
        snippet = found.get(hit.rid) or make_snippet(str(texts.get(hit.rid, "")), query)
        out.append(replace(hit, snippet=snippet))
    return out


MAX_MESSAGE_LINES = 12
"""At most this many message lines name where a transcript hit is (the matching ones first)."""


def message_lines(
    store: RecallStore, hits: Sequence[Hit], query: str
) -> dict[int, tuple[int, ...]]:
    """Where each transcript hit is, message by message: the 1-based JSONL lines of the
    messages in its range whose text the query matches (FTS5's own matching, stems and
    all), else of its conversation messages (the user's and assistant's words, not tool
    traffic). A turn spans hundreds of lines of tool output in a long session; these are
    the lines to open. Chunks stored without a line map give none."""
    from memls.core.recall.chunking import decode_line_map

    wanted = [h for h in hits if h.kind == "transcript"]
    if not wanted:
        return {}
    marks = ",".join("?" for _ in wanted)
    ordinals = dict(
        store.db.execute(
            f"select rid, ordinal from memls_chunks where rid in ({marks})",
            [h.rid for h in wanted],
        ).fetchall()
    )
    members: dict[int, list[tuple[int, str]]] = {}
    for hit in wanted:
        ordinal = ordinals.get(hit.rid)
        if ordinal is None:
            continue
        # a transcript chunk's ordinal is its turn's number, and a merged hit spans at
        # most MERGE_LINES lines, so its turns are within that many ordinals of the best one
        members[hit.rid] = [
            (int(rid), str(encoded or ""))
            for rid, encoded in store.db.execute(
                "select rid, line_map from memls_chunks where path = ? and ordinal between ? "
                "and ? and kind = ? and start_line >= ? and end_line <= ? order by ordinal",
                [
                    hit.path,
                    int(ordinal) - MERGE_LINES,
                    int(ordinal) + MERGE_LINES,
                    "transcript",
                    hit.start_line,
                    hit.end_line,
                ],
            ).fetchall()
        ]
    rids = sorted({rid for rows in members.values() for rid, _ in rows})
    marked: dict[int, str] = {}
    match = fts_query(query)
    if match is not None and rids:
        marks = ",".join("?" for _ in rids)
        marked = {
            int(rid): str(text)
            for rid, text in store.db.execute(
                "select rowid, highlight(memls_fts, 0, char(1), char(2)) from memls_fts "
                f"where memls_fts match ? and rowid in ({marks})",
                [match, *rids],
            ).fetchall()
        }
    out: dict[int, tuple[int, ...]] = {}
    for hit_rid, rows in members.items():
        spoken: list[int] = []
        said: list[int] = []  # conversation lines whose text matched
        tools: list[int] = []  # tool or injected lines whose text matched
        for rid, encoded in rows:
            lines = decode_line_map(encoded)
            if not lines:
                continue
            spoken += [line for line, conversation in lines if conversation]
            highlighted = marked.get(rid)
            if highlighted is None:
                continue
            pieces = highlighted.splitlines()
            if len(pieces) != len(lines):  # not the text the map was made for
                continue
            for piece, (line, conversation) in zip(pieces, lines, strict=True):
                if "\x01" in piece:
                    (said if conversation else tools).append(line)
        chosen = list(dict.fromkeys(said + tools)) or list(dict.fromkeys(spoken))
        if chosen:
            out[hit_rid] = tuple(sorted(chosen[:MAX_MESSAGE_LINES]))
    return out
