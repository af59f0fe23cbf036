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


# ---------------------------------------------------------------- B1, B2, B3, B4, C1, C2: the tours' remaining claims
QEVAL = "engines.qeval.compare (the evaluation panel's measurements and statistics)"


def _choice(answer: str, texts: Mapping[str, str], cite: str | Mapping[str, str], wrong: str,
            steps: tuple[Step, ...], show: dict, facts: Mapping[str, str] | None = None,
            mistake: str = "other") -> Outcome:
    """A choice outcome whose correct key the caller computed from an engine; ``wrong`` is the option the
    modelled mistake picks. ``cite`` is one source for every option or one per option key."""
    from engines.practice.model import Option

    if wrong == answer:
        raise Redraw("the modelled mistake is the answer")
    cites = cite if isinstance(cite, Mapping) else {k: cite for k in texts}
    return Outcome(answer=frozenset([answer]), options=tuple(Option(k, t, cites[k]) for k, t in texts.items()),
                   steps=steps, mistakes=(Mistake(mistake, frozenset([wrong])),), show_me=show, facts=dict(facts or {}))


def _format(name_start: str):
    from engines.quant.schemes import FORMATS

    return next(f for f in FORMATS if f.name.startswith(name_start))


@computation("quant.scheme_operands")
def scheme_operands(p: Mapping[str, Any]) -> Outcome:
    """Weights are rounded when stored below 16 bits; activations only when the matmul runs in a low format."""
    f = _format(p["scheme"])
    weights, acts = f.bits < 16, f.mma != "bf16"
    key = "both" if weights and acts else "weights" if weights else "acts" if acts else "neither"
    texts = {"weights": "the weights only", "both": "weights and activations", "acts": "the activations only",
             "neither": "neither"}
    wrong = {"both": "weights", "weights": "both", "acts": "weights", "neither": "weights"}[key]
    return _choice(key, texts, "engines.quant.schemes.FORMATS (stored bits, matmul format)", wrong,
                   (Step("stored weight bits", float(f.bits), "bit", "engines.quant.schemes"),
                    Step("matmul runs in", f.mma, "", "engines.quant.schemes")),
                   _show("quant", {"serve_batch": 1, "serve_context": 4096}), {"format": f.name})


@computation("quant.accelerated_format")
def accelerated_format(p: Mapping[str, Any]) -> Outcome:
    """A format is accelerated when the GPU has tensor cores for its matmul format; else it falls back to bf16."""
    from engines.core.hardware import gpu
    from engines.core.models import PRESETS
    from engines.quant.schemes import serving_table

    f = _format(p["scheme"])
    card = gpu(p["gpu"])
    row = next(r for r in serving_table(PRESETS["llama3-8b"], card, 1, 4096) if r["format"] == f.name)
    own = row["tensor_core"] and row["mma"] != "bf16"
    key = "own" if own else "bf16"
    texts = {"own": "on low-precision tensor cores (int8, fp8 or int4): the arithmetic itself is cheaper",
             "bf16": "on bf16 tensor cores: only memory traffic is saved"}
    return _choice(key, texts, f"{card.source}; engines.quant.schemes.serving_table", "bf16" if own else "own",
                   (Step("the format's matmul precision", f.mma, "", "engines.quant.schemes"),
                    Step(f"{card.label} has {f.mma} tensor cores", "yes" if row["tensor_core"] else "no", "", card.source),
                    Step("so it multiplies", "in " + (f.mma if own else "bf16"), "", "engines.quant.schemes.serving_table")),
                   _show("quant", {"serve_batch": 1, "serve_context": 4096}), {"format": f.name, "gpu_label": card.label})


@computation("quant.int8_columns")
def int8_columns(p: Mapping[str, Any]) -> Outcome:
    """LLM.int8(): an input column goes to fp16 when any of its values reaches the threshold."""
    import torch

    from engines.quant.int8_decomp import llm_int8

    peaks = [float(p[f"c{i}"]) for i in range(1, 7)]
    t = float(p["threshold"])
    x = torch.tensor([peaks, [v / 2 for v in peaks]], dtype=torch.float64)
    r = llm_int8(x, torch.ones(4, 6, dtype=torch.float64), t)
    n = float(len(r.outlier_columns))
    above = float(sum(v > t for v in peaks))
    if n == 0 or n == 6 or above == n:
        raise Redraw("no column at the threshold, or all, or the ≥/> slip is invisible")
    return Outcome(
        answer=n, hand=float(sum(v >= t for v in peaks)),
        steps=(Step("columns whose largest |x| is at or above the threshold", n, "columns",
                    "Dettmers et al. NeurIPS'22 (LLM.int8(), arXiv 2208.07339), §3.2"),
               Step("share kept in fp16", 100 * r.fraction_fp16, "%", "engines.quant.int8_decomp")),
        mistakes=(Mistake("strict", above), Mistake("rest", 6 - n)),
        show_me=_show("quant"),
    )


