"""Computations for course D (compute, data centres, power): engines.compute and engines.scale.mfu."""
from __future__ import annotations

import math
from typing import Any, Mapping

from engines.compute import power, scaling
from engines.compute.network import allreduce_seconds
from engines.practice.model import Mistake, Outcome, Redraw, Step
from engines.practice.registry import computation
from engines.practice.topics.training import _show
from engines.scale import mfu as mfu_mod

KAPLAN = "Kaplan et al. 2020 (arXiv 2001.08361), §2.1: C ≈ 6ND"
MFU = "Chowdhery et al. 2022 (PaLM, arXiv 2204.02311), App. B: MFU = achieved / peak FLOP/s"


@computation("compute.training_flops")
def training_flops(p: Mapping[str, Any]) -> Outcome:
    n_b, d_t = p["params_b"], p["tokens_t"]
    c = scaling.training_flops(n_b * 1e9, d_t * 1e12)
    return Outcome(
        answer=c / 1e24, hand=6 * n_b * 1e9 * d_t * 1e12 / 1e24,
        steps=(Step("forward 2N + backward 4N per token", 6.0, "FLOP per parameter per token", KAPLAN),
               Step("C = 6·N·D", c / 1e24, "×10²⁴ FLOP", KAPLAN)),
        mistakes=(Mistake("forward_only", 2 * n_b * d_t * 1e21 / 1e24), Mistake("no_backward_double", 4 * n_b * d_t * 1e21 / 1e24)),
        show_me=_show("compute", params={"tokens_b": float(min(100_000.0, d_t * 1000))}),
    )


@computation("compute.gpu_days")
def gpu_days(p: Mapping[str, Any]) -> Outcome:
    n_b, d_t, peak, u = p["params_b"], p["tokens_t"], p["peak_tflops"], p["mfu_pct"] / 100
    c = scaling.training_flops(n_b * 1e9, d_t * 1e12)
    per_gpu = peak * 1e12 * u
    days = c / per_gpu / 86400
    return Outcome(
        answer=days / 1e3, hand=6 * n_b * 1e9 * d_t * 1e12 / (peak * 1e12 * u) / 86400 / 1e3,
        steps=(Step("C = 6ND", c / 1e24, "×10²⁴ FLOP", KAPLAN), Step("one GPU's useful rate, peak × MFU", per_gpu / 1e12, "TFLOP/s", MFU),
               Step("GPU-days = C / rate / 86,400", days / 1e3, "thousand GPU-days", MFU)),
        mistakes=(Mistake("peak", c / (peak * 1e12) / 86400 / 1e3), Mistake("hours", days * 24 / 1e3)),
        show_me=_show("compute"),
    )


@computation("compute.mfu")
def mfu(p: Mapping[str, Any]) -> Outcome:
    tps, n_b, chips, peak = p["tokens_per_s_m"], p["params_b"], p["chips"], p["peak_tflops"]
    f = 6 * n_b * 1e9
    u = mfu_mod.mfu(tps * 1e6, f, chips, peak * 1e12)
    return Outcome(
        answer=100 * u, hand=100 * tps * 1e6 * 6 * n_b * 1e9 / (chips * peak * 1e12),
        steps=(Step("model FLOP per token 6N", f / 1e9, "GFLOP", KAPLAN),
               Step("achieved FLOP/s = tokens/s × 6N", tps * 1e6 * f / 1e15, "PFLOP/s", MFU),
               Step("MFU = achieved / (chips × peak)", 100 * u, "%", MFU)),
        mistakes=(Mistake("two_n", 100 * u / 3), Mistake("one_chip", 100 * u * chips) if chips > 1 else Mistake("one_chip", 1.0)),
        show_me=_show("scale", params={"mfu_pct": int(min(80, max(5, round(100 * u))))}),
    )


@computation("compute.chinchilla_tokens")
def chinchilla_tokens(p: Mapping[str, Any]) -> Outcome:
    c = p["compute_e23"] * 1e23
    n, d = scaling.chinchilla_optimum(c, "hoffmann")
    ratio = d / n
    return Outcome(
        answer=ratio, hand=None,
        steps=(Step("compute-optimal parameters N*", n / 1e9, "billion", "Hoffmann et al. 2022 (Chinchilla), Eq. 4"),
               Step("compute-optimal tokens D*", d / 1e9, "billion", "Hoffmann et al. 2022, Eq. 4"),
               Step("tokens per parameter D*/N*", ratio, "", "Hoffmann et al. 2022")),
        mistakes=(Mistake("kaplan_one", 1.7), Mistake("six", 6.0)),
        show_me=_show("compute", params={"fit": "hoffmann"}),
    )


