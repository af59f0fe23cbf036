"""Model FLOPs utilization (MFU): how much of the GPUs' peak the model's own arithmetic uses.

Sources (also in ``assets/lessons/scale.md``):
- Chowdhery et al. 2022, *PaLM: Scaling Language Modeling with Pathways*, arXiv 2204.02311,
  Appendix B: training FLOPs per token = 6N + 12·L·H·Q·T (N parameters, L layers, H heads, Q head
  dimension, T sequence length); MFU = observed tokens/s × FLOPs per token / peak FLOP/s.
  PaLM 540B: 238.3K tokens/s on 6144 TPU v4 (275 TFLOP/s bf16 each) → 46.2% MFU.
- Korthikanti et al. 2022, arXiv 2205.05198: hardware FLOPs utilization (HFU) also counts
  recomputation — full recompute repeats the forward pass (8N + 16·LHQT), selective recompute
  repeats the attention scores (+4·LHQT).
- Dubey et al. 2024 (Llama 3), Table 4: 38–43% BF16 MFU for 405B on 8K–16K H100s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from engines.core.errors import ValidationError, require_choice, require_int, require_number
from engines.core.hardware import gpu as gpu_by_key
from engines.core.models import ModelArch


def flops_per_token(params: int, layers: int, heads: int, head_dim: int, seq_len: int,
                    attention: bool = True) -> float:
    """PaLM Appendix B training FLOPs per token: 6N + 12·L·H·Q·T (the second term only if ``attention``)."""
    n = require_int(params, "params", 1)
    l_ = require_int(layers, "layers", 1)
    h = require_int(heads, "heads", 1)
    q = require_int(head_dim, "head_dim", 1)
    t = require_int(seq_len, "seq_len", 1)
    return 6.0 * n + (12.0 * l_ * h * q * t if attention else 0.0)


def model_flops_per_token(arch: ModelArch, seq_len: int, attention: bool = True) -> float:
    """:func:`flops_per_token` for an architecture (N counts every parameter, as PaLM does)."""
    return flops_per_token(arch.param_count(), arch.layers, arch.heads, arch.head_dim, seq_len, attention)


def hardware_flops_per_token(arch: ModelArch, seq_len: int, recompute: str = "none") -> float:
    """FLOPs the hardware executes per token, recomputation included (for HFU).

    ``full``: the transformer blocks' forward again, 2·(block parameters) + 4·LHQT more: the
    embedding lookup and the output layer are not recomputed, which gives Narayanan et al.'s
    96·BSLh²(1 + S/6h + V/16Lh) (SC'21, arXiv 2104.04473, Eq. 3) for a GPT block. ``selective``:
    attention scores and softmax·V redone, 4·LHQT more (Korthikanti et al. 2022).
    """
    require_choice(recompute, "recompute", ("none", "selective", "full"))
    base = model_flops_per_token(arch, seq_len)
    attn_fwd = 4.0 * arch.layers * arch.heads * arch.head_dim * seq_len
    if recompute == "full":
        return base + 2.0 * arch.layers * arch.layer_params() + attn_fwd
    if recompute == "selective":
        return base + attn_fwd
    return base


def mfu(tokens_per_second: float, flops_per_token_value: float, n_chips: int, peak_flops_per_chip: float) -> float:
    """MFU = tokens/s × FLOPs per token / (chips × peak FLOP/s)."""
    tps = require_number(tokens_per_second, "tokens_per_second", 0)
    f = require_number(flops_per_token_value, "flops_per_token", 0, lo_open=True)
    n = require_int(n_chips, "n_chips", 1)
    peak = require_number(peak_flops_per_chip, "peak_flops_per_chip", 0, lo_open=True)
    return _finite(tps * f / (n * peak), "tokens_per_second")


def tokens_per_second(mfu_value: float, flops_per_token_value: float, n_chips: int,
                      peak_flops_per_chip: float) -> float:
    """Training throughput a given MFU buys: MFU × chips × peak / FLOPs per token."""
    u = require_number(mfu_value, "mfu", 0, 1)
    f = require_number(flops_per_token_value, "flops_per_token", 0, lo_open=True)
    n = require_int(n_chips, "n_chips", 1)
    peak = require_number(peak_flops_per_chip, "peak_flops_per_chip", 0, lo_open=True)
    return _finite(u * n * peak / f, "flops_per_token")


def _finite(value: float, field: str) -> float:
    """Each input can be finite while their product is not: name the field that drove it there."""
    if not math.isfinite(value):
        raise ValidationError(field, "the result overflows a float", "values whose product stays below 1e308")
    return value


@dataclass(frozen=True)
class TrainingThroughput:
    """What an assumed MFU means for the scenario's model, sequence length and cluster."""

    mfu: float
    hfu: float
    flops_per_token: float            # model FLOPs (6N + attention)
    flops_per_token_6n: float
    hardware_flops_per_token: float   # with recomputation
    peak_flops_per_gpu: float
    n_gpus: int
    tokens_per_second: float
    tokens_per_second_per_gpu: float
    achieved_tflops_per_gpu: float    # model FLOPs actually delivered per GPU
    step_seconds: float               # one optimizer step of the scenario's global batch
    global_batch_tokens: int
    days_for_tokens: float            # wall days to train on ``token_budget`` tokens
    token_budget: float
    seq_len: int = 0                  # the sequence length T the attention term is for
    recompute: str = "none"           # the recomputation the HFU counts

    @property
    def attention_flops_per_token(self) -> float:
        """The 12·L·H·Q·T term of the model FLOPs."""
        return self.flops_per_token - self.flops_per_token_6n

    @property
    def attention_share(self) -> float:
        return 1.0 - self.flops_per_token_6n / self.flops_per_token


def training_throughput(scenario, mfu_value: float, token_budget: float = 15e12) -> TrainingThroughput:
    """Tokens/s, step time and days-to-budget for the scenario at an assumed MFU (bf16/fp16 peak)."""
    arch = scenario.arch
    u = require_number(mfu_value, "mfu", 0, 1, lo_open=True)
    budget = require_number(token_budget, "token_budget", 0, lo_open=True)
    card = gpu_by_key(scenario.gpu)
    peak = card.peak_flops("bf16")  # MFU is quoted against the dense 16-bit tensor peak
    f = model_flops_per_token(arch, scenario.seq_len)
    hw = hardware_flops_per_token(arch, scenario.seq_len, scenario.recompute)
    tps = tokens_per_second(u, f, scenario.n_gpus, peak)
    if tps <= 0:   # a subnormal MFU times the peak can round to zero tokens/s
        raise ValidationError("mfu", f"{u:g} is too small to compute with", "> 0 and ≤ 1, not vanishingly small")
    batch_tokens = scenario.dp * scenario.micro_batch * scenario.grad_accum * scenario.seq_len
    step_seconds = _finite(batch_tokens / tps, "mfu")
    days = _finite(budget / tps / 86_400, "token_budget")
    return TrainingThroughput(
        mfu=u, hfu=u * hw / f, flops_per_token=f, flops_per_token_6n=6.0 * arch.param_count(),
        hardware_flops_per_token=hw, peak_flops_per_gpu=peak, n_gpus=scenario.n_gpus,
        tokens_per_second=tps, tokens_per_second_per_gpu=tps / scenario.n_gpus,
        achieved_tflops_per_gpu=u * peak / 1e12, step_seconds=step_seconds,
        global_batch_tokens=batch_tokens, days_for_tokens=days, token_budget=budget,
        seq_len=int(scenario.seq_len), recompute=scenario.recompute)


__all__ = ["flops_per_token", "model_flops_per_token", "hardware_flops_per_token", "mfu", "tokens_per_second",
           "TrainingThroughput", "training_throughput"]
