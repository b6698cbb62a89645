"""The plain-Python WordPiece (a cold search's query tokeniser) gives the ``tokenizers``
library's ids wherever it answers: character by character over the blocks it handles, on
random text (hypothesis), on long text (truncation), and on MiniLM's own tokenizer.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from memls.core.recall import minilm
from memls.core.recall.minilm import ModelWeightsNotFoundError, resolve_model_dir
from memls.core.recall.wordpiece import SAFE_BLOCKS, WordPiece, entry

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_WORD_TEXT = "the parser check ##point ##er fail ##ed un ##able re ##call branch why did we café"
WORDS = [*_WORD_TEXT.split(" "), "naive", "##ly", *"øæßðþłœωµ", "i", "##i", "##s", "##ing"]
MAX_LENGTH = 24


def _library(path: Path, max_length: int) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


@pytest.fixture(scope="module")
def small_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BERT-shaped tokenizer.json with a small vocabulary (single characters with their
    ``##`` forms, a few words and word pieces), saved by the library itself."""
    vocab: dict[str, int] = {}
    for token in SPECIALS:
        vocab[token] = len(vocab)
    singles = [chr(c) for c in range(0x21, 0x7F)] + list("øæßðþłœωµ…—–‘’“”€→")
    for token in [*singles, *("##" + c for c in singles), *WORDS]:
        vocab.setdefault(token, len(vocab))
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=12))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.add_special_tokens(SPECIALS)
    path = tmp_path_factory.mktemp("bert") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def _pair(path: Path, max_length: int = MAX_LENGTH) -> tuple[WordPiece, Tokenizer]:
    plain = WordPiece.from_file(path, max_length=max_length)
    assert plain is not None, "a BERT tokenizer.json must be read by the plain path"
    return plain, _library(path, max_length)


def _safe_chars() -> list[str]:
    return [
        chr(code)
        for low, high in SAFE_BLOCKS
        for code in range(low, high + 1)
        if entry(chr(code)) is not None
    ]


def _every_safe_character_agrees(path: Path, max_length: int) -> None:
    plain, library = _pair(path, max_length)
    contexts = ("{}", "a{}b", "{}{}", "x {}", "{}ing", "un{}", "café{}naïve")
    checked = 0
    for char in _safe_chars():
        for context in contexts:
            text = context.format(char, char)
            ids = plain.ids(text)
            assert ids is not None, repr(text)
            assert ids == library.encode(text).ids, repr(text)
            checked += 1
    assert checked > 5_000


def test_every_character_it_handles_tokenises_as_the_library_does(small_bert: Path) -> None:
    _every_safe_character_agrees(small_bert, MAX_LENGTH)


def test_it_handles_latin_text_punctuation_and_accents() -> None:
    for char in "aZ09 \t\n.,;:!?'\"()[]{}-_/\\@#$%&*+=<>|~`^éÀçñüßøÆ—–…‘’“”€→×÷":
        assert entry(char) is not None, repr(char)


def test_it_declines_text_it_cannot_vouch_for(small_bert: Path) -> None:
    plain, _ = _pair(small_bert)
    for text in ("中文", "emoji 😀", "Ж", "a [SEP] b", "[MASK]", "\u2065", "x\u0378"):
        assert plain.ids(text) is None, repr(text)


def test_a_tokenizer_of_another_shape_is_not_read(small_bert: Path, tmp_path: Path) -> None:
    spec = json.loads(small_bert.read_text(encoding="utf-8"))
    spec["normalizer"]["strip_accents"] = False
    other = tmp_path / "tokenizer.json"
    other.write_text(json.dumps(spec), encoding="utf-8")
    assert WordPiece.from_file(other, max_length=MAX_LENGTH) is None
    assert WordPiece.from_file(tmp_path / "missing.json", max_length=MAX_LENGTH) is None


def test_long_text_is_truncated_as_the_library_truncates(small_bert: Path) -> None:
    plain, library = _pair(small_bert)
    for words in (10, 21, 22, 23, 40):
        text = " ".join(["checkpoint"] * words)
        assert plain.ids(text) == library.encode(text).ids
    long_word = "a" * 13  # over max_input_chars_per_word: one [UNK]
    assert plain.ids(long_word) == library.encode(long_word).ids == [2, 1, 3]


_ALPHABET = st.sampled_from(
    [
        *"abcdefghij ABC .,!?'-\t\n",
        *("\x00", "\x07", "\xa0", "\xad", "é", "Ø", "ß", "ł", "œ", "İ", "ǅ", "ʼ", "\u0301"),
        *("\u2014", "\u2019", "\u2026", "\u2028", "€", "→", "∑", "中", "😀", "[SEP]", "[UNK]"),
        *("ch", "eck", "point", "parser", "ing", "un", "able"),
    ]
)


@pytest.fixture(scope="module")
def small_pair(small_bert: Path) -> tuple[WordPiece, Tokenizer]:
    return _pair(small_bert)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(_ALPHABET, max_size=40).map("".join))
def test_random_text_gets_the_library_ids_or_none(
    small_pair: tuple[WordPiece, Tokenizer], text: str
) -> None:
    plain, library = small_pair
    ids = plain.ids(text)
    if ids is not None:
        assert ids == library.encode(text).ids
    elif text.isascii() and "[" not in text:
        pytest.fail(f"plain ASCII text declined: {text!r}")


# --- MiniLM's own tokenizer ---------------------------------------------------------------


def _weights() -> Path | None:
    try:
        return resolve_model_dir()
    except ModelWeightsNotFoundError:
        return None


needs_weights = pytest.mark.skipif(_weights() is None, reason="MiniLM weights absent")


@needs_weights
def test_minilm_tokenizer_json_agrees_character_by_character() -> None:
    folder = _weights()
    assert folder is not None
    _every_safe_character_agrees(folder / "tokenizer.json", minilm.MAX_TOKENS)


@needs_weights
def test_minilm_query_vectors_equal_the_library_path(monkeypatch: pytest.MonkeyPatch) -> None:
    queries = [
        "why did the parser checkpoint fail on the recall branch",
        "Héllo — what did Caroline say about the adoption agency?",
        "emoji 😀 goes through the library",
        " ".join(["checkpoint"] * 300),
    ]
    model = minilm.MiniLM(resolve_model_dir())
    plain = [model.encode([q]) for q in queries]
    library_ids = [e.ids for e in model._tokenizer.encode_batch(queries)]
    assert [model.token_ids([q])[0] for q in queries] == library_ids
    monkeypatch.setattr(minilm, "_PLAIN_TOKENIZE_MAX", 0)
    for query, vector in zip(queries, plain, strict=True):
        assert np.array_equal(model.encode([query]), vector)


@needs_weights
def test_a_single_query_embeds_without_loading_the_tokenizers_library() -> None:
    code = (
        "import sys\n"
        "from memls.core.recall.minilm import load_minilm\n"
        "load_minilm().encode(['what did we decide about the parser'])\n"
        "print('tokenizers' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"
