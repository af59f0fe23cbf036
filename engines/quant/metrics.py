"""Error metrics on real tensors: relative output error, SQNR, per-channel error, outlier ratio.

Relative output error ‖X Wᵀ − X̂ Ŵᵀ‖_F / ‖X Wᵀ‖_F is the layer-wise objective GPTQ minimises
(Frantar et al., arXiv 2210.17323, eq. 1) made scale-free; measured on held-out tokens in float64.
SQNR = 10·log10(‖x‖² / ‖x − x̂‖²) dB (signal-to-quantization-noise ratio; each extra bit of a
uniform quantizer adds ≈ 6.02 dB, Widrow & Kollár, "Quantization Noise", 2008, ch. 5).
"""
from __future__ import annotations

import math

from engines.core.errors import require
from engines.quant.affine import check_matrix


def relative_output_error(x, w, w_hat, x_hat=None) -> float:
    """‖x wᵀ − x̂ ŵᵀ‖_F / ‖x wᵀ‖_F with x̂ = x when not given (float64)."""
    import torch

    x = check_matrix(x, "x")
    w = check_matrix(w, "w")
    w_hat = check_matrix(w_hat, "w_hat")
    require(w_hat.shape == w.shape, "w_hat", f"shape {tuple(w_hat.shape)} differs from w {tuple(w.shape)}",
            str(tuple(w.shape)))
    require(x.shape[1] == w.shape[1], "x", f"has {x.shape[1]} channels but w has {w.shape[1]} inputs",
            f"(tokens, {w.shape[1]})")
    if x_hat is None:
        x_hat = x
    else:
        x_hat = check_matrix(x_hat, "x_hat")
        require(x_hat.shape == x.shape, "x_hat", f"shape {tuple(x_hat.shape)} differs from x", str(tuple(x.shape)))
    dev = w.device
    ref = x.to(dev, torch.float64) @ w.to(torch.float64).T
    out = x_hat.to(dev, torch.float64) @ w_hat.to(dev, torch.float64).T
    denom = float(torch.linalg.matrix_norm(ref))
    require(denom > 0, "x", "x wᵀ is all zero, so a relative error is undefined", "non-zero product")
    return float(torch.linalg.matrix_norm(ref - out)) / denom


def sqnr_db(x, x_hat) -> float:
    """Signal-to-quantization-noise ratio in dB; +inf when exact."""
    import torch

    x = x.to(torch.float64)
    noise = float((x - x_hat.to(x)).pow(2).sum())
    signal = float(x.pow(2).sum())
    if noise == 0:
        return math.inf
    return 10 * math.log10(signal / noise)


def per_channel_error(x, w, w_hat):
    """Relative output error of each output channel (column of X Wᵀ), float64 tensor (out,)."""
    import torch

    ref = x.to(torch.float64) @ w.to(torch.float64).T
    out = x.to(torch.float64) @ w_hat.to(ref).T
    return torch.linalg.vector_norm(ref - out, dim=0) / torch.linalg.vector_norm(ref, dim=0).clamp(min=1e-30)


def channel_absmax(x):
    """c_j = max over tokens of |x_j| (the reference's per-channel activation maximum)."""
    return x.abs().amax(dim=0)


def outlier_ratio(x) -> float:
    """max_j c_j / median_j c_j of the per-channel activation maxima."""
    c = channel_absmax(x).to(dtype=x.dtype if x.is_floating_point() else None).float()
    return float(c.max() / c.median().clamp(min=1e-30))
