"""Byte-level BPE tokenizer read from the GGUF metadata (``tokenizer.ggml.*``), no extra package.

Algorithm: GPT-2's byte-level BPE (Radford et al. 2019; openai/gpt-2 ``encoder.py``): bytes are
mapped to printable characters, text is split into pieces by a regular expression, and each piece
is merged pair by pair in the order of the merge list.

SmolLM2's pre-tokenizer (its ``tokenizer.json``: ``Digits(individual_digits)`` then ``ByteLevel``;
llama.cpp names it ``smollm`` and lists the expressions ``\\p{N}`` then GPT-2's in
``src/llama-vocab.cpp``) first isolates every number character, then splits each stretch between
them with the GPT-2 expression. The stretches are split apart, so whitespace just before a number
ends its stretch and stays one piece (``"\\n  1"`` → ``"\\n  "``, ``"1"``). Number means Unicode
category N (Nd, Nl, No: ``²``, ``½``, ``Ⅻ``, ``①`` as well as ``0-9``) and letter category L, the
classes llama.cpp and Rust's ``char::is_numeric`` use. Python's ``re`` has no ``\\p{N}``/``\\p{L}``
and its ``\\d``/``\\w`` differ (``²`` is ``\\w`` but not ``\\d``), so both classes are built from
``unicodedata``. Control tokens (``<|im_start|>`` …) written in the text are matched whole, as
transformers does.
"""
from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

CONTROL = 3   # tokenizer.ggml.token_type of control tokens


def _category_class(major: str) -> str:
    """A ``re`` character-class body (ranges, no brackets) of every code point whose category starts with ``major``."""
    spans, start = [], None
    for cp in range(sys.maxunicode + 2):
        inside = cp <= sys.maxunicode and unicodedata.category(chr(cp))[0] == major
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            spans.append(re.escape(chr(start)) + ("" if cp - 1 == start else "-" + re.escape(chr(cp - 1))))
            start = None
    return "".join(spans)


@lru_cache(maxsize=1)
def _splitters() -> tuple[re.Pattern, re.Pattern]:
    """(number isolator, GPT-2 expression): built once, on first use (a pass over all code points)."""
    letter, number = _category_class("L"), _category_class("N")
    isolate = re.compile(f"([{number}])")
    piece = re.compile(rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{letter}]+| ?[{number}]+| ?[^\s{letter}{number}]+|\s+(?!\S)|\s+")
    return isolate, piece


def pre_tokenize(text: str) -> list[str]:
    """SmolLM2's pieces before BPE: each number character alone, GPT-2's split within the stretches between."""
    isolate, piece = _splitters()
    out: list[str] = []
    for k, stretch in enumerate(isolate.split(text)):
        if k % 2 == 1:
            out.append(stretch)
        elif stretch:
            out.extend(piece.findall(stretch))
    return out


@lru_cache(maxsize=1)
def _byte_map() -> dict[int, str]:
    """GPT-2 ``bytes_to_unicode``: every byte to a printable character."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, n = keep[:], 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(keep, map(chr, chars)))


class Tokenizer:
    """Encode text to ids and back, with the vocabulary and merges of one GGUF file."""

    def __init__(self, tokens: list[str], merges: list[str], token_types, eos_id: int) -> None:
        self.tokens = list(tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {tuple(m.split(" ", 1)): r for r, m in enumerate(merges)}
        self.eos_id = int(eos_id)
        control = [t for t, k in zip(self.tokens, token_types) if int(k) == CONTROL]
        self._special = re.compile("(" + "|".join(map(re.escape, sorted(control, key=len, reverse=True))) + ")") \
            if control else None
        self._bytes = _byte_map()
        self._unbytes = {c: b for b, c in self._bytes.items()}
        self._cache: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_gguf(cls, meta: dict) -> "Tokenizer":
        return cls(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"], meta["tokenizer.ggml.token_type"],
                   meta.get("tokenizer.ggml.eos_token_id", 0))

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        parts = self._special.split(text) if self._special else [text]
        for k, part in enumerate(parts):
            if k % 2 == 1:
                out.append(self.ids[part])
                continue
            for piece in pre_tokenize(part):
                out.extend(self._bpe(piece))
        return out

    def _bpe(self, piece: str) -> tuple[int, ...]:
        hit = self._cache.get(piece)
        if hit is not None:
            return hit
        word = [self._bytes[b] for b in piece.encode("utf-8")]
        while len(word) > 1:
            pairs = [(self.ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(word, word[1:]))]
            rank, i = min(pairs)
            if rank == 1 << 30:
                break
            merged, j, first, second = [], 0, word[i], word[i + 1]
            while j < len(word):   # merge every occurrence of the best pair, left to right
                if j < len(word) - 1 and word[j] == first and word[j + 1] == second:
                    merged.append(first + second)
                    j += 2
                else:
                    merged.append(word[j])
                    j += 1
            word = merged
        ids = tuple(self.ids[w] for w in word)
        if len(self._cache) < 100_000:
            self._cache[piece] = ids
        return ids

    def decode(self, ids) -> str:
        data = bytearray()
        for i in ids:
            tok = self.tokens[int(i)]
            if tok.startswith("<|") or (tok.startswith("<") and tok.endswith(">") and len(tok) > 2 and int(i) < 17):
                data.extend(tok.encode("utf-8"))
            else:
                data.extend(self._unbytes.get(c, 0x3F) for c in tok)
        return data.decode("utf-8", errors="replace")
