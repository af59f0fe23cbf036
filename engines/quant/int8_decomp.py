"""LLM.int8(): vector-wise int8 matmul with mixed-precision decomposition of outlier columns.

Dettmers, Lewis, Belkada, Zettlemoyer, "LLM.int8(): 8-bit Matrix Multiplication for Transformers
at Scale", NeurIPS'22, arXiv 2208.07339; bitsandbytes ``functional.int8_vectorwise_quant``:
input columns where any |x| ≥ threshold go through a 16-bit matmul; the rest use row-wise
(per-token) absmax int8 for X and per-output-row absmax int8 for W, int32 accumulation and
de-quantization by row_stats · col_stats / 127²; the two parts are summed. Since the int8 part is
x̂ ŵᵀ with x̂, ŵ the de-quantized operands, the result is returned as (x̂, ŵ) with the outlier
columns kept in fp16.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require_number
from engines.quant.affine import check_layer


@dataclass
class Int8Result:
    x_hat: object           # de-quantized activations (outlier columns kept in fp16)
    w_hat: object           # de-quantized weight (outlier columns kept in fp16)
    outlier_columns: list[int]
    threshold: float

    @property
    def fraction_fp16(self) -> float:
        return len(self.outlier_columns) / self.x_hat.shape[1]


def _absmax_int8(t, dim: int):
    import torch

    scale = t.abs().amax(dim=dim, keepdim=True).clamp(min=1e-12) / 127
    return torch.clamp(torch.round(t / scale), -127, 127) * scale


def llm_int8(x, w, threshold: float = 6.0) -> Int8Result:
    """Decompose ``x`` (tokens, in) · ``w`` (out, in)ᵀ at ``threshold`` (bnb's usual 6.0)."""
    import torch

    w, x = check_layer(w, x)
    w, x = w.to(torch.float32), x.to(torch.float32)
    threshold = require_number(threshold, "threshold", 0.0, lo_open=True)
    x = x.to(w.device)
    outlier = (x.abs() >= threshold).any(dim=0)
    keep = ~outlier
    x_hat = torch.empty_like(x)
    w_hat = torch.empty_like(w)
    x_hat[:, outlier] = x[:, outlier].half().float()
    w_hat[:, outlier] = w[:, outlier].half().float()
    if bool(keep.any()):
        x_hat[:, keep] = _absmax_int8(x[:, keep], dim=1)     # per token
        w_hat[:, keep] = _absmax_int8(w[:, keep], dim=1)     # per output row
    return Int8Result(x_hat, w_hat, torch.nonzero(outlier).flatten().tolist(), threshold)
