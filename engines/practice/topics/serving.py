"""Computations for courses B (quantization) and C (self-hosting): engines.quant.affine and
engines.selfhost.cost, with each lesson's formula by hand beside them."""
from __future__ import annotations

import math
from typing import Any, Mapping

from engines.practice.model import Mistake, Outcome, Redraw, Step
from engines.practice.registry import computation
from engines.practice.topics.training import _show
from engines.quant import affine
from engines.selfhost import cost

AFFINE = "Frantar et al. ICLR'23 (GPTQ, arXiv 2210.17323) quantizer; Lin et al. MLSys'24 (AWQ)"
SYM = "Xiao et al. ICML'23 (SmoothQuant, arXiv 2211.10438) symmetric quantizer"
TCO = "engines.selfhost.cost (the self-hosting lesson's cost model)"


def _affine(x_min: float, x_max: float, bits: int) -> tuple[float, float]:
    import torch

    s, z = affine.affine_params(torch.tensor(x_min, dtype=torch.float64), torch.tensor(x_max, dtype=torch.float64), bits)
    return float(s), float(z)


def _code(x: float, scale: float, zero: float, bits: int) -> float:
    import torch

    return float(affine.quantize_codes(torch.tensor(x, dtype=torch.float64), torch.tensor(scale, dtype=torch.float64),
                                       torch.tensor(zero, dtype=torch.float64), bits))


def _quant_show(bits: int) -> dict:
    return _show("quant", params={"bits": bits})


# ---------------------------------------------------------------- B1: the affine mapping
@computation("quant.scale")
def scale(p: Mapping[str, Any]) -> Outcome:
    lo, hi, bits = p["x_min"], p["x_max"], p["bits"]
    s, _ = _affine(lo, hi, bits)
    return Outcome(
        answer=s, hand=(hi - lo) / (2 ** bits - 1),
        steps=(Step("range x_max − x_min", hi - lo, "", AFFINE), Step(f"levels − 1 = 2^{bits} − 1", float(2 ** bits - 1), "", AFFINE),
               Step("scale = range / (2^b − 1)", s, "", AFFINE)),
        mistakes=(Mistake("two_pow_b", (hi - lo) / 2 ** bits), Mistake("symmetric", max(abs(lo), abs(hi)) / (2 ** (bits - 1) - 1))),
        show_me=_quant_show(bits),
    )


@computation("quant.zero_point")
def zero_point(p: Mapping[str, Any]) -> Outcome:
    lo, hi, bits = p["x_min"], p["x_max"], p["bits"]
    s, z = _affine(lo, hi, bits)
    if z == 0:
        raise Redraw("zero point 0")
    return Outcome(
        answer=z, hand=float(round(-lo / ((hi - lo) / (2 ** bits - 1)))),
        steps=(Step("scale", s, "", AFFINE), Step("zero = round(−x_min / scale)", z, "", AFFINE)),
        mistakes=(Mistake("sign", -z), Mistake("levels_mid", float(2 ** (bits - 1)))),
        show_me=_quant_show(bits),
    )


@computation("quant.code")
def code(p: Mapping[str, Any]) -> Outcome:
    lo, hi, bits, frac = p["x_min"], p["x_max"], p["bits"], p["where"]
    x = round(lo + frac * (hi - lo), 3)
    s, z = _affine(lo, hi, bits)
    q = _code(x, s, z, bits)
    return Outcome(
        answer=q, hand=float(min(max(round(x / s) + z, 0), 2 ** bits - 1)),
        steps=(Step("scale", s, "", AFFINE), Step("zero point", z, "", AFFINE), Step("x / scale", x / s, "", AFFINE),
               Step("q = clamp(round(x / scale) + zero, 0, 2^b − 1)", q, "", AFFINE)),
        mistakes=(Mistake("no_zero", float(round(x / s))), Mistake("minus_zero", float(round(x / s) - z))),
        facts={"x": f"{x:g}"},
        show_me=_quant_show(bits),
    )


