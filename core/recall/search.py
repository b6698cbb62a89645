"""Search the recall store: vectorised cosine, FTS5 BM25, score fusion, merging and MMR.

Semantic search never uses ``llm``'s per-row Python scan: the collection's vectors are read
once into a normalised float32 matrix, cached per database and reloaded only when the
store's ``generation`` counter moves, and scored with one matrix-vector product. Filters
(kind, path glob, since/until) become boolean masks over cached metadata arrays, so a
filtered search costs the same as an unfiltered one.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memls.core.fsutil import refuse_link, write_private
from memls.core.recall.chunking import normalize_timestamp
from memls.core.recall.space import Space, adapts, fit

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    import numpy.typing as npt

    from memls.core.recall.store import RecallStore

BM25_WEIGHTS = (1.0, 2.0, 0.5, 0.7)
"""BM25 column weights: chunk text, heading, path, and context (a turn's neighbours)."""
MMR_LAMBDA = 0.5
"""MMR trade-off: 1.0 is pure relevance, 0.0 pure diversity."""
SNIPPET_CHARS = 200

_PARALLEL_ROWS = 32_768
"""Above this many vectors, scoring is split across threads."""
_WORD = re.compile(r"\w+", re.UNICODE)
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor  # only huge stores score in threads

            _POOL = ThreadPoolExecutor(
                max_workers=_workers(), thread_name_prefix="memls-recall-score"
            )
        return _POOL


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _blocks(rows: int) -> list[tuple[int, int]]:
    parts = _workers()
    step = -(-rows // parts)
    return [(a, min(rows, a + step)) for a in range(0, rows, step)]


_RELATIVE = re.compile(r"^(\d+)\s*([hdwm])$")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Filters:
    """Restrictions every search mode applies the same way."""

    kinds: tuple[str, ...] = ()
    path_glob: str | None = None
    since: str | None = None  # normalised timestamp, inclusive
    until: str | None = None  # normalised timestamp, inclusive


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


def parse_time(value: str | None, *, end: bool = False, now: datetime | None = None) -> str | None:
    """``since``/``until`` to a normalised timestamp: ISO date or datetime, or ``7d``/``12h``/``2w``.

    A bare date as ``until`` means the end of that day. Raises ValueError for anything else.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    relative = _RELATIVE.match(text.lower())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        span = {
            "h": timedelta(hours=amount),
            "d": timedelta(days=amount),
            "w": timedelta(weeks=amount),
            "m": timedelta(days=30 * amount),
        }[unit]
        moment = (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None) - span
        return moment.strftime("%Y-%m-%dT%H:%M:%S")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        datetime.fromisoformat(text)  # validates
        return f"{text}T23:59:59" if end else f"{text}T00:00:00"
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"cannot read {value!r} as a time: use YYYY-MM-DD, an ISO datetime, or 7d / 12h / 2w"
        ) from exc
    stamp = normalize_timestamp(text)
    assert stamp is not None
    return stamp


def path_matcher(glob: str | None) -> Callable[[str], bool] | None:
    """A path filter: a glob (``*`` crosses ``/``), or a plain prefix/folder when no wildcard."""
    if not glob:
        return None
    pattern = glob.strip().removeprefix("./")
    if not (_GLOB_CHARS & set(pattern)):
        folder = pattern.rstrip("/")

        def prefix(path: str) -> bool:
            return path == folder or path.startswith(folder + "/")

        return prefix
    return lambda path: fnmatchcase(path, pattern)


_STOP_TEXT = """when what who whom where why how which did does do is was were has have had"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Question words and their auxiliaries: left out of BM25 queries (unless nothing else is
left). Articles and prepositions stay: dropping them too gained 0.02 recall@5 on LoCoMo but
cost 0.08 nDCG@10 on bench/quality.py's small set."""


def query_words(query: str) -> list[str]:
    """The words of a query BM25 should match: distinct, stop and question words dropped.

    A query made only of stop words keeps them all (``"how are we"`` still searches).
    """
    words = _WORD.findall(query)
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


def make_snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The chunk text around the first query word it contains (whitespace collapsed)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lowered = flat.casefold()
    positions = [lowered.find(w.casefold()) for w in _WORD.findall(query)]
    hits = [p for p in positions if p >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


# --- semantic --------------------------------------------------------------------------------


_Meta = tuple["npt.NDArray[np.str_]", "npt.NDArray[np.str_]", "npt.NDArray[np.str_]"]


class VectorIndex:
    """The collection's vectors as one normalised matrix plus metadata arrays for masking.

    The metadata (kind, path and timestamp per row) is only needed by filters; an index
    made with :meth:`lazy` reads it on first use, so an unfiltered search never does.
    """

    def __init__(
        self,
        rids: npt.NDArray[np.int64],
        kinds: npt.NDArray[np.str_],
        paths: npt.NDArray[np.str_],
        timestamps: npt.NDArray[np.str_],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        self.rids = rids
        self.matrix = matrix
        self._meta: _Meta | None = (kinds, paths, timestamps)
        self._read_meta: Callable[[], _Meta] | None = None
        self._meta_lock = threading.Lock()
        self._path_cache: dict[str, npt.NDArray[np.bool_]] = {}
        self._path_codes: tuple[npt.NDArray[np.str_], npt.NDArray[np.intp]] | None = None

    @classmethod
    def lazy(
        cls,
        rids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
        read_meta: Callable[[], _Meta],
    ) -> VectorIndex:
        """An index whose metadata ``read_meta`` gives when a filter first asks for it."""
        empty = np.array([], dtype=str)
        index = cls(rids, empty, empty, empty, matrix)
        index._meta = None
        index._read_meta = read_meta
        return index

    def _metadata(self) -> _Meta:
        meta = self._meta
        if meta is None:
            with self._meta_lock:
                if self._meta is None:
                    assert self._read_meta is not None
                    self._meta = self._read_meta()
                    self._read_meta = None
                meta = self._meta
        return meta

    @property
    def kinds(self) -> npt.NDArray[np.str_]:
        return self._metadata()[0]

    @property
    def paths(self) -> npt.NDArray[np.str_]:
        return self._metadata()[1]

    @property
    def timestamps(self) -> npt.NDArray[np.str_]:
        return self._metadata()[2]

    @property
    def size(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def dimensions(self) -> int:
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0

    def mask(self, filters: Filters) -> npt.NDArray[np.bool_] | None:
        """Rows that pass the filters, or None when there are no filters."""
        mask: npt.NDArray[np.bool_] | None = None

        def both(extra: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
            return extra if mask is None else mask & extra

        if filters.kinds:
            mask = both(np.isin(self.kinds, np.array(filters.kinds)))
        if filters.path_glob:
            if filters.path_glob not in self._path_cache:
                match = path_matcher(filters.path_glob)
                assert match is not None
                if self._path_codes is None:
                    self._path_codes = np.unique(self.paths, return_inverse=True)
                unique, codes = self._path_codes
                allowed = np.array([match(str(p)) for p in unique], dtype=bool)
                self._path_cache[filters.path_glob] = allowed[codes]
            mask = both(self._path_cache[filters.path_glob])
        if filters.since:
            mask = both(self.timestamps >= filters.since)
        if filters.until:
            mask = both((self.timestamps <= filters.until) & (self.timestamps != ""))
        return mask

    space: Space | None = None
    """The adapted space the rows are in (:mod:`space`); the query is mapped into it."""

    def scores(self, vector: Sequence[float]) -> npt.NDArray[np.float32]:
        """Cosine similarity of every row to ``vector`` (in :attr:`space` when set)."""
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0 or query.shape[0] != self.dimensions:
            raise ValueError(
                f"query vector has {query.shape[0]} dimensions, the store holds {self.dimensions}"
            )
        query = query / norm
        if self.space is not None:
            query = self.space.query(query)
        out = np.empty(self.size, dtype=np.float32)
        if self.size < _PARALLEL_ROWS:
            np.einsum("ij,j->i", self.matrix, query, out=out)
            return out
        # einsum's own SIMD loop, one row block per thread (it releases the GIL); OpenBLAS's
        # threaded gemv spins and stalls on a busy machine, this does not.
        blocks = _blocks(self.size)
        pool = _pool()
        futures = [
            pool.submit(np.einsum, "ij,j->i", self.matrix[a:b], query, out=out[a:b])
            for a, b in blocks
        ]
        for future in futures:
            future.result()
        return out

    def top(
        self, vector: Sequence[float], k: int, filters: Filters = Filters()
    ) -> list[tuple[int, float]]:
        """``(row, cosine)`` of the best ``k`` rows passing the filters, best first."""
        if self.size == 0 or k <= 0:
            return []
        scores = self.scores(vector)
        mask = self.mask(filters)
        if mask is not None:
            candidates = np.flatnonzero(mask)
            if candidates.size == 0:
                return []
            sub = scores[candidates]
        else:
            candidates = None
            sub = scores
        k = min(k, sub.shape[0])
        best = np.argpartition(-sub, k - 1)[:k] if k < sub.shape[0] else np.arange(sub.shape[0])
        best = best[np.lexsort((best, -sub[best]))]
        rows = candidates[best] if candidates is not None else best
        return [(int(r), float(scores[r])) for r in rows]


_CACHE: dict[str, tuple[int, str, VectorIndex]] = {}
_CACHE_LOCK = threading.Lock()


def vector_index(store: RecallStore) -> VectorIndex | None:
    """The cached matrix for ``store``, reloaded when its generation or model changed.

    In a fresh process the matrix comes memory-mapped from the file backfill saved for the
    current generation (:func:`save_index`), so a whole-process search does not read every
    embedding row; without one (or when it is stale) it is read from SQLite.
    """
    current = store.collection()
    if current is None:
        return None
    collection_id, model = current
    key = str(store.path.resolve())
    generation = store.generation()
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == generation and cached[1] == model:
            return cached[2]
    index = _read_saved(store, generation, model) or _adapted(_load(store, collection_id), model)
    with _CACHE_LOCK:
        _CACHE[key] = (generation, model, index)
    return index


def _saved_paths(store: RecallStore, generation: int, model: str) -> tuple[Path, Path]:
    tag = _sha1_hex(model.encode("utf-8"))[:8]
    stem = f"{store.path.name}.vectors-{generation}-{tag}"
    return store.path.with_name(stem + ".npy"), store.path.with_name(stem + ".meta.npz")


def _sha1_hex(data: bytes) -> str:
    """sha1 of ``data`` in hex, by CPython's own implementation where it has one: hashlib's
    would load OpenSSL (~3 ms of a cold search) for this one digest of a model id."""
    try:
        module: Any = importlib.import_module("_sha1")
    except ImportError:
        import hashlib

        module = hashlib
    return str(module.sha1(data).hexdigest())


def _rids_path(matrix_path: Path) -> Path:
    """The matrix's row ids (``.npy`` format; named apart from the one ``.npy``, the matrix)."""
    return matrix_path.with_name(matrix_path.name.removesuffix(".npy") + ".rids")


def _space_path(matrix_path: Path) -> Path:
    """The adapted space's mean and transform (``.npy`` format, mean first, then the rows)."""
    return matrix_path.with_name(matrix_path.name.removesuffix(".npy") + ".space")


def _adapted(index: VectorIndex, model: str) -> VectorIndex:
    """``index`` with its rows mapped into the store's adapted space, for models that use one."""
    if not adapts(model) or index.size == 0:
        return index
    space = fit(index.matrix)
    if space is None:
        return index
    index.matrix = space.rows(index.matrix)
    index.space = space
    return index


def save_index(store: RecallStore) -> Path | None:
    """Write the current generation's normalised matrix beside the database (backfill does,
    under its lock): the matrix, its row ids, and the rows' metadata for filters. Older
    generations' files are removed. Returns the matrix file."""
    current = store.collection()
    if current is None:
        return None
    generation = store.generation()
    matrix_path, meta_path = _saved_paths(store, generation, current[1])
    rids_path = _rids_path(matrix_path)
    space_path = _space_path(matrix_path)
    prefix = f"{store.path.name}.vectors-"
    saved = list(store.path.parent.glob(prefix + "*"))
    for target in {matrix_path, meta_path, rids_path, space_path, *saved}:
        refuse_link(target)  # a link (or anything but a file) among the saved files: refused
    if (
        matrix_path.is_file()
        and meta_path.is_file()
        and rids_path.is_file()
        and (space_path.is_file() or not adapts(current[1]))
    ):
        return matrix_path
    index = vector_index(store)
    if index is None:
        return None
    for old in saved:
        old.unlink(missing_ok=True)
    _write_atomic(
        meta_path,
        lambda handle: np.savez(
            handle,
            rids=index.rids,
            kinds=index.kinds,
            paths=index.paths,
            timestamps=index.timestamps,
        ),
    )
    _write_atomic(rids_path, lambda handle: np.save(handle, index.rids, allow_pickle=False))
    space = index.space
    if space is not None:
        packed = np.vstack([space.mean[None, :], space.transform]).astype(np.float32)
        _write_atomic(space_path, lambda handle: np.save(handle, packed, allow_pickle=False))
    _write_atomic(matrix_path, lambda handle: np.save(handle, index.matrix, allow_pickle=False))
    return matrix_path


def _write_atomic(path: Path, write: Callable[[Any], None]) -> None:
    """A 0600 file (the matrix holds what transcripts say, in another form), never written
    through a link; the temporary name starts like the saved files', so a crash's leftover
    goes with the next generation's clean-up."""
    write_private(path, write, sync=False, temp_prefix=path.name + ".tmp")


def _read_saved(store: RecallStore, generation: int, model: str) -> VectorIndex | None:
    """The saved matrix, memory-mapped, and its row ids; the metadata only when a filter
    needs it (a store saved before row ids had their own file reads it now)."""
    matrix_path, meta_path = _saved_paths(store, generation, model)
    if matrix_path.is_symlink():  # not one backfill saved: the database is read instead
        return None
    try:
        matrix = np.load(matrix_path, mmap_mode="r", allow_pickle=False)
        try:
            rids = np.load(_rids_path(matrix_path), allow_pickle=False)
            meta: _Meta | None = None
        except FileNotFoundError:
            with np.load(meta_path, allow_pickle=False) as saved:
                rids = saved["rids"]
                meta = (saved["kinds"], saved["paths"], saved["timestamps"])
    except (OSError, ValueError, KeyError):
        return None
    if matrix.ndim != 2 or matrix.shape[0] != rids.shape[0] or matrix.dtype != np.float32:
        return None
    if rids.ndim != 1 or rids.dtype != np.int64:
        return None
    space: Space | None = None
    if adapts(model):
        space = _read_space(_space_path(matrix_path), matrix.shape[1])
        if space is None:  # saved before the adapted space existed: refit from the database
            return None
    if meta is not None:
        index = VectorIndex(rids, *meta, matrix)
    else:
        db = store.path
        index = VectorIndex.lazy(rids, matrix, lambda: _saved_meta(meta_path, db, rids))
    index.space = space
    return index


def _read_space(path: Path, dims: int) -> Space | None:
    try:
        packed = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if packed.shape != (dims + 1, dims) or packed.dtype != np.float32:
        return None
    return Space(packed[0], packed[1:])


def _saved_meta(meta_path: Path, db: Path, rids: npt.NDArray[np.int64]) -> _Meta:
    """Kinds, paths and timestamps of ``rids`` from the saved file, or from the database
    when that file went away (a newer backfill replaced it after the matrix was mapped)."""
    try:
        with np.load(meta_path, allow_pickle=False) as saved:
            meta = (saved["kinds"], saved["paths"], saved["timestamps"])
        if all(column.shape == rids.shape for column in meta):
            return meta
    except (OSError, ValueError, KeyError):
        pass
    import sqlite3

    for suffix in ("", "-wal", "-shm"):  # as RecallStore: SQLite would follow a link
        refuse_link(db.with_name(db.name + suffix))
    with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        rows = {
            int(row[0]): row[1:]
            for row in conn.execute(
                "select rid, kind, path, coalesce(timestamp, '') from memls_chunks"
            )
        }
    found = [rows.get(int(rid), ("", "", "")) for rid in rids]
    return (
        np.array([row[0] for row in found], dtype=str),
        np.array([row[1] for row in found], dtype=str),
        np.array([row[2] for row in found], dtype=str),
    )


def forget_cache() -> None:
    """Drop every cached matrix (tests and benchmarks measure cold loads with it)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _load(store: RecallStore, collection_id: int) -> VectorIndex:
    rows = store.db.execute(
        "select c.rid, c.kind, c.path, coalesce(c.timestamp, ''), e.embedding "
        "from embeddings e join memls_chunks c on c.id = e.id where e.collection_id = ? "
        "order by c.rid",
        [collection_id],
    ).fetchall()
    if rows:
        lengths: dict[int, int] = {}
        for row in rows:
            lengths[len(row[4])] = lengths.get(len(row[4]), 0) + 1
        width = max(lengths, key=lambda n: lengths[n])
        rows = [row for row in rows if len(row[4]) == width]
    if not rows:
        empty = np.array([], dtype=str)
        return VectorIndex(
            np.array([], dtype=np.int64), empty, empty, empty, np.zeros((0, 0), np.float32)
        )
    matrix = np.frombuffer(b"".join(r[4] for r in rows), dtype="<f4").reshape(len(rows), -1)
    matrix = matrix.astype(np.float32, copy=True)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms == 0, 1, norms)
    return VectorIndex(
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows]),
        np.array([r[3] for r in rows]),
        np.ascontiguousarray(matrix),
    )


def _hits_for(
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


def semantic(
    store: RecallStore,
    vector: Sequence[float],
    *,
    query: str = "",
    filters: Filters = Filters(),
    limit: int = 10,
    snippets: bool = True,
) -> list[Hit]:
    """Chunks by cosine similarity to ``vector`` (``snippets=False``: leave them empty, for
    candidates that :func:`with_snippets` completes once the final few are known)."""
    index = vector_index(store)
    if index is None or index.size == 0:
        return []
    ranked = [(int(index.rids[row]), score) for row, score in index.top(vector, limit, filters)]
    return _hits_for(store, ranked, query, snippets=snippets)


# --- text ------------------------------------------------------------------------------------


def text(
    store: RecallStore,
    query: str,
    *,
    filters: Filters = Filters(),
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


# --- fusion and diversity --------------------------------------------------------------------


FUSION_TEXT_WEIGHT = 0.6
"""Share of the text ranking in hybrid fusion (chosen on the LoCoMo development split)."""
FUSION_DEPTH = 100
"""How many candidates each mode brings to hybrid fusion."""
MERGE_LINES = 4
"""Adjacent hits of one file merge into one result while it spans at most this many lines."""


def fuse(
    text_hits: Sequence[Hit],
    semantic_hits: Sequence[Hit],
    text_weight: float = FUSION_TEXT_WEIGHT,
) -> list[Hit]:
    """Score-normalised fusion: each mode's scores become z-scores over its own candidates,
    and a chunk's fused score is their weighted sum.

    A chunk one mode did not return counts as that mode's lowest candidate (never better
    than one it did return). Unlike rank fusion, a mode whose best hit barely stands out
    from its other candidates (a weak side) moves the fused order little, a blind one (all
    scores equal) not at all, and a mode sure of its top hit keeps it near the top. Ties
    keep the text ranking's order.
    """
    first: dict[int, Hit] = {}
    sides: list[tuple[float, dict[int, float], float]] = []
    for weight, ranking in ((text_weight, text_hits), (1.0 - text_weight, semantic_hits)):
        if not ranking:
            sides.append((weight, {}, 0.0))
            continue
        scores = np.array([h.score for h in ranking], dtype=np.float64)
        spread = float(scores.std())
        normal = (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)
        sides.append(
            (
                weight,
                dict(zip((h.rid for h in ranking), normal.tolist(), strict=True)),
                min(0.0, float(normal.min())),
            )
        )
        for hit in ranking:
            first.setdefault(hit.rid, hit)
    fused = {rid: sum(weight * z.get(rid, floor) for weight, z, floor in sides) for rid in first}
    order = sorted(first, key=lambda rid: -fused[rid])
    return [replace(first[rid], score=fused[rid]) for rid in order]


def merge_adjacent(hits: Sequence[Hit], max_lines: int = MERGE_LINES) -> list[Hit]:
    """Neighbour expansion: a hit right next to a better one of the same file (one turn
    after another) joins it as one result, while the joined range spans at most
    ``max_lines`` lines. The better hit keeps its id, score and snippet; the freed place
    goes to the next distinct hit.
    """
    out: list[Hit] = []
    same_file: dict[str, list[int]] = {}  # positions in ``out`` by path, in order
    for hit in hits:
        for position in same_file.get(hit.path, ()):
            kept = out[position]
            if hit.start_line != kept.end_line + 1 and hit.end_line != kept.start_line - 1:
                continue
            start = min(hit.start_line, kept.start_line)
            end = max(hit.end_line, kept.end_line)
            if end - start + 1 <= max_lines:
                out[position] = replace(kept, start_line=start, end_line=end)
                break
        else:
            same_file.setdefault(hit.path, []).append(len(out))
            out.append(hit)
    return out


def mmr(
    hits: Sequence[Hit],
    vectors: dict[int, npt.NDArray[np.float32]],
    limit: int,
    lam: float = MMR_LAMBDA,
) -> list[Hit]:
    """Maximal marginal relevance: re-rank ``hits`` to trade relevance against redundancy.

    Relevance is the hit's score divided by the best score (min-max scaled when scores go
    negative); similarity is cosine between chunk vectors. Hits without a vector count as
    dissimilar to everything.
    """
    if not hits:
        return []
    top = max(h.score for h in hits)
    low = min(h.score for h in hits)
    if low >= 0 and top > 0:
        relevance = {h.rid: h.score / top for h in hits}
    else:
        span = (top - low) or 1.0
        relevance = {h.rid: (h.score - low) / span for h in hits}
    chosen: list[Hit] = []
    remaining = list(hits)
    while remaining and len(chosen) < limit:
        best: Hit | None = None
        best_value = -np.inf
        for hit in remaining:
            redundancy = 0.0
            vec = vectors.get(hit.rid)
            if vec is not None:
                for picked in chosen:
                    other = vectors.get(picked.rid)
                    if other is not None:
                        redundancy = max(redundancy, float(vec @ other))
            value = lam * relevance[hit.rid] - (1 - lam) * redundancy
            if value > best_value:
                best, best_value = hit, value
        assert best is not None
        chosen.append(best)
        remaining.remove(best)
    return chosen


def vectors_for(index: VectorIndex | None, rids: Sequence[int]) -> dict[int, Any]:
    """Normalised vectors of the given chunk rows (for MMR), from the cached matrix."""
    if index is None or index.size == 0:
        return {}
    wanted = np.array(rids, dtype=np.int64)
    positions = np.searchsorted(index.rids, wanted)
    out: dict[int, Any] = {}
    for rid, pos in zip(rids, positions, strict=True):
        if pos < index.size and int(index.rids[pos]) == rid:
            out[rid] = index.matrix[pos]
    return out