@computation("compute.facility_mw")
def facility_mw(p: Mapping[str, Any]) -> Outcome:
    n, g, kw, pue = p["n_gpus"], p["gpus_per_node"], p["node_kw"], p["pue"]
    mw = power.facility_power_mw(n, g, kw, pue)
    return Outcome(
        answer=mw, hand=math.ceil(n / g) * kw * pue / 1000,
        steps=(Step("nodes ⌈GPUs / per node⌉", float(math.ceil(n / g)), "nodes", "engines.compute.power"),
               Step("IT power = nodes × node kW", math.ceil(n / g) * kw / 1000, "MW", "vendor node power (e.g. NVIDIA DGX H100: 10.2 kW)"),
               Step("facility = IT × PUE", mw, "MW", "The Green Grid, PUE definition")),
        mistakes=(Mistake("no_pue", mw / pue), Mistake("per_gpu_node_kw", n * kw * pue / 1000)),
        show_me=_show("compute"),
    )


@computation("compute.annual_energy")
def annual_energy(p: Mapping[str, Any]) -> Outcome:
    mw, lf = p["mw"], p["load_pct"] / 100
    e = power.annual_energy_mwh(mw, lf)
    return Outcome(
        answer=e / 1e3, hand=mw * 8760 * lf / 1e3,
        steps=(Step("hours in a year", 8760.0, "h", "calendar"), Step("energy = MW × 8,760 × load", e / 1e3, "GWh", "engines.compute.power")),
        mistakes=(Mistake("full_load", mw * 8760 / 1e3), Mistake("days", mw * 365 * lf / 1e3)),
        show_me=_show("compute"),
    )


@computation("compute.allreduce")
def allreduce(p: Mapping[str, Any]) -> Outcome:
    gb, n, bw = p["gb"], p["n"], p["link_gbs"]
    t = allreduce_seconds(gb * 1e9, n, bw * 1e9)
    if n < 2:
        raise Redraw("one GPU")
    return Outcome(
        answer=t, hand=2 * (n - 1) / n * gb / bw,
        steps=(Step("ring all-reduce sends 2(N−1)/N of the data per GPU", 2 * (n - 1) / n * gb, "GB", "Patarasuk & Yuan 2009"),
               Step("time = volume / link bandwidth", t, "s", "Patarasuk & Yuan 2009")),
        mistakes=(Mistake("once", (n - 1) / n * gb / bw), Mistake("times_n", 2 * (n - 1) * gb / bw)),
        show_me=_show("compute"),
    )


# ---------------------------------------------------------------- D1, D2, D3: the tours' remaining claims
CHINCHILLA = "Hoffmann et al. 2022 (Chinchilla, arXiv 2203.15556), Eq. 4; Besiroglu et al. 2024 (arXiv 2404.10102)"


@computation("compute.refit_ratio")
def refit_ratio(p: Mapping[str, Any]) -> Outcome:
    """How much larger a model the refit asks for than the printed constants, at one budget."""
    c = p["compute_e23"] * 1e23
    n_printed, d_printed = scaling.chinchilla_optimum(c, "hoffmann")
    n_refit, d_refit = scaling.chinchilla_optimum(c, "besiroglu")
    r = n_refit / n_printed
    return Outcome(
        answer=r, hand=None,
        steps=(Step("N* with the printed constants", n_printed / 1e9, "billion", CHINCHILLA),
               Step("N* with the refit", n_refit / 1e9, "billion", CHINCHILLA),
               Step("refit ÷ printed", r, "×", "engines.compute.scaling.chinchilla_optimum")),
        mistakes=(Mistake("same", 1.0), Mistake("tokens", d_refit / d_printed)),
        show_me=_show("compute", params={"fit": "besiroglu"}),
    )


@computation("compute.optimum_direction")
def optimum_direction(p: Mapping[str, Any]) -> Outcome:
    """Multiplying compute by k grows the compute-optimal model by about k^a (a ≈ ½ in the refit)."""
    c, k, fit = p["compute_e23"] * 1e23, float(p["factor"]), p["fit"]
    n0, _ = scaling.chinchilla_optimum(c, fit)
    n1, _ = scaling.chinchilla_optimum(k * c, fit)
    a, _ = scaling.optimum_exponents(fit)
    return Outcome(
        answer=n1 / 1e9, direction="grows", hand=n0 * k ** a / 1e9,
        steps=(Step("N* at the first budget", n0 / 1e9, "billion", CHINCHILLA),
               Step("exponent a in N* ∝ C^a", a, "", CHINCHILLA),
               Step(f"N* at {k:g}× the compute", n1 / 1e9, "billion", "engines.compute.scaling.chinchilla_optimum")),
        mistakes=(Mistake("dir_shrinks", "shrinks"), Mistake("proportional", k * n0 / 1e9), Mistake("unchanged_n", n0 / 1e9)),
        facts={"n0": f"{n0 / 1e9:.1f}", "fit_label": scaling.FITS[fit].label},
        show_me=_show("compute", params={"fit": fit}),
    )


