"""memls-hash: a weightless embedding from hashed word and character n-grams.

It needs no download and gives the same vector on every machine and Python run (blake2b,
not the salted ``hash()``), so tests are deterministic and recall still has a semantic-ish
mode when no neural model is installed. Features: lower-cased words (weight 1) with their
character 3- to 5-grams with boundary marks (weight 0.5 each; they catch shared stems and
typos), and word bigrams (weight 1). Each feature lands in one of ``DIMENSIONS`` buckets
with a hashed sign, so collisions cancel rather than pile up. A word or bigram that occurs
``tf`` times in a text counts ``1 + log(tf)``; the vector is L2-normalised.

Speed (issue 13: ≥ 10,000 chunks/s): each distinct word's features are hashed once per
process and kept as a small sparse row in flat arrays (character n-gram digests are cached
too, so a new word mostly reuses its n-grams' hashes); ASCII text is split by one
``str.translate`` instead of a regular expression. A batch of texts becomes one damped
word-count matrix times the batch's word-feature rows, plus the bigrams, whose buckets come
from the two words' cached 64-bit hashes with numpy integer arithmetic. ``REVISION`` names
this feature scheme: stores embedded with another revision are re-embedded.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

DIMENSIONS = 512
CHAR_NGRAMS = (3, 4, 5)
CHAR_WEIGHT = 0.5  # a word brings several char n-grams; keep words the stronger signal
EMPTY_FEATURE = "\x00empty"  # gives the empty text a unit vector instead of zeros
REVISION = 2
"""Feature scheme revision (1: per-feature counts in pure Python; 2: per-word, vectorised)."""

_Item = TypeVar("_Item", bound=np.generic)
_WORD = re.compile(r"\w+")
# ASCII text: letters lower-cased, digits and "_" kept, every other character a space, so
# ``split()`` yields exactly what ``\w+`` finds in the lower-cased text.
_ASCII_WORDS = str.maketrans(
    {c: (chr(c).lower() if chr(c).isalnum() or chr(c) == "_" else " ") for c in range(128)}
)
# Non-word characters common in otherwise ASCII text (dashes, curly quotes, ellipsis, bullets,
# arrows, no-break space): replaced by spaces, they leave the text on the ASCII path.
_COMMON_MARKS = tuple(
    mark
    for mark in "\u2014\u2013\u2019\u2018\u201c\u201d\u2026\u00b7\u2022\u2192\u00a0"
    if not _WORD.match(mark)
)
_CACHE_WORDS = 200_000
_CACHE_GRAMS = 250_000  # ~25 MB at most; one shared int object per packed code
_DENSE_MIN = 1 << 12
_DENSE_PER_KEY = 16  # bincount over at most this many slots per key, else sort
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_SIGN_BIT = DIMENSIONS  # a packed feature: its bucket, plus this when its sign is +1
_CODES = list(range(2 * DIMENSIONS))


def _digest(feature: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )


def _bucket(value: int) -> tuple[int, float]:
    return value % DIMENSIONS, (1.0 if value >> 63 else -1.0)


def _packed(value: int) -> int:
    return _CODES[value % DIMENSIONS + (_SIGN_BIT if value >> 63 else 0)]


def _tokens(text: str) -> list[str]:
    """The lower-cased ``\\w+`` words of ``text``."""
    if not text.isascii():
        for mark in _COMMON_MARKS:  # dashes and quotes alone should not cost the slow path
            if mark in text:
                text = text.replace(mark, " ")
        if not text.isascii():
            return _WORD.findall(text.lower())
    return text.translate(_ASCII_WORDS).split()


class _Snapshot:
    """The word cache's arrays as they were when a batch's words were looked up.

    Arrays are only appended to in place past their used length, or replaced (growth and
    reset), so a snapshot stays valid while other threads add words."""

    __slots__ = ("columns", "count", "hashes", "sizes", "starts", "values")

    def __init__(self, words: _Words) -> None:
        self.count = words.count
        self.hashes = words.hashes
        self.starts = words.starts
        self.sizes = words.sizes
        self.columns = words.columns
        self.values = words.values


class _Words:
    """Per-word sparse feature rows and 64-bit word hashes, computed once per process.

    Word ``i``'s row is ``columns``/``values`` from ``starts[i]`` for ``sizes[i]`` entries;
    ``hashes[i]`` is its 64-bit word hash (bigram buckets mix two of them)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.grams: dict[str, int] = {}
        self._reset()

    def _reset(self) -> None:
        self.index: dict[str, int] = {}
        self.count = 0
        self.used = 0
        self.hashes = np.zeros(1024, dtype=np.uint64)
        self.starts = np.zeros(1024, dtype=np.int64)
        self.sizes = np.zeros(1024, dtype=np.int64)
        self.columns = np.zeros(1 << 14, dtype=np.int64)
        self.values = np.zeros(1 << 14, dtype=np.float64)

    def lookup(self, words: list[str]) -> tuple[npt.NDArray[np.int64], _Snapshot]:
        """Cache ids of ``words`` (adding the new ones) with a snapshot of the cache."""
        with self.lock:
            try:
                ids = np.fromiter(
                    map(self.index.__getitem__, words), dtype=np.int64, count=len(words)
                )
            except KeyError:
                unique = dict.fromkeys(words)
                new = [w for w in unique if w not in self.index]
                if self.count + len(new) > _CACHE_WORDS:
                    self._reset()
                    new = list(unique)
                self._add(new)
                ids = np.fromiter(
                    map(self.index.__getitem__, words), dtype=np.int64, count=len(words)
                )
            return ids, _Snapshot(self)

    def _add(self, words: list[str]) -> None:
        grams = self.grams
        marked = [f"<{w}>" for w in words]
        per_word = [
            [m[i : i + n] for n in CHAR_NGRAMS for i in range(len(m) - n + 1)] for m in marked
        ]
        all_grams = list(chain.from_iterable(per_word))
        missing = [g for g in dict.fromkeys(all_grams) if g not in grams]
        if len(grams) + len(missing) > _CACHE_GRAMS:
            grams.clear()
            missing = list(dict.fromkeys(all_grams))
        for gram in missing:
            grams[gram] = _packed(_digest("c:" + gram))
        word_hashes = [_digest("w:" + w) for w in words]
        # one entry per feature: (new word, packed bucket and sign, weight)
        counts = np.fromiter((len(g) + 1 for g in per_word), dtype=np.int64, count=len(words))
        codes = np.fromiter(
            chain(map(_packed, word_hashes), map(grams.__getitem__, all_grams)),
            dtype=np.int64,
            count=len(words) + len(all_grams),
        )
        owners = np.concatenate(
            [
                np.arange(len(words), dtype=np.int64),
                np.repeat(np.arange(len(words), dtype=np.int64), counts - 1),
            ]
        )
        weights = np.full(codes.size, CHAR_WEIGHT)
        weights[: len(words)] = 1.0
        weights *= np.where(codes >= _SIGN_BIT, 1.0, -1.0)
        keys, inverse = np.unique(owners * DIMENSIONS + codes % DIMENSIONS, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=weights, minlength=keys.size)
        owner_of, column = np.divmod(keys, DIMENSIONS)
        sizes = np.bincount(owner_of, minlength=len(words))
        first, last = self.count, self.count + len(words)
        if last > self.hashes.size:
            grow = max(last, 2 * self.hashes.size)
            self.hashes = _grown(self.hashes, grow)
            self.starts = _grown(self.starts, grow)
            self.sizes = _grown(self.sizes, grow)
        end = self.used + keys.size
        if end > self.columns.size:
            grow = max(end, 2 * self.columns.size)
            self.columns = _grown(self.columns, grow)
            self.values = _grown(self.values, grow)
        self.hashes[first:last] = np.array(word_hashes, dtype=np.uint64)
        self.sizes[first:last] = sizes
        self.starts[first:last] = self.used + np.cumsum(sizes) - sizes
        self.columns[self.used : end] = column
        self.values[self.used : end] = summed
        for offset, word in enumerate(words):
            self.index[word] = first + offset
        self.count, self.used = last, end


