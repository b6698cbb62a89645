"""memls-hash: a weightless embedding from hashed word and character n-grams.

It needs no download and gives the same vector on every machine and Python run (blake2b,
not the salted ``hash()``), so tests are deterministic and recall still has a semantic-ish
mode when no neural model is installed. Features: lower-cased word unigrams and bigrams,
and character 3- to 5-grams of each word with boundary marks (which catch shared stems and
typos). Each feature lands in one of ``DIMENSIONS`` buckets with a hashed sign, so
collisions cancel rather than pile up; counts are damped to 1 + log(tf) and the vector is
L2-normalised.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise

DIMENSIONS = 512
CHAR_NGRAMS = (3, 4, 5)
CHAR_WEIGHT = 0.5  # a word brings several char n-grams; keep words the stronger signal
EMPTY_FEATURE = "\x00empty"  # gives the empty text a unit vector instead of zeros

_WORD = re.compile(r"\w+")


def features(text: str) -> Iterator[tuple[str, float]]:
    """Every (feature, weight) occurrence in ``text``."""
    words = _WORD.findall(text.lower())
    for word in words:
        yield "w:" + word, 1.0
        marked = f"<{word}>"
        for n in CHAR_NGRAMS:
            for i in range(len(marked) - n + 1):
                yield "c:" + marked[i : i + n], CHAR_WEIGHT
    for first, second in pairwise(words):
        yield f"b:{first} {second}", 1.0


def _bucket(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % DIMENSIONS, (1.0 if value >> 63 else -1.0)


def hash_vector(text: str) -> list[float]:
    """The unit-length memls-hash vector of ``text`` (pure Python, no numpy needed)."""
    counts: Counter[str] = Counter()
    weights: dict[str, float] = {}
    for feature, weight in features(text):
        counts[feature] += 1
        weights[feature] = weight
    if not counts:
        counts[EMPTY_FEATURE] = 1
        weights[EMPTY_FEATURE] = 1.0
    vector = [0.0] * DIMENSIONS
    for feature, tf in counts.items():
        index, sign = _bucket(feature)
        vector[index] += sign * weights[feature] * (1.0 + math.log(tf))
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:  # every feature cancelled out in its bucket: fall back to the marker
        index, sign = _bucket(EMPTY_FEATURE)
        vector[index], norm = sign, 1.0
    return [v / norm for v in vector]
