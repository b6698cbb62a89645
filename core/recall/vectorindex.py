"""The collection's vectors as one normalised float32 matrix: masks, cosine scores, top k.

Semantic search never uses ``llm``'s per-row Python scan: every row is scored with one
matrix-vector product (split across threads for a huge store), and filters (kind, path
glob, since/until) become boolean masks over metadata arrays, so a filtered search costs
the same as an unfiltered one. Where the matrix comes from is :mod:`semantic`'s business.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from memls.core.recall.filters import NO_FILTERS, Filters, path_matcher
from memls.core.recall.space import Space

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    import numpy.typing as npt

_PARALLEL_ROWS = 32_768
"""Above this many vectors, scoring is split across threads."""
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


Meta = tuple["npt.NDArray[np.str_]", "npt.NDArray[np.str_]", "npt.NDArray[np.str_]"]
"""Kind, path and timestamp of every row (what filters read), one array each."""


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
        self._meta: Meta | None = (kinds, paths, timestamps)
        self._read_meta: Callable[[], Meta] | None = None
        self._meta_lock = threading.Lock()
        self._path_cache: dict[str, npt.NDArray[np.bool_]] = {}
        self._path_codes: tuple[npt.NDArray[np.str_], npt.NDArray[np.intp]] | None = None

    @classmethod
    def lazy(
        cls,
        rids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
        read_meta: Callable[[], Meta],
    ) -> VectorIndex:
        """An index whose metadata ``read_meta`` gives when a filter first asks for it."""
        empty = np.array([], dtype=str)
        index = cls(rids, empty, empty, empty, matrix)
        index._meta = None
        index._read_meta = read_meta
        return index

    def _metadata(self) -> Meta:
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
        self, vector: Sequence[float], k: int, filters: Filters = NO_FILTERS
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