def _grown(array: npt.NDArray[_Item], size: int) -> npt.NDArray[_Item]:
    bigger: npt.NDArray[_Item] = np.zeros(size, dtype=array.dtype)
    bigger[: array.size] = array
    return bigger


_WORDS = _Words()


_ALLOCATOR_WARMED = False


def _warm_allocator() -> None:
    """Free one 8 MB block once per process.

    glibc serves blocks over its mmap threshold (128 KB at start) straight from the kernel
    and trims the heap's top past twice that, so every batch would fault its few MB of
    temporaries in again, zero-filled: half the time of a 64-text batch. Freeing a larger
    mapped block raises both thresholds (glibc's own adaptive rule, which any bigger numpy
    workload in the process triggers as well); elsewhere this is one allocation."""
    global _ALLOCATOR_WARMED
    if not _ALLOCATOR_WARMED:
        block = np.empty(1 << 23, dtype=np.uint8)
        del block
        _ALLOCATOR_WARMED = True


def hash_matrix(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Unit-length memls-hash vectors of ``texts``, one float32 row each."""
    _warm_allocator()
    count = len(texts)
    out = np.zeros((count, DIMENSIONS), dtype=np.float32)
    if count == 0:
        return out
    tokenised = [_tokens(text) for text in texts]
    words = list(chain.from_iterable(tokenised))
    if words:
        ids, cache = _WORDS.lookup(words)
        vocabulary = cache.count
        lengths = np.fromiter(map(len, tokenised), dtype=np.int64, count=count)
        rows = np.repeat(np.arange(count, dtype=np.int64), lengths)
        # damped counts of each (text, word), times the words' feature rows
        keys, tf = _counts(rows * vocabulary + ids, count * vocabulary)
        damp = 1.0 + np.log(tf)
        text_of, word_of = np.divmod(keys, vocabulary)
        # every (text, word) pair adds its damped word row: gather the rows' entries
        sizes = cache.sizes[word_of]
        ends = np.cumsum(sizes)
        entries = np.repeat(cache.starts[word_of] - ends + sizes, sizes)
        entries += np.arange(entries.size, dtype=np.int64)
        flat_index = np.repeat(text_of * DIMENSIONS, sizes)
        flat_index += cache.columns[entries]
        weights = cache.values[entries]
        weights *= np.repeat(damp, sizes)
        # bigrams: adjacent words within one text, counted per (text, first, second)
        same = rows[1:] == rows[:-1]
        if same.any():
            pair_rows = rows[1:][same]
            firsts, seconds = ids[:-1][same], ids[1:][same]
            span = count * vocabulary * vocabulary
            if span < 1 << 62:
                pair_keys, tf2 = _counts(
                    (pair_rows * vocabulary + firsts) * vocabulary + seconds, span
                )
                pair_text, pair = np.divmod(pair_keys, vocabulary * vocabulary)
                first_of, second_of = np.divmod(pair, vocabulary)
            else:  # keys would overflow: count the triples themselves
                triples, tf2 = np.unique(
                    np.stack([pair_rows, firsts, seconds], axis=1), axis=0, return_counts=True
                )
                pair_text, first_of, second_of = triples.T
            with np.errstate(over="ignore"):
                mixed = (cache.hashes[first_of] * _MIX) ^ cache.hashes[second_of]
                mixed ^= mixed >> np.uint64(31)
                mixed *= _MIX2
                mixed ^= mixed >> np.uint64(29)
            buckets = (mixed % np.uint64(DIMENSIONS)).astype(np.int64)
            signs = np.where(mixed >> np.uint64(63), 1.0, -1.0)
            flat_index = np.concatenate([flat_index, pair_text * DIMENSIONS + buckets])
            weights = np.concatenate([weights, signs * (1.0 + np.log(tf2))])
        out += np.bincount(flat_index, weights=weights, minlength=out.size).reshape(out.shape)
    norms = np.linalg.norm(out, axis=1)
    empty = norms == 0
    if empty.any():  # no words, or every feature cancelled out: fall back to the marker
        marker, sign = _bucket(_digest(EMPTY_FEATURE))
        out[empty] = 0.0
        out[empty, marker] = sign
        norms[empty] = 1.0
    out /= norms[:, None]
    return out


def _counts(
    keys: npt.NDArray[np.int64], span: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct ``keys`` (sorted) and how often each occurs; all keys are below
    ``span``: counting by ``bincount`` beats sorting while that array stays small."""
    if span <= max(_DENSE_MIN, _DENSE_PER_KEY * keys.size):
        all_counts = np.bincount(keys, minlength=span)
        distinct = np.flatnonzero(all_counts)
        return distinct, all_counts[distinct]
    ordered = np.sort(keys)
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    return ordered[starts], np.diff(np.append(starts, ordered.size))


def hash_vector(text: str) -> list[float]:
    """The unit-length memls-hash vector of one text."""
    row = hash_matrix([text])[0].astype(np.float64)
    return [float(v) for v in row / np.linalg.norm(row)]
