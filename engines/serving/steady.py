"""Steady-state serving figures: what a replica sustains, its latency at a rate, and the sizing.

A finite simulation that starts empty says little about a rate near or above what the replica can
serve: a few hundred requests end before the queue has grown, so an overloaded replica still looks
fast. Everything here therefore follows the usual discipline of steady-state simulation (Law,
*Simulation Modeling and Analysis*, 5th ed., 2015, ch. 9: warm-up deletion and run-length control):

- **Saturation.** A replica's saturation rate is the completion rate of a run whose queue never
  empties (every request waiting from the start: the offline throughput a serving benchmark
  reports). Arrivals at or above it make the queue grow without bound (a G/G/c queue is stable only
  below its service capacity, Loynes 1962), so no latency percentile exists there.
- **Warm-up and horizon.** Below saturation the first :data:`WARMUP_FRACTION` of the requests
  (the run starts empty) and the last :data:`COOLDOWN_FRACTION` (the batch drains) are dropped. The
  run starts long enough for the queue to relax (:data:`RELAXATION_REQUESTS`) and doubles until the
  p90s over the first and the second half of the remaining requests differ by at most ``tolerance``
  (a queue still growing makes the second half slower); a run that has not settled by
  ``max_requests`` is reported as not steady.
- **Sizing** bisects the rate between 0 and saturation for the highest steady-state rate that meets
  the latency target, then loads each replica at no more than ``max_utilisation`` of saturation:
  latency in a queue grows like 1/(1 − ρ) as utilisation ρ nears 1 (Kingman 1961), so capacity
  planners keep headroom for bursts the Poisson model does not have.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engines.core.errors import Cancelled, ValidationError, require_int, require_number
from engines.serving.batching import POLICIES, LatencyTarget, SimResult, Workload, simulate_batching
from engines.serving.replica import StepCost, capacity, replica_memory, step_cost

WARMUP_FRACTION = 0.1
"""Requests dropped at the start of a run: the replica starts idle with an empty queue."""
COOLDOWN_FRACTION = 0.05
"""Requests dropped at the end: once arrivals stop, the last requests decode in a shrinking batch."""
TOLERANCE = 0.05
"""Largest relative change of a p90 allowed when the simulated horizon doubles."""
MIN_REQUESTS = 2_000
MAX_REQUESTS = 128_000
CURVE_MAX_REQUESTS = 16_000
"""Longest run behind one point of a load curve: the panel draws twenty of them while the user waits."""
CURVE_TOLERANCE = 0.10
"""A load curve is a picture: its points settle at 10 %; sizing decides at :data:`TOLERANCE`."""
SATURATION_REQUESTS = 4_000
"""Requests in the always-busy run that measures the saturation rate."""
RELAXATION_REQUESTS = 50
"""Horizon floor: at utilisation ρ a run holds at least this many × 1/(1 − ρ)² requests. A queue's
relaxation time grows like (1 − ρ)⁻² in heavy traffic (Whitt, *Planning queueing simulations*,
Management Science 35(11), 1989), and two halves can agree by luck long before it has passed."""
ABS_FLOOR_S = 1e-3
"""A change is measured against the larger of the p90 and this floor (or, given a target, the target's
value for that p90): a millisecond's jitter in a 4 ms TTFT is not material against a 2 s target."""
DEFAULT_MAX_UTILISATION = 0.8
"""Load each replica to at most 80 % of its saturation rate unless the user picks other headroom."""


def saturation_rate(cost: StepCost, workload: Workload, max_batch: int) -> float:
    """Roofline bound on the requests/s one continuous batch of ``max_batch`` slots can sustain.

    Per request of p prompt and o output tokens the replica must do (p + o − 1) × 2P FLOPs plus
    attention over the causal prefill and each decoded token's context (p·(p+1)/2 + (o−1)·p +
    (o−1)·o/2 pairs), and read its share of the weights once per iteration it is in (o × weight
    bytes / ``max_batch``) plus its KV cache (o·p + o·(o−1)/2 tokens). A request costs at least the
    larger of the compute and the memory time (Williams et al., *Roofline*, CACM 2009) plus its share
    of the per-step overhead, averaged over the workload's own lengths (the requests
    :func:`saturation_throughput` simulates). Iterations overlap the two imperfectly, so the
    simulated replica saturates below this bound.
    """
    max_batch = require_int(max_batch, "max_batch", 1, 100_000)
    _, prompt, output = replace(workload, n_requests=SATURATION_REQUESTS).sample()
    p, o = prompt.astype(float), output.astype(float)
    n = cost.n_gpus
    pairs = p * (p + 1) / 2 + (o - 1) * p + (o - 1) * o / 2
    flops = float(np.mean((p + o - 1) * cost.flops_per_token + cost.attn_flops_per_pair * pairs))
    bytes_ = float(np.mean(o * cost.weight_bytes / max_batch + cost.kv_bytes_per_token * (o * p + o * (o - 1) / 2)))
    overhead = float(np.mean(o)) * cost.step_overhead_s / max_batch
    return 1.0 / (max(flops / (n * cost.peak_flops), bytes_ / (n * cost.bandwidth)) + overhead)