@computation("compute.measured_law")
def measured_law(p: Mapping[str, Any]) -> Outcome:
    """The law fitted to the app's own tiny runs predicts loss: L = E + A/N^α + B/D^β."""
    from engines.compute.experiment import shipped_result

    f = shipped_result().fit
    n, d, k = p["params_k"] * 1e3, p["tokens_m"] * 1e6, float(p["factor"])
    before, after = f.loss(n, d), f.loss(k * n, k * d)
    return Outcome(
        answer=after, direction="shrinks", hand=f.E + f.A / (k * n) ** f.alpha + f.B / (k * d) ** f.beta,
        steps=(Step("fitted loss at N, D", before, "nats/byte", "engines.compute.experiment (the app's measured fit)"),
               Step(f"at {k:g}× N and {k:g}× D ({k * k:g}× compute)", after, "nats/byte", "Hoffmann et al. 2022, Eq. 2 form")),
        mistakes=(Mistake("dir_grows", "grows"), Mistake("only_n", f.loss(k * n, d)), Mistake("to_e", f.E)),
        facts={"before": f"{before:.3f}"},
        show_me=_show("compute"),
    )


@computation("compute.inference_crossover")
def inference_crossover(p: Mapping[str, Any]) -> Outcome:
    """Serving 2N FLOP per token each day passes training's 6ND after 3D / (tokens a day) days."""
    from engines.compute.demand import demand, tokens_per_day

    n, d = p["params_b"] * 1e9, p["tokens_t"] * 1e12
    per_day = tokens_per_day(p["rps"], p["tokens_per_request"])
    days = demand(n, d, per_day).crossover_days
    return Outcome(
        answer=days, hand=3 * d / per_day,
        steps=(Step("tokens served a day", per_day / 1e9, "billion", "engines.compute.demand"),
               Step("training 6ND", 6 * n * d / 1e24, "×10²⁴ FLOP", KAPLAN),
               Step("serving 2N per token: days to match training, 3D / tokens a day", days, "days",
                    "Kaplan et al. 2020, §2.1 (2N forward)")),
        mistakes=(Mistake("six_n", d / per_day), Mistake("years", days / 365.0)),
        show_me=_show("compute", preset="llama3-405b-16k", params={"tokens_b": 15600.0}),
    )


@computation("compute.server_per_hour")
def server_per_hour(p: Mapping[str, Any]) -> Outcome:
    """The server's capital per utilised GPU-hour: capex × capital recovery factor ÷ hours used a year."""
    from engines.compute import cost as ccost

    capex, life, rate, u = float(p["capex_k"]) * 1e3, float(p["life_years"]), p["rate_pct"] / 100, p["util_pct"] / 100
    b = ccost.cost_per_gpu_hour(capex, life, 0.0, 1.0, 20.0, 1.2, 0.0, u, 0.0, rate)
    crf = ccost.capital_recovery_factor(rate, life)
    return Outcome(
        answer=b.server, hand=capex * crf / (8760 * u),
        steps=(Step("capital recovery factor r(1+r)^L / ((1+r)^L − 1)", crf, "per year", "standard annuity formula"),
               Step("yearly repayment", capex * crf, "$", "engines.compute.cost"),
               Step("÷ utilised hours a year", b.server, "$/GPU-hour", "engines.compute.cost.cost_per_gpu_hour")),
        mistakes=(Mistake("no_interest", capex / life / (8760 * u)), Mistake("full_use", capex * crf / 8760)),
        show_me=_show("compute"),
    )


def _cpu(key: str):
    from engines.compute.data import load_table

    return next(c for c in load_table("market.json")["cpus"] if c.id == key)


@computation("compute.gpu_cpu_flops")
def gpu_cpu_flops(p: Mapping[str, Any]) -> Outcome:
    """Datasheet matrix peaks, GPU against CPU."""
    from engines.core.hardware import gpu

    g, c = gpu(p["gpu"]), _cpu(p["cpu"])
    r = g.bf16_tflops * 1e12 / c.flops
    return Outcome(
        answer=r, hand=None,
        steps=(Step(f"{g.label} bf16 dense peak", g.bf16_tflops, "TFLOP/s", g.source),
               Step(f"{c.label} peak ({c.precision})", c.flops / 1e12, "TFLOP/s", c.source),
               Step("ratio", r, "×", "engines.core.hardware; assets/compute/market.json")),
        mistakes=(Mistake("bandwidth", g.bandwidth_gbps * 1e9 / c.bytes_per_s), Mistake("giga", r / 1000)),
        facts={"gpu_label": g.label, "cpu_label": c.label, "cpu_precision": c.precision},
        show_me=_show("compute"),
    )


