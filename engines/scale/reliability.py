"""Failures at scale: optimal checkpoint interval, goodput, and a Monte Carlo of a run that fails.

Sources (also in ``assets/lessons/scale.md``):
- Young, *A first order approximation to the optimum checkpoint interval*, CACM 17(9), 1974:
  T = √(2δM), from minimizing waste ≈ δ/T + T/(2M).
- Daly, *A higher order estimate of the optimum checkpoint interval for restart dumps*, Future
  Generation Computer Systems 22(3), 2006: T = √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for δ < 2M,
  else M; and the expected wall time of one segment of τ work, M·e^{R/M}·(e^{(τ+δ)/M} − 1), for
  exponential failures with checkpoint cost δ and restart cost R (his eq. for T_w).
- Dubey et al. 2024, *The Llama 3 Herd of Models*, §3.3.4 and Table 5: 419 unexpected
  interruptions in 54 days on 16,384 H100s (job MTBF 185.6 min); root causes in
  ``assets/scale/llama3_interruptions.json``.
- Job MTBF ≈ per-GPU MTBF / N: independent exponential failures add their rates.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from engines.core.assets import load_json_asset
from engines.core.errors import require, require_int, require_number

DAY = 86_400.0
SPAN_KINDS = ("compute", "checkpoint", "lost", "restart")
"""Where a run's wall time goes: kept compute, checkpoint writes, lost (recomputed) work, restarts."""