def saturation_throughput(cost: StepCost, workload: Workload, policy: str, max_batch: int,
                          kv_capacity_tokens: int | None = None, n_requests: int = SATURATION_REQUESTS) -> float:
    """Requests/s the simulated replica completes when its queue never empties (its saturation rate).

    Every request waits from t = 0; the completion rate is measured between the 20th and the 80th
    percentile of finishing order, away from the start (one big prefill) and the drain.
    """
    n_requests = require_int(n_requests, "n_requests", 100, 1_000_000)
    burst = replace(workload, rate_per_s=1e6, n_requests=n_requests)
    finish = np.sort(simulate_batching(cost, burst, policy, max_batch, kv_capacity_tokens).finish)
    a, b = int(0.2 * n_requests), int(0.8 * n_requests)
    return (b - a) / float(finish[b] - finish[a])


@dataclass(frozen=True)
class SteadyState:
    """Steady-state latency of one replica at one arrival rate, or why there is none."""

    rate_per_s: float
    policy: str
    saturation_rate_per_s: float   # measured by :func:`saturation_throughput`
    stable: bool                   # below saturation: a steady state exists
    settled: bool                  # the run's two halves agreed within the tolerance
    requests: int                  # simulated in the deciding run (0: not simulated)
    warmup: int                    # dropped at the start
    cooldown: int                  # dropped at the end
    ttft_p90_s: float              # over the measured window; nan when not simulated
    tpot_p90_s: float
    latency_p90_s: float
    throughput_tokens_per_s: float
    change: float                  # largest relative difference of a p90 between the run's two halves
    note: str

    @property
    def utilisation(self) -> float:
        """Arrival rate ÷ saturation rate (ρ)."""
        return self.rate_per_s / self.saturation_rate_per_s

    def meets(self, target: LatencyTarget) -> bool:
        return self.settled and self.ttft_p90_s <= target.ttft_p90_s and self.tpot_p90_s <= target.tpot_p90_s


def _window_p90s(res: SimResult, lo: int, hi: int) -> tuple[float, float, float]:
    """p90 TTFT, TPOT and latency of requests ``lo``…``hi − 1`` in arrival order."""
    sl = slice(lo, hi)
    out = res.output[sl]
    many = out > 1
    tpot = (res.finish[sl] - res.first_token[sl])[many] / (out[many] - 1)
    return (float(np.percentile(res.ttft[sl], 90)), float(np.percentile(tpot, 90)) if tpot.size else 0.0,
            float(np.percentile(res.latency[sl], 90)))


def _bounds(n: int) -> tuple[int, int]:
    return math.ceil(WARMUP_FRACTION * n), n - math.ceil(COOLDOWN_FRACTION * n)


