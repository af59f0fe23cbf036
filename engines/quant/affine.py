"""The affine (scale, zero-point) integer quantizer and round-to-nearest (RTN).

Asymmetric, as in GPTQ's ``quant.py`` ``Quantizer`` (IST-DASLab/gptq, Frantar et al., ICLR'23,
arXiv 2210.17323) and llm-awq's ``pseudo_quantize_tensor`` (Lin et al., MLSys'24, arXiv 2306.00978):
    scale = (x_max − x_min) / (2^b − 1),  zero = round(−x_min / scale)
    q = clamp(round(x / scale) + zero, 0, 2^b − 1),  x′ = scale · (q − zero)
with x_min ≤ 0 ≤ x_max enforced (GPTQ clamps the range to include 0, so 0 is exact).
Symmetric, as in SmoothQuant's ``fake_quant.py`` (Xiao et al., ICML'23, arXiv 2211.10438):
    scale = max|x| / (2^(b−1) − 1),  q = clamp(round(x / scale), −(2^(b−1) − 1), 2^(b−1) − 1).
Bits per weight = b + (bits of the stored scale and zero) / (values sharing them): an fp16 scale
and an fp16 zero per group of 128 cost 32/128 = 0.25 bit, so 4-bit g128 is 4.25 bpw; symmetric
stores no zero, so it pays 16/g. Rounding is torch.round (half to even).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engines.core.errors import ValidationError, require, require_bool, require_choice, require_int, require_number

GRANULARITIES = ("tensor", "row", "column", "group")
SCALE_BITS = 16   # fp16 scale
ZERO_BITS = 16    # fp16 zero (as counted by the issue and by llm-awq's fp16 zeros)


@dataclass
class QuantResult:
    """A fake-quantized tensor: the de-quantized values plus what it costs to store them."""

    dequant: object               # torch.Tensor, same shape and dtype as the input
    bits_per_weight: float
    bits: int
    group_size: int | None
    symmetric: bool
    method: str = "rtn"
    codes: object = None          # integer codes (torch.Tensor) where the method has them
    scale: object = None
    zero: object = None
    alpha: float | None = None    # AWQ: chosen α; SmoothQuant: α used
    extra: dict = field(default_factory=dict)


MAX_MAGNITUDE = 1e15  # ranges (max − min), x·wᵀ and the GPTQ Hessian stay inside float32 below this


def check_matrix(t, name: str, ndim: int = 2):
    """A finite floating torch tensor of rank ``ndim`` (numpy arrays are converted)."""
    import numpy as np
    import torch

    if isinstance(t, np.ndarray):
        t = torch.from_numpy(t)
    require(isinstance(t, torch.Tensor), name, f"expected a torch tensor, got {type(t).__name__}", "torch.Tensor")
    require(t.ndim == ndim, name, f"expected {ndim}-D, got shape {tuple(t.shape)}", f"{ndim}-D tensor")
    require(t.numel() > 0, name, "is empty", "a non-empty tensor")
    require(not t.is_complex(), name, "is complex", "a real tensor")
    if not t.is_floating_point():
        t = t.float()
    require(bool(torch.isfinite(t).all()), name, "contains NaN or infinity", "finite values")
    require(float(t.abs().max()) <= MAX_MAGNITUDE, name, "has values too large to quantize in float32",
            f"|values| ≤ {MAX_MAGNITUDE:g}")
    return t


def check_layer(w, x):
    """Validate a weight (out, in) and activations (tokens, in) that feed it; return both as tensors."""
    w = check_matrix(w, "w")
    x = check_matrix(x, "x")
    require(x.shape[1] == w.shape[1], "x", f"has {x.shape[1]} channels but w has {w.shape[1]} inputs",
            f"(tokens, {w.shape[1]})")
    return w, x


def check_bits(bits: int, lo: int = 2, hi: int = 8) -> int:
    return require_int(bits, "bits", lo, hi)


def check_group(group_size: int | None, n_in: int) -> int | None:
    if group_size is None:
        return None
    require_int(group_size, "group_size", 1, n_in)
    require(n_in % group_size == 0, "group_size", f"{group_size} does not divide {n_in} input columns",
            f"a divisor of {n_in}, or None for one scale per row")
    return group_size


def affine_params(x_min, x_max, bits: int, symmetric: bool = False):
    """Scale and zero for the range [x_min, x_max] (tensors broadcast); see the module docstring."""
    import torch

    if symmetric:
        qmax = 2 ** (bits - 1) - 1
        absmax = torch.maximum(x_min.abs(), x_max.abs())
        scale = absmax / qmax
        # an all-zero range, or one so small the scale is subnormal (float precision runs out: a step
        # of 1.4e-45 cannot be halved), gets scale 1: codes 0, the weights read as the zeros they are
        scale = torch.where(scale >= torch.finfo(scale.dtype).tiny, scale, torch.ones_like(scale))
        return scale, torch.zeros_like(scale)
    maxq = 2 ** bits - 1
    x_min = torch.clamp(x_min, max=0)
    x_max = torch.clamp(x_max, min=0)
    # GPTQ: an all-zero range becomes [−1, 1]; so does one whose scale would be subnormal (zero or
    # too coarse to halve: weights of 1e-45 then read as the zeros they are)
    empty = (x_max - x_min) / maxq < torch.finfo(x_max.dtype).tiny
    x_min = torch.where(empty, -torch.ones_like(x_min), x_min)
    x_max = torch.where(empty, torch.ones_like(x_max), x_max)
    scale = (x_max - x_min) / maxq
    zero = torch.round(-x_min / scale)
    return scale, zero


def quantize_codes(x, scale, zero, bits: int, symmetric: bool = False):
    """Integer codes of ``x`` for given (broadcast) scale and zero."""
    import torch

    if symmetric:
        qmax = 2 ** (bits - 1) - 1
        return torch.clamp(torch.round(x / scale), -qmax, qmax)
    return torch.clamp(torch.round(x / scale) + zero, 0, 2 ** bits - 1)


def dequantize(codes, scale, zero):
    return scale * (codes - zero)


def fake_quant(x, scale, zero, bits: int, symmetric: bool = False):
    """Quantize then de-quantize: x′ = scale · (q − zero)."""
    return dequantize(quantize_codes(x, scale, zero, bits, symmetric), scale, zero)


def bits_per_value(bits: int, values_per_scale: int, symmetric: bool = False) -> float:
    """Exact storage cost: b + (fp16 scale [+ fp16 zero]) / values sharing them."""
    bits = require_int(bits, "bits", 1, 32)
    values_per_scale = require_int(values_per_scale, "values_per_scale", 1)
    require_bool(symmetric, "symmetric")
    overhead = SCALE_BITS + (0 if symmetric else ZERO_BITS)
    return bits + overhead / values_per_scale


def quantize(x, bits: int, granularity: str = "row", group_size: int | None = None,
             symmetric: bool = False) -> QuantResult:
    """Fake-quantize a 2-D tensor with one (scale, zero) per tensor, row, column or row-group.

    Rows are output channels for a weight (out, in) and tokens for activations (tokens, in);
    columns are input channels (per-channel activation / per-channel key quantization).
    """
    import torch

    x = check_matrix(x, "x")
    bits = check_bits(bits)
    require_choice(granularity, "granularity", GRANULARITIES)
    rows, cols = x.shape
    work = x.to(torch.float32) if x.dtype in (torch.float16, torch.bfloat16) else x
    if granularity == "group":
        require(group_size is not None, "group_size", "needed for per-group quantization", f"a divisor of {cols}")
        check_group(group_size, cols)
        view = work.reshape(rows, cols // group_size, group_size)
        lo, hi = view.amin(dim=2, keepdim=True), view.amax(dim=2, keepdim=True)
        per = group_size
    elif granularity == "row":
        view, per = work, cols
        lo, hi = view.amin(dim=1, keepdim=True), view.amax(dim=1, keepdim=True)
    elif granularity == "column":
        view, per = work, rows
        lo, hi = view.amin(dim=0, keepdim=True), view.amax(dim=0, keepdim=True)
    else:
        view, per = work, rows * cols
        lo, hi = view.amin(), view.amax()
    scale, zero = affine_params(lo, hi, bits, symmetric)
    codes = quantize_codes(view, scale, zero, bits, symmetric)
    deq = dequantize(codes, scale, zero).reshape(rows, cols).to(x.dtype)
    return QuantResult(dequant=deq, bits_per_weight=bits_per_value(bits, per, symmetric), bits=bits,
                       group_size=group_size if granularity == "group" else None, symmetric=symmetric,
                       method=f"rtn-{granularity}", codes=codes.reshape(rows, cols).to(torch.int32),
                       scale=scale.squeeze(), zero=zero.squeeze())


def rtn(w, bits: int, group_size: int | None = None, symmetric: bool = False) -> QuantResult:
    """Round-to-nearest weight quantization: one (scale, zero) per output row, or per row-group of
    ``group_size`` consecutive input columns. ``bits_per_weight`` counts an fp16 scale and zero per
    group (fp16 scale only when symmetric)."""
    w = check_matrix(w, "w")
    if group_size is None or group_size == w.shape[1]:
        res = quantize(w, bits, "row", symmetric=symmetric)
        res.group_size = group_size
    else:
        res = quantize(w, bits, "group", group_size, symmetric)
    res.method = "rtn"
    return res


def levels_used(codes) -> int:
    """How many distinct integer levels a tensor actually uses (the 'collapse' measure)."""
    import torch

    return int(torch.unique(codes).numel())


def worked_example(values, bits: int, symmetric: bool = False) -> list[dict]:
    """Step-by-step affine quantization of a small vector, one dict per step (for the animation).

    Steps: range → scale → zero → divide → round → shift/clamp → de-quantize → error.
    """
    import itertools

    import torch

    allowed = f"1…32 finite numbers, |x| ≤ {MAX_MAGNITUDE:g}"
    require(not isinstance(values, (str, bytes, dict)), "values", f"expected a list of numbers, got {values!r}", allowed)
    try:
        items = list(itertools.islice(values, 33))   # one past the limit is enough to reject a long input
    except TypeError:
        raise ValidationError("values", f"expected a list of numbers, got {values!r}", allowed) from None
    require(1 <= len(items) <= 32, "values", f"{len(items)}{'+' if len(items) > 32 else ''} values", allowed)
    nums = [require_number(v, "values", -MAX_MAGNITUDE, MAX_MAGNITUDE) for v in items]
    x = torch.as_tensor(nums, dtype=torch.float64)
    bits = check_bits(bits)
    require_bool(symmetric, "symmetric")
    lo, hi = x.min(), x.max()
    scale, zero = affine_params(lo, hi, bits, symmetric)
    ratio = x / scale
    rounded = torch.round(ratio)
    codes = quantize_codes(x, scale, zero, bits, symmetric)
    deq = dequantize(codes, scale, zero)
    s, z = float(scale), float(zero)
    qlo, qhi = ((-(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1) if symmetric else (0, 2 ** bits - 1))
    if symmetric:
        scale_text = f"scale = max|x| / (2^{bits - 1} − 1) = {float(torch.maximum(lo.abs(), hi.abs())):.4g} / {qhi} = {s:.4g}"
        zero_text = "symmetric: zero = 0, codes are signed"
    else:
        scale_text = (f"scale = (max − min) / (2^{bits} − 1) = ({float(torch.clamp(hi, min=0)):.4g} − "
                      f"{float(torch.clamp(lo, max=0)):.4g}) / {2 ** bits - 1} = {s:.4g}")
        zero_text = f"zero = round(−min / scale) = round({float(-torch.clamp(lo, max=0) / scale):.4g}) = {z:g}"
    steps = [
        ("range", f"range: min = {float(lo):.4g}, max = {float(hi):.4g} (widened to include 0)", None),
        ("scale", scale_text, None),
        ("zero", zero_text, None),
        ("divide", "x / scale", ratio),
        ("round", "round(x / scale)", rounded),
        ("codes", f"q = clamp(round(x / scale) + zero, {qlo}, {qhi})", codes),
        ("dequant", "x′ = scale · (q − zero), the de-quantized value", deq),
        ("error", f"error x − x′ (|error| ≤ scale/2 = {s / 2:.4g})", x - deq),
    ]
    return [{"step": name, "text": text, "values": x.tolist(), "row": None if row is None else row.tolist(),
             "scale": s, "zero": z, "codes": codes.tolist(), "dequant": deq.tolist(), "qmin": qlo, "qmax": qhi}
            for name, text, row in steps]


__all__ = ["QuantResult", "quantize", "rtn", "affine_params", "fake_quant", "bits_per_value", "levels_used",
           "worked_example", "check_matrix", "check_bits", "check_group", "ValidationError"]
