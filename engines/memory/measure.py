"""Measured mode: one real mixed-precision training step on a scaled-down copy of the scenario's
model, with exact per-category byte accounting, shown beside the analytic figures.

How each category is measured (torch is imported lazily, inside functions):
- parameters, gradients: ``tensor.untyped_storage().nbytes()`` summed over the model;
- optimizer: the fp32 master copies (mixed precision, as in Micikevicius et al. 2018 and ZeRO §3.1)
  plus every tensor in ``optimizer.state`` after the step;
- activations: every tensor autograd saves for backward, caught with
  ``torch.autograd.graph.saved_tensors_hooks`` and counted once per storage, minus storages that
  belong to parameters or buffers (weights a GEMM saves are not activations);
- on CUDA additionally ``torch.cuda.max_memory_allocated`` for the whole step.
The analytic side is :mod:`engines.memory.analytic` on the same scaled-down architecture.
"""
from __future__ import annotations

import time
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Callable

from engines.core.errors import Cancelled, require, require_int
from engines.memory.analytic import (embedding_activation_bytes, layer_activation_bytes, optimizer_bytes_per_param,
                                     output_activation_bytes, weight_bytes)
from engines.core.models import ModelArch
from engines.core.scenario import Scenario

MEASURE_CATEGORIES = ("params", "grads", "optimizer", "activations")


@dataclass(frozen=True)
class MeasureConfig:
    """Size of the scaled-down model: small, because CPUs without bf16 units multiply bf16 slowly
    (about 1 GFLOP/s here); the step is ~1 GFLOP."""

    hidden: int = 128
    head_dim: int = 32
    layers: int = 2
    vocab: int = 1024
    seq_len: int = 128
    micro_batch: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        require_int(self.hidden, "hidden", 16, 8192)
        require_int(self.head_dim, "head_dim", 8, 512)
        require(self.hidden % self.head_dim == 0, "head_dim", "must divide hidden", "a divisor of hidden")
        require_int(self.layers, "layers", 1, 64)
        require_int(self.vocab, "vocab", 16, 1_000_000)
        require_int(self.seq_len, "seq_len", 8, 65_536)
        require_int(self.micro_batch, "micro_batch", 1, 1024)


@dataclass(frozen=True)
class MeasuredMemory:
    """Analytic vs measured bytes per category for one real training step."""

    arch: ModelArch
    config: MeasureConfig
    device: str
    precision: str
    optimizer: str
    measured: dict[str, float]
    analytic: dict[str, float]
    explanations: dict[str, str]
    peak_allocated: float | None = None  # CUDA only
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def ratio(self, category: str) -> float:
        """measured / analytic for one category."""
        return self.measured[category] / self.analytic[category]

    def rows(self) -> tuple["ComparisonRow", ...]:
        """Analytic beside measured, one row per category, with why the two differ."""
        return tuple(ComparisonRow(c, None, self.analytic[c], self.measured[c], self.explanations[c])
                     for c in MEASURE_CATEGORIES)


@dataclass(frozen=True)
class ComparisonRow:
    """One category (of one rank, for a sharded run): the analytic bytes, the measured bytes and why
    they differ."""

    category: str
    rank: int | None
    analytic: float
    measured: float
    why: str

    @property
    def diff_pct(self) -> float:
        """How far the measurement is above (+) or below (−) the analytic figure, in per cent."""
        return (self.measured / self.analytic - 1) * 100


def scaled_down_arch(arch: ModelArch, config: MeasureConfig = MeasureConfig()) -> ModelArch:
    """Same family as ``arch`` (MLP type, norm, biases, tying, GQA group, FFN ratio), small sizes."""
    heads = config.hidden // config.head_dim
    group = arch.heads // arch.kv_heads
    kv = heads // group if heads % group == 0 and heads >= group else heads
    ffn = max(32, int(round(arch.ffn / arch.hidden * config.hidden / 32)) * 32)
    return ModelArch(label=f"{arch.label} (scaled down)", layers=config.layers, hidden=config.hidden, heads=heads,
                     kv_heads=kv, ffn=ffn, vocab=config.vocab, tied_embeddings=arch.tied_embeddings, mlp=arch.mlp,
                     norm=arch.norm, bias=arch.bias,
                     max_positions=config.seq_len if arch.max_positions else 0,
                     source=f"scaled down from {arch.label}")