@computation("quant.bits_per_value")
def bits_per_value(p: Mapping[str, Any]) -> Outcome:
    bits, g, sym = p["bits"], p["group"], p["symmetric"] == "symmetric"
    b = affine.bits_per_value(bits, g, sym)
    return Outcome(
        answer=b, hand=bits + (16 if sym else 32) / g,
        steps=(Step("stored bits per weight", float(bits), "bit", AFFINE),
               Step("fp16 scale" + ("" if sym else " + fp16 zero") + " shared by the group", (16 if sym else 32) / g, "bit", AFFINE),
               Step("bits per weight", b, "bit", AFFINE)),
        mistakes=(Mistake("nominal", float(bits)), Mistake("wrong_overhead", bits + (32 if sym else 16) / g)),
        show_me=_show("quant", params={"bits": bits, "group_size": g}),
    )


@computation("quant.max_error")
def max_error(p: Mapping[str, Any]) -> Outcome:
    lo, hi, bits = p["x_min"], p["x_max"], p["bits"]
    s, _ = _affine(lo, hi, bits)
    return Outcome(
        answer=s / 2, hand=(hi - lo) / (2 ** bits - 1) / 2,
        steps=(Step("scale (one step of the grid)", s, "", AFFINE), Step("rounding moves a value by at most half a step", s / 2, "", AFFINE)),
        mistakes=(Mistake("full_step", s), Mistake("range_half", (hi - lo) / 2 ** bits / 4)),
        show_me=_quant_show(bits),
    )


@computation("quant.fewer_bits_direction")
def fewer_bits_direction(p: Mapping[str, Any]) -> Outcome:
    lo, hi, bits = p["x_min"], p["x_max"], p["bits"]
    before, _ = _affine(lo, hi, bits)
    after, _ = _affine(lo, hi, bits - 1)
    return Outcome(
        answer=after, direction="grows", hand=(hi - lo) / (2 ** (bits - 1) - 1),
        steps=(Step(f"scale at {bits} bits", before, "", AFFINE), Step(f"at {bits - 1} bits: half the levels, about twice the step", after, "", AFFINE)),
        mistakes=(Mistake("dir_shrinks", "shrinks"), Mistake("exact_double", 2 * before)),
        facts={"b1": str(bits - 1)},
        show_me=_quant_show(bits - 1),
    )


# ---------------------------------------------------------------- C1: the honest total cost
@computation("selfhost.cost_per_mtok")
def cost_per_mtok(p: Mapping[str, Any]) -> Outcome:
    price, g, t, u = p["gpu_price"], p["gpus"], p["tokens_per_s"], p["util_pct"] / 100
    c = cost.cost_per_million_output_tokens(price, g, t, u)
    return Outcome(
        answer=c, hand=price * g / (3600 * t * u / 1e6),
        steps=(Step("replica cost per hour p·g", price * g, "$/h", TCO),
               Step("output tokens per hour at utilisation u", 3600 * t * u / 1e6, "M tokens", TCO),
               Step("cost per million output tokens", c, "$", TCO)),
        mistakes=(Mistake("full_util", cost.cost_per_million_output_tokens(price, g, t, 1.0)),
                  Mistake("one_gpu", cost.cost_per_million_output_tokens(price, 1, t, u)) if g > 1
                  else Mistake("one_gpu", cost.cost_per_million_output_tokens(price, 1, t, u) * 8)),
        show_me=_show("selfhost", {"serve_batch": 64}, {"max_utilisation_pct": max(50.0, min(98.0, float(p["util_pct"])))}),
    )


