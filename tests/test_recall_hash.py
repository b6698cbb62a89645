"""memls-hash: the fast path computes exactly the revision-2 feature scheme.

The reference below is the scheme written out plainly, one text and one feature at a time
(the way its docstring states it); the vectorised ``hash_matrix`` must agree with it to float
tolerance on every kind of text, in any batch, with cold or warm caches, and across threads.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from memls.core.recall import hashmodel
from memls.core.recall.hashmodel import DIMENSIONS, REVISION, hash_matrix, hash_vector

_M64 = (1 << 64) - 1
_MIX = 0x9E3779B97F4A7C15
_MIX2 = 0xBF58476D1CE4E5B9

TEXTS = [
    "",
    "   ",
    "?! -- ...",
    "The checkpoint failed on branch feature/recall",
    "checkpoint failures on the recall branch",
    "a a a a b b a b a b",  # repeated words and repeated bigrams (damped counts)
    "x_y __init__ 3.14 foo-bar foo_bar FOO BAR",
    "tab\tseparated\x1cfile\x0bvertical\x0cform\rreturn\nnew line",
    "Ünïcödé naïve café ŞEHİR straße — “quoted” ‘single’ a\u00a0b",
    "日本語のテキスト と English mixed 123",
    "İstanbul ǅemal ＡＢＣ １２３ Ⅻ x²",
    "don’t can't it's l'été",
    "first — second – third … fourth • fifth → sixth · seventh",  # marks made spaces
    "café — “naïve” résumé…",  # marks made spaces, accents still on the regex path
    "Lunch menu: pasta with tomato sauce",
    "word " * 40 + "other " * 3,
]


def _digest(feature: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )


def _reference(text: str) -> np.ndarray:
    """Revision 2, written out: features of each distinct word and bigram, damped."""
    vector = [0.0] * DIMENSIONS

    def add(value: int, weight: float) -> None:
        vector[value % DIMENSIONS] += weight if value >> 63 else -weight

    words = re.findall(r"\w+", text.lower())
    for word, tf in Counter(words).items():
        damp = 1.0 + math.log(tf)
        add(_digest("w:" + word), damp)
        marked = f"<{word}>"
        for n in (3, 4, 5):
            for i in range(len(marked) - n + 1):
                add(_digest("c:" + marked[i : i + n]), 0.5 * damp)
    for (first, second), tf in Counter(pairwise(words)).items():
        mixed = ((_digest("w:" + first) * _MIX) & _M64) ^ _digest("w:" + second)
        mixed ^= mixed >> 31
        mixed = (mixed * _MIX2) & _M64
        mixed ^= mixed >> 29
        add(mixed, 1.0 + math.log(tf))
    out = np.array(vector)
    norm = float(np.linalg.norm(out))
    if norm == 0:  # no words: the marker feature alone
        out[:] = 0.0
        value = _digest("\x00empty")
        out[value % DIMENSIONS] = 1.0 if value >> 63 else -1.0
        return out
    return out / norm


@pytest.fixture
def cold_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh word and n-gram cache, so the tests also run the 'new word' path."""
    monkeypatch.setattr(hashmodel, "_WORDS", hashmodel._Words())


def test_revision_is_still_two() -> None:
    """The fast path must not change vectors; if features change, REVISION must move."""
    assert REVISION == 2


def test_tokens_equal_the_word_regex() -> None:
    extra = ["a_b-c.d", "ÀÉÎ õü", "\u2028line\u2029sep", "mixed ascii and ß", "_", "__", "9x"]
    for text in TEXTS + extra:
        assert hashmodel._tokens(text) == re.findall(r"\w+", text.lower()), text


@pytest.mark.usefixtures("cold_cache")
def test_matrix_equals_the_plain_reference_in_any_batch() -> None:
    expected = np.array([_reference(t) for t in TEXTS])
    for size in (1, 3, len(TEXTS)):
        for start in range(0, len(TEXTS), size):
            got = hash_matrix(TEXTS[start : start + size])
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, expected[start : start + size], atol=2e-6)
    # warm cache, reversed order: still the same vectors
    np.testing.assert_allclose(hash_matrix(TEXTS[::-1]), expected[::-1], atol=2e-6)
    assert hash_vector(TEXTS[3]) == pytest.approx(list(expected[3]), abs=2e-6)


@pytest.mark.usefixtures("cold_cache")
def test_generated_chunks_equal_the_reference() -> None:
    rng = np.random.default_rng(3)
    vocabulary = [f"w{i}" for i in range(50)] + ["Recall", "recall", "RECALL.", "naïve,"]
    texts = [" ".join(rng.choice(vocabulary, size=int(rng.integers(0, 120)))) for _ in range(40)]
    expected = np.array([_reference(t) for t in texts])
    np.testing.assert_allclose(hash_matrix(texts), expected, atol=2e-6)


@pytest.mark.usefixtures("cold_cache")
def test_cache_resets_keep_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny caps force word-cache and n-gram-cache resets between and within batches."""
    monkeypatch.setattr(hashmodel, "_CACHE_WORDS", 12)
    monkeypatch.setattr(hashmodel, "_CACHE_GRAMS", 30)
    expected = np.array([_reference(t) for t in TEXTS])
    for _ in range(2):
        for start in range(0, len(TEXTS), 2):
            np.testing.assert_allclose(
                hash_matrix(TEXTS[start : start + 2]), expected[start : start + 2], atol=2e-6
            )


@pytest.mark.usefixtures("cold_cache")
def test_threads_sharing_the_cache_get_the_same_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hashmodel, "_CACHE_WORDS", 40)  # resets happen while others read
    rng = np.random.default_rng(5)
    texts = [" ".join(f"t{int(i)}" for i in rng.integers(0, 300, size=30)) for _ in range(60)]
    expected = np.array([_reference(t) for t in texts])
    failures: list[str] = []

    def work(offset: int) -> None:
        for round_ in range(5):
            start = (offset * 7 + round_ * 11) % 50
            got = hash_matrix(texts[start : start + 10])
            if not np.allclose(got, expected[start : start + 10], atol=2e-6):
                failures.append(f"thread {offset} round {round_}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_unit_rows_and_empty_marker() -> None:
    matrix = hash_matrix(["", "?!", "word"])
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(matrix[0], matrix[1])  # no words: the same marker vector
    assert np.count_nonzero(matrix[0]) == 1
    assert hash_matrix([]).shape == (0, DIMENSIONS)
