"""The one pre-norm decoder block the app's transformers share, in two shapes.

One residual structure, x + attention(ln1(x)), then + mlp(ln2(x)) (Radford et al. 2019, GPT-2), with
two sets of branches:

- ``GPTBlock`` (:func:`gpt_block`), the small models' block: the byte-level GPT of engines.scale.tiny_lm
  (which the fault run and the scaling experiment train) and the addition model of
  engines.qeval.addition (which ships trained weights). Causal multi-head attention from one fused
  qkv projection, an MLP with exact GELU. Its submodules are registered in the order ln1, ln2, qkv,
  proj, fc1, fc2 and named so: parameter order decides the fault run's gradient norm (its flat
  all-reduced gradient) and which weight a seeded bit flip hits, and the names are the keys of the
  shipped addition weights (``blocks.N.qkv.weight``…).
- ``DecoderBlock`` (:func:`decoder_block`), a scenario architecture's block for the memory engines
  (the measured step of engines.memory.measure, the fake FSDP2 check and cluster run of
  engines.memory.fake_check): separate q, k, v, o projections with grouped-query attention
  (Ainslie et al. 2023), a GELU or SwiGLU MLP (Shazeer 2020), optional biases, the caller's norm,
  dropout with 1-byte masks on the residual branches (Korthikanti et al. 2022's assumption) and
  recomputation (``torch.utils.checkpoint``). The names q, k, v, o, fc1 / gate, up, down are the ones
  the tensor-parallel plan splits.

torch is imported inside: engines are imported at start-up, torch only when a model is built.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

ATTENTION = ("sdpa", "explicit")
"""``sdpa``: ``scaled_dot_product_attention`` (never stores the s×s matrix); ``explicit``: softmax of
QKᵀ with a causal mask buffer and dropout on the probabilities, what Korthikanti et al. count."""
RECOMPUTE = ("none", "selective", "full")
"""``selective`` checkpoints the attention core, ``full`` the whole block (Korthikanti et al. §5)."""


@lru_cache(maxsize=1)
def _classes():
    """(PreNorm, GPTBlock, DecoderBlock), made once, when torch is first needed."""
    import math

    import torch
    from torch import nn
    from torch.nn import functional as F
    from torch.utils.checkpoint import checkpoint

    class PreNorm(nn.Module):
        """x + attention(ln1(x)), then + mlp(ln2(x)); subclasses supply the two branches."""

        def body(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.mlp(self.ln2(x))

        def forward(self, x):
            return self.body(x)

    class GPTBlock(PreNorm):
        def __init__(self, d_model: int, n_heads: int, d_ff: int) -> None:
            super().__init__()
            self.n_heads = n_heads
            self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            self.fc1 = nn.Linear(d_model, d_ff)
            self.fc2 = nn.Linear(d_ff, d_model)

        def attention(self, h):
            b, t, d = h.shape
            q, k, v = self.qkv(h).split(d, dim=2)
            heads = lambda z: z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)  # noqa: E731
            y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(b, t, d))

        def mlp(self, h):
            return self.fc2(F.gelu(self.fc1(h)))

    class DecoderBlock(PreNorm):
        def __init__(self, hidden: int, heads: int, kv_heads: int, head_dim: int, ffn: int, *, mlp: str,
                     bias: bool, norm: Callable, dropout: float, attention: str, recompute: str,
                     seq_len: int | None) -> None:
            super().__init__()
            self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
            self.gelu, self.dropout, self.core_kind, self.recompute = mlp == "gelu", dropout, attention, recompute
            self.ln1, self.ln2 = norm(hidden), norm(hidden)
            self.q = nn.Linear(hidden, heads * head_dim, bias=bias)
            self.k = nn.Linear(hidden, kv_heads * head_dim, bias=bias)
            self.v = nn.Linear(hidden, kv_heads * head_dim, bias=bias)
            self.o = nn.Linear(heads * head_dim, hidden, bias=bias)
            if self.gelu:
                self.fc1 = nn.Linear(hidden, ffn, bias=bias)
            else:
                self.gate = nn.Linear(hidden, ffn, bias=bias)
                self.up = nn.Linear(hidden, ffn, bias=bias)
            self.down = nn.Linear(ffn, hidden, bias=bias)
            if attention == "explicit":
                causal = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
                self.register_buffer("mask", causal.repeat(heads // kv_heads, 1), persistent=False)

        def drop(self, x):
            """Dropout keeping a 1-byte bool mask, as the fused CUDA kernel does (on CPU, F.dropout
            falls back to ``x * noise`` and keeps the mask in the activation dtype: 2 bytes)."""
            return torch.native_dropout(x, self.dropout, True)[0] if self.dropout and self.training else x

        def sdpa(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads)

        def explicit(self, q, k, v):
            """GQA without repeating K/V: the g query heads of a group are folded into the rows."""
            g, s, d = self.heads // self.kv_heads, k.shape[2], self.head_dim
            scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
            probs = torch.softmax(scores.masked_fill(self.mask[: g * s, :s], float("-inf")), dim=-1)
            return self.drop(probs) @ v

        def attention(self, h):
            b, s, _ = h.shape
            a, kv, d = self.heads, self.kv_heads, self.head_dim
            g, sdpa = a // kv, self.core_kind == "sdpa"
            q = (self.q(h).view(b, s, -1, d).transpose(1, 2) if sdpa
                 else self.q(h).view(b, s, kv, g, d).permute(0, 2, 3, 1, 4).reshape(b, kv, g * s, d))
            k = self.k(h).view(b, s, -1, d).transpose(1, 2)    # -1: a tensor-parallel rank's heads
            v = self.v(h).view(b, s, -1, d).transpose(1, 2)
            if sdpa:
                y = self._core(self.sdpa, q, k, v).transpose(1, 2).reshape(b, s, -1)
            else:
                y = self._core(self.explicit, q, k, v).view(b, kv, g, s, d).permute(0, 3, 1, 2, 4).reshape(b, s, a * d)
            return self.drop(self.o(y))

        def _core(self, core, q, k, v):
            return checkpoint(core, q, k, v, use_reentrant=False) if self.recompute == "selective" else core(q, k, v)

        def mlp(self, h):
            y = self.down(F.gelu(self.fc1(h))) if self.gelu else self.down(F.silu(self.gate(h)) * self.up(h))
            return self.drop(y)

        def forward(self, x):
            return checkpoint(self.body, x, use_reentrant=False) if self.recompute == "full" else self.body(x)

    return PreNorm, GPTBlock, DecoderBlock


def block_class():
    """The small models' ``nn.Module`` class (``GPTBlock``)."""
    return _classes()[1]