def analytic_for(arch: ModelArch, config: MeasureConfig, precision: str, optimizer: str) -> dict[str, float]:
    """The analytic engine's figures for one GPU, no parallelism, no recompute."""
    psi = arch.param_count()
    w = weight_bytes(precision)
    s, b = config.seq_len, config.micro_batch
    acts = (arch.layers * layer_activation_bytes(arch, s, b, 1, False, "none", w)
            + embedding_activation_bytes(arch, s, b) + output_activation_bytes(arch, s, b, 1, False, w))
    return {"params": w * psi, "grads": w * psi,
            "optimizer": optimizer_bytes_per_param(optimizer, precision) * psi, "activations": acts}


# --------------------------------------------------------------------------------------------
# The torch model (built lazily; its parameter count equals ModelArch.param_count exactly)
# --------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def rms_norm_class():
    """An ``nn.Module`` RMSNorm whose backward keeps only its input and 1/rms, as Apex/TE's fused
    kernels do (eager ``nn.RMSNorm`` also saves an fp32 copy and the normalised output: 8sbh more);
    made once, when torch is first needed. Shared by the measured step and the fake FSDP2 check."""
    import torch
    from torch import nn

    class FusedRMSNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, eps):
            rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
            ctx.save_for_backward(x, weight, rstd)
            return (x.float() * rstd).to(x.dtype) * weight

        @staticmethod
        def backward(ctx, grad):
            x, weight, rstd = ctx.saved_tensors
            xf, gf = x.float(), grad.float()
            xhat = xf * rstd
            gw = (gf * xhat).sum(dim=tuple(range(grad.dim() - 1))).to(weight.dtype)
            gx = gf * weight.float()
            gx = rstd * (gx - xhat * (gx * xhat).mean(-1, keepdim=True))
            return gx.to(x.dtype), gw, None

    class RMSNorm(nn.Module):
        def __init__(self, h):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(h))

        def forward(self, x):
            return FusedRMSNorm.apply(x, self.weight, 1e-5)

    return RMSNorm


def build_model(arch: ModelArch, seq_len: int, dtype, device: str = "cpu"):
    """A decoder of ``arch``'s family, built on the shared :func:`engines.core.gpt_block.decoder_block`
    with explicit attention (the s×s softmax Korthikanti counts is stored). GPT-style blocks use
    dropout 0.1 (Korthikanti's assumption); Llama-style blocks use a fused RMSNorm that saves only its
    input and 1/rms, like Apex/TE."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    from engines.core.gpt_block import decoder_block

    RMSNorm = rms_norm_class()

    def norm(h):
        return nn.LayerNorm(h) if arch.norm == "layernorm" else RMSNorm(h)

    dropout = 0.1 if arch.mlp == "gelu" else 0.0

    def drop(x, training: bool):
        """Dropout keeping a 1-byte bool mask, as the block's own does."""
        return torch.native_dropout(x, dropout, True)[0] if dropout and training else x

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(arch.vocab, arch.hidden)
            self.pos = nn.Embedding(arch.max_positions, arch.hidden) if arch.max_positions else None
            self.blocks = nn.ModuleList(decoder_block(arch, norm, dropout, attention="explicit", seq_len=seq_len)
                                        for _ in range(arch.layers))
            self.final_norm = norm(arch.hidden)
            self.head = None if arch.tied_embeddings else nn.Linear(arch.hidden, arch.vocab, bias=False)

        def forward(self, tokens, targets):
            x = self.embed(tokens)
            if self.pos is not None:
                x = x + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
            x = drop(x, self.training)
            for block in self.blocks:
                x = block(x)
            x = self.final_norm(x)
            weight = self.embed.weight if self.head is None else self.head.weight
            logits = F.linear(x, weight).float()  # fp32 logits for the loss, as Korthikanti §4.3 assumes
            return F.cross_entropy(logits.view(-1, arch.vocab), targets.view(-1))

    return Decoder().to(device=device, dtype=dtype)


def _storage_key(t) -> tuple[int, int]:
    st = t.untyped_storage()
    return st.data_ptr(), st.nbytes()


