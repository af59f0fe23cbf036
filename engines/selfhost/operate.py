"""Operating a self-hosted deployment: a day of traffic with the signals a server exposes and their
alert thresholds, capacity as traffic grows, the surge GPUs an upgrade needs, and retirement
signals computed from the cost formulas.

The day is simulated with the serving engine's discrete-event batching simulator
(:func:`engines.serving.batching.simulate_batching`), one run per hour at that hour's rate per
replica; each run is long enough for the queue to relax at that load (at least
:data:`engines.serving.steady.RELAXATION_REQUESTS` / (1 − ρ)² requests, Whitt 1989) and drops the
same warm-up and drain as the steady-state engine. The diurnal shape is a von Mises (circular
normal) curve, a common smooth model of daily traffic cycles, scaled so the day averages the
chosen traffic and its busiest hour is the chosen peak. Signal names follow vLLM's Prometheus
metrics and NVIDIA DCGM's exporter; latency, traffic, errors and saturation are Google SRE's "four
golden signals" (Beyer et al., *Site Reliability Engineering*, O'Reilly 2016, ch. 6).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from engines.core.errors import Cancelled, require_number
from engines.selfhost.cost import HOURS_PER_MONTH, MTOK, SECONDS_PER_HOUR, replicas_for_peak, surge_cost
from engines.selfhost.study import Tco, api_alternatives, fleet_monthly
from engines.serving.batching import LatencyTarget, simulate_batching
from engines.serving.replica import capacity, replica_memory, step_cost
from engines.serving.steady import (COOLDOWN_FRACTION, CURVE_MAX_REQUESTS, MIN_REQUESTS, RELAXATION_REQUESTS,
                                    WARMUP_FRACTION)

PEAK_HOUR = 14
"""Hour of the day's busiest traffic (early afternoon; the shape, not the hour, matters here)."""
KV_ALERT = 0.9
"""KV cache above 90 % full: the scheduler is about to preempt requests (vLLM recomputes or swaps them)."""
MONTHS = 24


def diurnal_shape(peak_to_average: float, hours: int = 24) -> np.ndarray:
    """Hourly multipliers of the average rate: mean exactly 1, maximum ``peak_to_average`` at :data:`PEAK_HOUR`.

    A von Mises curve exp(κ·cos θ); κ is found by bisection so that max ÷ mean is the ratio asked for."""
    ratio = require_number(peak_to_average, "peak_to_average", 1, 20)
    theta = 2 * np.pi * (np.arange(hours) - PEAK_HOUR) / hours
    if ratio == 1:
        return np.ones(hours)

    def peak_over_mean(kappa: float) -> float:
        w = np.exp(kappa * (np.cos(theta) - 1))
        return float(w.max() / w.mean())

    lo, hi = 0.0, 1.0
    while peak_over_mean(hi) < ratio:
        hi *= 2
        if hi > 1e4:
            break
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if peak_over_mean(mid) < ratio else (lo, mid)
    w = np.exp(hi * (np.cos(theta) - 1))
    return w / w.mean()


@dataclass(frozen=True)
class Hour:
    """One hour of one replica, as a monitoring dashboard would show it (nan where overloaded)."""

    hour: int
    fleet_rate: float            # req/s across the fleet
    utilisation: float           # ρ: this replica's arrival rate ÷ its (η-scaled) saturation rate
    ttft_p90_s: float
    tpot_p90_s: float
    queue_depth: float           # mean requests waiting (vllm:num_requests_waiting)
    kv_use: float                # mean share of the KV cache holding tokens (vllm:kv_cache_usage_perc)
    gpu_busy: float              # share of the hour a batch is running (DCGM_FI_DEV_GPU_UTIL's meaning)
    usd_per_mtok: float          # fleet $ this hour ÷ output tokens served
    overloaded: bool
    alerts: tuple[str, ...]


@dataclass(frozen=True)
class Day:
    hours: tuple[Hour, ...]
    thresholds: dict
    replicas: int

    def series(self, name: str) -> np.ndarray:
        return np.array([getattr(h, name) for h in self.hours], dtype=float)