def gpt_block(d_model: int, n_heads: int, d_ff: int):
    """One decoder block: ``d_model`` wide, ``n_heads`` attention heads, an MLP ``d_ff`` wide."""
    return block_class()(d_model, n_heads, d_ff)


def decoder_block(arch, norm: Callable | None = None, dropout: float = 0.0, attention: str = "sdpa",
                  recompute: str = "none", seq_len: int | None = None):
    """One block of ``arch`` (an :class:`engines.core.models.ModelArch`: hidden, heads, kv_heads,
    head_dim, ffn, mlp, bias). ``norm(width)`` builds each norm (default ``nn.LayerNorm``);
    ``attention`` is one of :data:`ATTENTION` (``explicit`` needs ``seq_len`` for its mask),
    ``recompute`` one of :data:`RECOMPUTE`."""
    from engines.core.errors import require, require_choice

    require_choice(attention, "attention", ATTENTION)
    require_choice(recompute, "recompute", RECOMPUTE)
    require(attention == "sdpa" or (seq_len or 0) > 0, "seq_len", "explicit attention needs the sequence length "
            "for its causal mask", "a positive integer")
    if norm is None:
        from torch import nn
        norm = nn.LayerNorm
    return _classes()[2](arch.hidden, arch.heads, arch.kv_heads, arch.head_dim, arch.ffn, mlp=arch.mlp,
                         bias=arch.bias, norm=norm, dropout=dropout, attention=attention, recompute=recompute,
                         seq_len=seq_len)


__all__ = ["ATTENTION", "RECOMPUTE", "block_class", "decoder_block", "gpt_block"]
