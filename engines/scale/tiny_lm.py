"""The small language model the fault run trains: a byte-level GPT on the app's own lesson text,
the seeded batches it reads, and the two hardware-level primitives the run needs (flip one bit of
a float32 tensor; a bit-exact checksum of a replica's weights).

The model is the usual pre-norm decoder (Radford et al. 2019, GPT-2): token and position
embeddings, the shared block of :mod:`engines.core.gpt_block` (causal self-attention and a GELU MLP
4 × d_model wide), a final LayerNorm and an output layer.
It has ~110K parameters at the defaults, so a step takes milliseconds on a CPU core.
torch is imported inside functions: the panel imports this module at start-up.
"""
from __future__ import annotations

import hashlib
import threading
from functools import lru_cache

import numpy as np

from engines.core.assets import asset_path
from engines.core.gpt_block import gpt_block

CORPUS_FILE = ("scale", "fault_corpus.txt")
VOCAB = 256          # bytes: no tokenizer, every text is valid input


@lru_cache(maxsize=1)
def corpus() -> np.ndarray:
    """The shipped training text as bytes (a frozen copy of four of the app's lessons)."""
    return np.frombuffer(asset_path(*CORPUS_FILE).read_bytes(), dtype=np.uint8)


def corpus_sha256() -> str:
    """Identifies the text a run trained on (results are deterministic for a seed *and* this text)."""
    return hashlib.sha256(corpus().tobytes()).hexdigest()


def batch_tokens(seed: int, batch_id: int, replica: int, batch: int, seq_len: int,
                 corrupt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and next-byte targets of one replica's share of global batch ``batch_id``.

    The content depends only on (seed, batch_id, replica), so replaying a batch after a rollback
    reads the same bytes, and skipping one moves the stream past it. ``corrupt`` stands for a broken
    shard: uniformly random bytes, whose loss for any model is at least ln 256 ≈ 5.5 nats per byte
    on average over many batches.
    """
    rng = np.random.default_rng([seed, batch_id, replica])
    if corrupt:
        x = rng.integers(0, VOCAB, size=(batch, seq_len + 1), dtype=np.int64)
        return x[:, :-1], x[:, 1:]
    text = corpus()
    starts = rng.integers(0, text.size - seq_len - 1, size=batch)
    rows = np.stack([text[s:s + seq_len + 1] for s in starts]).astype(np.int64)
    return rows[:, :-1], rows[:, 1:]


_SEED_LOCK = threading.Lock()


def build_model(d_model: int, layers: int, heads: int, seq_len: int, seed: int):
    """A pre-norm byte-level GPT; every replica builds it from the same seed, so all start equal."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class TinyGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(VOCAB, d_model)
            self.pos = nn.Embedding(seq_len, d_model)
            self.blocks = nn.ModuleList(gpt_block(d_model, heads, 4 * d_model) for _ in range(layers))
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, VOCAB, bias=False)
            for m in self.modules():      # GPT-2's N(0, 0.02) initialisation
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, 0.0, 0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))

    with _SEED_LOCK:            # the global generator: another thread's seeded build must not draw in between
        torch.manual_seed(seed)
        return TinyGPT()


def flip_bit(tensor, index: int, bit: int) -> tuple[float, float]:
    """Flip bit ``bit`` (0 = lowest mantissa bit, 23–30 exponent, 31 sign) of element ``index`` of a
    float32 tensor in place, as a transient hardware fault would; returns (before, after)."""
    import torch

    flat = tensor.detach().view(-1)
    before = float(flat[index])
    words = flat.view(torch.int32)
    mask = torch.tensor(np.array(1 << bit, dtype=np.uint32).view(np.int32), device=flat.device)
    words[index] = torch.bitwise_xor(words[index], mask)
    return before, float(flat[index])


def weights_checksum(model) -> int:
    """Sum of every float32 weight's raw 32-bit word, as an integer: data-parallel replicas hold
    bit-identical weights after each step, so any single flipped bit changes this by ±2^bit and
    makes the replica disagree with the others."""
    import torch

    total = 0
    for p in model.parameters():
        total += int(p.detach().reshape(-1).view(torch.int32).to(torch.int64).sum())
    return total