def _busy_share(start: np.ndarray, finish: np.ndarray, lo: float, hi: float) -> float:
    """Share of [lo, hi] covered by at least one request being served."""
    order = np.argsort(start)
    covered, cur_s, cur_e = 0.0, None, None
    for s, e in zip(start[order], finish[order]):
        s, e = max(s, lo), min(e, hi)
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                covered += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        covered += cur_e - cur_s
    return covered / (hi - lo) if hi > lo else 0.0


def day_of_traffic(scenario, tco_result: Tco, params, progress: Callable[[float, str], None] | None = None,
                   cancelled: Callable[[], bool] | None = None) -> Day:
    """Twenty-four simulated hours on one replica of the sized fleet, with each signal's alert."""
    from engines.serving.params import workload as serving_workload

    t = tco_result
    target = LatencyTarget(params.ttft_target_s, params.tpot_target_ms / 1e3)
    eta = t.efficiency
    mem = replica_memory(scenario)
    cost = step_cost(scenario, mem.gpus_needed)
    kv = capacity(scenario, mem.gpus_needed).max_tokens
    wl = serving_workload(params, scenario.serve_context, 1.0, seed=3)
    sat = t.sizing.saturation_rate_per_replica * eta          # real req/s at which a replica saturates
    shape = diurnal_shape(params.peak_to_average)
    p_hour = t.gpu_price.usd_per_gpu_hour * t.gpus
    thresholds = {"ttft_p90_s": target.ttft_p90_s, "tpot_p90_s": target.tpot_p90_s,
                  "queue_depth": float(scenario.serve_batch), "kv_use": KV_ALERT,
                  "utilisation": params.max_utilisation_pct / 100, "usd_per_mtok": t.price_mix}
    hours = []
    for h, m in enumerate(shape):
        if cancelled is not None and cancelled():
            raise Cancelled()
        if progress is not None:
            progress(h / 24, f"simulating hour {h}")
        fleet = params.traffic_per_s * float(m)
        per = fleet / t.replicas
        rho = per / sat if sat > 0 else math.inf
        usd = p_hour / (fleet * wl.output_mean * SECONDS_PER_HOUR / MTOK) if fleet > 0 else math.inf
        if rho >= 1:
            nan = float("nan")
            hours.append(Hour(h, fleet, rho, nan, nan, nan, nan, 1.0, usd, True,
                              ("overloaded: the queue grows without bound",)))
            continue
        n = int(min(CURVE_MAX_REQUESTS, max(MIN_REQUESTS, RELAXATION_REQUESTS / (1 - rho) ** 2)))
        model_rate = per / eta                                 # the simulator runs at roofline speed
        res = simulate_batching(cost, replace(wl, rate_per_s=model_rate, n_requests=n), "continuous",
                                scenario.serve_batch, kv)
        lo, hi = math.ceil(WARMUP_FRACTION * n), n - math.ceil(COOLDOWN_FRACTION * n)
        sl = slice(lo, hi)
        ttft = float(np.percentile(res.ttft[sl], 90)) / eta
        out = res.output[sl]
        many = out > 1
        tpot = float(np.percentile(((res.finish[sl] - res.first_token[sl])[many] / (out[many] - 1)), 90)) / eta \
            if many.any() else 0.0
        wait = float(np.mean(res.start[sl] - res.arrival[sl]))
        queue = model_rate * wait                                   # Little's law: L = λW
        resident = (res.finish[sl] - res.start[sl]) * (res.prompt[sl] + res.output[sl] / 2)
        kv_use = min(1.0, model_rate * float(np.mean(resident)) / kv) if kv else float("nan")
        busy = float(_busy_share(res.start, res.finish, float(res.arrival[lo]), float(res.arrival[hi - 1])))
        alerts = []
        for name, value in (("ttft_p90_s", ttft), ("tpot_p90_s", tpot), ("queue_depth", queue), ("kv_use", kv_use),
                            ("utilisation", rho), ("usd_per_mtok", usd)):
            if value > thresholds[name]:
                alerts.append(name)
        hours.append(Hour(h, fleet, rho, ttft, tpot, queue, kv_use, busy, usd, False, tuple(alerts)))
    return Day(tuple(hours), thresholds, t.replicas)


@dataclass(frozen=True)
class Month:
    month: int
    traffic: float
    replicas: int
    self_monthly: float
    api_monthly: float
    added: int                   # replicas added this month