def steady_state(cost: StepCost, workload: Workload, policy: str, max_batch: int,
                 kv_capacity_tokens: int | None = None, *, tolerance: float = TOLERANCE,
                 min_requests: int = MIN_REQUESTS, max_requests: int = MAX_REQUESTS,
                 saturation: float | None = None, target: LatencyTarget | None = None,
                 cancelled: Callable[[], bool] | None = None) -> SteadyState:
    """Steady-state p90s at ``workload.rate_per_s`` (its ``n_requests`` is ignored: the horizon grows).

    A run of N requests begins with exactly the run of N/2 (see :meth:`Workload.sample`), so two
    halves that agree mean doubling the horizon no longer moves the p90s. With ``target``, changes
    are measured against the larger of each p90 and its target, and a run whose halves both miss
    the target stops early: "not met" is the answer whether or not it would settle.
    """
    if policy not in POLICIES:
        raise ValidationError("policy", f"{policy!r} is not known", ", ".join(POLICIES))
    tolerance = require_number(tolerance, "tolerance", 0, 1, lo_open=True)
    min_requests = require_int(min_requests, "min_requests", 100, 1_000_000)
    max_requests = require_int(max_requests, "max_requests", min_requests, 1_000_000)
    sat = saturation if saturation is not None else saturation_throughput(
        cost, workload, policy, max_batch, kv_capacity_tokens)
    sat = require_number(sat, "saturation", 0, lo_open=True)
    rate = workload.rate_per_s
    nan = float("nan")
    if rate >= sat:
        return SteadyState(rate, policy, sat, False, False, 0, 0, 0, nan, nan, nan, nan, nan,
                           f"arrivals at {rate / sat:.0%} of saturation: the queue grows without bound")
    floors = (ABS_FLOOR_S,) * 3 if target is None else (target.ttft_p90_s, target.tpot_p90_s, ABS_FLOOR_S)
    relax = RELAXATION_REQUESTS / (1 - rate / sat) ** 2
    if relax > max_requests:
        return SteadyState(rate, policy, sat, True, False, 0, 0, 0, nan, nan, nan, nan, nan,
                           f"at {rate / sat:.0%} of saturation the queue needs over {max_requests:,} requests to settle")
    n = min_requests
    while n < relax:
        n *= 2
    while True:
        if cancelled is not None and cancelled():
            raise Cancelled()
        res = simulate_batching(cost, replace(workload, n_requests=n), policy, max_batch, kv_capacity_tokens)
        lo, hi = _bounds(n)
        mid = (lo + hi) // 2
        first, second, whole = (_window_p90s(res, a, b) for a, b in ((lo, mid), (mid, hi), (lo, hi)))
        change = max(abs(a - b) / max(a, f) for a, b, f in zip(first, second, floors))
        settled = change <= tolerance
        missed = target is not None and all(
            w[0] > target.ttft_p90_s or w[1] > target.tpot_p90_s for w in (first, second))
        if settled or missed or 2 * n > max_requests:
            span = float(res.arrival[hi - 1] - res.arrival[lo])
            tput = float(res.output[lo:hi].sum()) / span if span > 0 else nan
            if settled:
                note = f"settled: the two halves of the run agree within {change:.1%}"
            elif missed:
                note = "misses the target before settling"
            else:
                note = f"not settled after {n:,} requests: its halves differ by {change:.0%}"
            return SteadyState(rate, policy, sat, True, settled, n, lo, n - hi, *whole, tput, change, note)
        n *= 2


@dataclass(frozen=True)
class RateSearch:
    """Highest steady-state rate meeting a latency target, between 0 and saturation."""

    policy: str
    rate_per_s: float              # 0 when even light load misses the target
    saturation_rate_per_s: float
    at_rate: SteadyState | None    # the steady state at ``rate_per_s``


def max_rate_under_target(cost: StepCost, workload: Workload, policy: str, max_batch: int, target: LatencyTarget,
                          kv_capacity_tokens: int | None = None, iterations: int = 12,
                          cancelled: Callable[[], bool] | None = None) -> tuple[float, SteadyState | None]:
    """Highest Poisson rate (req/s) whose *steady state* meets ``target``, by bisection; (0, None) if none does.

    The bracket is [0, saturation): a rate at or above the replica's saturation has no steady state.
    """
    search = _search(cost, workload, policy, max_batch, target, kv_capacity_tokens, iterations, cancelled)
    return search.rate_per_s, search.at_rate


def _search(cost, workload, policy, max_batch, target, kv, iterations, cancelled=None, sat=None,
            hi_fraction: float = 1.0) -> RateSearch:
    """Bisection over [saturation/1000, hi_fraction × saturation) for the highest rate meeting ``target``."""
    iterations = require_int(iterations, "iterations", 0, 100)
    sat = sat if sat is not None else saturation_throughput(cost, workload, policy, max_batch, kv)

    def probe(rate: float) -> SteadyState:
        return steady_state(cost, replace(workload, rate_per_s=rate), policy, max_batch, kv, saturation=sat,
                            target=target, cancelled=cancelled)

    low = probe(sat / 1000)
    if not low.meets(target):
        return RateSearch(policy, 0.0, sat, None)
    lo, hi, best = sat / 1000, hi_fraction * sat, low
    for _ in range(iterations):
        mid = (lo + hi) / 2
        res = probe(mid)
        if res.meets(target):
            lo, best = mid, res
        else:
            hi = mid
    return RateSearch(policy, lo, sat, best)


