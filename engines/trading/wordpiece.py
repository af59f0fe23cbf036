"""BERT's uncased WordPiece tokenizer, written out so the app needs no ``transformers``/``tokenizers``.

Two stages as in Google's reference ``tokenization.py`` (Devlin et al., "BERT", NAACL 2019) and the
model's own ``tokenizer_config.json`` (``do_lower_case: true``, ``tokenize_chinese_chars: true``,
accents stripped because ``strip_accents`` is unset while lower-casing):

1. basic: drop control characters, map whitespace to spaces, space out CJK ideographs, lower-case,
   strip accents (NFD, drop combining marks), split on whitespace and on every punctuation character;
2. WordPiece: greedy longest-match-first against the vocabulary, continuation pieces prefixed ``##``;
   a word with no full cover (or longer than 100 characters) becomes ``[UNK]``.

Before both stages the five special tokens, written literally in the text, are cut out whole: the
model's ``tokenizer.json`` declares them added tokens with ``normalized: false``, so Hugging Face's
``BertTokenizerFast`` matches them case-sensitively on the raw text (``[SEP]`` → 102, ``[sep]`` →
``[``, ``sep``, ``]``); the slow ``BertTokenizer`` agrees, as it lower-cases everything except the
special tokens before its added-token trie splits them out.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from engines.core.errors import ValidationError

MAX_WORD_CHARS = 100
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
NEVER_SPLIT = (*SPECIALS, "[MASK]")   # the added tokens of all-MiniLM-L6-v2's tokenizer.json


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True          # all non-alphanumeric ASCII counts, e.g. "$" and "^"
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _clean(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif unicodedata.category(ch).startswith("C"):
            continue
        elif _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    return "".join(out)


def basic_tokens(text: str) -> list[str]:
    """Stage 1: lower-cased, accent-stripped words and single punctuation marks."""
    words = []
    for word in _clean(text).split():
        word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
        current = ""
        for ch in word:
            if _is_punctuation(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


@dataclass(frozen=True)
class WordPiece:
    """A vocabulary (token → id) and the tokenizer that uses it."""

    vocab: dict

    @classmethod
    def from_file(cls, path: str | Path) -> "WordPiece":
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        vocab = {tok: i for i, tok in enumerate(lines)}
        missing = [s for s in SPECIALS if s not in vocab]
        if missing:
            raise ValidationError("vocab", f"{path} lacks the special tokens {missing}", "a BERT vocab.txt")
        return cls(vocab)

    def word_pieces(self, word: str) -> list[str]:
        """Stage 2 for one basic token: greedy longest match first, ``##`` for continuations."""
        if len(word) > MAX_WORD_CHARS:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """Special tokens written in the text stay whole (case-sensitive); the rest goes through both stages."""
        specials = sorted((s for s in NEVER_SPLIT if s in self.vocab), key=len, reverse=True)
        parts = re.split("(" + "|".join(map(re.escape, specials)) + ")", text) if specials else [text]
        out: list[str] = []
        for k, part in enumerate(parts):
            if k % 2 == 1:
                out.append(part)
            else:
                out.extend(p for w in basic_tokens(part) for p in self.word_pieces(w))
        return out

    def encode(self, text: str, max_length: int = 256) -> list[int]:
        """``[CLS] pieces [SEP]`` as ids, the pieces truncated to ``max_length − 2``."""
        if not isinstance(max_length, int) or max_length < 3:
            raise ValidationError("max_length", f"{max_length!r} leaves no room for a token", "≥ 3")
        pieces = self.tokenize(text)[: max_length - 2]
        return [self.vocab["[CLS]"], *(self.vocab[p] for p in pieces), self.vocab["[SEP]"]]