def capacity_plan(tco_result: Tco, params, months: int = MONTHS) -> tuple[Month, ...]:
    """Traffic compounding at the growth rate; the replicas its peak needs each month and both bills."""
    t = tco_result
    g = params.growth_pct_per_month / 100
    per_rps = t.api_monthly / params.traffic_per_s
    out, prev = [], None
    for m in range(months + 1):
        lam = params.traffic_per_s * (1 + g) ** m
        reps = replicas_for_peak(lam * params.peak_to_average, t.rate_per_replica, params.spares)
        selfc = fleet_monthly(lam, params.peak_to_average, t.rate_per_replica, params.spares,
                              t.gpu_price.usd_per_gpu_hour, t.gpus_per_replica, t.fixed_monthly)
        out.append(Month(m, lam, reps, selfc, lam * per_rps, 0 if prev is None else reps - prev))
        prev = reps
    return tuple(out)


def self_cheaper_from(months: tuple[Month, ...]) -> int | None:
    """The first month from which the self-hosted bill stays below the API's in every month after
    (None if it never does within the plan): a fleet that is cheaper for a month and dearer once a
    replica is added has not yet won."""
    start = None
    for x in months:
        if x.self_monthly < x.api_monthly:
            start = x.month if start is None else start
        else:
            start = None
    return start


@dataclass(frozen=True)
class Upgrade:
    days: float
    blue_green_gpus: int
    blue_green_usd: float        # a second full fleet for the overlap
    rolling_gpus: int
    rolling_usd: float           # one surge replica (maxSurge = 1) for the overlap


def upgrade_cost(tco_result: Tco, days: float) -> Upgrade:
    """Formula 11: extra ≈ p × GPUs held × 24 × days. Blue/green doubles the fleet; a rolling update with
    one surge replica (Kubernetes' maxSurge = 1) holds one replica's GPUs more."""
    t = tco_result
    p = t.gpu_price.usd_per_gpu_hour
    return Upgrade(days, t.gpus, surge_cost(p, t.gpus, days), t.gpus_per_replica,
                   surge_cost(p, t.gpus_per_replica, days))


@dataclass(frozen=True)
class Signal:
    name: str
    firing: bool
    detail: str
    rule: str


def retirement_signals(tco_result: Tco, cheapest_api: tuple[str, float] | None = None) -> tuple[Signal, ...]:
    """Computed reasons to switch the deployment off, each with the rule behind it."""
    t = tco_result
    sig = [Signal("Utilisation below break-even", t.utilisation < t.break_even_u_fixed,
                  f"today {t.utilisation:.0%}; break-even with people and fixed costs {t.break_even_u_fixed:.0%}",
                  "u < u*_F (formula 5)")]
    if t.break_even_u_fixed > 0 and math.isfinite(t.break_even_u_fixed):
        cut = 1 - t.break_even_u_fixed / t.utilisation
        if cut <= 0:
            words = "already past: the API is cheaper at today's price"
        else:
            words = f"an API price cut of {cut:.0%} would move the break-even above today's utilisation"
        sig.append(Signal("An API price cut away from losing", 0 < cut <= 0.4, words,
                          "u*_F ÷ (1 − cut) > u; firing when a cut of 40 % or less is enough"))
    sig.append(Signal("No break-even at any load", t.never,
                      f"GPUs alone at full load cost {t.break_even_u:.2f}× the API's price for the same tokens",
                      "u* > 1 (formula 5)"))
    if cheapest_api is not None:
        label, mix = cheapest_api
        sig.append(Signal("A cheaper API exists", mix < t.self_per_mtok,
                          f"{label}: ${mix:.2f} per M output tokens with prompts, against ${t.self_per_mtok:.2f} "
                          "self-hosted", "P_mix(cheapest in the price file) < self-hosted $ per M"))
    sig.append(Signal("Prices older than a year", bool(t.stale_rows),
                      ", ".join(t.stale_rows) or "every price used is under a year old",
                      "observed date more than 365 days ago"))
    return tuple(sig)


@dataclass(frozen=True)
class Operations:
    day: Day
    months: tuple[Month, ...]
    upgrade: Upgrade
    signals: tuple[Signal, ...]


