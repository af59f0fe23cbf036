"""GPTQ: Hessian-guided, column-by-column quantization with error feedback.

Frantar, Ashkboos, Hoefler, Alistarh, "GPTQ: Accurate Post-Training Quantization for Generative
Pre-trained Transformers", ICLR'23, arXiv 2210.17323; follows ``gptq.py`` ``fasterquant`` of
IST-DASLab/gptq (commit 2d65066e) step for step:
  * objective min ‖W Xᵀ − Ŵ Xᵀ‖² per layer, Hessian H = (2/n) Σ x xᵀ over calibration tokens;
  * without groups, (scale, zero) per row come from W as given, before dead inputs (H_ii = 0)
    get H_ii = 1 and W[:, i] = 0; act-order permutes columns by diag(H) ↓;
  * dampening: H += damp · mean(diag H) · I; U = upper Cholesky factor of H⁻¹;
  * for each column i (in blocks of ``block_size``): q_i = Q(w_i); err = (w_i − q_i) / U_ii;
    W[:, i:] −= err · U[i, i:] inside the block, then one lazy update of the later columns;
  * with groups, (scale, zero) are recomputed at every group start from the current columns
    (over the permuted order when act-order is on, so kernels need a ``g_idx``).
``gptq_reference`` is the plain column-by-column form (OBQ-style, no blocks) used by the
benchmark and to show that the lazy block update changes speed, not the answer.
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import Callable

from engines.core.errors import ValidationError, require_int, require_number
from engines.core.threads import torch_threads
from engines.quant.affine import (QuantResult, affine_params, bits_per_value, check_bits, check_group,
                                  check_layer)


def hessian(x):
    """H = (2/n) Σ_t x_t x_tᵀ in float32 (GPTQ ``add_batch``)."""
    import torch

    xf = x.to(torch.float32)
    return (2.0 / xf.shape[0]) * (xf.T @ xf)


def _prepare(w, x, bits, group_size, damp, act_order):
    import torch

    w, x = check_layer(w, x)
    bits = check_bits(bits)
    check_group(group_size, w.shape[1])
    require_number(damp, "damp", 0, 1)
    W = w.to(torch.float32).clone()
    row_params = _params(W, bits)   # upstream finds per-row parameters before zeroing dead columns
    H = hessian(x.to(W.device))
    dead = torch.diag(H) == 0
    H[dead, dead] = 1
    W[:, dead] = 0
    perm = None
    if act_order:
        perm = torch.argsort(torch.diag(H), descending=True)
        W, H = W[:, perm], H[perm][:, perm]
    idx = torch.arange(H.shape[0], device=H.device)
    H[idx, idx] += damp * torch.mean(torch.diag(H))
    try:
        U = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)
    except torch.linalg.LinAlgError:   # upstream crashes here; fewer tokens than inputs with damp 0
        raise ValidationError("damp", f"the dampened Hessian is not positive definite at damp {damp:g} "
                              f"({x.shape[0]} calibration tokens for {x.shape[1]} inputs)",
                              "a larger damp (0.01 is GPTQ's default), or more calibration tokens") from None
    return w, W, U, perm, row_params


def _params(cols, bits):
    return affine_params(cols.amin(dim=1, keepdim=True), cols.amax(dim=1, keepdim=True), bits)


def _qcol(col, scale, zero, bits):
    import torch

    return scale[:, 0] * (torch.clamp(torch.round(col / scale[:, 0]) + zero[:, 0], 0, 2 ** bits - 1) - zero[:, 0])


def _finish(w, Q, perm, bits, group_size, method, trace):
    import torch

    if perm is not None:
        Q = Q[:, torch.argsort(perm)]
    per = group_size if group_size is not None else w.shape[1]
    return QuantResult(dequant=Q.to(w.dtype), bits_per_weight=bits_per_value(bits, per), bits=bits,
                       group_size=group_size, symmetric=False, method=method,
                       extra={"perm": perm, "trace": trace})


def gptq(w, x, bits: int, group_size: int | None = None, damp: float = 0.01, block_size: int = 128,
         act_order: bool = False, progress: Callable[[float, str], None] | None = None,
         trace_columns: int = 0) -> QuantResult:
    """GPTQ-quantize ``w`` (out, in) using calibration activations ``x`` (tokens, in).

    ``trace_columns`` > 0 records, for the first that many processed columns, the column index,
    its quantization error and the norm of the error pushed onto the remaining columns (for the
    panel's animation); it is stored in ``result.extra['trace']``. On the CPU it runs on one
    thread (:mod:`engines.core.threads`), so the result does not depend on the caller's count.
    """
    on_cpu = getattr(getattr(w, "device", None), "type", "cpu") == "cpu"
    with torch_threads(1) if on_cpu else nullcontext():
        return _gptq(w, x, bits, group_size, damp, block_size, act_order, progress, trace_columns)


def _gptq(w, x, bits, group_size, damp, block_size, act_order, progress, trace_columns) -> QuantResult:
    import torch

    w, W, U, perm, (scale, zero) = _prepare(w, x, bits, group_size, damp, act_order)
    block_size = require_int(block_size, "block_size", 1)
    rows, cols = W.shape
    Q = torch.zeros_like(W)
    trace = []
    for i1 in range(0, cols, block_size):
        i2 = min(i1 + block_size, cols)
        W1 = W[:, i1:i2].clone()
        Q1 = torch.zeros_like(W1)
        Err1 = torch.zeros_like(W1)
        U1 = U[i1:i2, i1:i2]
        for i in range(i2 - i1):
            col = W1[:, i]
            d = U1[i, i]
            if group_size is not None and (i1 + i) % group_size == 0:
                # as upstream: parameters from the outer W (lazy-updated up to this block)
                scale, zero = _params(W[:, i1 + i:i1 + i + group_size], bits)
            q = _qcol(col, scale, zero, bits)
            Q1[:, i] = q
            err = (col - q) / d
            if len(trace) < trace_columns:
                before = W1[:, i + 1:].clone()
                q_err = float(torch.linalg.vector_norm(col - q))
            W1[:, i:] -= err.unsqueeze(1) @ U1[i, i:].unsqueeze(0)
            Err1[:, i] = err
            if len(trace) < trace_columns:
                trace.append({"column": int(perm[i1 + i]) if perm is not None else i1 + i,
                              "quant_error": q_err,
                              "pushed": float(torch.linalg.vector_norm(W1[:, i + 1:] - before))})
        Q[:, i1:i2] = Q1
        W[:, i2:] -= Err1 @ U[i1:i2, i2:]
        if progress is not None:
            progress(i2 / cols, f"GPTQ column {i2}/{cols}")
    return _finish(w, Q, perm, bits, group_size, "gptq", trace)


def gptq_reference(w, x, bits: int, group_size: int | None = None, damp: float = 0.01,
                   act_order: bool = False) -> QuantResult:
    """Plain column-by-column GPTQ: after each column, update *all* later columns at once.

    Same arithmetic as :func:`gptq` without the lazy block batching (one rank-1 update of the
    whole trailing matrix per column), so it is memory-bound; used as the benchmark baseline.
    Group parameters come from the fully updated columns (``gptq`` uses the lazily updated ones,
    as upstream), so the two agree exactly only without groups.
    """
    import torch

    w, W, U, perm, (scale, zero) = _prepare(w, x, bits, group_size, damp, act_order)
    rows, cols = W.shape
    Q = torch.zeros_like(W)
    for i in range(cols):
        if group_size is not None and i % group_size == 0:
            scale, zero = _params(W[:, i:i + group_size], bits)
        col = W[:, i]
        q = _qcol(col, scale, zero, bits)
        Q[:, i] = q
        err = (col - q) / U[i, i]
        W[:, i:] -= err.unsqueeze(1) @ U[i, i:].unsqueeze(0)
    return _finish(w, Q, perm, bits, group_size, "gptq-reference", [])
