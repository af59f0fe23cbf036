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