@computation("quant.smooth_scale")
def smooth_scale(p: Mapping[str, Any]) -> Outcome:
    """SmoothQuant's per-channel factor s = max|X|^α / max|W|^(1−α)."""
    import torch

    from engines.quant.smooth import smooth_scales

    a, m, alpha = float(p["act_max"]), float(p["w_max"]), float(p["alpha"])
    s = float(smooth_scales(torch.tensor([a], dtype=torch.float64), torch.tensor([[m]], dtype=torch.float64), alpha)[0])
    return Outcome(
        answer=s, hand=a ** alpha / m ** (1 - alpha),
        steps=(Step("max|X|^α", a ** alpha, "", SYM), Step("max|W|^(1−α)", m ** (1 - alpha), "", SYM),
               Step("s = max|X|^α / max|W|^(1−α)", s, "", SYM),
               Step("the activation channel after dividing by s", a / s, "", SYM)),
        mistakes=(Mistake("no_alpha", a / m), Mistake("swapped", m ** alpha / a ** (1 - alpha))),
        show_me=_show("quant", params={"sq_alpha": alpha}),
    )


@computation("quant.hadamard_spread")
def hadamard_spread(p: Mapping[str, Any]) -> Outcome:
    """A normalised Hadamard rotation turns one spike of size v into n values of size v/√n."""
    import torch

    from engines.quant.rotate import rotate

    n, v = int(p["channels"]), float(p["spike"])
    x = torch.zeros(1, n, dtype=torch.float64)
    x[0, 0] = v
    xr, _, _ = rotate(x, torch.eye(n, dtype=torch.float64))
    peak = float(xr.abs().max())
    return Outcome(
        answer=peak, hand=v / math.sqrt(n),
        steps=(Step("√n: Q = H / √n is orthogonal, so every product is kept", math.sqrt(n), "", "Ashkboos et al. 2024 (QuaRot, arXiv 2404.00456)"),
               Step("largest |x| after rotation, v / √n", peak, "", "engines.quant.rotate")),
        mistakes=(Mistake("over_n", v / n), Mistake("unchanged", v)),
        show_me=_show("quant", params={"tensor": "minilm.l0.ffn_out", "sq_alpha": 0.55}),
    )


@computation("quant.calibration_statistics")
def calibration_statistics(p: Mapping[str, Any]) -> Outcome:
    """What each method takes from the calibration text: AWQ one mean per input, GPTQ the whole Hessian."""
    import torch

    from engines.quant.gptq import hessian

    n = int(p["inputs"])
    x = torch.ones(2, n, dtype=torch.float64)     # only the shapes matter here
    h = hessian(x)
    awq_numbers = float(x.abs().mean(dim=0).numel())
    distinct = float(torch.triu(torch.ones_like(h)).sum())
    return Outcome(
        answer=distinct / awq_numbers, hand=(n + 1) / 2,
        steps=(Step("AWQ: one mean |activation| per input channel", awq_numbers, "numbers", "Lin et al. MLSys'24 (AWQ), §3.2"),
               Step("GPTQ: the symmetric Hessian H = 2XᵀX/n, distinct entries n(n+1)/2", distinct, "numbers",
                    "Frantar et al. ICLR'23 (GPTQ), §3"),
               Step("ratio", distinct / awq_numbers, "×", "engines.quant.gptq.hessian")),
        mistakes=(Mistake("full_matrix", float(h.numel()) / awq_numbers), Mistake("same", 1.0)),
        show_me=_show("quant", params={"tensor": "smollm2.l11.down_proj"}),
    )


