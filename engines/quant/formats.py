"""Non-integer comparison formats: FP8 E4M3 and NF4.

FP8 E4M3 (Micikevicius et al., "FP8 Formats for Deep Learning", arXiv 2209.05433): 1 sign,
4 exponent, 3 mantissa bits, max ±448; here with one fp32 per-tensor scale absmax/448 and
torch's ``float8_e4m3fn`` round-to-nearest-even cast.
NF4 (Dettmers et al., "QLoRA", NeurIPS'23, arXiv 2305.14314): 16 levels at normal quantiles,
blocks of 64 with an fp32 absmax each → 4 + 32/64 = 4.5 bits per weight (double quantization
brings the constant to 0.127 bit; not modelled). Levels copied from bitsandbytes ``functional.py``.
"""
from __future__ import annotations

from engines.core.errors import require, require_int
from engines.quant.affine import QuantResult, check_matrix

FP8_E4M3_MAX = 448.0
NF4_LEVELS = (-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
              -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
              0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
              0.7229568362236023, 1.0)


def fp8_e4m3(w, per_row: bool = False) -> QuantResult:
    """Scaled FP8 E4M3 fake quantization, per tensor (default) or per output row; fp32 scales."""
    import torch

    w = check_matrix(w, "w")
    wf = w.to(torch.float32)
    amax = wf.abs().amax(dim=1, keepdim=True) if per_row else wf.abs().amax()
    scale = torch.where(amax > 0, amax / FP8_E4M3_MAX, torch.ones_like(amax))
    deq = (wf / scale).to(torch.float8_e4m3fn).to(torch.float32) * scale
    per = w.shape[1] if per_row else w.numel()
    return QuantResult(dequant=deq.to(w.dtype), bits_per_weight=8 + 32 / per, bits=8, group_size=None,
                       symmetric=True, method="fp8-e4m3", scale=scale)


def nf4(w, block_size: int = 64) -> QuantResult:
    """NF4 with one fp32 absmax per block of ``block_size`` consecutive values of each row."""
    import torch

    w = check_matrix(w, "w")
    block_size = require_int(block_size, "block_size", 1)
    require(w.shape[1] % block_size == 0, "block_size", f"{block_size} does not divide {w.shape[1]} columns",
            f"a divisor of {w.shape[1]}")
    levels = torch.tensor(NF4_LEVELS, device=w.device)
    view = w.to(torch.float32).reshape(w.shape[0], -1, block_size)
    absmax = view.abs().amax(dim=2, keepdim=True)
    absmax = torch.where(absmax > 0, absmax, torch.ones_like(absmax))
    codes = torch.argmin((view / absmax).unsqueeze(-1).sub(levels).abs(), dim=-1)
    deq = (levels[codes] * absmax).reshape(w.shape)
    return QuantResult(dequant=deq.to(w.dtype), bits_per_weight=4 + 32 / block_size, bits=4,
                       group_size=block_size, symmetric=True, method="nf4", codes=codes.reshape(w.shape),
                       scale=absmax.squeeze(-1))
