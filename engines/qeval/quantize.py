"""Quantized weights for one configuration, built with the quantizers of :mod:`engines.quant`.

RTN quantizes each linear on its own. GPTQ and AWQ need the inputs each linear sees: as in
GPTQ's ``llama.py`` (IST-DASLab/gptq), the calibration tokens run through the model one block at a
time; each block's linears are quantized with the inputs recorded in that block (already passed
through the quantized blocks before it), then the block is run again with its quantized weights to
give the next block its input. AWQ here searches one scale vector per linear and keeps Q(W·s)/s in
place (the division by s that llm-awq folds into the preceding norm or linear is kept with the
weight, which computes the same product; llm-awq shares one s between the linears that read the same
input, so this is a slightly more flexible variant). Group sizes that do not divide a layer's input
width (128 on 576 inputs) leave a shorter last group, as GPTQ's column loop does: the columns are
padded with zeros, which never change a range that already includes 0.
"""
from __future__ import annotations

import time
from typing import Callable

from engines.core import errors
from engines.qeval.config import QuantConfig
from engines.qeval.model import LINEARS, LM, SITES

Progress = Callable[[float, str], None]
Cancelled = Callable[[], bool]
TEXT_DIR = "qeval/texts"
CALIB_SEQ = 256   # calibration tokens per sequence
# GPTQ's dampening, as a share of the mean Hessian diagonal. Upstream uses 0.01 with 128 × 2,048 tokens;
# with the ≤ 2,048 tokens shipped here a 1,536-input down_proj sees a rank-deficient Hessian, and at 0.01
# GPTQ fitted the calibration text at the cost of held-out text (block 0 down_proj, 3-bit g128, 1,024
# tokens: held-out output error 0.20 against RTN's 0.15; 0.147 at 0.1, measured on this model).
GPTQ_DAMP = 0.1


class QuantCancelled(errors.Cancelled):
    """The caller's ``cancelled()`` turned true while weights were being quantized."""