@computation("quant.hessian_rank")
def hessian_rank(p: Mapping[str, Any]) -> Outcome:
    """GPTQ inverts H = 2XᵀX/n; with fewer calibration vectors than inputs it is singular."""
    import torch

    from engines.quant.gptq import hessian

    t, n = int(p["tokens"]), int(p["inputs"])
    x = torch.randn(t, n, dtype=torch.float64, generator=torch.Generator().manual_seed(t * 1000 + n))
    rank = int(torch.linalg.matrix_rank(hessian(x)))
    key = "full" if rank == n else "singular"
    texts = {"full": "full rank: GPTQ can invert it as it is",
             "singular": "singular: only damping makes it invertible, and GPTQ fits the sample"}
    return _choice(key, texts, "Frantar et al. ICLR'23 (GPTQ), §3 and its dampening", "singular" if key == "full" else "full",
                   (Step("rank of H (at most the number of calibration vectors)", float(rank), "", "engines.quant.gptq.hessian"),
                    Step("inputs of the layer", float(n), "", "engines.quant.gptq")),
                   _show("quant", params={"tensor": "smollm2.l11.down_proj"}))


@computation("quant.nf4_bits")
def nf4_bits(p: Mapping[str, Any]) -> Outcome:
    """QLoRA's frozen base: 4-bit NF4 codes plus one fp32 absmax per block."""
    import torch

    from engines.quant.formats import nf4

    b = int(p["block"])
    bits = nf4(torch.ones(2, 256, dtype=torch.float32), b).bits_per_weight
    return Outcome(
        answer=bits, hand=4 + 32 / b,
        steps=(Step("NF4 code", 4.0, "bit", "Dettmers et al. NeurIPS'23 (QLoRA, arXiv 2305.14314)"),
               Step("one fp32 absmax shared by the block", 32 / b, "bit", "Dettmers et al. 2023"),
               Step("bits per stored weight", bits, "bit", "engines.quant.formats.nf4")),
        mistakes=(Mistake("nominal", 4.0), Mistake("fp16_absmax", 4 + 16 / b)),
        show_me=_show("quant", params={"tensor": "smollm2.l11.down_proj"}),
    )


@computation("qeval.block_bits")
def block_bits(p: Mapping[str, Any]) -> Outcome:
    """A GGUF "_1" block stores b-bit codes plus an fp16 scale and an fp16 minimum per 32 weights."""
    bits, g = p["bits"], p["block"]
    b = affine.bits_per_value(bits, g, symmetric=False)
    return Outcome(
        answer=b, hand=bits + 32 / g,
        steps=(Step("code bits", float(bits), "bit", "ggml quantization formats (Q4_1, Q5_1)"),
               Step("fp16 scale + fp16 minimum per block, spread over the block", 32 / g, "bit", "ggml Q4_1 layout"),
               Step("bits per weight", b, "bit", AFFINE)),
        mistakes=(Mistake("nominal", float(bits)), Mistake("scale_only", bits + 16 / g)),
        show_me=_show("qeval"),
    )


def _survival(p_flip: float, t: int) -> float:
    from engines.qeval.compare import survival_prediction

    return survival_prediction(p_flip, [t])[0]


@computation("qeval.survival")
def survival(p: Mapping[str, Any]) -> Outcome:
    """Free-running text stays identical only while no token flips: (1 − p)^t."""
    q, t = p["flip_pct"] / 100, int(p["tokens"])
    s = 100 * _survival(q, t)
    return Outcome(
        answer=s, hand=100 * (1 - q) ** t,
        steps=(Step("one token identical", 100 * (1 - q), "%", QEVAL),
               Step(f"all {t} tokens identical, (1 − p)^t", s, "%", QEVAL)),
        mistakes=(Mistake("one_token", 100 * (1 - q)), Mistake("linear", max(0.0, 100 * (1 - q * t)) if q * t < 0.9 else 100 * q)),
        show_me=_show("qeval"),
    )


@computation("qeval.carry_accuracy")
def carry_accuracy(p: Mapping[str, Any]) -> Outcome:
    """An n-digit sum has n + 1 answer digits; one wrong digit spoils the answer."""
    e, n = p["digit_err_pct"] / 100, int(p["digits"])
    a = 100 * _survival(e, n + 1)
    return Outcome(
        answer=a, hand=100 * (1 - e) ** (n + 1),
        steps=(Step("answer digits of an n-digit sum", float(n + 1), "digits", "engines.qeval.addition (answer n + 1)"),
               Step("all digits right, (1 − e)^(n+1)", a, "%", QEVAL)),
        mistakes=(Mistake("one_digit", 100 * (1 - e)), Mistake("n_digits", 100 * _survival(e, n))),
        show_me=_show("qeval"),
    )


