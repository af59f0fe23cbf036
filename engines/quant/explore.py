"""Everything the quantization panel draws for one layer, computed in one (worker-thread) call.

Composes the methods of this package; no new arithmetic. Output-error figures are relative output
errors on the layer's held-out tokens (``metrics.relative_output_error``); for a user tensor
without activations, weight-only figures use ‖W − Ŵ‖_F / ‖W‖_F instead.
"""
from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Callable

from engines.core.errors import Cancelled, require_int
from engines.quant.results import FixError, LayerAnalysis, MethodError, WeightHistogram

SQ_ALPHAS = tuple(round(0.05 * i, 2) for i in range(21))
TRACE_COLUMNS = 48


class _Draft:
    """The analysis while it is built, frozen into a :class:`LayerAnalysis` by :meth:`done`."""

    def __init__(self, name, shape, rows_used, bits, group_size, has_activations) -> None:
        self.__dict__.update({f.name: (f.default_factory() if f.default_factory is not MISSING else f.default)
                              for f in fields(LayerAnalysis)})
        self.methods, self.fixes = [], []
        self.__dict__.update(name=name, shape=shape, rows_used=rows_used, bits=bits, group_size=group_size,
                             has_activations=has_activations)

    def done(self) -> LayerAnalysis:
        values = {f.name: getattr(self, f.name) for f in fields(LayerAnalysis)}
        return LayerAnalysis(**{**values, "methods": tuple(self.methods), "fixes": tuple(self.fixes)})


def _hist(t, edges):
    import numpy as np

    return np.histogram(t.detach().cpu().numpy().ravel(), bins=edges)[0].tolist()