def measure_training_step(scenario: Scenario, device: str = "cpu", config: MeasureConfig | None = None,
                          progress: Callable[[float, str], None] | None = None,
                          cancelled: Callable[[], bool] | None = None) -> MeasuredMemory:
    """Run one real training step of the scaled-down scenario model and account every byte."""
    import torch

    config = config or MeasureConfig()
    progress = progress or (lambda f, msg: None)
    cancelled = cancelled or (lambda: False)
    notes: list[str] = []
    arch = scaled_down_arch(scenario.arch, config)
    optimizer_name = scenario.optimizer
    if optimizer_name == "adam-8bit":
        notes.append("8-bit Adam needs bitsandbytes (not installed): measured with AdamW, analytic likewise")
        optimizer_name = "adamw"
    precision = scenario.precision
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[precision]
    mixed = precision != "fp32"
    start = time.perf_counter()
    torch.manual_seed(config.seed)
    progress(0.05, "building the scaled-down model")
    model = build_model(arch, config.seq_len, dtype, device)
    model.train()
    params = list(model.parameters())
    masters = [p.detach().float().clone() for p in params] if mixed else params
    for m in masters if mixed else []:
        m.requires_grad_(True)
    if optimizer_name == "adamw":
        opt = torch.optim.AdamW(masters, lr=1e-4, foreach=False)
    else:
        opt = torch.optim.SGD(masters, lr=1e-3, momentum=0.9, foreach=False)
    _check(cancelled)

    tokens = torch.randint(0, arch.vocab, (config.micro_batch, config.seq_len), device=device)
    targets = torch.randint(0, arch.vocab, (config.micro_batch, config.seq_len), device=device)
    owned = {p.untyped_storage().data_ptr() for p in params} | {b.untyped_storage().data_ptr() for b in model.buffers()}
    saved: dict[int, int] = {}

    def pack(t):
        ptr, nbytes = _storage_key(t)
        if ptr not in owned:
            saved[ptr] = nbytes
        return t

    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    progress(0.3, "forward pass (counting saved tensors)")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(tokens, targets)
    activations = float(sum(saved.values()))
    _check(cancelled)
    progress(0.6, "backward pass")
    loss.backward()
    grads = float(sum(p.grad.untyped_storage().nbytes() for p in params))
    _check(cancelled)
    progress(0.8, "optimizer step")
    if mixed:
        for p, m in zip(params, masters):
            m.grad = p.grad.float()
    opt.step()
    if mixed:
        with torch.no_grad():
            for p, m in zip(params, masters):
                p.copy_(m)
                m.grad = None
        notes.append("the fp32 copy of the gradients exists only inside the step (DeepSpeed keeps it: 18 B/param)")
    peak = None
    if cuda:
        torch.cuda.synchronize()
        peak = float(torch.cuda.max_memory_allocated())
    state_bytes = sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values()
                      if torch.is_tensor(v))
    optimizer_bytes = float(state_bytes + (sum(m.untyped_storage().nbytes() for m in masters) if mixed else 0))
    measured = {"params": float(sum(p.untyped_storage().nbytes() for p in params)), "grads": grads,
                "optimizer": optimizer_bytes, "activations": activations}
    analytic = analytic_for(arch, config, precision, optimizer_name)
    progress(1.0, "done")
    return MeasuredMemory(arch=arch, config=config, device=device, precision=precision, optimizer=optimizer_name,
                          measured=measured, analytic=analytic, explanations=_explain(arch, config, measured, analytic),
                          peak_allocated=peak, seconds=time.perf_counter() - start, notes=notes)


class MeasurementCancelled(Cancelled):
    """Raised between phases when the caller's ``cancelled()`` turned true: an
    :class:`engines.core.errors.Cancelled`, so a job slot treats it as any cancelled engine call."""


def _check(cancelled: Callable[[], bool]) -> None:
    if cancelled():
        raise MeasurementCancelled()


def _explain(arch: ModelArch, config: MeasureConfig, measured: dict, analytic: dict) -> dict[str, str]:
    """Why measured and analytic differ, category by category."""
    sb = config.seq_len * config.micro_batch
    out = {
        "params": "16-bit weights: 2 B × Ψ exactly (Ψ counted from the architecture)",
        "grads": "one 16-bit gradient per weight, same size as the weights",
        "optimizer": "fp32 master copy + optimizer states on it; AdamW also keeps a 4-byte 'step' per tensor",
    }
    extra = ("norm statistics (mean / 1/rms per token), int64 token ids and targets, "
             f"≈ {(8 * 2 * sb) / 1e6:.2f} MB of ids here; Korthikanti ignores them")
    out["activations"] = f"saved-for-backward tensors; the formula omits {extra}"
    return out
