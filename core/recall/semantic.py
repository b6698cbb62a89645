"""Semantic search: the store's vectors as a cached, saved and memory-mapped matrix.

The matrix (:class:`vectorindex.VectorIndex`) is read once per database and cached, and
reloaded only when the store's ``generation`` counter or its model moves. Backfill saves
each generation's matrix beside the database (:func:`save_index`), so a fresh process maps
it instead of reading every embedding row from SQLite; for memls-minilm the rows are in the
store's adapted space (:mod:`space`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memls.core.fsutil import refuse_link, write_private
from memls.core.recall.filters import NO_FILTERS, Filters
from memls.core.recall.hits import Hit, hits_for
from memls.core.recall.space import Space, adapts, fit
from memls.core.recall.vectorindex import Meta, VectorIndex

if TYPE_CHECKING:
    import numpy.typing as npt

    from memls.core.recall.store import RecallStore

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
            meta: Meta | None = None
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


def _saved_meta(meta_path: Path, db: Path, rids: npt.NDArray[np.int64]) -> Meta:
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


def search(
    store: RecallStore,
    vector: Sequence[float],
    *,
    query: str = "",
    filters: Filters = NO_FILTERS,
    limit: int = 10,
    snippets: bool = True,
) -> list[Hit]:
    """Chunks by cosine similarity to ``vector`` (``snippets=False``: leave them empty, for
    candidates that :func:`fulltext.with_snippets` completes once the final few are known)."""
    index = vector_index(store)
    if index is None or index.size == 0:
        return []
    ranked = [(int(index.rids[row]), score) for row, score in index.top(vector, limit, filters)]
    return hits_for(store, ranked, query, snippets=snippets)


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
