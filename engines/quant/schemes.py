"""Weight/activation schemes (W4A16, W8A8, W4A4) on one layer, and what each format buys at serving.

Layer side: which operands are quantized and how (per-tensor / per-channel / per-token), reusing
the quantizers of this package; error = relative output error on held-out tokens.
Serving side: decoding one token reads every weight once plus the KV cache, so at small batch a
step takes bytes / HBM bandwidth (Pope et al., arXiv 2211.05102; kipply, "Transformer Inference
Arithmetic", 2022): tokens/s = batch / max(bytes / bandwidth, batch · 2·P / peak). Linear layers
inside the blocks are quantized; embeddings, head and norms stay 16-bit (as GPTQ/AWQ do).
Tensor-core formats (A100: INT8 = 2 × FP16; Hopper adds FP8) come from the GPU catalogue.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require_int
from engines.quant.affine import quantize, rtn
from engines.quant.kv import kv_cache_bytes


@dataclass(frozen=True)
class ServingFormat:
    name: str
    bits: int            # bits per stored weight code
    scale_bits: int      # bits of scale (+ zero) stored per group
    group: int           # values per scale; 0 = one per output row (hidden inputs), -1 = per tensor
    mma: str             # tensor-core precision the matmul runs in: bf16, int8, fp8, int4
    note: str

    def weight_bits(self, hidden: int) -> float:
        """b + scale bits / values per scale (per-tensor scales are negligible and not counted)."""
        if self.group < 0 or self.scale_bits == 0:
            return float(self.bits)
        return self.bits + self.scale_bits / (self.group or hidden)


FORMATS = (
    ServingFormat("BF16 (W16A16)", 16, 0, -1, "bf16", "baseline"),
    ServingFormat("W8A8 INT8 (SmoothQuant / LLM.int8)", 8, 16, 0, "int8", "per-channel fp16 scale"),
    ServingFormat("W8A8 FP8 E4M3", 8, 32, -1, "fp8", "per-tensor fp32 scale"),
    ServingFormat("W4A16 g128 (GPTQ / AWQ)", 4, 32, 128, "bf16", "fp16 scale + zero per 128; de-quantized in the kernel"),
    ServingFormat("NF4 (QLoRA, blocks of 64)", 4, 32, 64, "bf16", "fp32 absmax per 64"),
    ServingFormat("W4A4 (QuaRot)", 4, 16, 0, "int4", "INT4 MMA on Ampere and Ada; Hopper, Blackwell and MI300X have none"),
)


def quantized_linear_params(arch) -> int:
    """Parameters of the linear layers inside the transformer blocks (the ones quantized)."""
    h, d = arch.hidden, arch.head_dim
    attn = h * arch.heads * d + 2 * h * arch.kv_heads * d + arch.heads * d * h
    n_mats = 3 if arch.mlp == "swiglu" else 2
    return arch.layers * (attn + n_mats * h * arch.ffn)


def serving_table(arch, gpu, batch: int, context: int, kv_bits: int = 16) -> list[dict]:
    """Per format: weight memory, KV memory, fit, bandwidth- and compute-bound decode tokens/s."""
    batch = require_int(batch, "serve_batch", 1)
    context = require_int(context, "serve_context", 1)
    kv_bits = require_int(kv_bits, "kv_bits", 1, 32)
    p_total = arch.param_count()
    p_q = quantized_linear_params(arch)
    kv = kv_cache_bytes(arch.layers, arch.kv_heads, arch.head_dim, context, batch, kv_bits)
    rows = []
    for f in FORMATS:
        bits = f.weight_bits(arch.hidden)
        weights = p_q * bits / 8 + (p_total - p_q) * 2
        bw_time = (weights + kv) / (gpu.bandwidth_gbps * 1e9)
        peak = gpu.peak_flops(f.mma)
        accelerated = peak > 0
        if not accelerated:            # no tensor-core path: falls back to BF16 MMA
            peak = gpu.bf16_tflops * 1e12
        compute_time = batch * 2 * p_total / peak
        step = max(bw_time, compute_time)
        rows.append({"format": f.name, "weight_bits": round(bits, 4), "weights_gb": weights / 1e9,
                     "kv_gb": kv / 1e9, "total_gb": (weights + kv) / 1e9,
                     "fits": (weights + kv) <= gpu.memory_bytes,
                     "decode_tok_s": batch / step, "bound": "memory" if bw_time >= compute_time else "compute",
                     "mma": f.mma, "tensor_core": accelerated, "note": f.note})
    return rows


def w8a8(x, w, weight: str = "tensor", act: str = "tensor", bits_w: int = 8, bits_a: int = 8):
    """Symmetric fake-quantized operands (x̂, ŵ): W per tensor or per output channel ('row'),
    X per tensor or per token ('row'), as SmoothQuant's ``fake_quant.py``."""
    xq = quantize(x, bits_a, act, symmetric=True).dequant
    wq = quantize(w, bits_w, weight, symmetric=True).dequant
    return xq, wq


def scheme_errors(x_calib, x_eval, w, group_size: int, progress=None) -> list[dict]:
    """W4A16 (RTN/GPTQ/AWQ), W8A8 (per-tensor, per-channel/token) and W4A4 (RTN; rotation + GPTQ)
    on one layer, as relative output error on held-out tokens."""
    from engines.quant.awq import awq
    from engines.quant.gptq import gptq
    from engines.quant.metrics import relative_output_error
    from engines.quant.rotate import rotate

    w = w.float()
    xc, xe = x_calib.float().to(w.device), x_eval.float().to(w.device)
    rows = []

    def add(name, w_hat, x_hat=None, x_ref=xe, w_ref=w):
        rows.append({"scheme": name, "relative_error": relative_output_error(x_ref, w_ref, w_hat, x_hat)})

    add("W4A16 RTN", rtn(w, 4, group_size).dequant)
    add("W4A16 GPTQ", gptq(w, xc, 4, group_size, act_order=True).dequant)
    if progress:
        progress(0.3, "W4A16 done")
    add("W4A16 AWQ", awq(w, xc, 4, group_size).dequant)
    xq, wq = w8a8(xe, w, "tensor", "tensor")
    add("W8A8 per-tensor", wq, xq)
    xq, wq = w8a8(xe, w, "row", "row")
    add("W8A8 per-channel W / per-token A", wq, xq)
    if progress:
        progress(0.6, "W8A8 done")
    xq, wq = w8a8(xe, w, "row", "row", bits_w=4, bits_a=4)
    add("W4A4 RTN", wq, xq)
    xr, wr, Q = rotate(xe, w)
    xcr = xc @ Q
    w_hat = gptq(wr, xcr, 4, act_order=True).dequant
    add("W4A4 rotation + GPTQ", w_hat, quantize(xr, 4, "row", symmetric=True).dequant, x_ref=xr, w_ref=wr)
    if progress:
        progress(1.0, "W4A4 done")
    return rows