def operations(scenario, tco_result: Tco, params, cheapest_api: tuple[str, float] | None = None,
               progress: Callable[[float, str], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> Operations:
    """The operating views for a feasible comparison (the day is simulated; the rest is arithmetic)."""
    day = day_of_traffic(scenario, tco_result, params, progress, cancelled)
    return Operations(day, capacity_plan(tco_result, params), upgrade_cost(tco_result, params.upgrade_days),
                      retirement_signals(tco_result, cheapest_api))


@dataclass(frozen=True)
class Outlook:
    """The operating figures that need no simulation: capacity over months, the upgrade's surge GPUs,
    retirement signals, and what one more replica costs a month (dollars)."""

    months: tuple[Month, ...]
    upgrade: Upgrade
    signals: tuple[Signal, ...]
    replica_usd_per_month: float
    self_cheaper_from: int | None = None    # see :func:`self_cheaper_from`


def outlook(tco_result: Tco, params, book) -> Outlook:
    """:func:`capacity_plan`, :func:`upgrade_cost` and :func:`retirement_signals` (against the cheapest
    API in ``book``) for a feasible comparison; a replica's month is price × GPUs × 730 hours."""
    t = tco_result
    cheapest = api_alternatives(book, t.prompt_per_output)[0]
    months = capacity_plan(t, params)
    return Outlook(months, upgrade_cost(t, params.upgrade_days),
                   retirement_signals(t, (cheapest[0].label, cheapest[1])),
                   t.gpu_price.usd_per_gpu_hour * t.gpus_per_replica * HOURS_PER_MONTH, self_cheaper_from(months))


SECURITY = (
    ("Bind the model server to loopback or a private network; put an authenticating TLS proxy in front",
     "Ollama's API has no authentication of its own and listens on 127.0.0.1:11434 unless OLLAMA_HOST widens it; "
     "Cisco Talos counted 1,139 exposed Ollama servers in September 2025, about 18.8 % answering prompts without "
     "credentials", "Cisco Talos blog (Sept 2025); SentinelLABS & Censys (Jan 2026)", "secondary"),
    ("Patch the server within days: subscribe to its advisories",
     "CVE-2026-7482 'Bleeding Llama' (CVSS 9.1): an unauthenticated /api/create with a crafted GGUF file reads "
     "Ollama's heap (keys, prompts, other users' chats); fixed in 0.17.1 on 2026-02-25, CVE assigned in May 2026",
     "Cloud Security Alliance research note, 2026-05-11", "secondary"),
    ("Disable model pull/create/push/delete endpoints in production", "the same two requests (create, then push to "
     "an attacker's registry) carry the leaked memory out", "Cloud Security Alliance research note, 2026-05-11",
     "secondary"),
    ("Load weights as safetensors only; never unpickle a model file; no trust_remote_code",
     "pickle-based checkpoints run code on load; CVE-2025-32434 bypassed torch.load(weights_only=True) up to "
     "PyTorch 2.5.1 (fixed in 2.6.0)", "GHSA-53q9-r3pm-6pq6 (PyTorch advisory)", "secondary"),
    ("Pin model revisions by hash and mirror the weights internally",
     "JFrog found about 100 Hugging Face models with real payloads (e.g. reverse shells) in February 2024",
     "JFrog security research, Feb 2024", "secondary"),
    ("Turn telemetry off before claiming nothing leaves the building",
     "vLLM collects anonymous usage statistics by default; VLLM_NO_USAGE_STATS=1 or DO_NOT_TRACK=1 opts out",
     "docs.vllm.ai, Usage Stats Collection", "provider page"),
    ("Keep multi-node serving traffic on a private, authenticated network",
     "vLLM's multi-node paths deserialised pickle from the network (CVE-2025-47277, CVE-2025-32444); Ray's Jobs "
     "API runs code without authentication (CVE-2023-48022, disputed as by design, exploited per Oligo 2024-03)",
     "vLLM GitHub advisories; Oligo Security, 2024-03-26", "secondary"),
    ("No outbound internet from inference hosts; a log-retention rule for prompts",
     "your own logs are now your GDPR Art 32 security duty, not a provider's", "GDPR Art 32", "unverified"),
)
"""The security checklist: (practice, the incident or fact behind it, source, confidence)."""


__all__ = ["PEAK_HOUR", "KV_ALERT", "diurnal_shape", "Hour", "Day", "day_of_traffic", "Month", "capacity_plan",
           "Upgrade", "upgrade_cost", "Signal", "retirement_signals", "Operations", "operations", "SECURITY"]
