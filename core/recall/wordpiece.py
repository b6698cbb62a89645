"""BERT WordPiece tokenising in plain Python, for a search's one short query.

A whole-process search embeds a single query; loading the ``tokenizers`` library and
building its tokenizer from ``tokenizer.json`` costs that process ~25 ms, more than the
query's forward pass. This module reads the same ``tokenizer.json`` (the vocabulary is one
``json.loads``) and reproduces what ``tokenizers`` does for it, step by step:

* ``BertNormalizer`` (clean text, CJK spacing, accents stripped via NFD, lowercase),
* ``BertPreTokenizer`` (split on whitespace, each punctuation character on its own),
* ``WordPiece`` (greedy longest prefix, ``##`` continuations, ``[UNK]`` for a word that
  does not split or is longer than ``max_input_chars_per_word``),
* ``TemplateProcessing`` ``[CLS] A [SEP]`` and truncation to ``max_length`` tokens.

It only answers where it is sure to agree with the library (:meth:`WordPiece.ids` returns
None otherwise, and the caller uses ``tokenizers``): a ``tokenizer.json`` of exactly that
shape, text that holds no special token such as ``[SEP]`` (the library matches those
before normalising), and characters from the Latin, combining-accent, punctuation, currency,
letter-like, arrow and mathematical blocks whose Unicode category and decomposition have
not changed since Unicode 3.2 (so Python's tables and the Rust crates' agree on them).
Tests pin its ids to the library's, character by character over those blocks.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

_PREFIX = "##"
_NORMALIZER = {
    "type": "BertNormalizer",
    "clean_text": True,
    "handle_chinese_chars": True,
    "strip_accents": None,
    "lowercase": True,
}
SAFE_BLOCKS = (
    (0x0000, 0x036F),  # ASCII, Latin-1, Latin Extended-A/B, IPA, modifiers, combining accents
    (0x2000, 0x206F),  # general punctuation (dashes, quotes, ellipsis, spaces)
    (0x20A0, 0x20CF),  # currency
    (0x2100, 0x22FF),  # letter-like symbols, number forms, arrows, mathematical operators
)
"""The blocks whose characters the plain path may handle (after the stability check)."""

_Entry = tuple[str, str] | None
_entries: dict[str, _Entry] = {}


def _is_punct(char: str) -> bool:
    """BertPreTokenizer's punctuation: ASCII punctuation or a Unicode P* category."""
    code = ord(char)
    ascii_punct = 0x21 <= code <= 0x2F or 0x3A <= code <= 0x40 or 0x5B <= code <= 0x60
    return ascii_punct or 0x7B <= code <= 0x7E or unicodedata.category(char)[0] == "P"


def _entry(char: str) -> _Entry:
    """How the normaliser and pre-tokeniser treat one character, or None where this module
    does not vouch for agreeing with the library.

    ``("drop", "")``: removed before splitting (NUL, control and format characters other
    than tab, newline and carriage return); ``("space", "")``: a word break;
    ``("punct", s)``: each character of ``s`` is a word of its own; ``("word", s)``: ``s``
    continues the current word (``s`` is the character after NFD without nonspacing marks,
    lowercased, as BertNormalizer leaves it).
    """
    code = ord(char)
    if not any(low <= code <= high for low, high in SAFE_BLOCKS):
        return None
    old = unicodedata.ucd_3_2_0
    category = unicodedata.category(char)
    decomposed = unicodedata.normalize("NFD", char)
    if old.category(char) != category or old.normalize("NFD", char) != decomposed:
        return None
    if category == "Cn":  # unassigned: the library keeps it (and makes it [UNK])
        return None
    if char in "\t\n\r":
        return ("space", "")
    if code == 0 or category[0] == "C":
        return ("drop", "")
    if char.isspace():
        return ("space", "")
    folded = "".join(c for c in decomposed if unicodedata.category(c) != "Mn").lower()
    if any(c.isspace() or unicodedata.category(c)[0] == "C" for c in folded):
        return None
    marks = [_is_punct(c) for c in folded]
    if all(marks) and folded:
        return ("punct", folded)
    if any(marks):
        return None
    return ("word", folded)