@dataclass(frozen=True)
class Sizing:
    """Replicas and GPUs for a traffic estimate under a latency target, in steady state."""

    rate_per_s: float
    policy: str
    max_rate_per_replica: float             # the rate each replica is sized for (below saturation)
    replicas: int
    gpus_per_replica: int
    gpus: int
    throughput_per_replica_tokens_per_s: float
    feasible: bool
    saturation_rate_per_replica: float = 0.0    # measured: the queue never empties
    roofline_rate_per_replica: float = 0.0      # analytic upper bound (:func:`saturation_rate`)
    max_utilisation: float = DEFAULT_MAX_UTILISATION
    limited_by: str = ""                         # "headroom" or "latency target"
    at_rate: SteadyState | None = None           # one replica in steady state at ``max_rate_per_replica``

    @property
    def utilisation(self) -> float:
        """Each replica's arrival rate ÷ its saturation rate (ρ) at the traffic being sized for."""
        if not self.feasible or self.saturation_rate_per_replica <= 0:
            return 0.0
        return self.rate_per_s / self.replicas / self.saturation_rate_per_replica


def default_workload(scenario) -> Workload:
    """The sizing workload when none is given: 512-token prompts and 128-token outputs, cut to the context."""
    return Workload(rate_per_s=1.0, prompt_mean=min(512, scenario.serve_context // 2),
                    output_mean=min(128, max(1, scenario.serve_context // 4)))


def size_deployment(scenario, rate_per_s: float, target: LatencyTarget, policy: str = "continuous",
                    workload: Workload | None = None, max_utilisation: float = DEFAULT_MAX_UTILISATION,
                    cancelled: Callable[[], bool] | None = None) -> Sizing:
    """GPUs needed to serve ``rate_per_s`` requests/s: replicas = ⌈rate / per-replica rate⌉.

    A load balancer splits a Poisson stream into independent Poisson streams, so each replica sees
    rate/replicas. A replica is loaded to ``max_utilisation`` × its saturation rate if its steady
    state there meets ``target`` ("headroom" binds); otherwise to the highest steady-state rate
    below that which does ("latency target" binds).
    """
    rate = require_number(rate_per_s, "rate_per_s", 0, 1e7, lo_open=True)
    max_utilisation = require_number(max_utilisation, "max_utilisation", 0.05, 0.99)
    mem = replica_memory(scenario)
    cost = step_cost(scenario, mem.gpus_needed)
    wl = workload or default_workload(scenario)
    kv = capacity(scenario, mem.gpus_needed).max_tokens
    batch = scenario.serve_batch
    sat = saturation_throughput(cost, wl, policy, batch, kv)
    roof = saturation_rate(cost, wl, batch)
    at = steady_state(cost, replace(wl, rate_per_s=max_utilisation * sat), policy, batch, kv, saturation=sat,
                      target=target, cancelled=cancelled)
    limited = "headroom"
    if not at.meets(target):
        limited = "latency target"
        at = _search(cost, wl, policy, batch, target, kv, 8, cancelled, sat, max_utilisation).at_rate
    if at is None:
        return Sizing(rate, policy, 0.0, 0, mem.gpus_needed, 0, 0.0, False, sat, roof, max_utilisation, limited)
    per = at.rate_per_s
    replicas = math.ceil(rate / per)
    return Sizing(rate_per_s=rate, policy=policy, max_rate_per_replica=per, replicas=replicas,
                  gpus_per_replica=mem.gpus_needed, gpus=replicas * mem.gpus_needed,
                  throughput_per_replica_tokens_per_s=at.throughput_tokens_per_s, feasible=True,
                  saturation_rate_per_replica=sat, roofline_rate_per_replica=roof,
                  max_utilisation=max_utilisation, limited_by=limited, at_rate=at)


@dataclass(frozen=True)
class LoadCurve:
    """Steady-state p90s and throughput of one policy over a range of arrival rates."""

    policy: str
    saturation_rate_per_s: float
    points: tuple[SteadyState, ...]
    saturation_tokens_per_s: float = 0.0      # output tokens/s of the always-busy replica

    @property
    def rates(self) -> np.ndarray:
        return np.array([p.rate_per_s for p in self.points])

    def series(self, field: str) -> np.ndarray:
        """One field per rate; nan where nothing was simulated (past saturation, or too close to it)."""
        return np.array([getattr(p, field) if p.requests else np.nan for p in self.points])

    @property
    def settled(self) -> np.ndarray:
        """Per rate: whether its estimate settled (the rest are drawn as rough)."""
        return np.array([p.settled for p in self.points])

    def throughput(self) -> np.ndarray:
        """Output tokens/s per rate: measured where simulated, else the saturation throughput (an
        overloaded replica completes requests at its saturation rate while its queue grows)."""
        return np.array([p.throughput_tokens_per_s if p.requests else self.saturation_tokens_per_s
                         for p in self.points])

    def max_rate_meeting(self, target: LatencyTarget) -> float:
        """Highest probed rate whose steady state meets ``target`` (0 if none): a lower bound on the true one."""
        return max((p.rate_per_s for p in self.points if p.meets(target)), default=0.0)


CURVE_FRACTIONS = (0.1, 0.3, 0.5, 0.65, 0.75, 0.85, 0.9, 0.95, 0.98, 1.05)
"""Rates of a load curve as fractions of its policy's saturation: dense where latency turns upward,
and one past saturation, where no steady state exists."""


def load_curves(cost: StepCost, workload: Workload, max_batch: int, kv_capacity_tokens: int | None = None,
                rates: Sequence[float] | None = None, policies: Sequence[str] = POLICIES,
                progress: Callable[[float, str], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> dict[str, LoadCurve]:
    """Steady-state latency and throughput against load, per policy, up to and past saturation.

    Without ``rates`` each policy is probed at :data:`CURVE_FRACTIONS` of its own saturation rate.
    """
    sats = {p: saturation_throughput(cost, workload, p, max_batch, kv_capacity_tokens) for p in policies}
    mean_output = float(replace(workload, n_requests=SATURATION_REQUESTS).sample()[2].mean())
    if rates is not None:
        grid = np.asarray(rates, float)
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValidationError("rates", "need at least one finite rate above 0", "rates > 0 req/s")
    out, k = {}, 0
    total = len(policies) * (grid.size if rates is not None else len(CURVE_FRACTIONS))
    for policy in policies:
        points = []
        for rate in (grid if rates is not None else np.array(CURVE_FRACTIONS) * sats[policy]):
            if progress is not None:
                progress(k / total, f"steady state: {policy} at {rate:,.1f} req/s")
            k += 1
            points.append(steady_state(cost, replace(workload, rate_per_s=float(rate)), policy, max_batch,
                                       kv_capacity_tokens, saturation=sats[policy], cancelled=cancelled,
                                       max_requests=CURVE_MAX_REQUESTS, tolerance=CURVE_TOLERANCE))
        out[policy] = LoadCurve(policy, sats[policy], tuple(points), sats[policy] * mean_output)
    return out


def batching_runs(scenario, workload: Workload) -> dict[str, SimResult]:
    """Both policies on the same arrivals on the scenario's replica: the animated timeline."""
    mem = replica_memory(scenario)
    cost = step_cost(scenario, mem.gpus_needed)
    kv = capacity(scenario, mem.gpus_needed).max_tokens
    return {p: simulate_batching(cost, workload, p, scenario.serve_batch, kv) for p in POLICIES}


@dataclass(frozen=True)
class DeploymentStudy:
    """What the serving panel's load view shows: both policies' load curves and the sizing."""

    target: LatencyTarget
    curves: dict[str, LoadCurve]
    sizing: Sizing


def deployment_study(scenario, workload: Workload, target: LatencyTarget, traffic_per_s: float,
                     max_utilisation: float = DEFAULT_MAX_UTILISATION,
                     progress: Callable[[float, str], None] | None = None,
                     cancelled: Callable[[], bool] | None = None) -> DeploymentStudy:
    """Load curves of static and continuous batching on the scenario's replica, then the sizing for the traffic."""
    mem = replica_memory(scenario)
    cost = step_cost(scenario, mem.gpus_needed)
    kv = capacity(scenario, mem.gpus_needed).max_tokens

    def part(lo: float, hi: float):
        return None if progress is None else (lambda f, text="": progress(lo + (hi - lo) * f, text))

    curves = load_curves(cost, workload, scenario.serve_batch, kv, progress=part(0.0, 0.85), cancelled=cancelled)
    if progress is not None:
        progress(0.85, "sizing the deployment")
    sizing = size_deployment(scenario, traffic_per_s, target, "continuous", workload, max_utilisation, cancelled)
    return DeploymentStudy(target, curves, sizing)


__all__ = ["WARMUP_FRACTION", "COOLDOWN_FRACTION", "TOLERANCE", "DEFAULT_MAX_UTILISATION", "saturation_rate",
           "saturation_throughput", "SteadyState", "steady_state", "RateSearch", "max_rate_under_target", "Sizing",
           "default_workload", "size_deployment", "LoadCurve", "CURVE_FRACTIONS", "load_curves",
           "DeploymentStudy", "deployment_study", "batching_runs"]