@computation("selfhost.break_even")
def break_even(p: Mapping[str, Any]) -> Outcome:
    price, g, t = p["gpu_price"], p["gpus"], p["tokens_per_s"]
    p_in, p_out, r = p["price_in"], p["price_out"], p["ratio"]
    u = cost.break_even_utilisation(price, g, t, p_in, p_out, r)
    mix = cost.price_mix(p_in, p_out, r)
    return Outcome(
        answer=100 * u, hand=100 * price * g * 1e6 / (3600 * t * (r * p_in + p_out)),
        steps=(Step("API price for a million output tokens with their prompts, r·P_in + P_out", mix, "$", TCO),
               Step("u* = p·g·10⁶ / (3,600·T·P_mix)", 100 * u, "%", TCO)),
        mistakes=(Mistake("output_only", 100 * cost.break_even_utilisation(price, g, t, 0.0, p_out, 0.0)),
                  Mistake("one_gpu", 100 * cost.break_even_utilisation(price, 1, t, p_in, p_out, r)) if g > 1
                  else Mistake("one_gpu", 800 * u)),
        show_me=_show("selfhost", {"serve_batch": 64}, {"traffic_per_s": 100.0}),
    )


@computation("selfhost.api_monthly")
def api_monthly(p: Mapping[str, Any]) -> Outcome:
    lam, n_in, n_out, p_in, p_out = p["rps"], p["prompt"], p["output"], p["price_in"], p["price_out"]
    bill = cost.api_monthly_cost(lam, n_in, n_out, p_in, p_out)
    requests = lam * 3600 * 730
    return Outcome(
        answer=bill, hand=requests * (n_in * p_in + n_out * p_out) / 1e6,
        steps=(Step("requests a month (730 h)", requests / 1e6, "million", TCO),
               Step("dollars per request (n_in·P_in + n_out·P_out)/10⁶", (n_in * p_in + n_out * p_out) / 1e6, "$", TCO),
               Step("monthly bill", bill, "$", TCO)),
        mistakes=(Mistake("output_only", cost.api_monthly_cost(lam, 0, n_out, p_in, p_out)),
                  Mistake("per_day", bill / 30.4167)),
        show_me=_show("selfhost", {"serve_batch": 64},
                      {"traffic_per_s": float(lam), "prompt_tokens": int(n_in), "output_tokens": int(n_out)}),
    )


@computation("selfhost.replicas")
def replicas(p: Mapping[str, Any]) -> Outcome:
    avg, peak, per, k = p["avg_rps"], p["peak_to_average"], p["per_replica"], p["spares"]
    r = cost.replicas_for_peak(avg * peak, per, k)
    return Outcome(
        answer=float(r), hand=float(math.ceil(round(avg * peak / per, 9)) + k),
        steps=(Step("peak traffic = average × peak ÷ average", avg * peak, "req/s", TCO),
               Step("serving replicas ⌈peak / per replica⌉", float(r - k), "", TCO),
               Step("plus spares", float(r), "replicas", TCO)),
        mistakes=(Mistake("average", float(cost.replicas_for_peak(avg, per, k))),
                  Mistake("no_spares", float(r - k)) if k > 0 else Mistake("no_spares", float(r + 1))),
        show_me=_show("selfhost", {"serve_batch": 64},
                      {"traffic_per_s": float(avg), "peak_to_average": float(peak), "spares": int(k)}),
    )


@computation("selfhost.surge")
def surge(p: Mapping[str, Any]) -> Outcome:
    price, gpus, days = p["gpu_price"], p["gpus"], p["days"]
    c = cost.surge_cost(price, gpus, days)
    return Outcome(
        answer=c, hand=price * gpus * 24 * days,
        steps=(Step("extra GPUs held through the overlap", float(gpus), "GPUs", TCO),
               Step("× price × 24 h × days", c, "$", TCO)),
        mistakes=(Mistake("hours_as_days", price * gpus * days), Mistake("half", c / 2)),
        show_me=_show("selfhost", {"serve_batch": 64}, {"upgrade_days": float(days)}),
    )