@computation("qeval.longer_direction")
def longer_direction(p: Mapping[str, Any]) -> Outcome:
    """Doubling the length squares the survival: the flip rate per token does not change."""
    q, t = p["flip_pct"] / 100, int(p["tokens"])
    before, after = 100 * _survival(q, t), 100 * _survival(q, 2 * t)
    return Outcome(
        answer=after, direction="shrinks", hand=100 * (1 - q) ** (2 * t),
        steps=(Step(f"identical through {t} tokens", before, "%", QEVAL),
               Step(f"through {2 * t}: the same per-token rate, twice the chances to flip", after, "%", QEVAL)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("dir_grows", "grows"), Mistake("halved", before / 2)),
        facts={"t2": str(2 * t)},
        show_me=_show("qeval", params={"curve": "weight_bits=8"}),
    )


@computation("qeval.wilson_low")
def wilson_low(p: Mapping[str, Any]) -> Outcome:
    """The lower end of the 95 % Wilson interval of k right out of n items."""
    from engines.qeval.compare import Z95, wilson

    k, n = int(p["right"]), int(p["items"])
    if k > n:
        raise Redraw("more right than items")
    lo, _ = wilson(k, n)
    share = k / n
    wald = max(0.0, share - Z95 * math.sqrt(share * (1 - share) / n))
    return Outcome(
        answer=100 * lo, hand=None,
        steps=(Step("share right", 100 * share, "%", QEVAL),
               Step("95 % Wilson interval, lower end", 100 * lo, "%", "Wilson 1927, JASA 22:209; engines.qeval.compare.wilson")),
        mistakes=(Mistake("point", 100 * share), Mistake("wald", 100 * wald)),
        show_me=_show("qeval"),
    )


def _shipped_rows():
    from engines.qeval.compare import find, ppl_change, ranking
    from engines.qeval.config import QuantConfig
    from engines.qeval.store import shipped_evaluations

    evs = shipped_evaluations()
    base = find(evs, QuantConfig())
    return evs, base, ppl_change, ranking


@computation("qeval.metric_agree")
def metric_agree(p: Mapping[str, Any]) -> Outcome:
    """Whether perplexity and another metric order two shipped configurations the same way."""
    from engines.qeval.compare import METRICS

    evs, base, _, ranking = _shipped_rows()
    a, b = p["a"], p["b"]
    if a == b:
        raise Redraw("one configuration twice")
    rows = {r.label: r for r in ranking([next(e for e in evs if e.config.label() == lab) for lab in (a, b)], base)}
    metric = next(m for m in METRICS if m.key == p["metric"])
    by_ppl = rows[a].ranks["ppl"] - rows[b].ranks["ppl"]
    by_metric = rows[a].ranks[metric.key] - rows[b].ranks[metric.key]
    if by_ppl == 0 or by_metric == 0:
        raise Redraw("a tie")
    key = "agree" if by_ppl * by_metric > 0 else "disagree"
    texts = {"agree": "they agree on which is better", "disagree": "they disagree: each prefers the other one"}
    ppl_row = next(m for m in METRICS if m.key == "ppl")
    return _choice(key, texts, QEVAL + " (ranking)", "disagree" if key == "agree" else "agree",
                   tuple(Step(f"{lab}: {m.label}", float(rows[lab].values[m.key]), "", QEVAL)
                         for lab in (a, b) for m in (ppl_row, metric)),
                   _show("qeval"), {"metric_label": metric.label})


@computation("qeval.cliff")
def cliff(p: Mapping[str, Any]) -> Outcome:
    """The first weight row, going down in bits, whose perplexity change passes a drawn limit."""
    evs, base, ppl_change, _ = _shipped_rows()
    order = ["W8 per channel", "W6 per channel", "W5 g128", "W4 g128", "W3 g128"]
    change = {lab: 100 * ppl_change(next(e for e in evs if e.config.label() == lab), base) for lab in order}
    limit = float(p["limit_pct"])
    first = next((lab for lab in order if change[lab] > limit), None)
    if first is None:
        raise Redraw("no row passes the limit")
    keys = {f"r{i}": lab for i, lab in enumerate(order)}
    ans = next(k for k, v in keys.items() if v == first)
    below = next((k for k, v in keys.items() if v != first and change[v] <= limit and order.index(v) < order.index(first)), None)
    wrong = "r4" if ans != "r4" else (below or "r0")
    return _choice(ans, keys, QEVAL + " (ppl_change on the shipped measurements)", wrong,
                   tuple(Step(f"{lab}: perplexity change", change[lab], "%", QEVAL) for lab in order), _show("qeval"))