def analyse(name: str, w, x_calib=None, x_eval=None, bits: int = 4, group_size: int | None = 128,
            max_rows: int = 256, sq_alpha: float = 0.5, int8_threshold: float = 6.0,
            progress: Callable[[float, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> LayerAnalysis:
    """Analyse ``w`` (out, in) with optional activations; GPTQ/AWQ use the first ``max_rows`` rows.
    Raises :class:`engines.core.errors.Cancelled` when ``cancelled()`` turns true."""
    import numpy as np
    import torch

    from engines.quant import (awq, fp8_e4m3, gptq, llm_int8, nf4, relative_output_error, rotate, rtn,
                               scheme_errors, smoothquant, w8a8)
    from engines.quant.affine import bits_per_value, check_group, check_matrix, levels_used, quantize

    w = check_matrix(w, "w").float()
    max_rows = require_int(max_rows, "max_rows", 1)
    check_group(group_size, w.shape[1])
    step = (lambda f, text: progress(f, text)) if progress else (lambda f, text: None)
    def stop() -> bool:
        if cancelled is not None and cancelled():
            raise Cancelled()
        return False

    has_x = x_calib is not None and x_eval is not None
    ws = w[:max_rows]
    res = _Draft(name, tuple(w.shape), ws.shape[0], bits, group_size, has_x)
    if has_x:
        xc, xe = check_matrix(x_calib, "x").float(), check_matrix(x_eval, "x").float()
        err = lambda w_hat, rows=ws: relative_output_error(xe, rows, w_hat)  # noqa: E731
    else:
        err = lambda w_hat, rows=ws: float(torch.linalg.matrix_norm(rows - w_hat) / torch.linalg.matrix_norm(rows))  # noqa: E731

    # weight-only methods: key -> (result, name, nominal bits, block size, scale layout note)
    r_rtn = rtn(ws, bits, group_size)
    methods = {"rtn": (r_rtn, "RTN", bits, group_size, None),
               "nf4": (nf4(ws, 64) if ws.shape[1] % 64 == 0 else None, "NF4", 4, 64, "blocks of 64"),
               "fp8_e4m3": (fp8_e4m3(ws), "FP8 E4M3", 8, None, "per tensor")}
    if has_x:
        step(0.05, "GPTQ")
        methods["gptq"] = (gptq(ws, xc, bits, group_size, trace_columns=TRACE_COLUMNS), "GPTQ", bits, group_size,
                           None)
        stop()
        methods["gptq_act_order"] = (gptq(ws, xc, bits, group_size, act_order=True), "GPTQ act-order", bits,
                                     group_size, None)
        step(0.3, "AWQ α search")
        stop()
        r_awq = awq(ws, xc, bits, group_size if group_size else None)
        methods["awq"] = (r_awq, "AWQ", bits, group_size, None)
        res.awq_alpha = r_awq.alpha
        res.awq_curve = list(zip(r_awq.extra["alphas"], r_awq.extra["losses"]))
        trace = methods["gptq"][0].extra["trace"]
        rtn_cols = torch.linalg.vector_norm(ws - r_rtn.dequant, dim=0)
        for t in trace:
            t["rtn_error"] = float(rtn_cols[t["column"]])
        res.gptq_trace = trace
    for key, (r, label, nominal, block, note) in methods.items():
        if r is not None:
            res.methods.append(MethodError(key, label, nominal, block, err(r.dequant), r.bits_per_weight, note,
                                           r.alpha if key == "awq" else None))
    lim = float(ws.abs().max())
    edges = np.linspace(-lim, lim, 81)
    res.weight_hist = WeightHistogram(edges.tolist(), _hist(ws, edges), _hist(r_rtn.dequant, edges),
                                      _hist(methods["awq"][0].dequant, edges) if "awq" in methods else None)
    step(0.55, "group-size sweep")

    for g in (16, 32, 64, 128, 256, 512, None):
        if g is not None and (g >= ws.shape[1] or ws.shape[1] % g):
            continue
        r = rtn(ws, bits, g)
        # bpw_scale_only: the same groups with a scale alone (symmetric, as GPTQ's sym=True checkpoints),
        # b + 16/g; the figure a slide quotes beside the scale-and-zero cost it measures
        res.group_sweep.append({"group": g or ws.shape[1], "bpw": r.bits_per_weight, "error": err(r.dequant),
                                "bpw_scale_only": bits_per_value(bits, g or ws.shape[1], symmetric=True)})
    if not has_x or stop():
        return res.done()

    # activation side on the full layer (cheap): outlier collapse and the three fixes
    step(0.65, "W8A8 and the three fixes")
    res.act_max = xe.abs().amax(0).tolist()
    calib_act_max = xc.abs().amax(0)
    res.calib_act_max = tuple(calib_act_max.tolist())
    res.weight_col_max = tuple(w.abs().amax(0).tolist())
    res.calib_tokens, res.heldout_tokens = int(xc.shape[0]), int(xe.shape[0])
    xq, wq = w8a8(xe, w, "tensor", "tensor")
    res.fixes.append(FixError("naive", relative_output_error(xe, w, wq, xq)))
    xq, wq = w8a8(xe, w, "row", "row")
    res.fixes.append(FixError("per_channel", relative_output_error(xe, w, wq, xq)))
    for a in SQ_ALPHAS:
        sm = smoothquant(xe, w, a, act_max=calib_act_max)
        xq, wq = w8a8(sm.x, sm.w, "tensor", "tensor")
        res.sq_curve.append((a, relative_output_error(sm.x, sm.w, wq, xq)))
    swept = dict(res.sq_curve)
    sq_used = sq_alpha if round(sq_alpha, 2) in swept else SQ_ALPHAS[10]     # off the grid: the sweep's middle
    res.fixes.append(FixError("smoothquant", swept[round(sq_used, 2)], sq_used))
    xr, wr, _ = rotate(xe, w)
    xq, wq = w8a8(xr, wr, "tensor", "tensor")
    res.fixes.append(FixError("rotation", relative_output_error(xr, wr, wq, xq)))
    res.rotated_max = xr.abs().amax(0).tolist()
    dec = llm_int8(xe, w, int8_threshold)
    res.fixes.append(FixError("llm_int8", relative_output_error(xe, w, dec.w_hat, dec.x_hat),
                              threshold=int8_threshold))
    res.int8_fp16_fraction = dec.fraction_fp16
    c = xe.abs().amax(0)
    big = c > 10 * c.median()
    whole = quantize(xe, 8, "tensor", symmetric=True)
    rest = xe[:, ~big] if bool(big.any()) and bool((~big).any()) else xe
    alone = quantize(rest, 8, "tensor", symmetric=True)
    codes_rest = whole.codes[:, ~big] if bool(big.any()) and bool((~big).any()) else whole.codes
    res.collapse = {"outlier_channels": torch.nonzero(big).flatten().tolist()[:12],
                    "scale_with": float(whole.scale), "scale_without": float(alone.scale),
                    "levels_with": levels_used(codes_rest), "levels_without": levels_used(alone.codes),
                    "codes_with": np.bincount((codes_rest.flatten() + 127).cpu().numpy(), minlength=255).tolist(),
                    "codes_without": np.bincount((alone.codes.flatten() + 127).cpu().numpy(), minlength=255).tolist()}
    step(0.75, "W4A16 / W8A8 / W4A4")
    stop()
    res.schemes = scheme_errors(xc, xe, ws, group_size or ws.shape[1])
    step(1.0, "done")
    return res.done()
