"""memls-hash: a weightless embedding from hashed word and character n-grams.

It needs no download and gives the same vector on every machine and Python run (blake2b,
not the salted ``hash()``), so tests are deterministic and recall still has a semantic-ish
mode when no neural model is installed. Features: lower-cased words (weight 1) with their
character 3- to 5-grams with boundary marks (weight 0.5 each; they catch shared stems and
typos), and word bigrams (weight 1). Each feature lands in one of ``DIMENSIONS`` buckets
with a hashed sign, so collisions cancel rather than pile up. A word or bigram that occurs
``tf`` times in a text counts ``1 + log(tf)``; the vector is L2-normalised.

Speed (issue 13: ≥ 10,000 chunks/s): each distinct word's features are hashed once per
process and kept as a small sparse row; a batch of texts becomes one damped word-count
matrix times the batch's word-feature matrix, plus the bigrams, whose buckets come from the
two words' cached 64-bit hashes with numpy integer arithmetic. ``REVISION`` names this
feature scheme: stores embedded with another revision are re-embedded.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

DIMENSIONS = 512
CHAR_NGRAMS = (3, 4, 5)
CHAR_WEIGHT = 0.5  # a word brings several char n-grams; keep words the stronger signal
EMPTY_FEATURE = "\x00empty"  # gives the empty text a unit vector instead of zeros
REVISION = 2
"""Feature scheme revision (1: per-feature counts in pure Python; 2: per-word, vectorised)."""

_WORD = re.compile(r"\w+")
_CACHE_WORDS = 200_000
_DENSE_COUNTS = 1 << 22
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)


def _digest(feature: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )


def _bucket(value: int) -> tuple[int, float]:
    return value % DIMENSIONS, (1.0 if value >> 63 else -1.0)


class _Words:
    """Per-word sparse feature rows and 64-bit word hashes, computed once per process."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.hashes: list[int] = []
        self.rows: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
        self.lock = threading.Lock()

    def ids(self, words: set[str]) -> dict[str, int]:
        with self.lock:
            if len(self.index) + len(words) > _CACHE_WORDS:
                self.index.clear()
                self.hashes.clear()
                self.rows.clear()
            for word in words:
                if word not in self.index:
                    self.index[word] = len(self.rows)
                    self._add(word)
            return {w: self.index[w] for w in words}

    def _add(self, word: str) -> None:
        weights: dict[int, float] = {}
        value = _digest("w:" + word)
        self.hashes.append(value)
        index, sign = _bucket(value)
        weights[index] = weights.get(index, 0.0) + sign
        marked = f"<{word}>"
        for n in CHAR_NGRAMS:
            for i in range(len(marked) - n + 1):
                index, sign = _bucket(_digest("c:" + marked[i : i + n]))
                weights[index] = weights.get(index, 0.0) + sign * CHAR_WEIGHT
        self.rows.append(
            (
                np.fromiter(weights.keys(), dtype=np.int64, count=len(weights)),
                np.fromiter(weights.values(), dtype=np.float32, count=len(weights)),
            )
        )


_WORDS = _Words()


def hash_matrix(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Unit-length memls-hash vectors of ``texts``, one float32 row each."""
    count = len(texts)
    out = np.zeros((count, DIMENSIONS), dtype=np.float32)
    if count == 0:
        return out
    tokenised = [_WORD.findall(text.lower()) for text in texts]
    local: dict[str, int] = {}
    flat = np.array(
        [local.setdefault(w, len(local)) for words in tokenised for w in words], dtype=np.int64
    )
    vocab = _WORDS.ids(set(local))
    global_ids = np.fromiter((vocab[w] for w in local), dtype=np.int64, count=len(local))
    lengths = np.fromiter((len(words) for words in tokenised), dtype=np.int64, count=count)
    rows = np.repeat(np.arange(count, dtype=np.int64), lengths)
    if flat.size:
        # damped counts of each (text, word), times the words' feature rows
        combined = rows * len(local) + flat
        if count * len(local) <= _DENSE_COUNTS:  # counting beats sorting while it fits
            tf_all = np.bincount(combined, minlength=count * len(local))
            keys = np.flatnonzero(tf_all)
            tf = tf_all[keys]
        else:
            keys, tf = np.unique(combined, return_counts=True)
        damp = (1.0 + np.log(tf)).astype(np.float32)
        text_of, word_of = np.divmod(keys, len(local))
        ptr, index, values = _feature_rows(global_ids)
        # every (text, word) pair adds its damped word row: gather the rows' entries
        sizes = ptr[word_of + 1] - ptr[word_of]
        starts = np.repeat(ptr[word_of] - np.cumsum(sizes) + sizes, sizes)
        entries = starts + np.arange(int(sizes.sum()), dtype=np.int64)
        flat_index = np.repeat(text_of, sizes) * DIMENSIONS + index[entries]
        weights = np.repeat(damp, sizes) * values[entries]
        out += (
            np.bincount(flat_index, weights=weights, minlength=out.size)
            .reshape(out.shape)
            .astype(np.float32)
        )
        # bigrams: adjacent words within one text
        same = rows[1:] == rows[:-1]
        if same.any():
            with _WORDS.lock:
                hashes = np.array([_WORDS.hashes[int(i)] for i in global_ids], dtype=np.uint64)
            first, second = hashes[flat[:-1][same]], hashes[flat[1:][same]]
            with np.errstate(over="ignore"):
                mixed = (first * _MIX) ^ second
                mixed ^= mixed >> np.uint64(31)
                mixed *= _MIX2
                mixed ^= mixed >> np.uint64(29)
            pair_rows = rows[1:][same]
            with np.errstate(over="ignore"):  # one key per (text, bigram)
                keyed = mixed ^ (pair_rows.astype(np.uint64) * _MIX2)
            _, at, tf2 = np.unique(keyed, return_index=True, return_counts=True)
            bigram = mixed[at]
            buckets = (bigram % np.uint64(DIMENSIONS)).astype(np.int64)
            signs = np.where(bigram >> np.uint64(63), 1.0, -1.0).astype(np.float32)
            weights = signs * (1.0 + np.log(tf2)).astype(np.float32)
            flat_index = pair_rows[at] * DIMENSIONS + buckets
            out += (
                np.bincount(flat_index, weights=weights, minlength=out.size)
                .reshape(out.shape)
                .astype(np.float32)
            )
    norms = np.linalg.norm(out, axis=1)
    empty = norms == 0
    if empty.any():  # no words, or every feature cancelled out: fall back to the marker
        marker, sign = _bucket(_digest(EMPTY_FEATURE))
        out[empty] = 0.0
        out[empty, marker] = sign
        norms[empty] = 1.0
    out /= norms[:, None]
    return out


def _feature_rows(
    global_ids: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The given cached words' sparse rows as CSR arrays: (row starts + end, columns, values)."""
    with _WORDS.lock:
        parts = [_WORDS.rows[int(i)] for i in global_ids]
    sizes = np.fromiter((p[0].size for p in parts), dtype=np.int64, count=len(parts))
    ptr = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return ptr, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def hash_vector(text: str) -> list[float]:
    """The unit-length memls-hash vector of one text."""
    row = hash_matrix([text])[0].astype(np.float64)
    return [float(v) for v in row / np.linalg.norm(row)]
