"""SmoothQuant: migrate activation outliers into the weights with a per-channel scale.

Xiao et al., "SmoothQuant: Accurate and Efficient Post-Training Quantization for Large Language
Models", ICML'23, arXiv 2211.10438; follows mit-han-lab/smoothquant ``smooth.py smooth_ln_fcs``:
    s_j = max|X_j|^α / max|W_j|^(1−α)   (clamped ≥ 1e-5; max|W_j| over the output rows)
    X̂ = X · diag(s)⁻¹,  Ŵ = W · diag(s),  so X̂ Ŵᵀ = X Wᵀ exactly;
the 1/s is folded into the preceding norm (``ln.weight /= s``, ``ln.bias /= s``), so it is free
at run time. Afterwards max|X̂_j| = (max|X_j|·max|W_j|)^(1−α) and max|Ŵ_j| = (…)^α.
The error is then measured with W8A8 as in the paper's ``fake_quant.py`` (symmetric absmax/127).
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require, require_number
from engines.quant.affine import check_layer


@dataclass
class SmoothResult:
    x: object              # smoothed activations X · diag(s)⁻¹
    w: object              # smoothed weight W · diag(s)
    scales: object         # s, one per input channel
    alpha: float
    norm_weight: object = None   # preceding norm weight folded: γ / s (None when not given)
    norm_bias: object = None


def smooth_scales(act_max, w, alpha: float):
    """s_j = max|X_j|^α / max|W_j|^(1−α), clamped ≥ 1e-5 (smoothquant ``smooth_ln_fcs``)."""
    w_max = w.abs().amax(dim=0).clamp(min=1e-5)
    return (act_max.clamp(min=1e-5).pow(alpha) / w_max.pow(1 - alpha)).clamp(min=1e-5)


def smoothquant(x, w, alpha: float = 0.5, act_max=None, norm_weight=None, norm_bias=None) -> SmoothResult:
    """Smooth ``x`` (tokens, in) and ``w`` (out, in). ``act_max`` defaults to max|x| per channel
    (pass the calibration statistics to apply them to held-out tokens)."""
    import torch

    w, x = check_layer(w, x)
    w, x = w.to(torch.float32), x.to(torch.float32)
    alpha = require_number(alpha, "alpha", 0.0, 1.0)
    if act_max is None:
        act_max = x.abs().amax(dim=0)
    act_max = act_max.to(device=w.device, dtype=torch.float32)
    require(act_max.shape == (w.shape[1],), "act_max", f"shape {tuple(act_max.shape)}", f"({w.shape[1]},)")
    s = smooth_scales(act_max, w, alpha)
    folded_w = folded_b = None
    if norm_weight is not None:
        folded_w = norm_weight.to(s) / s
    if norm_bias is not None:
        folded_b = norm_bias.to(s) / s
    return SmoothResult(x=x.to(s.device) / s, w=w * s, scales=s, alpha=alpha,
                        norm_weight=folded_w, norm_bias=folded_b)
