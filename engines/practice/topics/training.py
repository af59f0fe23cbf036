"""Computations for course A (training and serving at scale): memory, pipeline, failures, serving.

Every answer is an engine call (engines.memory, engines.pipeline, engines.scale, engines.serving);
``hand`` repeats the lesson's textbook formula independently so a test can hold both together."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Mapping

from engines.core.models import PRESETS
from engines.core.scenario import STRATEGY_LABELS, Scenario
from engines.memory import analytic as mem
from engines.pipeline.schedules import bubble_formulas
from engines.practice.model import KnobResult, Mistake, Option, Outcome, Redraw, Step
from engines.practice.registry import check, computation
from engines.scale import reliability as rel
from engines.serving import replica

ZERO = "Rajbhandari et al. 2020, ZeRO (SC'20, arXiv 1910.02054), §5.1 and Fig. 1"
ZERO_COMM = "Rajbhandari et al. 2020, ZeRO, §7 (2Ψ for DP, ZeRO-1/2; 3Ψ for ZeRO-3); ring all-reduce (Patarasuk & Yuan 2009)"
KORTH = "Korthikanti et al. 2022 (arXiv 2205.05198), §4 and Table 2"
MEGATRON = "Narayanan et al. SC'21 (arXiv 2104.04473), §2.2"
K_BY_OPT = {"adamw": 12.0, "sgd-momentum": 8.0, "adam-8bit": 6.0 + 8.0 / 2048}   # hand table, mixed precision
GB = 1e9
STAGE_STRATEGY = {0: "dp", 1: "zero1", 2: "zero2", 3: "zero3"}


def _psi(model: str) -> float:
    return float(PRESETS[model].param_count())


def _label(model: str) -> str:
    return PRESETS[model].label


def _show(panel: str, scenario: Mapping[str, Any] | None = None, params: Mapping[str, Any] | None = None,
          preset: str | None = None) -> dict:
    out: dict[str, Any] = {"panel": panel}
    if preset:
        out["preset"] = preset
    if scenario:
        out["scenario"] = dict(scenario)
    if params:
        out["params"] = dict(params)
    return out


def _gb(x: float) -> float:
    return x / GB


# ---------------------------------------------------------------- A1: where the training bytes go
@computation("memory.training_state_total")
def training_state_total(p: Mapping[str, Any]) -> Outcome:
    model, opt = p["model"], p["optimizer"]
    psi = _psi(model)
    k = mem.optimizer_bytes_per_param(opt, "bf16")
    states = mem.model_state_bytes(psi, 1, 0, k)
    return Outcome(
        answer=_gb(states.total),
        hand=(2 + 2 + K_BY_OPT[opt]) * psi / GB,
        steps=(Step("Parameters Ψ", psi / 1e9, "billion", "the model's architecture"),
               Step("16-bit weights, 2Ψ", _gb(states.params), "GB", ZERO),
               Step("16-bit gradients, 2Ψ", _gb(states.grads), "GB", ZERO),
               Step(f"optimizer states, K = {k:g} B per parameter (fp32 master copy included)", _gb(states.optimizer),
                    "GB", ZERO),
               Step("total (2 + 2 + K)Ψ", _gb(states.total), "GB", ZERO)),
        mistakes=(Mistake("weights_only", _gb(2 * psi)), Mistake("no_grads", _gb(states.params + states.optimizer)),
                  Mistake("no_master", _gb(states.total - 4 * psi))),
        facts={"model_label": _label(model), "psi_b": f"{psi / 1e9:.2f}"},
        show_me=_show("memory", {"model": model, "optimizer": opt, "strategy": "dp", "n_gpus": 1}),
    )


@computation("memory.gpus_to_hold_state")
def gpus_to_hold_state(p: Mapping[str, Any]) -> Outcome:
    model, gpu = p["model"], p["gpu"]
    from engines.core.hardware import gpu as gpu_spec

    cap = gpu_spec(gpu).memory_bytes
    total = mem.model_state_bytes(_psi(model), 1, 0, mem.optimizer_bytes_per_param("adamw", "bf16")).total
    n = math.ceil(total / cap)
    if n < 2:
        raise Redraw("fits on one GPU")
    return Outcome(
        answer=float(n), hand=float(math.ceil(16 * _psi(model) / cap)),
        steps=(Step("training state 16Ψ", _gb(total), "GB", ZERO), Step("one GPU's memory", _gb(cap), "GB", "vendor data sheet"),
               Step("GPUs just to hold it, ⌈16Ψ / memory⌉", n, "GPUs", ZERO)),
        mistakes=(Mistake("weights_only", float(math.ceil(2 * _psi(model) / cap))),
                  Mistake("floor", float(math.floor(total / cap)))),
        facts={"model_label": _label(model), "gpu_gb": f"{_gb(cap):g}"},
        show_me=_show("overview", {"model": model, "gpu": gpu}),
    )


@computation("memory.dp_more_gpus")
def dp_more_gpus(p: Mapping[str, Any]) -> Outcome:
    model, n = p["model"], p["n_gpus"]
    k = mem.optimizer_bytes_per_param("adamw", "bf16")
    before = mem.model_state_bytes(_psi(model), n, 0, k).total
    after = mem.model_state_bytes(_psi(model), 2 * n, 0, k).total
    direction = "unchanged" if after == before else ("grows" if after > before else "shrinks")
    return Outcome(
        answer=_gb(after), direction=direction, hand=16 * _psi(model) / GB,
        steps=(Step(f"model states per GPU on {n} GPUs, plain DP", _gb(before), "GB", ZERO),
               Step(f"on {2 * n} GPUs: every replica still holds the whole state", _gb(after), "GB", ZERO)),
        mistakes=(Mistake("halved", _gb(before / 2)), Mistake("dir_shrinks", "shrinks")),
        facts={"model_label": _label(model), "n2": str(2 * n)},
        show_me=_show("memory", {"model": model, "strategy": "dp", "n_gpus": 2 * n}),
    )


def _korth_hand(s: int, b: int, h: int, a: int, t: int, recompute: str) -> float:
    """Korthikanti's Table 2 by hand (no sequence parallelism)."""
    core = 0.0 if recompute == "selective" else 5 * a * s / h
    return s * b * h * (10 + 24 / t + core / t)


@computation("memory.activation_layer")
def activation_layer(p: Mapping[str, Any]) -> Outcome:
    s, b, t, rc = p["seq_len"], p["micro_batch"], p["tp"], p["recompute"]
    arch = PRESETS["gpt3-175b"]
    h, a = arch.hidden, arch.heads
    value = mem.activation_bytes_per_layer(s, b, h, a, t, False, rc)
    other = mem.activation_bytes_per_layer(s, b, h, a, t, False, "selective" if rc == "none" else "none")
    return Outcome(
        answer=_gb(value), hand=_gb(_korth_hand(s, b, h, a, t, rc)),
        steps=(Step("s·b·h", float(s * b * h), "elements", KORTH),
               Step("per-layer factor 10 + 24/t" + (" + 5as/(ht)" if rc == "none" else " (attention core recomputed)"),
                    value / (s * b * h), "bytes per element", KORTH),
               Step("activation bytes per layer", _gb(value), "GB", KORTH)),
        mistakes=(Mistake("wrong_core", _gb(other)),
                  Mistake("no_tp", _gb(mem.activation_bytes_per_layer(s, b, h, a, 1, False, rc)) if t > 1
                          else _gb(mem.activation_bytes_per_layer(s, b, h, a, 8, False, rc)))),
        facts={"h": str(h), "a": str(a)},
        show_me=_show("memory", {"model": "gpt3-175b", "seq_len": s, "micro_batch": b, "tp": t, "recompute": rc,
                                 "n_gpus": 8 * t}),
    )


@computation("memory.microbatch_direction")
def microbatch_direction(p: Mapping[str, Any]) -> Outcome:
    s, b = p["seq_len"], p["micro_batch"]
    arch = PRESETS["gpt3-175b"]
    before = mem.activation_bytes_per_layer(s, b, arch.hidden, arch.heads, 8, False, "selective")
    after = mem.activation_bytes_per_layer(s, 2 * b, arch.hidden, arch.heads, 8, False, "selective")
    return Outcome(
        answer=_gb(after), direction="grows", hand=_gb(2 * before),
        steps=(Step(f"per-layer activations at b = {b} (TP 8, selective)", _gb(before), "GB", KORTH),
               Step("sbh(10 + 24/t) is linear in b: double b, double the bytes", _gb(after), "GB", KORTH)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("squared", _gb(4 * before))),
        facts={"b2": str(2 * b)},
        show_me=_show("memory", {"model": "gpt3-175b", "seq_len": s, "micro_batch": 2 * b, "tp": 8, "n_gpus": 64}),
    )


# ---------------------------------------------------------------- A2: ZeRO and FSDP
@computation("memory.optimizer_per_gpu")
def optimizer_per_gpu(p: Mapping[str, Any]) -> Outcome:
    model, n, stage = p["model"], p["n_gpus"], p["stage"]
    psi = _psi(model)
    states = mem.model_state_bytes(psi, n, stage, 12)
    return Outcome(
        answer=_gb(states.optimizer), hand=12 * psi / n / GB,
        steps=(Step("AdamW with mixed precision: K = 12 B per parameter", 12 * psi / GB, "GB in all", ZERO),
               Step(f"ZeRO stage {stage} shards the optimizer states over N = {n}", _gb(states.optimizer), "GB per GPU", ZERO)),
        mistakes=(Mistake("unsharded", 12 * psi / GB), Mistake("sixteen", 16 * psi / n / GB)),
        facts={"model_label": _label(model)},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": STAGE_STRATEGY[stage]}),
    )


@computation("memory.states_per_gpu_stage")
def states_per_gpu_stage(p: Mapping[str, Any]) -> Outcome:
    model, n, stage = p["model"], p["n_gpus"], p["stage"]
    psi = _psi(model)
    by_stage = [mem.model_state_bytes(psi, n, s, 12).total for s in range(4)]
    hand = {0: 16 * psi, 1: 4 * psi + 12 * psi / n, 2: 2 * psi + 14 * psi / n, 3: 16 * psi / n}[stage]
    wrong_stage = by_stage[stage - 1] if stage > 0 else by_stage[1]
    return Outcome(
        answer=_gb(by_stage[stage]), hand=hand / GB,
        steps=tuple(Step(f"stage {s}: " + ("2Ψ + 2Ψ + 12Ψ" if s == 0 else "sharded " + ", ".join(
            ("optimizer", "gradients", "weights")[:s])), _gb(by_stage[s]), "GB per GPU", ZERO) for s in range(stage + 1)),
        mistakes=(Mistake("stage_before", _gb(wrong_stage)), Mistake("all_sharded", 16 * psi / n / GB) if stage < 3
                  else Mistake("all_sharded", 12 * psi / n / GB)),
        facts={"model_label": _label(model)},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": STAGE_STRATEGY[stage]}),
    )


