"""The search stage: one root searched by text (BM25), semantic (cosine) or hybrid (fused).

This module turns a request (mode, filters as strings, limit) into a :class:`SearchResponse`
with an honest message: a search that could not use vectors says so (``degraded=True`` and
a plain message naming the reason). The ranking itself is done by the engine modules:
:mod:`fulltext` (BM25), :mod:`semantic` (the cached matrix and cosine),
:mod:`ranking` (fusion, neighbour merging, MMR), over :mod:`filters` and :mod:`hits`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memls.core.config import Config, load_config
from memls.core.recall import fulltext, ranking, semantic
from memls.core.recall.chunking import KINDS
from memls.core.recall.filters import Filters, parse_time
from memls.core.recall.hits import Hit
from memls.core.recall.models import (
    ModelChoice,
    embed,
    load_model,
    model_revision,
    pick_model,
)
from memls.core.recall.store import RecallStore, db_path_for, open_existing

MODES = ("hybrid", "semantic", "text")


@dataclass(frozen=True)
class SearchResult:
    """One hit. ``path`` is POSIX and relative to the root; lines are 1-based, inclusive."""

    id: str
    score: float
    kind: str
    path: str
    start_line: int
    end_line: int
    heading: str | None
    snippet: str
    lines: tuple[int, ...] = ()
    """A transcript hit's message lines (:func:`fulltext.message_lines`): the JSONL lines of
    the messages that matched, where ``start_line``–``end_line`` is the whole turn."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["lines"] = list(self.lines)
        return data


@dataclass(frozen=True)
class SearchResponse:
    """Results plus what actually ran: ``degraded`` means semantic was asked for but not used."""

    results: list[SearchResult]
    mode: str
    degraded: bool
    model: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [r.to_dict() for r in self.results],
            "mode": self.mode,
            "degraded": self.degraded,
            "model": self.model,
            "message": self.message,
        }


def _filters(
    kinds: Sequence[str], path_glob: str | None, since: str | None, until: str | None
) -> Filters:
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown kind {bad[0]!r}: use one of {', '.join(KINDS)}")
    return Filters(
        kinds=tuple(kinds),
        path_glob=path_glob or None,
        since=parse_time(since),
        until=parse_time(until, end=True),
    )


def _verified_note(store: RecallStore, model_id: str) -> str:
    record = store.meta("last_verification")
    if isinstance(record, dict) and record.get("model") == model_id and record.get("ok"):
        return f"verified {record.get('time')}"
    return "not verified yet — run `memls recall verify`"


