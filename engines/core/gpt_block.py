"""The one pre-norm GPT decoder block the app's small transformers share (the byte-level GPT of
engines.scale.tiny_lm, which the fault run and the scaling experiment train, and the addition model of
engines.qeval.addition, which ships trained weights).

x + proj(attention(ln1(x))), then + fc2(gelu(fc1(ln2(x)))): causal multi-head self-attention from one
fused qkv projection, and an MLP with exact GELU (Radford et al. 2019, GPT-2).

The submodules are registered in the order ln1, ln2, qkv, proj, fc1, fc2 and named so: parameter
order decides the fault run's gradient norm (its flat all-reduced gradient) and which weight a seeded
bit flip hits, and the names are the keys of the shipped addition weights (``blocks.N.qkv.weight``…).
torch is imported inside: engines are imported at start-up, torch only when a model is built.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def block_class():
    """The ``nn.Module`` class (made once, when torch is first needed)."""
    from torch import nn
    from torch.nn import functional as F

    class GPTBlock(nn.Module):
        def __init__(self, d_model: int, n_heads: int, d_ff: int) -> None:
            super().__init__()
            self.n_heads = n_heads
            self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            self.fc1 = nn.Linear(d_model, d_ff)
            self.fc2 = nn.Linear(d_ff, d_model)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            heads = lambda z: z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)  # noqa: E731
            y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    return GPTBlock


def gpt_block(d_model: int, n_heads: int, d_ff: int):
    """One decoder block: ``d_model`` wide, ``n_heads`` attention heads, an MLP ``d_ff`` wide."""
    return block_class()(d_model, n_heads, d_ff)


__all__ = ["block_class", "gpt_block"]