@computation("memory.comm_volume")
def comm_volume(p: Mapping[str, Any]) -> Outcome:
    model, n, strategy, m = p["model"], p["n_gpus"], p["strategy"], p["grad_accum"]
    sc = Scenario().with_changes(model=model, n_gpus=n, strategy=strategy, grad_accum=m, tp=1, pp=1)
    psi = _psi(model)
    c = mem.communication(sc, psi_gpu=psi)
    mult = {"zero2": 1 + m, "zero3": 3 * m}[strategy]
    ring = (n - 1) / n
    once = {"zero2": 2, "zero3": 3}[strategy]
    return Outcome(
        answer=_gb(c.total_bytes), hand=mult * ring * psi * 2 / GB,
        steps=(Step("Ψ·2 bytes of bf16 values", 2 * psi / GB, "GB", ZERO_COMM),
               Step(f"multiple of Ψ per step with {m} micro-batches", c.psi_multiple / ring, "× Ψ", ZERO_COMM),
               Step(f"ring factor (N−1)/N", ring, "", ZERO_COMM),
               Step("bytes each GPU sends per optimizer step", _gb(c.total_bytes), "GB", ZERO_COMM)),
        mistakes=(Mistake("no_accum", once * ring * psi * 2 / GB), Mistake("no_ring", mult * psi * 2 / GB)),
        facts={"model_label": _label(model), "strategy_label": STRATEGY_LABELS[strategy]},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": strategy, "grad_accum": m}),
    )


@computation("memory.lowest_stage_fits")
def lowest_stage_fits(p: Mapping[str, Any]) -> Outcome:
    model, n, budget = p["model"], p["n_gpus"], p["budget_gb"]
    psi = _psi(model)
    totals = [_gb(mem.model_state_bytes(psi, n, s, 12).total) for s in range(4)]
    fitting = [s for s in range(4) if totals[s] <= budget]
    key = f"s{fitting[0]}" if fitting else "none"
    if key in ("s0",) or any(abs(t - budget) < 0.02 * budget for t in totals):
        raise Redraw("too easy or on the edge")
    opts = tuple(Option(f"s{s}", f"{STRATEGY_LABELS[STAGE_STRATEGY[s]]}: {totals[s]:,.1f} GB", ZERO) for s in range(4)) \
        + (Option("none", "none of them: even stage 3 is over the budget", ZERO),)
    above = f"s{fitting[0] + 1}" if fitting and fitting[0] < 3 else ("s3" if key == "none" else "s2")
    return Outcome(
        answer=frozenset([key]), options=opts,
        steps=tuple(Step(f"model states per GPU at stage {s}", totals[s], "GB", ZERO) for s in range(4))
        + (Step("budget per GPU", float(budget), "GB", "the question"),),
        mistakes=(Mistake("overshoot", frozenset([above])),),
        facts={"model_label": _label(model)},
        show_me=_show("memory", {"model": model, "n_gpus": n,
                                 "strategy": STAGE_STRATEGY[fitting[0]] if fitting else "zero3"}),
    )


@computation("memory.fit_fewest")
def fit_fewest(p: Mapping[str, Any]) -> Outcome:
    model, strategy = p["model"], p["strategy"]
    base = Scenario().with_changes(model=model, strategy=strategy, tp=1, pp=1, n_gpus=8)
    need = mem.smallest_fitting_gpus(base, 1024)[strategy]
    if need is None or need <= 1:
        raise Redraw("no interesting fit")
    bd = mem.breakdown(base.with_changes(n_gpus=need), strategy)
    return Outcome(
        answer="fit_fewest", target={"model": model, "strategy": strategy, "n_gpus": need},
        steps=(Step("smallest GPU count at which the busiest GPU fits", float(need), "GPUs", ZERO),
               Step("per-GPU total there", _gb(bd.total), "GB", ZERO + "; " + KORTH),
               Step("GPU memory", _gb(bd.gpu_memory), "GB", "vendor data sheet")),
        facts={"model_label": _label(model), "strategy_label": STRATEGY_LABELS[strategy]},
        start=_show("memory", {"model": model, "strategy": strategy, "tp": 1, "pp": 1, "n_gpus": 8}),
        show_me=_show("memory", {"model": model, "strategy": strategy, "tp": 1, "pp": 1, "n_gpus": need}),
    )


@check("fit_fewest")
def check_fit_fewest(scenario: Scenario, params: Mapping[str, Any], target: Mapping[str, Any]) -> KnobResult:
    if scenario.model != target["model"] or scenario.strategy != target["strategy"]:
        return KnobResult(False, f"Keep the model ({target['model']}) and the sharding ({target['strategy']}); "
                                 "change the GPU count.")
    bd = mem.breakdown(scenario, scenario.strategy)
    if not bd.fits:
        return KnobResult(False, f"Not yet: {_gb(bd.total):,.1f} GB per GPU against {_gb(bd.gpu_memory):g} GB.")
    if scenario.n_gpus > target["n_gpus"]:
        return KnobResult(False, f"It fits, but on more GPUs than needed: {target['n_gpus']} would do.")
    return KnobResult(True, f"Fits: {_gb(bd.total):,.1f} GB of {_gb(bd.gpu_memory):g} GB on {scenario.n_gpus} GPUs.")


# ---------------------------------------------------------------- A3: pipeline
def _bubble(kind: str, pp: int, m: int, v: int = 1) -> float:
    return next(f.value for f in bubble_formulas(kind, pp, m, v) if f.denominator == "ideal")


def _pipe_show(pp: int, m: int, left: str = "gpipe", right: str = "1f1b", v: int = 2) -> dict:
    return _show("pipeline", {"n_gpus": 64, "tp": 8, "pp": pp, "grad_accum": m},
                 {"left_kind": left, "right_kind": right, "v": v})


@computation("pipeline.bubble")
def bubble(p: Mapping[str, Any]) -> Outcome:
    pp, m = p["pp"], p["m"]
    value = 100 * _bubble("1f1b", pp, m)
    return Outcome(
        answer=value, hand=100 * (pp - 1) / m,
        steps=(Step("idle stage-slots to fill and drain: p − 1", float(pp - 1), "slots", MEGATRON),
               Step("bubble over the ideal time, (p − 1)/m", value, "%", MEGATRON)),
        mistakes=(Mistake("total_denominator", 100 * (pp - 1) / (m + pp - 1)), Mistake("p_over_m", 100 * pp / m)),
        show_me=_pipe_show(pp, m),
    )


@computation("pipeline.interleaved")
def interleaved(p: Mapping[str, Any]) -> Outcome:
    pp, m, v = p["pp"], p["m"], p["v"]
    value = 100 * _bubble("interleaved-1f1b", pp, m, v)
    return Outcome(
        answer=value, hand=100 * (pp - 1) / (v * m),
        steps=(Step("1F1B bubble (p − 1)/m", 100 * (pp - 1) / m, "%", MEGATRON),
               Step(f"v = {v} chunks per rank divide it by v", value, "%", MEGATRON)),
        mistakes=(Mistake("forgot_v", 100 * (pp - 1) / m), Mistake("times_v", 100 * v * (pp - 1) / m)),
        show_me=_pipe_show(pp, m, "1f1b", "interleaved-1f1b", v),
    )


@computation("pipeline.double_m")
def double_m(p: Mapping[str, Any]) -> Outcome:
    pp, m = p["pp"], p["m"]
    before, after = 100 * _bubble("1f1b", pp, m), 100 * _bubble("1f1b", pp, 2 * m)
    return Outcome(
        answer=after, direction="shrinks", hand=100 * (pp - 1) / (2 * m),
        steps=(Step(f"bubble at m = {m}", before, "%", MEGATRON), Step(f"at m = {2 * m}: (p − 1)/(2m)", after, "%", MEGATRON)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("dir_grows", "grows"), Mistake("quartered", before / 4)),
        facts={"m2": str(2 * m), "before": f"{before:.1f}"},
        show_me=_pipe_show(pp, 2 * m),
    )


@computation("pipeline.in_flight")
def in_flight(p: Mapping[str, Any]) -> Outcome:
    pp, m = p["pp"], p["m"]
    if m <= pp:
        raise Redraw("m ≤ p: GPipe and 1F1B agree")
    n = mem.in_flight_microbatches(0, pp, m)
    return Outcome(
        answer=float(n), hand=float(min(pp, m)),
        steps=(Step("GPipe keeps all m micro-batches' activations", float(m), "micro-batches", "Huang et al. 2019 (arXiv 1811.06965)"),
               Step("1F1B: the first stage holds min(p, m)", float(n), "micro-batches", MEGATRON + "; " + KORTH)),
        mistakes=(Mistake("gpipe", float(m)), Mistake("one", 1.0)),
        show_me=_pipe_show(pp, m),
    )