def search(
    root: Path,
    query: str,
    *,
    mode: str = "hybrid",
    kinds: Sequence[str] = (),
    path_glob: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 10,
    model: str | None = None,
    mmr: bool = False,
    merge: bool = True,
) -> SearchResponse:
    """Search one root. Raises ValueError for a bad mode, kind or time.

    Hybrid fuses the two rankings by normalised score (:func:`ranking.fuse`). With ``merge``
    (the default) a hit adjacent to a better one of the same file joins it as one result of
    at most four lines (:func:`ranking.merge_adjacent`).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    filters = _filters(kinds, path_glob, since, until)
    root = root.resolve()
    config = load_config(root)
    db = db_path_for(root, config)
    store = open_existing(db)
    if store is None:
        return SearchResponse(
            [], "text", True, None, f"No recall index at {db} yet: run `memls recall backfill`."
        )
    try:
        limit = max(0, limit)
        if mode == "hybrid" or merge:
            pool = max(limit * 4, ranking.FUSION_DEPTH)
        elif mmr:
            pool = max(limit * 4, 40)
        else:
            pool = limit
        vector: list[float] | None = None
        reason = ""
        current = store.collection()
        model_id = current[1] if current else None
        late = pool > limit  # candidates beyond the results: snippets only for the final few
        early: _Background | None = None
        if mode == "hybrid":
            # BM25 runs on its own connection while the model loads and embeds the query
            # (SQLite and the matrix products release the GIL): a cold search waits for
            # the slower of the two, not their sum.
            early = _Background(
                lambda: _text_on_own_connection(db, query, filters, pool, snippets=not late)
            )
        if mode != "text":
            vector, reason = _query_vector(store, query, config, model, db)
        sem_hits: list[Hit] = []
        text_hits: list[Hit] = []
        if vector is not None:
            sem_hits = semantic.search(
                store, vector, query=query, filters=filters, limit=pool, snippets=not late
            )
        if mode in {"text", "hybrid"} or vector is None:
            found = early.result() if early is not None else None
            text_hits = (
                found
                if found is not None
                else fulltext.search(store, query, filters=filters, limit=pool, snippets=not late)
            )
        if vector is None:
            ran, hits = "text", text_hits
        elif mode == "semantic":
            ran, hits = "semantic", sem_hits
        else:
            ran, hits = "hybrid", ranking.fuse(text_hits, sem_hits)
        if merge:
            hits = ranking.merge_adjacent(hits)
        if mmr:
            vectors = semantic.vectors_for(
                semantic.vector_index(store) if vector is not None else None, [h.rid for h in hits]
            )
            hits = ranking.mmr(hits, vectors, limit)
        hits = fulltext.with_snippets(store, hits[:limit], query)
        lines = fulltext.message_lines(store, hits, query)
        degraded = mode != "text" and vector is None
        if degraded:
            message = f"Text mode only (degraded): {reason} Results come from full-text search."
        elif ran == "text":
            message = "Full-text search (BM25)."
        else:
            assert model_id is not None
            what = "semantic" if ran == "semantic" else "hybrid: full text + semantic"
            message = (
                f"{what.capitalize()} search with {model_id} ({_verified_note(store, model_id)})."
            )
        if mmr and vector is None:
            message += " MMR used no vectors (text mode), so it only re-ranked by score."
        results = [
            SearchResult(
                h.id,
                h.score,
                h.kind,
                h.path,
                h.start_line,
                h.end_line,
                h.heading,
                h.snippet,
                lines.get(h.rid, ()),
            )
            for h in hits
        ]
        return SearchResponse(
            results, ran, degraded, model_id if vector is not None else None, message
        )
    finally:
        store.close()


class _Background:
    """One call run on a thread; :meth:`result` waits for it (None if it raised: the
    caller then does the work itself, so errors surface as they would without it)."""

    def __init__(self, call: Callable[[], list[Hit]]) -> None:
        self._call = call
        self._result: list[Hit] | None = None
        self._thread = threading.Thread(target=self._run, name="memls-recall-text", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._call()
        except Exception:  # redone on the caller's thread, which reports it
            self._result = None

    def result(self) -> list[Hit] | None:
        self._thread.join()
        return self._result


def _text_on_own_connection(
    db: Path, query: str, filters: Filters, limit: int, *, snippets: bool
) -> list[Hit]:
    with RecallStore(db, create=False) as own:
        return fulltext.search(own, query, filters=filters, limit=limit, snippets=snippets)


def _query_vector(
    store: RecallStore, query: str, config: Config, explicit: str | None, db: Path
) -> tuple[list[float] | None, str]:
    """Embed the query with the store's model, or say why semantic search cannot run."""
    current = store.collection()
    if current is None or not store.has_embeddings():
        wanted = explicit or config.recall_model
        if current is None and not wanted:
            return None, "the store holds no vectors yet (run `memls recall backfill`)."
        choice = load_model(pick_model(config, explicit, current[1] if current else None), db)
        if not choice.usable:
            return None, choice.error or ""
        return (
            None,
            f"the store holds no vectors yet (run `memls recall backfill --model {choice.id}`).",
        )
    stored = current[1]
    if explicit and explicit != stored:
        return None, (
            f"the stored vectors were made with '{stored}', not '{explicit}'; "
            f"run `memls recall backfill --model {explicit}` to switch."
        )
    revision = model_revision(stored)
    if revision is not None and store.meta("model_revision") != revision:
        return None, (
            f"the stored {stored} vectors were made by an older version of the model; "
            "run `memls recall backfill` to re-embed them."
        )
    choice = load_model(ModelChoice(stored, "store", model_dir=config.minilm_dir), db)
    if not choice.usable:
        return None, choice.error or ""
    try:
        vector = [float(x) for x in embed(choice, [query])[0]]
    except Exception as exc:  # a model that loads but cannot run
        return None, f"embedding the query with '{stored}' failed: {exc}"
    index = semantic.vector_index(store)
    if index is None or len(vector) != index.dimensions:
        return (
            None,
            f"'{stored}' now makes {len(vector)}-d vectors but the store holds {index.dimensions if index else 0}-d ones; run `memls recall backfill --full`.",
        )
    return vector, ""