def entry(char: str) -> _Entry:
    """:func:`_entry`, computed once per character."""
    if char not in _entries:
        _entries[char] = _entry(char)
    return _entries[char]


class WordPiece:
    """The vocabulary and settings of one ``tokenizer.json``, ready to give token ids."""

    def __init__(
        self,
        vocab: dict[str, int],
        *,
        unk: str,
        max_chars: int,
        cls: int,
        sep: int,
        specials: tuple[str, ...],
        max_length: int,
    ) -> None:
        self.vocab = vocab
        self.unk_id = vocab[unk]
        self.max_chars = max_chars
        self.cls = cls
        self.sep = sep
        self.specials = specials
        self.max_length = max_length

    @classmethod
    def from_file(cls, path: Path, *, max_length: int) -> WordPiece | None:
        """The tokenizer in ``path``, or None when it is not the BERT shape this reproduces."""
        try:
            spec = json.loads(path.read_bytes())
            return cls._from_spec(spec, max_length)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    @classmethod
    def _from_spec(cls, spec: dict[str, Any], max_length: int) -> WordPiece | None:
        model = spec["model"]
        post = spec["post_processor"]
        if (
            spec["normalizer"] != _NORMALIZER
            or spec["pre_tokenizer"] != {"type": "BertPreTokenizer"}
            or model["type"] != "WordPiece"
            or model["continuing_subword_prefix"] != _PREFIX
            or post["type"] != "TemplateProcessing"
            or [list(piece) for piece in post["single"]]
            != [["SpecialToken"], ["Sequence"], ["SpecialToken"]]
        ):
            return None
        first, _, last = post["single"]
        special_ids = post["special_tokens"]
        cls_ids = special_ids[first["SpecialToken"]["id"]]["ids"]
        sep_ids = special_ids[last["SpecialToken"]["id"]]["ids"]
        if len(cls_ids) != 1 or len(sep_ids) != 1 or max_length < 2:
            return None
        vocab = model["vocab"]
        if not isinstance(vocab, dict) or model["unk_token"] not in vocab:
            return None
        specials = tuple(str(token["content"]) for token in spec.get("added_tokens") or ())
        return cls(
            vocab,
            unk=model["unk_token"],
            max_chars=int(model["max_input_chars_per_word"]),
            cls=int(cls_ids[0]),
            sep=int(sep_ids[0]),
            specials=specials,
            max_length=max_length,
        )

    def ids(self, text: str) -> list[int] | None:
        """``[CLS] pieces [SEP]`` ids of ``text`` truncated to ``max_length``, or None when
        this text is outside what the plain-Python path reproduces exactly."""
        if any(token in text for token in self.specials):
            return None
        words = _words(text)
        if words is None:
            return None
        pieces: list[int] = []
        for word in words:
            pieces.extend(self._word_ids(word))
        return [self.cls, *pieces[: self.max_length - 2], self.sep]

    def _word_ids(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk_id]
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found: int | None = None
            while start < end:
                piece = word[start:end] if start == 0 else _PREFIX + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk_id]
            out.append(found)
            start = end
        return out


def _words(text: str) -> list[str] | None:
    """Normalised words and punctuation marks in order, or None for a character this
    module does not handle."""
    words: list[str] = []
    current: list[str] = []
    for char in text:
        found = entry(char)
        if found is None:
            return None
        kind, folded = found
        if kind == "word":
            current.append(folded)
        elif kind != "drop":  # a dropped character does not break the word
            if current:
                words.append("".join(current))
                current = []
            if kind == "punct":
                words.extend(folded)
    if current:
        words.append("".join(current))
    return [word for word in words if word]