def _pad(w, x, group_size):
    import torch

    cols = w.shape[1]
    if group_size is None or cols % group_size == 0:
        return w, x, cols
    n = -(-cols // group_size) * group_size
    w = torch.nn.functional.pad(w, (0, n - cols))
    x = None if x is None else torch.nn.functional.pad(x, (0, n - cols))
    return w, x, cols


def quantize_matrix(w, bits: int, group_size: int | None, method: str = "rtn", x=None):
    """Fake-quantized copy of one weight (out, in) by RTN, GPTQ or AWQ (``x``: calibration inputs)."""
    from engines.quant import awq, gptq, rtn

    wp, xp, cols = _pad(w, x, group_size)
    if method == "rtn":
        res = rtn(wp, bits, group_size)
    elif method == "gptq":
        res = gptq(wp, xp, bits, group_size, damp=GPTQ_DAMP)
    else:
        res = awq(wp, xp, bits, group_size)
    return res.dequant[:, :cols].contiguous()


def bits_per_weight(lm: LM, config: QuantConfig) -> float:
    """Average storage per linear weight: b + (fp16 scale + fp16 zero) / group (engines.quant)."""
    from engines.quant import bits_per_value

    if config.method == "bf16":
        return 16.0
    if not config.quantizes_weights:
        return 32.0
    total = bits = 0.0
    for name, w in _targets(lm, config):
        per = config.group_size if config.group_size is not None else w.shape[1]
        n = w.numel()
        total += n
        bits += n * bits_per_value(config.weight_bits, min(per, w.shape[1]))
    return bits / total


def _targets(lm: LM, config: QuantConfig):
    names = [f"{i}.{n}" for i in range(lm.arch.layers) for n in LINEARS]
    out = [(n, lm.weights[n]) for n in names]
    if config.include_head:
        out.append(("head", lm.weights.get("head", lm.weights["embed"])))
    return out


def calibration_ids(lm: LM, domain: str, tokens: int):
    """(sequences, CALIB_SEQ) token ids from the shipped calibration text of ``domain``; fewer tokens
    than one sequence make one shorter sequence."""
    import torch

    from engines.core.assets import asset_path

    text = asset_path(f"{TEXT_DIR}/{domain}_calib.txt").read_text(encoding="utf-8")
    ids = lm.encode(text)
    n = min(tokens, len(ids))
    seq = min(CALIB_SEQ, n)
    n = n // seq * seq
    return torch.tensor(ids[:n], device=lm.device).view(-1, seq)


def quantized_weights(lm: LM, config: QuantConfig, progress: Progress | None = None,
                      cancelled: Cancelled | None = None) -> tuple[dict, float, float]:
    """(weights, relative weight error ‖W − Ŵ‖/‖W‖, seconds) for ``config``; cached on ``lm``."""
    import torch

    config = config.canonical()
    key = ("weights", config.weight_bits, config.group_size, config.method, config.include_head,
           config.calib_tokens if config.calibrated else 0, config.calib_domain if config.calibrated else "")
    if key in lm.cache:
        return lm.cache[key]
    progress = progress or (lambda f, t="": None)
    cancelled = cancelled or (lambda: False)
    t0 = time.perf_counter()
    w = dict(lm.weights)
    if config.method == "bf16":
        for name in list(w):
            w[name] = w[name].to(torch.bfloat16).to(torch.float32)
    elif config.quantizes_weights:
        with torch.no_grad():
            if config.calibrated:
                _calibrated(lm, config, w, progress, cancelled)
            else:
                for k, (name, m) in enumerate(_targets(lm, config)[:lm.arch.layers * len(LINEARS)]):
                    if cancelled():
                        raise QuantCancelled()
                    w[name] = quantize_matrix(m, config.weight_bits, config.group_size)
                    if k % len(LINEARS) == 0:
                        progress(k / len(LINEARS) / lm.arch.layers, "rounding weights")
            if config.include_head:   # rounded (RTN) whatever the method: no calibration for the head
                w["head"] = quantize_matrix(lm.weights.get("head", lm.weights["embed"]), config.weight_bits,
                                            config.group_size)
    num = den = 0.0
    for name, m in _targets(lm, config):
        num += float((w[name] - m).pow(2).sum())
        den += float(m.pow(2).sum())
    out = (w, (num / den) ** 0.5 if den else 0.0, time.perf_counter() - t0)
    _remember(lm, key, out)
    return out


def _remember(lm: LM, key, value, keep: int = 2) -> None:
    """Keep the weights of the last few configurations (each is a full copy of the linears)."""
    held = [k for k in lm.cache if isinstance(k, tuple) and k and k[0] == "weights"]
    for k in held[:max(0, len(held) - keep + 1)]:
        del lm.cache[k]
    lm.cache[key] = value


def _calibrated(lm: LM, config: QuantConfig, w: dict, progress: Progress, cancelled: Cancelled) -> None:
    """GPTQ/AWQ block by block on calibration text (see the module docstring)."""
    ids = calibration_ids(lm, config.calib_domain, config.calib_tokens)
    x = lm.weights["embed"][ids]
    rope = lm._rope(ids.shape[1])
    n = lm.arch.layers
    for i in range(n):
        if cancelled():
            raise QuantCancelled()
        progress(i / n, f"{config.method.upper()}: block {i + 1}/{n}")
        cap: dict = {}
        lm.block(i, x, lm.weights, None, None, rope, cap)
        for site, linears in SITES.items():
            inputs = cap[site][0]
            for lin in linears:
                name = f"{i}.{lin}"
                w[name] = quantize_matrix(lm.weights[name], config.weight_bits, config.group_size, config.method,
                                          inputs)
        x, _ = lm.block(i, x, w, None, None, rope)
    progress(1.0, f"{config.method.upper()}: done")
