"""The store's own embedding space: semantic scores after centring and soft whitening.

Sentence embeddings of one person's memory share a large common direction — every turn of
a conversation between the same two people, every chunk about the same project — and
cosine similarity is dominated by it: a short generic turn that carries mostly that
direction ("Yeah totally! Lucky you!") sits near every question about either speaker. The
store's vectors tell what is common, so semantic search scores in an adapted space:

* **centre**: subtract the mean vector, shrunk toward zero for small stores
  (``mean * n / (n + SHRINK_ROWS)``): the mean of a few dozen chunks is mostly their own
  content, not a shared direction;
* **soft-whiten**: multiply by ``(C + λI)^-1/2``, where ``C`` is the second moment of the
  centred vectors and ``λ = RIDGE × trace(C) / d``. The ridge keeps it mild: directions the
  store varies a lot along are damped, none is blown up (plain whitening, ``λ = 0``,
  amplifies noise directions and lost recall);
* **re-normalise**, so scores stay cosines, in [-1, 1].

The query gets the same map. Fitted on the LoCoMo development split with memls-minilm,
then frozen (semantic recall@5 0.667 -> 0.710; README "Recall" has the scan): centring
alone gave 0.697, whitening with ``RIDGE`` 5 / 10 / 20 / 50 gave 0.680 / 0.701 / 0.714 /
0.706; without the shrinkage bench/quality.py's 24-document set lost semantic nDCG@10
(0.981 -> 0.960), with it that set is unchanged. Only the model it was measured on uses it
(:data:`ADAPTED_MODELS`); other models score plain cosine.

The fit runs when the index is built (backfill saves the adapted matrix with the mean and
transform, so a cold search maps it and only maps the query); it samples at most
``FIT_ROWS`` rows, so big stores fit in bounded time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]

ADAPTED_MODELS = frozenset({"memls-minilm"})
"""Models whose semantic scores use the adapted space (measured on LoCoMo dev)."""
SHRINK_ROWS = 50.0
"""Pseudo-count pulling the mean toward zero: with n rows the mean is scaled n / (n + 50)."""
RIDGE = 20.0
"""Ridge of the soft whitening, in units of the mean eigenvalue of the centred moment."""
FIT_ROWS = 20_000
"""At most this many rows (evenly spaced) estimate the mean and moment."""


@dataclass(frozen=True)
class Space:
    """An affine map ``x -> normalise((x - mean) @ transform)`` (``transform`` symmetric)."""

    mean: FloatArray
    transform: FloatArray

    @property
    def dimensions(self) -> int:
        return int(self.mean.shape[0])

    def rows(self, matrix: FloatArray) -> FloatArray:
        """Map every row; a row that maps to zero stays zero (it matches nothing)."""
        if matrix.shape[0] == 0:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        mapped = (np.asarray(matrix, dtype=np.float32) - self.mean) @ self.transform
        norms = np.linalg.norm(mapped, axis=1, keepdims=True)
        mapped /= np.where(norms == 0, 1, norms)
        return np.ascontiguousarray(mapped, dtype=np.float32)

    def query(self, vector: FloatArray) -> FloatArray:
        """Map one (query) vector the same way as the rows."""
        mapped: FloatArray = self.rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        return mapped


def adapts(model: str) -> bool:
    """Does semantic search with ``model`` score in the adapted space?"""
    return model in ADAPTED_MODELS


def fit(matrix: FloatArray) -> Space | None:
    """The adapted space of a store's (row-normalised) vectors; None without rows."""
    rows, dims = int(matrix.shape[0]), int(matrix.shape[1]) if matrix.ndim == 2 else 0
    if rows == 0 or dims == 0:
        return None
    if rows > FIT_ROWS:
        sample = np.asarray(matrix[np.linspace(0, rows - 1, FIT_ROWS).astype(np.int64)])
    else:
        sample = np.asarray(matrix)
    sample = sample.astype(np.float64)
    n = sample.shape[0]
    mean = sample.mean(axis=0) * (n / (n + SHRINK_ROWS))
    centred = sample - mean
    moment = centred.T @ centred / n
    ridge = RIDGE * float(np.trace(moment)) / dims
    if ridge <= 0:  # every row identical: nothing to adapt beyond the centring
        ridge = 1.0
    values, vectors = np.linalg.eigh(moment + ridge * np.eye(dims))
    transform = (vectors / np.sqrt(np.maximum(values, ridge))) @ vectors.T
    return Space(mean.astype(np.float32), transform.astype(np.float32))