@computation("selfhost.staff")
def staff(p: Mapping[str, Any]) -> Outcome:
    fte, wage = p["fte"], p["wage"]
    m = cost.staff_monthly(fte, wage)
    return Outcome(
        answer=m, hand=fte * wage / 12,
        steps=(Step("FTE × loaded yearly cost", fte * wage, "$/yr", TCO), Step("÷ 12", m, "$/month", TCO)),
        mistakes=(Mistake("yearly", fte * wage), Mistake("one_fte", wage / 12) if fte != 1 else Mistake("one_fte", wage / 6)),
        show_me=_show("selfhost", {"serve_batch": 64}, {"fte": float(fte), "usd_per_fte_year": float(wage)}),
    )


# ---------------------------------------------------------------- B2: outliers
@computation("quant.outlier_codes")
def outlier_codes(p: Mapping[str, Any]) -> Outcome:
    a, big, bits = p["normal"], p["outlier"], p["bits"]
    s, z = _affine(-a, big, bits)
    used = _code(a, s, z, bits) - _code(-a, s, z, bits) + 1
    return Outcome(
        answer=used, hand=float(round(a / s) - round(-a / s) + 1),
        steps=(Step("one outlier stretches the range to [−a, outlier]; scale", s, "", AFFINE),
               Step("codes between −a and +a (inclusive)", used, "codes", AFFINE),
               Step("codes the grid has", float(2 ** bits), "codes", AFFINE)),
        mistakes=(Mistake("no_outlier", float(2 ** bits)), Mistake("half_grid", float(2 ** (bits - 1)))),
        show_me=_show("quant", params={"tensor": "smollm2.l11.down_proj", "bits": bits}),
    )


# ---------------------------------------------------------------- B3: output-aware quantization
@computation("quant.awq_scale")
def awq_scale(p: Mapping[str, Any]) -> Outcome:
    import torch

    from engines.quant.awq import awq_scales

    means = [p["m1"], p["m2"], p["m3"], p["m4"]]
    alpha = p["alpha"]
    s = awq_scales(torch.tensor(means, dtype=torch.float64), alpha)
    powered = [m ** alpha for m in means]
    norm = math.sqrt(max(powered) * min(powered))
    return Outcome(
        answer=float(s[0]), hand=powered[0] / norm,
        steps=(Step("channel 1's mean |activation| raised to α", powered[0], "", "Lin et al. MLSys'24 (AWQ), §3.2"),
               Step("normaliser √(max · min) over the channels", norm, "", "llm-awq auto_scale"),
               Step("scale s₁", float(s[0]), "", "Lin et al. MLSys'24 (AWQ)")),
        mistakes=(Mistake("no_norm", powered[0]), Mistake("no_alpha", means[0] / math.sqrt(max(means) * min(means)))),
        show_me=_show("quant", params={"tensor": "smollm2.l11.down_proj"}),
    )


@computation("quant.hessian")
def hessian_entry(p: Mapping[str, Any]) -> Outcome:
    import torch

    from engines.quant.gptq import hessian

    rows = [[p["a"], p["b"]], [p["c"], p["d"]], [p["e"], p["f"]]]
    i, j = (0, 0) if p["entry"] == "H11" else (0, 1)
    h = float(hessian(torch.tensor(rows, dtype=torch.float64))[i, j])
    dot = sum(r[i] * r[j] for r in rows)
    if dot == 0:
        raise Redraw("zero entry")
    return Outcome(
        answer=h, hand=2 / 3 * dot,
        steps=(Step(f"Σ over the 3 calibration rows of x_{i + 1}·x_{j + 1}", float(dot), "", "Frantar et al. ICLR'23 (GPTQ), §3"),
               Step("H = (2/n) Σ x xᵀ", h, "", "Frantar et al. ICLR'23 (GPTQ), §3; gptq add_batch")),
        mistakes=(Mistake("no_two", dot / 3), Mistake("no_mean", 2.0 * dot)),
        show_me=_show("quant", params={"tensor": "smollm2.l11.down_proj"}),
    )
