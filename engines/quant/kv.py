"""KV-cache quantization: per-token versus per-channel scales, and KV-cache size.

Keys carry a few fixed outlier channels, so one scale per token (over the head dimension) is set
by the outlier and crushes the rest; one scale per channel (over tokens) isolates it. KIVI
(Liu et al., arXiv 2402.02750) therefore quantizes keys per-channel and values per-token;
KVQuant (Hooper et al., arXiv 2401.18079) quantizes pre-RoPE keys per-channel; QuaRot
(arXiv 2404.00456) instead applies a Hadamard on the head dimension before per-token quantization.
KV bytes = 2 · layers · kv_heads · head_dim · context · batch · bits/8 (K and V for every layer and
token; Pope et al., "Efficiently Scaling Transformer Inference", arXiv 2211.05102, §2).
"""
from __future__ import annotations

from engines.core.errors import require, require_choice, require_int, require_number
from engines.quant.affine import QuantResult, check_matrix, quantize
from engines.serving import kv_cache_bytes as serving_kv_cache_bytes

AXES = ("token", "channel", "token-rotated")


def quantize_kv(t, bits: int, axis: str = "token", head_dim: int = 64) -> QuantResult:
    """Fake-quantize a K or V matrix (tokens, kv_heads·head_dim).

    ``token``: one (scale, zero) per token and head (groups of ``head_dim`` channels);
    ``channel``: one per channel over all tokens; ``token-rotated``: Hadamard on each head's
    dimension, per-token quantization, rotate back.
    """
    import torch

    t = check_matrix(t, "kv").to(torch.float32)
    require_choice(axis, "axis", AXES)
    head_dim = require_int(head_dim, "head_dim", 1)
    require(t.shape[1] % head_dim == 0, "head_dim", f"{head_dim} does not divide {t.shape[1]} channels",
            f"a divisor of {t.shape[1]}")
    if axis == "channel":
        return quantize(t, bits, "column")
    if axis == "token":
        return quantize(t, bits, "group", head_dim)
    from engines.quant.rotate import rotation_matrix

    Q = rotation_matrix(head_dim, "hadamard", seed=0, device=str(t.device))
    heads = t.shape[1] // head_dim
    rot = (t.reshape(-1, heads, head_dim) @ Q).reshape(t.shape)
    res = quantize(rot, bits, "group", head_dim)
    res.dequant = (res.dequant.reshape(-1, heads, head_dim) @ Q.T).reshape(t.shape)
    res.method = "kv-token-rotated"
    return res


def kv_comparison(k, v, bits: int, head_dim: int = 64) -> list[dict]:
    """Relative error ‖t − t̂‖/‖t‖ and SQNR for K and V under each scale layout."""
    import torch

    from engines.quant.metrics import sqnr_db

    rows = []
    for name, t in (("K", k), ("V", v)):
        t = check_matrix(t, name).to(torch.float32)
        for axis in AXES:
            res = quantize_kv(t, bits, axis, head_dim)
            err = float(torch.linalg.matrix_norm(t - res.dequant) / torch.linalg.matrix_norm(t))
            rows.append({"tensor": name, "axis": axis, "bits": bits, "relative_error": err,
                         "sqnr_db": sqnr_db(t, res.dequant), "bits_per_value": res.bits_per_weight})
    return rows


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, context: int, batch: int, bits: float) -> float:
    """2 · layers · kv_heads · head_dim · context · batch · bits / 8 (scales not counted): the serving
    engine's formula (PagedAttention §3), with this panel's names for the context and the bits."""
    context = require_int(context, "context", 0)
    bits = require_number(bits, "bits", 0, 32, lo_open=True)
    return float(serving_kv_cache_bytes(layers, kv_heads, head_dim, context, batch, bytes_per_element=bits / 8))