@computation("compute.stream_time")
def stream_time(p: Mapping[str, Any]) -> Outcome:
    """Reading weights once is bound by bytes per second: GB ÷ bandwidth, on each machine."""
    from engines.core.hardware import gpu

    g, c, gb = gpu(p["gpu"]), _cpu(p["cpu"]), float(p["gb"])
    t_gpu, t_cpu = gb * 1e9 / (g.bandwidth_gbps * 1e9), gb * 1e9 / c.bytes_per_s
    return Outcome(
        answer=1e3 * t_cpu, hand=None,
        steps=(Step(f"{g.label}: {gb:g} GB ÷ HBM bandwidth", 1e3 * t_gpu, "ms", g.source),
               Step(f"{c.label}: {gb:g} GB ÷ DRAM bandwidth", 1e3 * t_cpu, "ms", c.source),
               Step("ratio CPU ÷ GPU", t_cpu / t_gpu, "×", "engines.core.hardware; assets/compute/market.json")),
        mistakes=(Mistake("gpu_time", 1e3 * t_gpu), Mistake("flops_bound", 1e3 * t_gpu * g.bf16_tflops * 1e12 / c.flops)),
        facts={"gpu_label": g.label, "cpu_label": c.label},
        show_me=_show("compute"),
    )


@computation("compute.vendor_units")
def vendor_units(p: Mapping[str, Any]) -> Outcome:
    """Units from one vendor at the table's 2023 unit share; and its Data Center revenue growth."""
    from engines.compute.data import load_table

    share = {s.id: s for s in load_table("market.json")["share"]}
    s = share["nvda-units-2023"].value
    n = float(p["units_k"])
    return Outcome(
        answer=n * s, hand=None,
        steps=(Step("NVIDIA's share of 2023 data-centre GPU units", 100 * s, "%", share["nvda-units-2023"].source),
               Step("units × share", n * s, "thousand GPUs", "engines.compute.data (market.json)")),
        mistakes=(Mistake("others", n * (1 - s)), Mistake("half", n / 2)),
        show_me=_show("compute"),
    )


@computation("compute.chips_share")
def chips_share(p: Mapping[str, Any]) -> Outcome:
    """A campus's capital: servers (GPUs × capex per GPU) against the building (IT MW × $ per MW)."""
    from engines.compute.cost import campus_capex

    n, capex, kw, per_mw = int(p["n_gpus"]), float(p["capex_k"]) * 1e3, float(p["kw_per_gpu"]), float(p["usd_m_per_mw"]) * 1e6
    c = campus_capex(n, capex, n * kw / 1000, per_mw)
    published = next(sh for label, sh, _ in c.published_split if label.startswith("Chips"))
    return Outcome(
        answer=100 * c.chips_share, hand=100 * n * capex / (n * capex + n * kw / 1000 * per_mw),
        steps=(Step("servers", c.servers / 1e6, "$M", "engines.compute.cost.campus_capex"),
               Step("building: IT MW × $/MW", c.facility / 1e6, "$M", "Cushman & Wakefield 2025 cost guide"),
               Step("chips' share of the capital", 100 * c.chips_share, "%", "engines.compute.cost")),
        mistakes=(Mistake("published", 100 * published), Mistake("building", 100 * (1 - c.chips_share))),
        show_me=_show("compute", preset="llama3-405b-16k", params={"tokens_b": 15600.0}),
    )


@computation("compute.longest_lead")
def longest_lead(p: Mapping[str, Any]) -> Outcome:
    """Of the drawn equipment, the one with the longest published lead time sets the switch-on date."""
    from engines.compute.power import lead_times
    from engines.practice.topics.serving import _choice

    rows = {r.id: r for r in lead_times()}
    ids = [p["a"], p["b"], p["c"]]
    if len(set(ids)) < 3:
        raise Redraw("an item twice")
    longest = max(ids, key=lambda i: rows[i].hi)
    if sorted(rows[i].hi for i in ids)[-2] > rows[longest].hi - 0.5:
        raise Redraw("the two longest waits are too close to tell apart")
    shortest = min(ids, key=lambda i: rows[i].hi)
    return _choice(longest, {i: rows[i].label for i in ids}, {i: rows[i].source for i in ids}, shortest,
                   tuple(Step(f"{rows[i].label}: up to", rows[i].hi, "years", rows[i].source) for i in ids),
                   _show("compute"), mistake="shortest")