@computation("pipeline.dp_degree")
def dp_degree(p: Mapping[str, Any]) -> Outcome:
    n, tp, pp = p["n_gpus"], p["tp"], p["pp"]
    if n % (tp * pp) or n == tp * pp:
        raise Redraw("GPUs not a multiple of TP × PP")
    sc = Scenario().with_changes(model="llama3-70b", n_gpus=n, tp=tp, pp=pp)
    return Outcome(
        answer=float(sc.dp), hand=float(n // (tp * pp)),
        steps=(Step("GPUs = DP × TP × PP", float(n), "GPUs", MEGATRON), Step("DP = GPUs / (TP × PP)", float(sc.dp), "", MEGATRON)),
        mistakes=(Mistake("tp_only", float(n // tp)), Mistake("pp_only", float(n // pp))),
        show_me=_show("pipeline", {"model": "llama3-70b", "n_gpus": n, "tp": tp, "pp": pp}),
    )


# ---------------------------------------------------------------- A4: runs that finish
YOUNG = "Young 1974 (CACM 17(9)): T = √(2δM)"
DALY = "Daly 2006 (FGCS 22(3))"


@computation("scale.job_mtbf")
def job_mtbf(p: Mapping[str, Any]) -> Outcome:
    n, years = p["n_gpus"], p["gpu_mtbf_years"]
    m_gpu = years * 365 * rel.DAY
    m = rel.job_mtbf(n, m_gpu)
    return Outcome(
        answer=m / 3600, hand=years * 365 * 24 / n,
        steps=(Step("per-GPU MTBF", m_gpu / 3600, "h", "assumption of the question"),
               Step("independent failures add their rates: M_job = M_gpu / N", m / 3600, "h",
                    "engines.scale.reliability.job_mtbf; Dubey et al. 2024 (Llama 3), §3.3.4")),
        mistakes=(Mistake("per_gpu", m_gpu / 3600), Mistake("days", m / rel.DAY)),
        show_me=_show("scale", {"n_gpus": n}),
    )


@computation("scale.young")
def young(p: Mapping[str, Any]) -> Outcome:
    d_min, m_h = p["checkpoint_min"], p["mtbf_h"]
    t = rel.young_interval(d_min * 60, m_h * 3600)
    return Outcome(
        answer=t / 60, hand=math.sqrt(2 * d_min * m_h * 60),
        steps=(Step("δ checkpoint write", d_min, "min", "the question"), Step("M job MTBF", m_h * 60, "min", "the question"),
               Step("T = √(2δM)", t / 60, "min", YOUNG)),
        mistakes=(Mistake("no_two", math.sqrt(d_min * m_h * 60)), Mistake("no_root", 2 * d_min * m_h * 60 / 60)),
        show_me=_show("scale", params={"checkpoint_min": d_min}),
    )


@computation("scale.young_waste")
def young_waste(p: Mapping[str, Any]) -> Outcome:
    d_min, m_h, t_min = p["checkpoint_min"], p["mtbf_h"], p["interval_min"]
    w = rel.young_waste(t_min * 60, d_min * 60, m_h * 3600)
    return Outcome(
        answer=100 * w, hand=100 * (d_min / t_min + t_min / (2 * m_h * 60)),
        steps=(Step("writing: δ/T", 100 * d_min / t_min, "%", YOUNG), Step("lost work: T/(2M)", 100 * t_min / (2 * m_h * 60), "%", YOUNG),
               Step("waste", 100 * w, "%", YOUNG)),
        mistakes=(Mistake("write_only", 100 * d_min / t_min), Mistake("whole_interval", 100 * (d_min / t_min + t_min / (m_h * 60)))),
        show_me=_show("scale", params={"checkpoint_min": d_min}),
    )


@computation("scale.interval_direction")
def interval_direction(p: Mapping[str, Any]) -> Outcome:
    d_min, m_h = p["checkpoint_min"], p["mtbf_h"]
    before = rel.young_interval(d_min * 60, m_h * 3600) / 60
    after = rel.young_interval(d_min * 60, m_h * 3600 / 4) / 60
    return Outcome(
        answer=after, direction="shrinks", hand=before / 2,
        steps=(Step("T at the old MTBF", before, "min", YOUNG), Step("a quarter of the MTBF: √ of a quarter halves T", after, "min", YOUNG)),
        mistakes=(Mistake("dir_grows", "grows"), Mistake("quartered", before / 4)),
        show_me=_show("scale", params={"checkpoint_min": d_min}),
    )


# ---------------------------------------------------------------- A5: serving
PAGED = "Kwon et al. 2023, PagedAttention (SOSP), §3"


@computation("serving.kv_cache")
def kv_cache(p: Mapping[str, Any]) -> Outcome:
    model, ctx, batch, bits = p["model"], p["context"], p["batch"], p["kv_bits"]
    arch = PRESETS[model]
    per_tok = replica.kv_bytes_per_token(arch, bits)
    total = per_tok * ctx * batch
    hand = 2 * arch.layers * arch.kv_heads * arch.head_dim * (bits / 8) * ctx * batch
    return Outcome(
        answer=_gb(total), hand=_gb(hand),
        steps=(Step("per token: 2 (K, V) × layers × KV heads × head dim × bytes", per_tok / 1e3, "kB", PAGED),
               Step("× tokens of context × sequences", _gb(total), "GB", PAGED)),
        mistakes=(Mistake("all_heads", _gb(total * arch.heads / arch.kv_heads)), Mistake("k_only", _gb(total / 2))),
        facts={"model_label": _label(model), "layers": str(arch.layers), "kv_heads": str(arch.kv_heads),
               "head_dim": str(arch.head_dim)},
        show_me=_show("serving", {"model": model, "serve_context": ctx, "serve_batch": batch, "kv_bits": bits}),
    )


def _stored_bits(bits: int) -> float:
    """By hand: int4 weights in groups of 128 carry an fp16 scale and zero, 32/128 = 0.25 bit more."""
    return bits + (32 / 128 if bits == 4 else 0)


@computation("serving.weights")
def serving_weights(p: Mapping[str, Any]) -> Outcome:
    model, bits = p["model"], p["weight_bits"]
    arch = PRESETS[model]
    w = replica.weight_bytes(arch, bits)
    return Outcome(
        answer=_gb(w), hand=_gb(arch.param_count() * _stored_bits(bits) / 8),
        steps=(Step("parameters", arch.param_count() / 1e9, "billion", "the model's architecture"),
               Step(f"× {bits}/8 bytes", _gb(w), "GB", "Frantar et al. 2023 (GPTQ); the serving lesson")),
        mistakes=(Mistake("bits_as_bytes", _gb(arch.param_count() * bits)), Mistake("sixteen", _gb(arch.param_count() * 2)) if bits != 16
                  else Mistake("sixteen", _gb(arch.param_count() * 4))),
        facts={"model_label": _label(model)},
        show_me=_show("serving", {"model": model, "weight_bits": bits}),
    )


@computation("serving.kv_bits_direction")
def kv_bits_direction(p: Mapping[str, Any]) -> Outcome:
    model, ctx, batch = p["model"], p["context"], p["batch"]
    arch = PRESETS[model]
    before = replica.kv_bytes_per_token(arch, 16) * ctx * batch
    after = replica.kv_bytes_per_token(arch, 8) * ctx * batch
    return Outcome(
        answer=_gb(after), direction="shrinks", hand=_gb(before / 2),
        steps=(Step("KV cache at 16 bits", _gb(before), "GB", PAGED), Step("at 8 bits", _gb(after), "GB", PAGED)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("quarter", _gb(before / 4))),
        facts={"model_label": _label(model)},
        show_me=_show("serving", {"model": model, "serve_context": ctx, "serve_batch": batch, "kv_bits": 8}),
    )


@computation("serving.max_batch")
def max_batch(p: Mapping[str, Any]) -> Outcome:
    model, ctx, mem_gb, bits = p["model"], p["context"], p["free_gb"], p["weight_bits"]
    arch = PRESETS[model]
    free = mem_gb * GB - replica.weight_bytes(arch, bits)
    if free <= 0:
        raise Redraw("weights do not fit")
    per_seq = replica.kv_bytes_per_token(arch, 16) * ctx
    n = math.floor(free / per_seq)
    if n < 2:
        raise Redraw("batch of one")
    return Outcome(
        answer=float(n), hand=float(math.floor((mem_gb * GB - arch.param_count() * _stored_bits(bits) / 8)
                                               / (2 * arch.layers * arch.kv_heads * arch.head_dim * 2 * ctx))),
        steps=(Step("memory left after the weights", _gb(free), "GB", PAGED),
               Step("KV cache per sequence", _gb(per_seq), "GB", PAGED),
               Step("sequences that fit, ⌊left / per sequence⌋", float(n), "sequences", PAGED)),
        mistakes=(Mistake("no_weights", float(math.floor(mem_gb * GB / per_seq))), Mistake("round_up", float(n + 1))),
        facts={"model_label": _label(model)},
        show_me=_show("serving", {"model": model, "serve_context": ctx, "weight_bits": bits, "serve_batch": n}),
    )


# ---------------------------------------------------------------- A3: set the knobs
@computation("pipeline.fewest_microbatches")
def fewest_microbatches(p: Mapping[str, Any]) -> Outcome:
    """Set m so the 1F1B bubble is under the limit with the fewest micro-batches: m* = ⌊100(p−1)/limit⌋ + 1."""
    pp, limit = p["pp"], p["limit_pct"]
    need = next(m for m in range(1, 10_000) if 100 * _bubble("1f1b", pp, m) < limit)
    return Outcome(
        answer="fewest_microbatches", target={"pp": pp, "limit_pct": float(limit), "m": need},
        steps=(Step("bubble over the ideal time, (p − 1)/m", 100 * _bubble("1f1b", pp, need), "%", MEGATRON),
               Step(f"fewest micro-batches with the bubble under {limit} %", float(need), "micro-batches", MEGATRON),
               *((Step("one micro-batch fewer gives", 100 * _bubble("1f1b", pp, need - 1), "%", MEGATRON),) if need > 1 else ())),
        start=_pipe_show(pp, pp),
        show_me=_pipe_show(pp, need),
    )


@check("fewest_microbatches")
def check_fewest_microbatches(scenario: Scenario, params: Mapping[str, Any], target: Mapping[str, Any]) -> KnobResult:
    pp, limit, need = target["pp"], target["limit_pct"], target["m"]
    if scenario.pp != pp:
        return KnobResult(False, f"Keep p = {pp} pipeline stages; change the micro-batches (gradient accumulation).")
    m = scenario.grad_accum
    b = 100 * _bubble("1f1b", pp, m)
    if b >= limit:
        return KnobResult(False, f"Not yet: with m = {m} the 1F1B bubble is {b:.1f} % of the ideal time, "
                                 f"not under {limit:g} %.")
    if m > need:
        return KnobResult(False, f"Under {limit:g} % ({b:.1f} %), but m = {need} already is: each extra micro-batch "
                                 "lengthens the step.")
    return KnobResult(True, f"Bubble {b:.1f} % with m = {m}, the fewest that get under {limit:g} %.")


# ---------------------------------------------------------------- A5: size the fleet
FLEET_BATCHES = (16, 32, 64, 128)
SIZING = "the serving lesson's sizing (engines.serving.steady.size_deployment): replicas = ⌈traffic / per-replica rate⌉"


@lru_cache(maxsize=256)
def _fleet(scenario: Scenario, traffic: float):
    """The serving panel's sizing for ``traffic`` req/s at the default targets (cached: the same
    scenario and traffic always size the same fleet, and a simulation takes a while)."""
    from engines.serving.params import Params as ServingParams, study_workload
    from engines.serving.steady import size_deployment

    p = ServingParams(traffic_per_s=traffic)
    return size_deployment(scenario, traffic, p.target, "continuous", study_workload(p, scenario.serve_context),
                           p.max_utilisation_pct / 100)


def _fleet_base(model: str) -> Scenario:
    return Scenario().with_changes(model=model, serve_batch=FLEET_BATCHES[0])


@computation("serving.cheapest_fleet")
def cheapest_fleet(p: Mapping[str, Any]) -> Outcome:
    """Set the serving batch so the fleet for the traffic needs the fewest GPUs (every GPU costs the
    same per hour, so the fewest GPUs is the lowest cost)."""
    model, traffic = p["model"], float(p["traffic"])
    base = _fleet_base(model)
    fleets = {b: _fleet(base.with_changes(serve_batch=b), traffic) for b in FLEET_BATCHES}
    ok = {b: s.gpus for b, s in fleets.items() if s.feasible}
    if not ok:
        raise Redraw("no batch meets the target")
    best = min(ok.values())
    if ok.get(FLEET_BATCHES[0]) == best:
        raise Redraw("the starting batch is already cheapest")
    pick = min(b for b, g in ok.items() if g == best)
    steps = tuple(Step(f"batch {b}: {s.replicas} × {s.gpus_per_replica}-GPU replica(s)", float(s.gpus), "GPUs", SIZING)
                  for b, s in fleets.items() if s.feasible)
    return Outcome(
        answer="cheapest_fleet", target={"model": model, "traffic": traffic, "gpus": best},
        steps=steps + (Step("fewest GPUs: the lowest hourly cost", float(best), "GPUs", SIZING),),
        facts={"model_label": _label(model), "batches": ", ".join(str(b) for b in FLEET_BATCHES)},
        start=_show("serving", {"model": model, "serve_batch": FLEET_BATCHES[0]}, {"traffic_per_s": traffic}),
        show_me=_show("serving", {"model": model, "serve_batch": pick}, {"traffic_per_s": traffic}),
    )


@check("cheapest_fleet")
def check_cheapest_fleet(scenario: Scenario, params: Mapping[str, Any], target: Mapping[str, Any]) -> KnobResult:
    traffic = float(params.get("traffic_per_s", target["traffic"]))
    base = _fleet_base(target["model"])
    if scenario.model != target["model"] or traffic != target["traffic"] \
            or (scenario.gpu, scenario.serve_context, scenario.weight_bits, scenario.kv_bits) \
            != (base.gpu, base.serve_context, base.weight_bits, base.kv_bits):
        return KnobResult(False, f"Keep the model, GPU, context, precision and the traffic ({target['traffic']:g} req/s); "
                                 "change only the serving batch.")
    s = _fleet(scenario, traffic)
    if not s.feasible:
        return KnobResult(False, f"At batch {scenario.serve_batch} no steady rate meets the latency target.")
    if s.gpus > target["gpus"]:
        return KnobResult(False, f"Batch {scenario.serve_batch} needs {s.replicas} replicas × {s.gpus_per_replica} GPUs "
                                 f"= {s.gpus} GPUs; a fleet of {target['gpus']} can carry the traffic.")
    return KnobResult(True, f"Batch {scenario.serve_batch}: {s.replicas} replicas × {s.gpus_per_replica} GPUs = "
                            f"{s.gpus} GPUs, the fewest (so the cheapest) for {traffic:g} req/s.")


# ---------------------------------------------------------------- A1–A5: the tours' remaining claims (issue 40)
# Qualitative claims become choice and direction questions whose right option is decided by an engine
# call on the drawn parameters; the numbers in the prompt and the solution come from the same calls.
_CHEN = "Chen et al. 2016 (arXiv 1604.06174); Korthikanti et al. 2022 (arXiv 2205.05198), §5"
_PALM = "Chowdhery et al. 2022, PaLM (arXiv 2204.02311), App. B"
_FSDP = "Zhao et al. 2023, PyTorch FSDP (VLDB, arXiv 2304.11277), §3.2–3.3"
_OFFLOAD = "Ren et al. 2021, ZeRO-Offload (USENIX ATC, arXiv 2101.06840), §3–4"
_SHOEYBI = "Shoeybi et al. 2019, Megatron-LM (arXiv 1909.08053), §3"
_STATE_KEYS = ("params", "grads", "optimizer", "activations")
_STATE_NAMES = {"params": "16-bit weights", "grads": "16-bit gradients", "optimizer": "optimizer states (fp32 master, "
               "momentum, variance)", "activations": "activations kept for the backward pass"}


def _sc(**changes: Any) -> Scenario:
    return Scenario().with_changes(**changes)


def _direction(before: float, after: float) -> str:
    """The direction of a change, with exact equality as 'unchanged' (the engines are deterministic)."""
    if math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-12):
        return "unchanged"
    return "grows" if after > before else "shrinks"


def _states_gb(bd: mem.MemoryBreakdown) -> float:
    return _gb(bd.params + bd.grads + bd.optimizer)


def _clear_winner(values: Mapping[str, float], largest: bool = True, margin: float = 0.03) -> str:
    """The key with the largest (smallest) value, or Redraw when the runner-up is within ``margin``."""
    ranked = sorted(values, key=values.get, reverse=largest)
    a, b = values[ranked[0]], values[ranked[1]]
    if abs(a - b) <= margin * max(abs(a), abs(b), 1e-12):
        raise Redraw("two options too close to call")
    return ranked[0]


@computation("memory.largest_block")
def largest_block(p: Mapping[str, Any]) -> Outcome:
    """Which block of a plain-DP GPU's memory is the biggest: the weights never are."""
    model, b, rc = p["model"], p["micro_batch"], p["recompute"]
    sc = _sc(model=model, strategy="dp", micro_batch=b, recompute=rc, tp=1, pp=1)
    bd = mem.breakdown(sc, "dp")
    sizes = {k: _gb(getattr(bd, k)) for k in _STATE_KEYS}
    top = _clear_winner({k: v for k, v in sizes.items() if k != "grads"})
    if top == "params":
        raise Redraw("weights on top")
    return Outcome(
        answer=frozenset([top]),
        options=tuple(Option(k, _STATE_NAMES[k], ZERO if k != "activations" else KORTH) for k in _STATE_KEYS),
        steps=tuple(Step(_STATE_NAMES[k], sizes[k], "GB per GPU", ZERO if k != "activations" else KORTH)
                    for k in _STATE_KEYS) + (Step("one GPU's memory", _gb(bd.gpu_memory), "GB", "vendor data sheet"),),
        mistakes=(Mistake("weights", frozenset(["params"])),),
        facts={"model_label": _label(model)},
        show_me=_show("memory", {"model": model, "strategy": "dp", "micro_batch": b, "recompute": rc, "tp": 1, "pp": 1}),
    )


@computation("scale.dp_throughput")
def dp_throughput(p: Mapping[str, Any]) -> Outcome:
    """Twice the data-parallel GPUs at the same MFU: twice the tokens per second."""
    from engines.scale.mfu import training_throughput

    model, n, u = p["model"], p["n_gpus"], p["mfu_pct"]
    before = training_throughput(_sc(model=model, strategy="dp", n_gpus=n, tp=1, pp=1), u / 100)
    after = training_throughput(_sc(model=model, strategy="dp", n_gpus=2 * n, tp=1, pp=1), u / 100)
    return Outcome(
        answer=after.tokens_per_second, direction=_direction(before.tokens_per_second, after.tokens_per_second),
        hand=u / 100 * 2 * n * after.peak_flops_per_gpu / after.flops_per_token,
        steps=(Step("model FLOPs per token, 6N + attention", after.flops_per_token / 1e9, "GFLOP", _PALM),
               Step(f"tokens/s per GPU at {u} % MFU", after.tokens_per_second_per_gpu, "tokens/s", _PALM),
               Step(f"on {n} GPUs", before.tokens_per_second, "tokens/s", _PALM),
               Step(f"on {2 * n} GPUs: each copy trains its own share of the batch", after.tokens_per_second,
                    "tokens/s", _PALM)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("per_gpu", after.tokens_per_second_per_gpu)),
        facts={"model_label": _label(model), "n2": str(2 * n), "before": f"{before.tokens_per_second:,.0f}"},
        show_me=_show("scale", {"model": model, "strategy": "dp", "n_gpus": 2 * n, "tp": 1, "pp": 1}, {"mfu_pct": u}),
    )


@computation("memory.recompute_activations")
def recompute_activations(p: Mapping[str, Any]) -> Outcome:
    """Switching recomputation on shrinks the activations kept per GPU (the engine's breakdown)."""
    model, b, to = p["model"], p["micro_batch"], p["recompute"]
    other = "selective" if to == "full" else "full"
    acts = {rc: _gb(mem.breakdown(_sc(model=model, micro_batch=b, recompute=rc)).activations)
            for rc in ("none", "selective", "full")}
    return Outcome(
        answer=acts[to], direction=_direction(acts["none"], acts[to]),
        steps=(Step("activations per GPU, nothing recomputed", acts["none"], "GB", KORTH),
               Step("selective: the attention core is rebuilt, not stored", acts["selective"], "GB", KORTH),
               Step("full: only each layer's input is kept", acts["full"], "GB", _CHEN)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("other_mode", acts[other])),
        facts={"model_label": _label(model), "before": f"{acts['none']:,.2f}"},
        show_me=_show("memory", {"model": model, "micro_batch": b, "recompute": to}),
    )


@computation("scale.hfu")
def hfu(p: Mapping[str, Any]) -> Outcome:
    """HFU = MFU × hardware FLOPs / model FLOPs: recomputation's repeated forward is work the model does not count."""
    from engines.scale.mfu import hardware_flops_per_token, model_flops_per_token, training_throughput

    model, rc, u = p["model"], p["recompute"], p["mfu_pct"]
    arch = PRESETS[model]
    tt = training_throughput(_sc(model=model, recompute=rc), u / 100)
    f, hw = model_flops_per_token(arch, 4096), hardware_flops_per_token(arch, 4096, rc)
    return Outcome(
        answer=100 * tt.hfu, hand=u * hw / f,
        steps=(Step("model FLOPs per token", f / 1e9, "GFLOP", _PALM),
               Step(f"hardware FLOPs per token with {rc} recomputation", hw / 1e9, "GFLOP", KORTH + ", §6"),
               Step("HFU = MFU × hardware / model FLOPs", 100 * tt.hfu, "%", KORTH + ", §6")),
        mistakes=(Mistake("same", float(u)), Mistake("doubled", 2.0 * u)),
        facts={"model_label": _label(model)},
        show_me=_show("scale", {"model": model, "recompute": rc}, {"mfu_pct": u}),
    )


def _knobs(**kw: Any):
    from engines.memory.step_time import TimeKnobs

    return TimeKnobs(**kw)


@computation("memory.recompute_seconds")
def recompute_seconds(p: Mapping[str, Any]) -> Outcome:
    """Seconds of a ZeRO-3 step spent rebuilding activations, from the step-time model."""
    from engines.memory.step_time import step_time

    model, n, rc = p["model"], p["n_gpus"], p["recompute"]
    st = step_time(_sc(model=model, n_gpus=n, recompute=rc), "zero3", _knobs(collective="hierarchical"))
    return Outcome(
        answer=st.recompute,
        steps=(Step("forward and backward compute", st.compute, "s", _PALM),
               Step(f"{rc} recomputation: the rebuilt part of the forward pass", st.recompute, "s", KORTH + ", §5–6"),
               Step("whole step", st.total, "s", "engines.memory.step_time")),
        mistakes=(Mistake("whole_pass", st.compute), Mistake("whole_step", st.total)),
        facts={"model_label": _label(model), "compute": f"{st.compute:.2f}"},
        show_me=_show("memory", {"model": model, "n_gpus": n, "recompute": rc, "strategy": "zero3"},
                      {"collective": "hierarchical"}),
    )


@computation("memory.accum_activations")
def accum_activations(p: Mapping[str, Any]) -> Outcome:
    """k sequences per GPU per step, as one micro-batch of k or k accumulated micro-batches of 1."""
    model, k = p["model"], p["k"]
    big = _gb(mem.breakdown(_sc(model=model, micro_batch=k, grad_accum=1)).activations)
    acc = _gb(mem.breakdown(_sc(model=model, micro_batch=1, grad_accum=k)).activations)
    return Outcome(
        answer=acc, direction=_direction(big, acc), hand=big / k,
        steps=(Step(f"micro-batch {k}, no accumulation: activations per GPU", big, "GB", KORTH),
               Step(f"micro-batch 1, {k} accumulated: one micro-batch alive at a time", acc, "GB", MEGATRON)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("all_kept", big)),
        facts={"model_label": _label(model), "before": f"{big:,.2f}"},
        show_me=_show("memory", {"model": model, "micro_batch": 1, "grad_accum": k}),
    )


@computation("memory.accum_comm")
def accum_comm(p: Mapping[str, Any]) -> Outcome:
    """Plain DP and ZeRO-1 reduce gradients once per step, so accumulation spreads that over more samples."""
    from engines.memory.step_time import step_time

    n, strategy, m = p["n_gpus"], p["strategy"], p["grad_accum"]
    one = step_time(_sc(n_gpus=n, strategy=strategy, grad_accum=1), strategy)
    acc = step_time(_sc(n_gpus=n, strategy=strategy, grad_accum=m), strategy)
    before, after = one.comm_bytes_per_sample / 1e6, acc.comm_bytes_per_sample / 1e6
    return Outcome(
        answer=after, direction=_direction(before, after), hand=before / m,
        steps=(Step("gradient traffic each GPU sends per step", one.comm_bytes / 1e6, "MB", ZERO_COMM),
               Step(f"per sequence with one micro-batch ({one.global_batch} sequences per step)", before, "MB", ZERO_COMM),
               Step(f"with {m} micro-batches the same traffic serves {acc.global_batch} sequences", after, "MB", MEGATRON),
               Step(f"the step grows from {one.total:.2f} s to", acc.total, "s", "engines.memory.step_time")),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("per_microbatch", before)),
        facts={"strategy_label": STRATEGY_LABELS[strategy], "before": f"{before:,.1f}"},
        show_me=_show("memory", {"model": "llama3-8b", "n_gpus": n, "strategy": strategy, "grad_accum": m},
                      ),
    )


_AXES = {"dp": "twice the GPUs as data-parallel copies", "tp": "twice the GPUs, as tensor parallelism of 2",
        "pp": "twice the GPUs, as 2 pipeline stages", "zero1": "the same GPUs, optimizer states sharded (ZeRO-1)"}
_AXIS_CITE = {"dp": ZERO, "tp": _SHOEYBI, "pp": MEGATRON, "zero1": ZERO}
_AXIS_ASK = {"optimizer": ("optimizer-state bytes per GPU", -1), "activations": ("activation bytes per GPU", -1),
            "batch": ("sequences trained per optimizer step", +1)}


@computation("memory.axis_effect")
def axis_effect(p: Mapping[str, Any]) -> Outcome:
    """Which axes move the asked quantity in the asked direction, by the memory engine's breakdown."""
    model, n, what = p["model"], p["n_gpus"], p["quantity"]
    base = _sc(model=model, n_gpus=n, strategy="dp", tp=1, pp=1)
    cases = {"base": (base, "dp"), "dp": (base.with_changes(n_gpus=2 * n), "dp"),
             "tp": (base.with_changes(n_gpus=2 * n, tp=2), "dp"), "pp": (base.with_changes(n_gpus=2 * n, pp=2), "dp"),
             "zero1": (base, "zero1")}

    def value(sc: Scenario, strategy: str) -> float:
        if what == "batch":
            return float(sc.dp * sc.micro_batch * sc.grad_accum)
        return _gb(getattr(mem.breakdown(sc, strategy), what))

    vals = {k: value(*c) for k, c in cases.items()}
    label, sign = _AXIS_ASK[what]
    moved = frozenset(k for k in _AXES if sign * (vals[k] - vals["base"]) > 0.01 * abs(vals["base"]))
    if not moved:
        raise Redraw("nothing moves")
    dp_too = moved | {"dp"} if "dp" not in moved else moved | {"zero1"}
    unit = "sequences" if what == "batch" else "GB per GPU"
    return Outcome(
        answer=moved, options=tuple(Option(k, text, _AXIS_CITE[k]) for k, text in _AXES.items()),
        steps=(Step(f"{label} now", vals["base"], unit, ZERO),)
        + tuple(Step(_AXES[k], vals[k], unit, _AXIS_CITE[k]) for k in _AXES),
        mistakes=(Mistake("dp_is_sharding", dp_too),),
        facts={"model_label": _label(model), "what": label, "way": "lower" if sign < 0 else "higher"},
        show_me=_show("memory", {"model": model, "n_gpus": 2 * n, "strategy": "dp", "tp": 2, "pp": 1}),
    )


@computation("memory.fsdp2_state")
def fsdp2_state(p: Mapping[str, Any]) -> Outcome:
    """FSDP2's fp32 shards (4 + 4 + 8 B) and ZeRO's 2 + 2 + 12 B come to the same 16Ψ/N per GPU."""
    model, n = p["model"], p["n_gpus"]
    psi = _psi(model)
    st = mem.model_state_bytes(psi, n, 3, mem.optimizer_bytes_per_param("adamw", "bf16"))
    return Outcome(
        answer=_gb(st.total), hand=(4 + 4 + 8) * psi / n / GB,
        steps=(Step("ZeRO-3 boxes: 2Ψ weights + 2Ψ gradients + 12Ψ optimizer, over N", _gb(st.total), "GB per GPU", ZERO),
               Step("FSDP2 boxes: 4Ψ fp32 parameters + 4Ψ fp32 gradients + 8Ψ Adam moments, over N",
                    (4 + 4 + 8) * psi / n / GB, "GB per GPU", _FSDP)),
        mistakes=(Mistake("moments_only", 8 * psi / n / GB), Mistake("unsharded", 16 * psi / GB),
                  Mistake("bf16_params", 14 * psi / n / GB)),
        facts={"model_label": _label(model), "psi_b": f"{psi / 1e9:.2f}"},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": "fsdp"}),
    )


@computation("memory.comm_stage")
def comm_stage(p: Mapping[str, Any]) -> Outcome:
    """Bytes each GPU sends per step at one ZeRO stage, one micro-batch: 2Ψ for DP and stages 1–2, 3Ψ for stage 3."""
    model, n, strategy = p["model"], p["n_gpus"], p["strategy"]
    psi = _psi(model)
    c = mem.communication(_sc(model=model, n_gpus=n, strategy=strategy, grad_accum=1, tp=1, pp=1), psi_gpu=psi)
    mult = 3 if strategy == "zero3" else 2
    ring = (n - 1) / n
    return Outcome(
        answer=_gb(c.total_bytes), hand=mult * ring * 2 * psi / GB,
        steps=(Step("Ψ·2 bytes of bf16 values", 2 * psi / GB, "GB", ZERO_COMM),
               Step("parameter-sized transfers per step (2 for DP and stages 1–2, 3 for stage 3)", float(mult), "× Ψ",
                    ZERO_COMM),
               Step("ring factor (N−1)/N", ring, "", ZERO_COMM),
               Step("bytes each GPU sends per step", _gb(c.total_bytes), "GB", ZERO_COMM)),
        mistakes=(Mistake("wrong_multiple", (5 - mult) * ring * 2 * psi / GB), Mistake("no_ring", mult * 2 * psi / GB)),
        facts={"model_label": _label(model), "strategy_label": STRATEGY_LABELS[strategy]},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": strategy, "grad_accum": 1, "tp": 1, "pp": 1}),
    )


_DIRECTION_TEXT = {"grows": "it grows", "shrinks": "it shrinks", "unchanged": "it stays the same"}


@computation("memory.fsdp_is_stage3")
def fsdp_is_stage3(p: Mapping[str, Any]) -> Outcome:
    """FSDP full shard against ZeRO-3 on the same scenario: the engine's per-GPU totals decide the direction."""
    model, n = p["model"], p["n_gpus"]
    sc = _sc(model=model, n_gpus=n)
    z3, fs = mem.breakdown(sc, "zero3"), mem.breakdown(sc, "fsdp")
    key = _direction(z3.total, fs.total)
    return Outcome(
        answer=frozenset([key]), options=tuple(Option(k, t, _FSDP) for k, t in _DIRECTION_TEXT.items()),
        steps=(Step("ZeRO-3: weights, gradients and optimizer states sharded over N", _gb(z3.total), "GB per GPU", ZERO),
               Step("FSDP full shard: the same shards, gathered one unit at a time", _gb(fs.total), "GB per GPU", _FSDP),
               Step("of which gathered units and buffers", _gb(fs.buffers), "GB per GPU", _FSDP)),
        mistakes=(Mistake("fourth_stage", frozenset(["shrinks"] if key != "shrinks" else ["grows"])),),
        facts={"model_label": _label(model), "before": f"{_gb(z3.total):,.2f}"},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": "fsdp"}),
    )


@computation("memory.hybrid_states")
def hybrid_states(p: Mapping[str, Any]) -> Outcome:
    """Hybrid sharding splits the state within a node only: 16Ψ/8 per GPU instead of 16Ψ/N."""
    model, n = p["model"], p["n_gpus"]
    psi = _psi(model)
    sc = _sc(model=model, n_gpus=n, tp=1, pp=1)
    full, hyb = mem.breakdown(sc, "fsdp"), mem.breakdown(sc, "fsdp-hybrid")
    c_full, c_hyb = mem.communication(sc, "fsdp"), mem.communication(sc, "fsdp-hybrid")
    return Outcome(
        answer=_states_gb(hyb), hand=16 * psi / sc.gpus_per_node / GB,
        steps=(Step(f"full shard: 16Ψ over all {n} GPUs", _states_gb(full), "GB per GPU", _FSDP),
               Step(f"hybrid: 16Ψ over the {sc.gpus_per_node} GPUs of a node, copied across nodes", _states_gb(hyb),
                    "GB per GPU", _FSDP + " (hybrid sharding, §3.2.2)"),
               Step("communication seconds per step, full shard", c_full.seconds, "s", ZERO_COMM),
               Step("communication seconds per step, hybrid (mostly over NVLink)", c_hyb.seconds, "s", ZERO_COMM)),
        mistakes=(Mistake("full_shard", _states_gb(full)), Mistake("whole_state", 16 * psi / GB)),
        facts={"model_label": _label(model), "before": f"{_states_gb(full):,.2f}"},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": "fsdp-hybrid", "tp": 1, "pp": 1}),
    )


_NODE_FIT = {"fits": "it fits", "total": "the model states fit, but not with activations and buffers",
            "states": "the model states alone exceed the GPU's memory"}


@computation("memory.one_node_stage3")
def one_node_stage3(p: Mapping[str, Any]) -> Outcome:
    """Stage 3 on one node of 8 GPUs, no offload: the breakdown decides between the three verdicts."""
    model, gpu = p["model"], p["gpu"]
    bd = mem.breakdown(_sc(model=model, gpu=gpu, n_gpus=8, strategy="zero3", tp=1, pp=1), "zero3")
    cap, states, total = _gb(bd.gpu_memory), _states_gb(bd), _gb(bd.total)
    if min(abs(states - cap), abs(total - cap)) < 0.03 * cap:
        raise Redraw("on the edge")
    key = "fits" if bd.fits else ("total" if states < cap else "states")
    return Outcome(
        answer=frozenset([key]), options=tuple(Option(k, t, ZERO + ", §5.3") for k, t in _NODE_FIT.items()),
        steps=(Step("model states 16Ψ / 8 per GPU", states, "GB", ZERO),
               Step("with activations, buffers and the fragmentation allowance", total, "GB", KORTH),
               Step("one GPU's memory", cap, "GB", "vendor data sheet")),
        facts={"model_label": _label(model), "gpu_label": _gpu_label(gpu)},
        show_me=_show("memory", {"model": model, "gpu": gpu, "n_gpus": 8, "strategy": "zero3", "tp": 1, "pp": 1}),
    )


def _gpu_label(key: str) -> str:
    from engines.core.hardware import gpu as gpu_spec

    return gpu_spec(key).label


_OFFLOADS = {"none": ("no offload", False, False), "opt": ("optimizer states and fp32 gradients to CPU RAM", True, False),
            "both": ("optimizer states, gradients and parameters to CPU RAM", True, True)}


@computation("memory.least_offload")
def least_offload(p: Mapping[str, Any]) -> Outcome:
    """The least offload that makes stage 3 on one node fit: offload is worth it when nothing less fits."""
    model, gpu = p["model"], p["gpu"]
    base = _sc(model=model, gpu=gpu, n_gpus=8, strategy="zero3", tp=1, pp=1)
    bds = {k: mem.breakdown(base.with_changes(offload_optimizer=o, offload_params=q), "zero3")
           for k, (_, o, q) in _OFFLOADS.items()}
    cap = _gb(bds["none"].gpu_memory)
    if any(abs(_gb(b.total) - cap) < 0.03 * cap for b in bds.values()):
        raise Redraw("on the edge")
    key = next((k for k, b in bds.items() if b.fits), "nothing")
    opts = tuple(Option(k, f"{t}: {_gb(bds[k].total):,.1f} GB per GPU", _OFFLOAD) for k, (t, _, _) in _OFFLOADS.items()) \
        + (Option("nothing", "none of them fits on one node", _OFFLOAD),)
    return Outcome(
        answer=frozenset([key]), options=opts,
        steps=tuple(Step(f"GPU memory per GPU, {t}", _gb(bds[k].total), "GB", _OFFLOAD) for k, (t, _, _) in _OFFLOADS.items())
        + tuple(Step(f"host RAM per GPU, {t}", _gb(bds[k].cpu), "GB", _OFFLOAD) for k, (t, _, _) in _OFFLOADS.items() if k != "none")
        + (Step("one GPU's memory", cap, "GB", "vendor data sheet"),),
        facts={"model_label": _label(model), "gpu_label": _gpu_label(gpu)},
        show_me=_show("memory", {"model": model, "gpu": gpu, "n_gpus": 8, "strategy": "zero3", "tp": 1, "pp": 1,
                                 "offload_optimizer": _OFFLOADS.get(key, _OFFLOADS["both"])[1],
                                 "offload_params": _OFFLOADS.get(key, _OFFLOADS["both"])[2]}),
    )


_STEP_PARTS = {"compute": "forward and backward compute on the GPU", "optimizer": "the Adam step on the CPU",
              "offload": "PCIe transfers left exposed", "dp_comm": "data-parallel collectives left exposed"}


@computation("memory.offload_time")
def offload_time(p: Mapping[str, Any]) -> Outcome:
    """Which part of an offloaded stage-3 step is longest, by the step-time model at the drawn host bandwidth."""
    from engines.memory.step_time import step_time

    model, cpu = p["model"], p["cpu_gbps"]
    st = step_time(_sc(model=model, n_gpus=8, strategy="zero3", offload_optimizer=True, tp=1, pp=1), "zero3",
                   _knobs(cpu_gbps=float(cpu)))
    parts = {k: getattr(st, k) for k in _STEP_PARTS}
    top = _clear_winner(parts, margin=0.1)
    if top == "offload":
        raise Redraw("PCIe on top")
    return Outcome(
        answer=frozenset([top]), options=tuple(Option(k, t, _OFFLOAD) for k, t in _STEP_PARTS.items()),
        steps=tuple(Step(t, parts[k], "s", _OFFLOAD) for k, t in _STEP_PARTS.items())
        + (Step("bytes over PCIe per GPU per step", st.pcie_bytes / GB, "GB", _OFFLOAD),),
        mistakes=(Mistake("pcie", frozenset(["offload"])),),
        facts={"model_label": _label(model)},
        show_me=_show("memory", {"model": model, "n_gpus": 8, "strategy": "zero3", "offload_optimizer": True,
                                 "tp": 1, "pp": 1}, {"cpu_gbps": float(cpu)}),
    )


@computation("memory.fit_least_traffic")
def fit_least_traffic(p: Mapping[str, Any]) -> Outcome:
    """Among the stages that fit, those that move the fewest bytes: stage 3 only when nothing else fits."""
    model, n, m = p["model"], p["n_gpus"], p["grad_accum"]
    sc = _sc(model=model, n_gpus=n, grad_accum=m, tp=1, pp=1)
    rows = {s: (mem.breakdown(sc, s), mem.communication(sc, s)) for s in ("dp", "zero1", "zero2", "zero3")}
    fit = {s: c.total_bytes for s, (b, c) in rows.items() if b.fits}
    if not fit:
        raise Redraw("nothing fits")
    least = min(fit.values())
    key = frozenset(s for s, v in fit.items() if v <= least * 1.001)
    if key == {"zero3"}:
        raise Redraw("only stage 3 fits")
    return Outcome(
        answer=key,
        options=tuple(Option(s, f"{STRATEGY_LABELS[s]}: {_gb(b.total):,.1f} GB per GPU", ZERO + ", §7")
                      for s, (b, c) in rows.items()),
        steps=tuple(Step(f"{STRATEGY_LABELS[s]}: bytes sent per GPU per step" + ("" if b.fits else " (does not fit)"),
                         _gb(c.total_bytes), "GB", ZERO_COMM) for s, (b, c) in rows.items()),
        mistakes=(Mistake("most_sharding", frozenset(["zero3"])),),
        facts={"model_label": _label(model)},
        show_me=_show("memory", {"model": model, "n_gpus": n, "grad_accum": m, "strategy": sorted(key)[0],
                                 "tp": 1, "pp": 1}),
    )


@computation("memory.stage3_time")
def stage3_time(p: Mapping[str, Any]) -> Outcome:
    """ZeRO-2 against ZeRO-3 step time: the extra gathers cost time unless the network hides them."""
    from engines.memory.step_time import step_time

    n, net = p["n_gpus"], p["internode_gbps"]
    sc = _sc(n_gpus=n, internode_gbps=float(net))
    t2, t3 = step_time(sc, "zero2"), step_time(sc, "zero3")
    if abs(t3.total - t2.total) < 0.03 * t2.total:
        raise Redraw("too close")
    key = "zero3" if t3.total < t2.total else "zero2"
    return Outcome(
        answer=frozenset([key]),
        options=(Option("zero2", "ZeRO-2", ZERO + ", §7"), Option("zero3", "ZeRO-3", ZERO + ", §7; " + _FSDP)),
        steps=(Step("ZeRO-2 step", t2.total, "s", ZERO_COMM), Step("of which collectives not hidden", t2.dp_comm, "s", ZERO_COMM),
               Step("ZeRO-3 step", t3.total, "s", ZERO_COMM), Step("of which collectives not hidden", t3.dp_comm, "s", _FSDP)),
        facts={"net": f"{float(net):g}"},
        show_me=_show("memory", {"model": "llama3-8b", "n_gpus": n, "internode_gbps": float(net), "strategy": "zero3"}),
    )


_WRAPS = {"b1": (1, True, "one block per unit, prefetch on"), "b1n": (1, False, "one block per unit, prefetch off"),
         "b4": (4, True, "four blocks per unit, prefetch on"), "all": (0, True, "the whole model as one unit")}
_WRAP_ASK = {"buf_max": ("the largest gather buffers", "buffers", True), "buf_min": ("the smallest gather buffers", "buffers", False),
            "time_max": ("the longest step", "time", True), "time_min": ("the shortest step", "time", False)}


@computation("memory.wrap_effect")
def wrap_effect(p: Mapping[str, Any]) -> Outcome:
    """The FSDP unit and prefetch set both the buffers and the overlap: the engine ranks four settings."""
    from engines.memory.step_time import step_time

    model, n, ask = p["model"], p["n_gpus"], p["ask"]
    sc = _sc(model=model, n_gpus=n, strategy="fsdp")
    label, what, largest = _WRAP_ASK[ask]
    buf = {k: _gb(mem.breakdown(sc, "fsdp", mem.Options(wrap_blocks=w, prefetch=f)).buffers) for k, (w, f, _) in _WRAPS.items()}
    sec = {k: step_time(sc, "fsdp", _knobs(wrap_blocks=w, forward_prefetch=f, backward_prefetch=f)).total
           for k, (w, f, _) in _WRAPS.items()}
    key = _clear_winner(buf if what == "buffers" else sec, largest)
    return Outcome(
        answer=frozenset([key]), options=tuple(Option(k, t, _FSDP) for k, (_, _, t) in _WRAPS.items()),
        steps=tuple(Step(f"{t}: buffers", buf[k], "GB per GPU", _FSDP) for k, (_, _, t) in _WRAPS.items())
        + tuple(Step(f"{t}: step", sec[k], "s", _FSDP) for k, (_, _, t) in _WRAPS.items()),
        facts={"model_label": _label(model), "what": label},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": "fsdp"},
                      {"wrap_blocks": _WRAPS[key][0], "forward_prefetch": _WRAPS[key][1], "backward_prefetch": _WRAPS[key][1]}),
    )


@computation("memory.where_collectives")
def where_collectives(p: Mapping[str, Any]) -> Outcome:
    """The same bytes as a flat ring or hierarchically (NVLink inside a node): the step-time model decides."""
    from engines.memory.step_time import step_time

    model, n = p["model"], p["n_gpus"]
    sc = _sc(model=model, n_gpus=n)
    ring, hier = (step_time(sc, "zero3", _knobs(collective=c)) for c in ("ring", "hierarchical"))
    if abs(ring.total - hier.total) <= 0.02 * ring.total:
        key = "same"
    elif 0.02 * ring.total < abs(ring.total - hier.total) < 0.05 * ring.total:
        raise Redraw("too close")
    else:
        key = "hier" if hier.total < ring.total else "ring"
    src = "Jia et al. 2018 (arXiv 1807.11205), §4.3"
    return Outcome(
        answer=frozenset([key]),
        options=(Option("ring", "the flat ring", src), Option("hier", "the hierarchical collectives", src),
                 Option("same", "neither: the steps are within 2 % of each other", src)),
        steps=(Step("bytes each GPU sends per step (either way)", ring.comm_bytes / GB, "GB", ZERO_COMM),
               Step("step with one flat ring over the network", ring.total, "s", src),
               Step("step with NVLink inside each node, the network only across nodes", hier.total, "s", src)),
        facts={"model_label": _label(model), "nodes": str(max(1, n // sc.gpus_per_node))},
        show_me=_show("memory", {"model": model, "n_gpus": n, "strategy": "zero3"}, {"collective": "hierarchical"}),
    )


@computation("memory.shard_compute")
def shard_compute(p: Mapping[str, Any]) -> Outcome:
    """ZeRO-3 on twice the GPUs: the states per GPU halve, the activations (each GPU's own micro-batch) stay."""
    model, n = p["model"], p["n_gpus"]
    before = mem.breakdown(_sc(model=model, n_gpus=n, tp=1, pp=1, strategy="zero3"), "zero3")
    after = mem.breakdown(_sc(model=model, n_gpus=2 * n, tp=1, pp=1, strategy="zero3"), "zero3")
    a0, a1 = _gb(before.activations), _gb(after.activations)
    return Outcome(
        answer=a1, direction=_direction(a0, a1),
        steps=(Step(f"model states per GPU on {n} GPUs", _states_gb(before), "GB", ZERO),
               Step(f"on {2 * n} GPUs: the copies are spread thinner", _states_gb(after), "GB", ZERO),
               Step("activations per GPU: every GPU still runs all layers on its own micro-batch", a1, "GB",
                    ZERO + " §2.1; " + KORTH)),
        mistakes=(Mistake("dir_shrinks", "shrinks"), Mistake("halved", a0 / 2)),
        facts={"model_label": _label(model), "n2": str(2 * n), "before": f"{a0:,.2f}"},
        show_me=_show("pipeline", {"model": model, "n_gpus": 2 * n, "tp": 1, "pp": 1, "grad_accum": 1, "strategy": "zero3"}),
    )


@computation("pipeline.tp_allreduce")
def tp_allreduce(p: Mapping[str, Any]) -> Outcome:
    """Ring traffic of a tensor-parallel layer: two all-reduces forward, two backward (Megatron's f and g)."""
    from engines.pipeline.layout import collective_counts, tp_layer_steps

    model, t, s = p["model"], p["tp"], p["seq_len"]
    arch = PRESETS[model]
    steps = tp_layer_steps(t, False, arch.hidden, arch.ffn, s, 1, 2)
    counts = collective_counts(steps)
    total = sum(st.bytes_per_gpu for st in steps) / 1e6
    one = next(st.bytes_per_gpu for st in steps if st.collective) / 1e6
    act = s * arch.hidden * 2 / 1e6
    return Outcome(
        answer=total, hand=4 * 2 * (t - 1) / t * act,
        steps=(Step("activation b·s·h in bf16", act, "MB", _SHOEYBI),
               Step("all-reduces in the forward pass (after the row-split matrices)", float(counts["forward"]["all-reduce"]),
                    "", _SHOEYBI),
               Step("all-reduces in the backward pass (before the column-split matrices)",
                    float(counts["backward"]["all-reduce"]), "", _SHOEYBI),
               Step("one ring all-reduce, 2(t − 1)/t of the tensor per GPU", one, "MB", "Patarasuk & Yuan 2009"),
               Step("per layer, forward and backward", total, "MB", _SHOEYBI)),
        mistakes=(Mistake("forward_only", total / 2), Mistake("per_matrix", 2 * total), Mistake("no_ring", 4 * act)),
        facts={"model_label": _label(model), "h": str(arch.hidden)},
        show_me=_show("pipeline", {"model": model, "tp": t, "n_gpus": 8 * t, "pp": 1, "seq_len": s, "micro_batch": 1}),
    )


@computation("memory.sequence_parallel")
def sequence_parallel(p: Mapping[str, Any]) -> Outcome:
    """Sequence parallelism divides the 10·sbh of LayerNorm and dropout activations by t as well."""
    s, b, t = p["seq_len"], p["micro_batch"], p["tp"]
    arch = PRESETS["gpt3-175b"]
    h, a = arch.hidden, arch.heads
    off = mem.activation_bytes_per_layer(s, b, h, a, t, False, "selective")
    on = mem.activation_bytes_per_layer(s, b, h, a, t, True, "selective")
    return Outcome(
        answer=_gb(on), direction=_direction(off, on), hand=_gb(s * b * h * 34 / t),
        steps=(Step("tensor parallelism alone: sbh(10 + 24/t), the 10 left whole", _gb(off), "GB", KORTH),
               Step("with sequence parallelism: sbh·34/t", _gb(on), "GB", KORTH + ", §4.2.2")),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("all_over_t", _gb(off / t)),
                  Mistake("no_tp", _gb(s * b * h * 34))),
        facts={"before": f"{_gb(off):,.3f}"},
        show_me=_show("pipeline", {"model": "gpt3-175b", "tp": t, "n_gpus": 8 * t, "pp": 1, "seq_len": s,
                                   "micro_batch": b, "sequence_parallel": True, "recompute": "selective"}),
    )


# A4: goodput, MFU and triage
_LLAMA3_RUN = "Dubey et al. 2024, The Llama 3 Herd of Models (arXiv 2407.21783), §3.3.4 and Table 5"
_TRIAGE = ("Chowdhery et al. 2022, PaLM (arXiv 2204.02311), §5.1; Zhang et al. 2022, OPT-175B logbook "
          "(arXiv 2205.01068), §2.5")
_SDC = "Dixit et al. 2021, Silent Data Corruptions at Scale (arXiv 2102.11245); " + _LLAMA3_RUN


def _point(n: int, d_min: float, r_min: float):
    """The scale panel's cluster-size point: job MTBF from Llama 3's per-GPU rate, Daly's interval and goodput."""
    return rel.goodput_vs_cluster([n], rel.llama3_interruptions().gpu_mtbf_seconds, d_min * 60, r_min * 60)[0]


@computation("scale.best_goodput")
def best_goodput(p: Mapping[str, Any]) -> Outcome:
    """Daly's expected goodput at his optimal interval, with the restart cost counted."""
    n, d_min, r_min = p["n_gpus"], p["checkpoint_min"], p["restart_min"]
    pt = _point(n, d_min, r_min)
    m, t = pt.job_mtbf_seconds, pt.daly_seconds
    hand = t / (m * math.exp(r_min * 60 / m) * math.expm1((t + d_min * 60) / m))
    return Outcome(
        answer=100 * pt.goodput, hand=100 * hand,
        steps=(Step("job MTBF, Llama 3's per-GPU rate / N", m / 60, "min", _LLAMA3_RUN),
               Step("Daly's interval", t / 60, "min", DALY),
               Step("expected goodput τ / (M·e^{R/M}·(e^{(τ+δ)/M} − 1))", 100 * pt.goodput, "%", DALY)),
        mistakes=(Mistake("no_restart", 100 * rel.expected_goodput(t, d_min * 60, m, 0.0)),
                  Mistake("write_only", 100 * (1 - d_min * 60 / t))),
        facts={"mtbf": f"{m / 60:,.1f}", "daly": f"{t / 60:,.1f}"},
        show_me=_show("scale", {"model": "llama3-405b", "n_gpus": n}, {"checkpoint_min": d_min, "restart_min": r_min}),
    )


@computation("scale.mfu_tokens")
def mfu_tokens(p: Mapping[str, Any]) -> Outcome:
    """Tokens per second a cluster delivers at an MFU: MFU × N × peak / model FLOPs per token."""
    from engines.scale.mfu import training_throughput

    model, n, u = p["model"], p["n_gpus"], p["mfu_pct"]
    tt = training_throughput(_sc(model=model, n_gpus=n, seq_len=8192), u / 100)
    return Outcome(
        answer=tt.tokens_per_second, hand=u / 100 * n * tt.peak_flops_per_gpu / tt.flops_per_token,
        steps=(Step("model FLOPs per token, 6N + 12·L·H·Q·T", tt.flops_per_token / 1e12, "TFLOP", _PALM),
               Step("dense bf16 peak per GPU", tt.peak_flops_per_gpu / 1e12, "TFLOP/s", "vendor data sheet"),
               Step("model FLOP/s delivered per GPU = MFU × peak", tt.achieved_tflops_per_gpu, "TFLOP/s", _PALM),
               Step("cluster tokens per second", tt.tokens_per_second, "tokens/s", _PALM)),
        mistakes=(Mistake("six_n", u / 100 * n * tt.peak_flops_per_gpu / tt.flops_per_token_6n),
                  Mistake("per_gpu", tt.tokens_per_second_per_gpu)),
        facts={"model_label": _label(model)},
        show_me=_show("scale", {"model": model, "n_gpus": n, "seq_len": 8192},
                      {"mfu_pct": u}),
    )


_ACTION_TEXT = {"replay": "roll back to a checkpoint and replay the same batches",
               "skip_batch": "roll back and skip the suspect batches",
               "lower_lr": "roll back and restart at a lower learning rate"}


@computation("scale.triage_step")
def triage_step(p: Mapping[str, Any]) -> Outcome:
    """The next rung of the triage ladder, from the fault engine's own rule."""
    from engines.scale.faults import RECUR_STEPS, Incident, next_action

    rule, gap, rung = p["rule"], p["gap"], p["rung"]
    if rule == "checksum" and rung > 0:
        raise Redraw("a checksum incident never climbs past a replay")
    first = 50
    action, inc = next_action((rule,), first + gap, Incident(first, rung))
    return Outcome(
        answer=frozenset([action]), options=tuple(Option(k, t, _TRIAGE) for k, t in _ACTION_TEXT.items()),
        steps=(Step("steps since the incident's first alarm", float(gap), "steps", "engines.scale.faults"),
               Step("an alarm within this many steps counts as the same incident", float(RECUR_STEPS), "steps",
                    "engines.scale.faults"),
               Step("next rung of the ladder", _ACTION_TEXT[action], "", _TRIAGE)),
        facts={"recur": str(RECUR_STEPS), "rule_label": {"loss_z": "loss spike", "grad_z": "gradient-norm spike",
                              "checksum": "replica checksum mismatch"}[rule],
               "done": _ACTION_TEXT[("replay", "skip_batch", "lower_lr")[rung]], "step2": str(first + gap)},
        show_me=_show("scale", {"model": "llama3-405b"}, {"fault_kind": "lr_spike" if rung else "bad_batch"}),
    )


@computation("scale.sdc_checksum")
def sdc_checksum(p: Mapping[str, Any]) -> Outcome:
    """Which replicas a weight checksum flags after one flipped bit (the fault engine's majority rule)."""
    from engines.scale.faults import odd_replicas

    n, bad, where = p["replicas"], p["fault_replica"], p["where"]
    if bad >= n:
        raise Redraw("no such replica")
    # a flipped weight changes only that replica's checksum; a flipped gradient is all-reduced into every replica
    sums = tuple(2 if (where == "weight" and i == bad) else 1 for i in range(n))
    flagged = odd_replicas(sums)
    key = frozenset(f"r{i}" for i in flagged) if flagged else frozenset(["none"])
    return Outcome(
        answer=key,
        options=tuple(Option(f"r{i}", f"replica {i}", _SDC) for i in range(4)) + (Option("none", "no replica is flagged", _SDC),),
        steps=(Step("distinct weight checksums across the replicas", float(len(set(sums))), "", _SDC),
               Step("replicas flagged by the majority rule", ", ".join(str(i) for i in flagged) or "none", "",
                    "engines.scale.faults.odd_replicas")),
        facts={"where_text": "one of its weights" if where == "weight" else "its gradient, before the all-reduce"},
        show_me=_show("scale", {"model": "llama3-405b"}, {"fault_kind": "weight_flip" if where == "weight" else "grad_flip",
                                                          "replicas": n, "fault_replica": bad}),
    )


@computation("scale.restart_goodput")
def restart_goodput(p: Mapping[str, Any]) -> Outcome:
    """A slower recovery lowers the best goodput: Daly's R in e^{R/M}."""
    n, d_min, r2 = p["n_gpus"], p["checkpoint_min"], p["restart_min"]
    fast, slow = _point(n, d_min, 5), _point(n, d_min, r2)
    m, t = slow.job_mtbf_seconds, slow.daly_seconds
    return Outcome(
        answer=100 * slow.goodput, direction=_direction(fast.goodput, slow.goodput),
        hand=100 * t / (m * math.exp(r2 * 60 / m) * math.expm1((t + d_min * 60) / m)),
        steps=(Step("job MTBF", m / 60, "min", _LLAMA3_RUN), Step("Daly's interval (R does not move it)", t / 60, "min", DALY),
               Step("goodput with a 5-minute automated restart", 100 * fast.goodput, "%", DALY),
               Step(f"with a {r2}-minute restart", 100 * slow.goodput, "%", DALY)),
        mistakes=(Mistake("dir_unchanged", "unchanged"), Mistake("dir_grows", "grows")),
        facts={"mtbf": f"{m / 60:,.1f}", "before": f"{100 * fast.goodput:.2f}"},
        show_me=_show("scale", {"model": "llama3-405b", "n_gpus": n}, {"checkpoint_min": d_min, "restart_min": r2}),
    )


@computation("scale.cluster_goodput")
def cluster_goodput(p: Mapping[str, Any]) -> Outcome:
    """Eight times the GPUs, eight times the failures: the best goodput falls at fixed δ and R."""
    n, d_min = p["n_gpus"], p["checkpoint_min"]
    small, big = _point(n, d_min, 5), _point(8 * n, d_min, 5)
    return Outcome(
        answer=100 * big.goodput, direction=_direction(small.goodput, big.goodput),
        steps=(Step(f"interruptions per day on {n:,} GPUs", small.interruptions_per_day, "", _LLAMA3_RUN),
               Step(f"on {8 * n:,} GPUs", big.interruptions_per_day, "", _LLAMA3_RUN),
               Step(f"best goodput on {n:,} GPUs", 100 * small.goodput, "%", DALY),
               Step(f"best goodput on {8 * n:,} GPUs (Daly's interval re-optimised)", 100 * big.goodput, "%", DALY)),
        mistakes=(Mistake("dir_unchanged", "unchanged"),
                  Mistake("old_interval", 100 * rel.expected_goodput(small.daly_seconds, d_min * 60, big.job_mtbf_seconds, 300.0))),
        facts={"n8": f"{8 * n:,}", "before": f"{100 * small.goodput:.2f}"},
        show_me=_show("scale", {"model": "llama3-405b", "n_gpus": 8 * n}, {"checkpoint_min": d_min}),
    )


# A5: what a server adds, continuous batching, formats for serving
_ORCA = "Yu et al. 2022, Orca (OSDI), §3 and §6; Kwon et al. 2023, vLLM (SOSP), §4"
_POLICY_TEXT = {"static": "static batches (a naive loop over fixed batches)",
               "continuous": "continuous batching (admit work at every step)",
               "same": "neither: within 10 % of each other"}
_SERVE_METRIC = {"ttft": ("p90 time to first token", 1.0, "s"), "tpot": ("p90 time per output token", 1e3, "ms")}


@lru_cache(maxsize=64)
def _timeline_runs(rate: float, batch: int):
    """The serving panel's timeline runs (48 requests, both policies) for Llama 3 8B on one H100."""
    from engines.serving.params import Params as ServingParams, timeline_workload
    from engines.serving.steady import batching_runs

    sc = _sc(model="llama3-8b", serve_batch=batch)
    return batching_runs(sc, timeline_workload(ServingParams(arrivals_per_s=rate), sc.serve_context))


@computation("serving.server_policy")
def server_policy(p: Mapping[str, Any]) -> Outcome:
    """Which policy gives the lower p90 of the asked latency, from the panel's own simulation."""
    rate, batch, metric = float(p["arrivals"]), p["batch"], p["metric"]
    label, scale, unit = _SERVE_METRIC[metric]
    runs = _timeline_runs(rate, batch)
    v = {k: r.percentile(metric, 90) * scale for k, r in runs.items()}
    lo, hi = sorted(v.values())
    gap = (hi - lo) / hi
    if 0.10 < gap < 0.25:
        raise Redraw("between 'about the same' and a clear winner")
    key = "same" if gap <= 0.10 else min(v, key=v.get)
    return Outcome(
        answer=frozenset([key]), options=tuple(Option(k, t, _ORCA) for k, t in _POLICY_TEXT.items()),
        steps=tuple(Step(f"{label}, {_POLICY_TEXT[k].split(' (')[0]}", v[k], unit, _ORCA) for k in runs),
        facts={"what": label},
        show_me=_show("serving", {"model": "llama3-8b", "serve_batch": batch}, {"arrivals_per_s": rate}),
    )


_RATIO_BUCKETS = {"static": "static batches sustain more", "lt2": "continuous, under 2× the static rate",
                 "2to4": "continuous, 2× to 4× the static rate", "gt4": "continuous, more than 4× the static rate"}


@lru_cache(maxsize=64)
def _saturation(batch: int, output: int) -> tuple[float, float]:
    """Both policies' simulated saturation rates (req/s) for Llama 3 8B on the serving panel's replica."""
    from engines.serving.params import Params as ServingParams, study_workload
    from engines.serving.replica import capacity, replica_memory, step_cost
    from engines.serving.steady import saturation_throughput

    sc = _sc(model="llama3-8b", serve_batch=batch)
    need = replica_memory(sc).gpus_needed
    cost, kv = step_cost(sc, need), capacity(sc, need).max_tokens
    w = study_workload(ServingParams(output_tokens=output), sc.serve_context)
    return saturation_throughput(cost, w, "static", batch, kv), saturation_throughput(cost, w, "continuous", batch, kv)


@computation("serving.saturation_ratio")
def saturation_ratio(p: Mapping[str, Any]) -> Outcome:
    """How much more load continuous batching sustains than static batches, by the panel's simulation."""
    batch, output = p["batch"], p["output"]
    st, co = _saturation(batch, output)
    r = co / st
    if any(abs(r - edge) < 0.1 * edge for edge in (1.0, 2.0, 4.0)):
        raise Redraw("ratio near a bucket edge")
    key = "static" if r < 1 else ("lt2" if r < 2 else ("2to4" if r < 4 else "gt4"))
    return Outcome(
        answer=frozenset([key]), options=tuple(Option(k, t, _ORCA) for k, t in _RATIO_BUCKETS.items()),
        steps=(Step("static batches saturate at", st, "req/s", _ORCA), Step("continuous batching saturates at", co, "req/s", _ORCA),
               Step("ratio", r, "×", _ORCA)),
        show_me=_show("serving", {"model": "llama3-8b", "serve_batch": batch}, {"output_tokens": output}),
    )


@computation("quant.formats_fit")
def formats_fit(p: Mapping[str, Any]) -> Outcome:
    """Which weight formats fit on one GPU with the KV cache, from the quantization panel's formats table."""
    from engines.quant.study import serving_study

    model, gpu, batch, ctx = p["model"], p["gpu"], p["batch"], p["context"]
    sc = _sc(model=model, gpu=gpu, serve_batch=batch, serve_context=ctx)
    rows = serving_study(sc).rows
    from engines.core.hardware import gpu as gpu_spec

    cap = _gb(gpu_spec(gpu).memory_bytes)
    if any(abs(r["total_gb"] - cap) < 0.03 * cap for r in rows):
        raise Redraw("a format on the edge")
    fit = frozenset(f"f{i}" for i, r in enumerate(rows) if r["fits"])
    if not fit:
        raise Redraw("nothing fits")
    src = "Pope et al. 2022 (arXiv 2211.05102), §2; Lin et al. 2023, AWQ (arXiv 2306.00978), §5"
    return Outcome(
        answer=fit, options=tuple(Option(f"f{i}", f"{r['format']} ({r['weight_bits']:g} bits per weight)", src)
                                  for i, r in enumerate(rows)),
        steps=tuple(Step(f"{r['format']}: weights {r['weights_gb']:.1f} GB + KV cache {r['kv_gb']:.1f} GB", r["total_gb"],
                         "GB", src) for r in rows)
        + (Step("one GPU's memory", cap, "GB", "vendor data sheet"),)
        + tuple(Step(f"{r['format']}: decode bound", r["decode_tok_s"], "tokens/s", src) for r in rows if r["fits"]),
        facts={"model_label": _label(model), "gpu_label": _gpu_label(gpu)},
        show_me=_show("quant", {"model": model, "gpu": gpu, "serve_batch": batch, "serve_context": ctx}),
    )


@computation("quant.decode_bound")
def decode_bound(p: Mapping[str, Any]) -> Outcome:
    """A format's decode bound from the formats table: batch / max(bytes read / bandwidth, FLOPs / peak)."""
    from engines.core.hardware import gpu as gpu_spec
    from engines.quant.study import serving_study

    model, gpu, batch, ctx, fmt = p["model"], p["gpu"], p["batch"], p["context"], p["format"]
    sc = _sc(model=model, gpu=gpu, serve_batch=batch, serve_context=ctx)
    rows = serving_study(sc).rows
    row, bf16 = rows[fmt], rows[0]
    if row["bound"] != "memory":
        raise Redraw("compute-bound: the bandwidth formula does not apply")
    bw = gpu_spec(gpu).bandwidth_gbps
    src = "Pope et al. 2022 (arXiv 2211.05102), §2 (decode reads every weight and the KV cache once per step)"
    return Outcome(
        answer=row["decode_tok_s"], hand=batch * bw / row["total_gb"],
        steps=(Step("weights at this format", row["weights_gb"], "GB", src), Step("KV cache of the batch", row["kv_gb"], "GB", src),
               Step("HBM bandwidth", bw, "GB/s", "vendor data sheet"),
               Step("steps per second = bandwidth / bytes per step", bw / row["total_gb"], "steps/s", src),
               Step("tokens per second = batch × steps per second", row["decode_tok_s"], "tokens/s", src)),
        mistakes=(Mistake("bf16", bf16["decode_tok_s"]), Mistake("no_kv", batch * bw / row["weights_gb"]),
                  Mistake("one_sequence", bw / row["total_gb"])),
        facts={"model_label": _label(model), "gpu_label": _gpu_label(gpu), "bw": f"{bw:,.0f}",
               "format_label": row["format"], "bits": f"{row['weight_bits']:g}",
               "weights": f"{row['weights_gb']:.2f}", "kv": f"{row['kv_gb']:.2f}"},
        show_me=_show("quant", {"model": model, "gpu": gpu, "serve_batch": batch, "serve_context": ctx}),
    )


# ---------------------------------------------------------------- A2: stage 3 as PyTorch runs it (FSDP2 check)
FSDP2 = ("PyTorch FSDP2 (torch.distributed.fsdp.fully_shard) under FSDPMemTracker, run by "
         "engines.memory.fake_check.fake_step; Zhao et al. 2023, PyTorch FSDP (VLDB, arXiv 2304.11277), §3.2")


@lru_cache(maxsize=16)
def _tiny_fsdp2_step(layers: int, hidden: int):
    """One FSDP2 step of a small Llama-shaped model on 8 fake ranks (a second or two each: cached)."""
    from engines.core.models import ModelArch
    from engines.memory.fake_check import fake_step

    arch = ModelArch(label=f"{layers}-block Llama-shaped model", layers=layers, hidden=hidden, heads=hidden // 32,
                     kv_heads=2, ffn=2 * hidden, vocab=1024)
    return arch, fake_step(Scenario(model="custom", arch=arch, n_gpus=8, strategy="zero3", seq_len=128,
                                    micro_batch=2, recompute="none"))


@computation("memory.fsdp2_gathered_peak")
def fsdp2_gathered_peak(p: Mapping[str, Any]) -> Outcome:
    """Rank 0's most gathered (unsharded) parameter bytes in PyTorch's own FSDP2 step: one unit at a time."""
    layers, hidden = int(p["layers"]), int(p["hidden"])
    arch, step = _tiny_fsdp2_step(layers, hidden)
    block = arch.layer_params()                              # one transformer block: one FSDP unit here
    mb = 1e6
    return Outcome(
        answer=step.peaks["unsharded_params"] / mb,
        hand=2 * block / mb,
        steps=(Step("parameters of one block (one FSDP unit)", block, "parameters", arch.source or "the model's shape"),
               Step("its bf16 all-gather, 2 B per parameter", 2 * block / mb, "MB", FSDP2),
               Step("most unsharded parameter bytes PyTorch's tracker saw on rank 0", step.peaks["unsharded_params"] / mb,
                    "MB", FSDP2),
               Step("the prefetched next block's all-gather buffer, counted apart", step.peaks["all_gather"] / mb,
                    "MB", FSDP2),
               Step("activations right after the forward (their peak: backward frees them)",
                    step.activations_after_forward / mb, "MB", FSDP2)),
        mistakes=(Mistake("whole_model", 2 * block * layers / mb), Mistake("shard_only", 2 * block / 8 / mb),
                  Mistake("fp32", 4 * block / mb)),
        facts={"layers": str(layers), "hidden": str(hidden)},
        show_me=_show("memory", {"n_gpus": 8, "recompute": "none", "strategy": "zero3"}, {"pytorch_check": True},
                      preset="llama3-70b-64"),
    )