@computation("qeval.canary_upper")
def canary_upper(p: Mapping[str, Any]) -> Outcome:
    """A canary of n live prompts with k divergent answers bounds the true divergence rate from above."""
    from engines.qeval.compare import Z95, wilson

    k, n = int(p["diverged"]), int(p["prompts"])
    _, hi = wilson(k, n)
    return Outcome(
        answer=100 * hi, hand=None,
        steps=(Step("divergent share seen", 100 * k / n, "%", QEVAL),
               Step("95 % Wilson interval, upper end", 100 * hi, "%", "Wilson 1927, JASA 22:209; engines.qeval.compare.wilson")),
        mistakes=(Mistake("point", 100 * k / n), Mistake("wald", 100 * (k / n + Z95 * math.sqrt(k / n * (1 - k / n) / n)))),
        show_me=_show("qeval", params={"curve": "weight_bits=6"}),
    )


@computation("selfhost.stale_price")
def stale_price(p: Mapping[str, Any]) -> Outcome:
    """A price older than the book's limit is marked stale wherever it is shown."""
    from datetime import date

    from engines.selfhost import prices

    today = date.fromisoformat(p["today"])
    age = prices.age_days(p["observed"], today)
    if age < 0:
        raise Redraw("seen after today")
    key = "stale" if prices.is_stale(p["observed"], today) else "fresh"
    texts = {"stale": "marked stale", "fresh": "shown as current"}
    return _choice(key, texts, "engines.selfhost.prices.is_stale", "fresh" if key == "stale" else "stale",
                   (Step("age in days", float(age), "days", "engines.selfhost.prices.age_days"),
                    Step("stale past", float(prices.STALE_DAYS), "days", "engines.selfhost.prices.STALE_DAYS")),
                   _show("selfhost", {"serve_batch": 64}, {"traffic_per_s": 100.0}),
                   {"limit": str(prices.STALE_DAYS)})


_OVERLAP = ({0, 1}, {0, 6}, {1, 2}, {1, 7}, {3, 4}, {3, 6}, {5, 7})
"""Checklist rows (indices into SECURITY) whose practice also answers the other's incident: an
open port (0) is closed by the private network of 6; unpickling (3) is the risk of 4 and 6; a
patched Bleeding Llama (1) is also blunted by closed endpoints (2), no exposed port (0) or no
outbound traffic to carry the memory out (7)."""


@computation("selfhost.security_fix")
def security_fix(p: Mapping[str, Any]) -> Outcome:
    """The practice in the security checklist that answers a given incident."""
    from engines.selfhost.operate import SECURITY

    i, j, k = int(p["incident"]), int(p["other1"]), int(p["other2"])
    if len({i, j, k}) < 3:
        raise Redraw("an option twice")
    if any({i, x} in _OVERLAP for x in (j, k)):
        raise Redraw("a distractor also answers this incident")
    order = sorted([i, j, k], key=lambda x: (x * 7 + i) % 11)
    texts = {f"s{x}": SECURITY[x][0] for x in order}
    return _choice(f"s{i}", texts, SECURITY[i][2], f"s{j}",
                   (Step("the checklist's practice for this incident", SECURITY[i][0], "", SECURITY[i][2]),),
                   _show("selfhost", {"serve_batch": 64}, {"traffic_per_s": 100.0}), {"incident_text": SECURITY[i][1]})


@computation("selfhost.peak_alert")
def peak_alert(p: Mapping[str, Any]) -> Outcome:
    """The daily traffic curve's peak hour: average load × peak ÷ average, against the alert line."""
    from engines.selfhost.operate import diurnal_shape

    shape = diurnal_shape(float(p["peak_to_average"]))
    peak = float(p["avg_util_pct"]) * float(shape.max())
    limit = float(p["alert_pct"])
    if abs(peak - limit) < 1.0:
        raise Redraw("too close to call")
    key = "fires" if peak > limit else "quiet"
    texts = {"fires": "the load alert fires at the peak hour", "quiet": "the load stays under its alert all day"}
    return _choice(key, texts, "engines.selfhost.operate.diurnal_shape (von Mises day curve)",
                   "quiet" if key == "fires" else "fires",
                   (Step("peak hour's traffic ÷ the day's average", float(shape.max()), "×", "engines.selfhost.operate"),
                    Step("peak-hour load", peak, "%", "engines.selfhost.operate"),
                    Step("alert threshold", limit, "%", "the panel's max utilisation")),
                   _show("selfhost", {"serve_batch": 64}, {"traffic_per_s": 100.0, "peak_to_average": float(p["peak_to_average"]),
                                                           "max_utilisation_pct": limit}))