def young_interval(checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """Young's first-order optimum compute time between checkpoints: √(2δM) seconds."""
    d, m = _check(checkpoint_seconds, mtbf_seconds)
    t = math.sqrt(2.0) * math.sqrt(d) * math.sqrt(m)      # not √(2δM): 2δM over/underflows at extremes
    require(math.isfinite(t), "mtbf_seconds", "too large to compute with", "checkpoint_seconds × mtbf_seconds < 1e616")
    return t


def daly_interval(checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """Daly's higher-order optimum: √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for δ < 2M, else M.

    With s = √(δ/2M), √(2δM) = 2M·s and δ = 2M·s², so the expression is 2M·s·(1 − s/3)²: computed
    that way it has no cancellation, stays in (0, 8M/9] and never overflows.
    """
    d, m = _check(checkpoint_seconds, mtbf_seconds)
    if d >= 2.0 * m:
        return m
    s = math.sqrt(d) / (math.sqrt(2.0) * math.sqrt(m))
    return m * (2.0 * s * (1.0 - s / 3.0) ** 2)


def young_waste(interval_seconds: float, checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """First-order fraction of time wasted: δ/T (writing) + T/(2M) (work lost, half an interval per failure)."""
    t = require_number(interval_seconds, "interval_seconds", 0, lo_open=True)
    d, m = _check(checkpoint_seconds, mtbf_seconds)
    return d / t + t / (2.0 * m)


def expected_goodput(interval_seconds, checkpoint_seconds: float, mtbf_seconds: float,
                     restart_seconds: float = 0.0):
    """Expected useful fraction of wall time, Daly (2006): τ / (M·e^{R/M}·(e^{(τ+δ)/M} − 1)).

    Exact for exponential failures that can strike while computing, writing a checkpoint or
    restarting. ``interval_seconds`` may be a numpy array.
    """
    d, m = _check(checkpoint_seconds, mtbf_seconds)
    r = require_number(restart_seconds, "restart_seconds", 0)
    tau = _each(interval_seconds, "interval_seconds", require_number, 0, lo_open=True).astype(float)
    with np.errstate(over="ignore"):  # restarts ≫ MTBF: the segment cost overflows to inf → goodput 0
        segment = m * np.exp(r / m) * np.expm1((tau + d) / m)
    out = tau / segment
    return float(out) if out.ndim == 0 else out


def job_mtbf(n_gpus: int, gpu_mtbf_seconds: float) -> float:
    """Job-level MTBF when any of ``n_gpus`` independent components stops the job: M_gpu / N."""
    n = require_int(n_gpus, "n_gpus", 1)
    m = require_number(gpu_mtbf_seconds, "gpu_mtbf_seconds", 0, lo_open=True)
    return m / n


def interruptions_per_day(n_gpus, gpu_mtbf_seconds: float):
    """Expected interruptions per day: N × 86,400 / M_gpu (``n_gpus`` may be an array)."""
    n = _each(n_gpus, "n_gpus", require_int, 1)
    m = require_number(gpu_mtbf_seconds, "gpu_mtbf_seconds", 0, lo_open=True)
    return n.astype(float) * DAY / m


def checkpoint_seconds(params: int, write_gbps: float, bytes_per_param: float = 14.0) -> float:
    """Time to write a full training checkpoint: params × bytes / aggregate write bandwidth.

    14 B/param = bf16 weights (2) + fp32 master weights and Adam m, v (12; ZeRO's K = 12,
    Rajbhandari et al. 2020). Gradients are not saved.
    """
    p = require_int(params, "params", 1)
    w = require_number(write_gbps, "write_gbps", 0, lo_open=True)
    b = require_number(bytes_per_param, "bytes_per_param", 0, lo_open=True)
    return p * b / (w * 1e9)


# --- Llama 3 interruption data --------------------------------------------------------------

@dataclass(frozen=True)
class Cause:
    cause: str
    category: str
    count: int
    published_pct: float

    def share(self, total: int) -> float:
        return self.count / total


@dataclass(frozen=True)
class Interruptions:
    """Llama 3 Table 5 with shares computed from counts (the printed column is inconsistent)."""

    causes: tuple[Cause, ...]
    days: float
    gpus: int
    unexpected: int
    planned: int
    source: str
    note: str

    @property
    def total(self) -> int:
        return sum(c.count for c in self.causes)

    @property
    def unexpected_per_day(self) -> float:
        """419 interruptions in 54 days: 7.8 per day."""
        return self.unexpected / self.days

    @property
    def job_mtbf_seconds(self) -> float:
        """54 days / 419 interruptions = 185.6 minutes."""
        return self.days * DAY / self.unexpected

    @property
    def gpu_mtbf_seconds(self) -> float:
        """Per-GPU-equivalent MTBF (all causes treated as per GPU): job MTBF × 16,384."""
        return self.job_mtbf_seconds * self.gpus

    def category_shares(self) -> dict[str, float]:
        shares: dict[str, float] = {}
        for c in self.causes:
            shares[c.category] = shares.get(c.category, 0.0) + c.count / self.total
        return dict(sorted(shares.items(), key=lambda kv: -kv[1]))

    def probabilities(self) -> np.ndarray:
        counts = np.array([c.count for c in self.causes], dtype=float)
        return counts / counts.sum()


@lru_cache(maxsize=1)
def llama3_interruptions() -> Interruptions:
    """Load ``assets/scale/llama3_interruptions.json``."""
    raw = load_json_asset("scale", "llama3_interruptions.json")
    causes = tuple(Cause(**row) for row in raw["causes"])
    data = Interruptions(causes=causes, days=raw["days"], gpus=raw["gpus"], unexpected=raw["unexpected_interruptions"],
                         planned=raw["planned_interruptions"], source=raw["source"], note=raw["note"])
    require(data.total == data.unexpected, "llama3_interruptions", "counts do not sum to the unexpected total")
    return data


# --- Monte Carlo ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Span:
    """One stretch of wall time: ``compute`` (kept), ``lost`` (recomputed), ``checkpoint``, ``restart``."""

    kind: str
    start: float
    end: float


@dataclass(frozen=True)
class Failure:
    time: float
    cause: str
    during: str        # "compute", "checkpoint" or "restart"


@dataclass(frozen=True)
class RunResult:
    """One simulated run: its spans and failures, plus where the wall time went (seconds)."""

    work_seconds: float
    interval_seconds: float
    checkpoint_seconds: float
    restart_seconds: float
    mtbf_seconds: float
    spans: tuple[Span, ...]
    failures: tuple[Failure, ...]
    wall_seconds: float
    lost_seconds: float
    checkpoint_total: float
    restart_total: float

    @property
    def goodput(self) -> float:
        return self.work_seconds / self.wall_seconds

    @cached_property
    def kind_arrays(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(starts, ends) per span kind, in time order: lets a player slice a window in O(log n)."""
        out = {}
        for kind in SPAN_KINDS:
            rows = [(s.start, s.end) for s in self.spans if s.kind == kind]
            arr = np.array(rows, dtype=float).reshape(-1, 2)
            out[kind] = (arr[:, 0].copy(), arr[:, 1].copy())
        return out

    def time_in(self, kind: str, t: float) -> float:
        """Wall seconds spent in spans of ``kind`` up to wall time ``t`` (partial spans count)."""
        starts, ends = self.kind_arrays[kind]
        k = int(np.searchsorted(starts, t, side="left"))     # spans that started before t
        if k == 0:
            return 0.0
        return float((ends[:k] - starts[:k]).sum() - max(0.0, ends[k - 1] - t))

    def progress_at(self, t: float) -> float:
        """Work (seconds) kept at wall time ``t``: the compute spans (never lost) started before ``t``."""
        return self.time_in("compute", t)


def simulate_run(work_seconds: float, interval_seconds: float, checkpoint_seconds: float,
                 restart_seconds: float, mtbf_seconds: float, seed: int = 0,
                 causes: Interruptions | None = None, max_failures: int = 100_000) -> RunResult:
    """Simulate one run with exponential failures (mean ``mtbf_seconds``), event by event.

    Work proceeds in segments of ``interval_seconds`` each followed by a checkpoint write; a
    failure during compute or the write loses the segment, then a restart (which may itself fail)
    reloads the last checkpoint. When ``causes`` is given each failure is labelled by sampling its
    root-cause mix (the Llama 3 table).
    """
    work = require_number(work_seconds, "work_seconds", 0, lo_open=True)
    tau = require_number(interval_seconds, "interval_seconds", 0, lo_open=True)
    d, m = _check(checkpoint_seconds, mtbf_seconds)
    r = require_number(restart_seconds, "restart_seconds", 0)
    rng = np.random.default_rng(require_int(seed, "seed", 0))
    max_failures = require_int(max_failures, "max_failures", 1)
    names = [c.cause for c in causes.causes] if causes else ["failure"]
    probs = causes.probabilities() if causes else np.array([1.0])
    spans: list[Span] = []
    failures: list[Failure] = []
    t = done = lost = ck_total = rs_total = 0.0
    next_fail = rng.exponential(m)
    while done < work - 1e-9:
        seg = min(tau, work - done)
        if next_fail >= t + seg + d:                       # segment and its checkpoint complete
            spans += [Span("compute", t, t + seg), Span("checkpoint", t + seg, t + seg + d)]
            t += seg + d
            done += seg
            ck_total += d
            continue
        fail_at = next_fail
        during = "compute" if fail_at < t + seg else "checkpoint"
        spans.append(Span("lost", t, fail_at))
        lost += fail_at - t
        failures.append(Failure(fail_at, names[rng.choice(len(names), p=probs)], during))
        t = fail_at
        next_fail = t + rng.exponential(m)
        while next_fail < t + r:                           # the restart itself can be interrupted
            spans.append(Span("restart", t, next_fail))
            rs_total += next_fail - t
            failures.append(Failure(next_fail, names[rng.choice(len(names), p=probs)], "restart"))
            t = next_fail
            next_fail = t + rng.exponential(m)
        if r > 0:
            spans.append(Span("restart", t, t + r))
        rs_total += r
        t += r
        require(len(failures) <= max_failures, "interval_seconds",
                "the run makes no progress: failures outpace checkpoints", "a shorter interval or a larger MTBF")
    return RunResult(work_seconds=work, interval_seconds=tau, checkpoint_seconds=d, restart_seconds=r,
                     mtbf_seconds=m, spans=tuple(spans), failures=tuple(failures), wall_seconds=t,
                     lost_seconds=lost, checkpoint_total=ck_total, restart_total=rs_total)


def monte_carlo_goodput(intervals, work_seconds: float, checkpoint_seconds: float, restart_seconds: float,
                        mtbf_seconds: float, runs: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of goodput over ``runs`` simulated runs at each interval.

    Same renewal process as :func:`simulate_run`, sampled in closed form: a segment that needs
    ``s = τ + δ`` failure-free seconds succeeds on a try with probability ``p = e^{-s/M}``, so the
    failed tries of ``n`` equal segments are negative-binomial(n, p); each failed try costs a draw
    of the exponential truncated to ``[0, s)`` (inverse CDF) plus a restart that is retried while
    interrupted. The cost is O(runs × failures), not O(runs × segments × tries).
    """
    work = require_number(work_seconds, "work_seconds", 0, lo_open=True)
    d, m = _check(checkpoint_seconds, mtbf_seconds)
    r = require_number(restart_seconds, "restart_seconds", 0)
    runs = require_int(runs, "runs", 1, 100_000)
    taus = _each(intervals, "interval_seconds", require_number, 0, lo_open=True).astype(float)
    rng = np.random.default_rng(require_int(seed, "seed", 0))
    means, stds = [], []
    for tau in np.atleast_1d(taus).ravel():
        n_full = int(work // tau)
        rest = work - n_full * tau
        groups = [(n_full, tau + d)] + ([(1, rest + d)] if rest > 1e-9 else [])
        per_run = np.zeros(runs)
        for count, need in groups:
            if count == 0:
                continue
            p = math.exp(-need / m)
            require(p > 0 and runs * count * (1 - p) / p <= 5e6, "interval_seconds", "the run makes no progress",
                    "a shorter interval or larger MTBF")
            fails = rng.negative_binomial(count, p, runs)           # failed tries per run
            owner = np.repeat(np.arange(runs), fails)
            u = rng.random(owner.size)
            lost = -m * np.log1p(-u * -math.expm1(-need / m))        # Exp(M) truncated to [0, need)
            cost = lost + _restart_times(rng, owner.size, r, m)
            per_run += count * need + np.bincount(owner, weights=cost, minlength=runs)
        goodput = work / per_run
        means.append(goodput.mean())
        stds.append(goodput.std())
    return np.array(means), np.array(stds)


def _restart_times(rng: np.random.Generator, n: int, r: float, m: float) -> np.ndarray:
    """Wall time of ``n`` restarts of length ``r`` each retried after interrupting failures."""
    total = np.zeros(n)
    if r <= 0 or n == 0:
        return total
    pending = np.arange(n)
    while pending.size:
        y = rng.exponential(m, pending.size)
        ok = y >= r
        total[pending[ok]] += r
        total[pending[~ok]] += y[~ok]
        pending = pending[~ok]
    return total


@dataclass(frozen=True)
class ScalePoint:
    """Goodput at the Daly-optimal interval for one cluster size."""

    n_gpus: int
    job_mtbf_seconds: float
    interruptions_per_day: float
    daly_seconds: float
    goodput: float


def goodput_vs_cluster(sizes, gpu_mtbf_seconds: float, checkpoint_seconds: float,
                       restart_seconds: float) -> list[ScalePoint]:
    """Interruptions/day and best achievable goodput as the cluster grows (checkpoint cost fixed)."""
    out = []
    for n in np.atleast_1d(_each(sizes, "sizes", require_int, 1)).ravel():
        n = int(n)
        m = job_mtbf(n, gpu_mtbf_seconds)
        t = daly_interval(checkpoint_seconds, m)
        out.append(ScalePoint(n_gpus=n, job_mtbf_seconds=m, interruptions_per_day=DAY / m, daly_seconds=t,
                              goodput=expected_goodput(t, checkpoint_seconds, m, restart_seconds)))
    return out


def _each(values, field: str, check, lo: float, lo_open: bool = False) -> np.ndarray:
    """``check`` (require_int or require_number, bounded below by ``lo``) on a scalar or on every
    element of a sequence or array. A numeric numpy array that passes is checked in one vectorised
    pass (the goodput curve checks hundreds of intervals on every edit); anything else goes element
    by element (a list [1, True] would read as integers), so the error names the first bad value."""
    arr = values
    if isinstance(arr, np.ndarray) and arr.size and arr.dtype.kind in ("iu" if check is require_int else "iuf"):
        ok = np.isfinite(arr) & ((arr > lo) if lo_open else (arr >= lo))
        if check is require_int:
            ok &= arr <= 2**53
        if ok.all():
            return arr
    items = np.asarray(values, dtype=object)         # keeps str, None, bool … as they are, for the check to reject
    extra = {"lo_open": lo_open} if check is require_number else {}
    return np.array([check(v, field, lo, **extra) for v in items.flat]).reshape(items.shape)


def _check(checkpoint_seconds: float, mtbf_seconds: float) -> tuple[float, float]:
    d = require_number(checkpoint_seconds, "checkpoint_seconds", 0, lo_open=True)
    m = require_number(mtbf_seconds, "mtbf_seconds", 0, lo_open=True)
    return d, m


__all__ = ["DAY", "SPAN_KINDS", "young_interval", "daly_interval", "young_waste", "expected_goodput", "job_mtbf",
           "interruptions_per_day", "checkpoint_seconds", "llama3_interruptions", "Interruptions", "Cause",
           "simulate_run", "RunResult", "Span", "Failure", "monte_carlo_goodput", "goodput_vs_cluster",
           "ScalePoint"]
