"""AWQ: activation-aware per-input-channel scaling, searched over a grid of α, plus weight clipping.

Lin et al., "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration",
MLSys'24, arXiv 2306.00978; follows mit-han-lab/llm-awq (commit d6e797a4)
``awq/quantize/auto_scale.py _search_module_scale`` and ``auto_clip.py``:
  * s_x = per-channel mean|x| over calibration tokens (``get_act_scale``);
  * for α = k/n_grid, k = 0…n_grid−1: s = s_x^α (clamped ≥ 1e-4), s /= √(max s · min s);
    W′ = Q(W · diag s) · diag(s)⁻¹ (1/s is folded into the previous op); loss = mean (xWᵀ − xW′ᵀ)²;
    keep the α with the lowest loss;
  * clipping: per output row and group, shrink max|w| by (1 − i/20), i < 10, scored by the
    group-output MSE on every (n // 512)-th calibration token (all of them below 1,024).
"""
from __future__ import annotations

from typing import Callable

from engines.core.errors import require, require_int
from engines.quant.affine import (QuantResult, affine_params, bits_per_value, check_bits, check_group,
                                  check_layer)

MAX_CLIP_TOKENS = 512  # llm-awq auto_clip n_sample_token


def _group_quant(w, bits: int, group_size: int | None):
    """Asymmetric fake quantization per row-group (or per row) of a 2-D float tensor."""
    import torch

    rows, cols = w.shape
    g = group_size or cols
    view = w.reshape(rows, cols // g, g)
    scale, zero = affine_params(view.amin(dim=2, keepdim=True), view.amax(dim=2, keepdim=True), bits)
    q = torch.clamp(torch.round(view / scale) + zero, 0, 2 ** bits - 1)
    return (scale * (q - zero)).reshape(rows, cols)


def awq_scales(x_mean, alpha: float):
    """s = x_mean^α clamped ≥ 1e-4, normalised by √(max·min) (llm-awq auto_scale)."""
    s = x_mean.pow(alpha).clamp(min=1e-4)
    return s / (s.max() * s.min()).sqrt()


def _clip(w, x, bits, group_size, progress=None):
    """llm-awq ``auto_clip_layer``: best per-(row, group) clipping of max|w| by output MSE."""
    import torch

    rows, cols = w.shape
    g = group_size or cols
    ng = cols // g
    x = x[::max(1, x.shape[0] // MAX_CLIP_TOKENS)]   # llm-awq: every (n // 512)-th token, all below 1024
    xg = x.reshape(-1, ng, g)                                    # (t, ng, g)
    wg = w.reshape(rows, ng, g)
    org_max = wg.abs().amax(dim=2, keepdim=True)                 # (rows, ng, 1)
    org_out = torch.einsum("tng,rng->trn", xg, wg)
    best_err = torch.full((rows, ng), float("inf"), device=w.device)
    best_max = org_max.clone()
    for i in range(10):                                          # max_shrink 0.5, n_grid 20
        max_val = org_max * (1 - i / 20)
        cur = torch.clamp(wg, -max_val, max_val)
        q = _group_quant(cur.reshape(rows, cols), bits, group_size).reshape(rows, ng, g)
        err = (torch.einsum("tng,rng->trn", xg, q) - org_out).pow(2).mean(dim=0)
        better = err < best_err
        best_err = torch.where(better, err, best_err)
        best_max = torch.where(better.unsqueeze(2), max_val, best_max)
        if progress is not None:
            progress(0.7 + 0.3 * (i + 1) / 10, f"AWQ clip search {i + 1}/10")
    return torch.clamp(wg, -best_max, best_max).reshape(rows, cols)


def awq(w, x, bits: int, group_size: int | None = 128, n_grid: int = 20, clip: bool = True,
        progress: Callable[[float, str], None] | None = None) -> QuantResult:
    """AWQ-quantize ``w`` (out, in) with calibration activations ``x`` (tokens, in).

    Returns the effective de-quantized weight Q(W·s)/s, ``.alpha`` (the chosen α) and
    ``.extra['alphas']`` / ``.extra['losses']`` (the α-versus-loss curve) and ``.extra['scales']``.
    """
    import torch

    w, x = check_layer(w, x)
    bits = check_bits(bits)
    check_group(group_size, w.shape[1])
    n_grid = require_int(n_grid, "n_grid", 1, 1000)
    W = w.to(torch.float32)
    X = x.to(device=W.device, dtype=torch.float32)
    x_mean = X.abs().mean(dim=0)
    ref = X @ W.T
    alphas, losses = [], []
    best = (float("inf"), 0.0, None)
    for k in range(n_grid):
        alpha = k / n_grid
        s = awq_scales(x_mean, alpha)
        w_eff = _group_quant(W * s, bits, group_size) / s
        loss = float((X @ w_eff.T - ref).double().pow(2).mean())   # float64: large outputs square past fp32
        alphas.append(alpha)
        losses.append(loss)
        if loss < best[0]:
            best = (loss, alpha, s)
        if progress is not None:
            progress((0.7 if clip else 1.0) * (k + 1) / n_grid, f"AWQ α grid {k + 1}/{n_grid}")
    require(best[2] is not None, "x", "the output error is not finite at any α", "activations of moderate size")
    _, alpha, s = best
    scaled = W * s
    if clip:
        scaled = _clip(scaled, X / s, bits, group_size, progress)
    w_eff = _group_quant(scaled, bits, group_size) / s
    per = group_size if group_size is not None else W.shape[1]
    return QuantResult(dequant=w_eff.to(w.dtype), bits_per_weight=bits_per_value(bits, per), bits=bits,
                       group_size=group_size, symmetric=False, method="awq", alpha=alpha,
                       extra={"alphas": alphas, "losses": losses, "scales": s, "clip": clip})
