"""What the training-at-scale view shows, computed in one place: the analytic study (throughput at an
assumed MFU, job MTBF, Young/Daly optima, Daly's expected goodput over a grid of intervals, the
cluster-size sweep) and the failure simulation (Monte Carlo goodput probes around Daly's optimum and
one event-level run with Llama 3's root causes).

Sources: Chowdhery et al. 2022 (PaLM, App. B) for MFU; Young 1974 and Daly 2006 for the checkpoint
interval and expected goodput; Dubey et al. 2024 (Llama 3, §3.3.4, Tables 4 and 5) for the
interruption data and the reference MFU (see :mod:`engines.scale.mfu`, :mod:`engines.scale.reliability`
and ``assets/lessons/scale.md``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engines.core.errors import Cancelled, require_number
from engines.scale.mfu import TrainingThroughput, training_throughput
from engines.scale.params import Params
from engines.scale.reliability import (Interruptions, RunResult, ScalePoint, daly_interval, expected_goodput,
                                       goodput_vs_cluster, interruptions_per_day, job_mtbf, llama3_interruptions,
                                       monte_carlo_goodput, simulate_run, young_interval)

CLUSTER_SIZES = np.unique(np.geomspace(8, 131072, 40).astype(int))
"""GPU counts of the cluster-size sweep: 8 to 128K, 40 log-spaced sizes."""
MFU_REFERENCES = ((38.0, "Llama 3 405B 38–43%"), (46.2, "PaLM 46.2%"))
"""Published MFU (%): Llama 3 405B on 8K–16K H100s (Dubey et al. 2024, Table 4), PaLM 540B (Chowdhery et al. 2022)."""
GRID_POINTS = 160           # intervals on the expected-goodput curve
GRID_SPAN = 10.0            # the curve spans Daly's interval ÷ 10 … × 10, widened to whole decades
PROBE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)   # Monte Carlo probes, as multiples of Daly's interval
MC_RUNS = 60                # simulated runs per probe
WORK_MTBFS = 20             # each simulated run does this many job MTBFs of work
RUN_SEED = 7                # the one event-level run shown on the timeline

ProgressFn = Callable[[float, str], None]
CancelledFn = Callable[[], bool]


def decades(lo: float, hi: float) -> tuple[float, float]:
    """``lo`` and ``hi`` widened to whole powers of ten."""
    lo = require_number(lo, "lo", 0, lo_open=True)
    hi = require_number(hi, "hi", lo)
    return 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi))


@dataclass(frozen=True, eq=False)
class ClusterSweep:
    """Interruptions per day and the best goodput (at Daly's interval) for each cluster size, at fixed δ and R."""

    checkpoint_seconds: float
    restart_seconds: float
    gpu_mtbf_seconds: float
    points: tuple[ScalePoint, ...]

    @property
    def n_gpus(self) -> np.ndarray:
        return np.array([p.n_gpus for p in self.points])

    @property
    def interruptions_per_day(self) -> np.ndarray:
        return np.array([p.interruptions_per_day for p in self.points])

    @property
    def largest(self) -> ScalePoint:
        return self.points[-1]


@lru_cache(maxsize=16)
def cluster_sweep(checkpoint_seconds: float, restart_seconds: float, gpu_mtbf_seconds: float) -> ClusterSweep:
    """:func:`goodput_vs_cluster` over :data:`CLUSTER_SIZES`; cached, so the same δ and R give the same
    object (a GPU-count edit leaves the sweep, and a chart drawn from it, untouched)."""
    points = goodput_vs_cluster(CLUSTER_SIZES, gpu_mtbf_seconds, checkpoint_seconds, restart_seconds)
    return ClusterSweep(checkpoint_seconds, restart_seconds, gpu_mtbf_seconds, tuple(points))


@dataclass(frozen=True, eq=False)
class CheckpointStudy:
    """One cluster's failure arithmetic: job MTBF, the two optima, and Daly's expected goodput around them."""

    n_gpus: int
    gpu_mtbf_seconds: float
    mtbf_seconds: float             # job MTBF = per-GPU MTBF / N
    checkpoint_seconds: float       # δ
    restart_seconds: float          # R
    young_seconds: float            # √(2δM)
    daly_seconds: float
    intervals_seconds: np.ndarray   # the goodput curve's grid (whole decades around Daly's interval)
    goodput: np.ndarray             # Daly's expected goodput at each interval
    best_goodput: float             # the curve's maximum
    goodput_at_daly: float          # expected goodput at Daly's interval
    interruptions_per_day: float
    probes_seconds: np.ndarray      # intervals the Monte Carlo checks (PROBE_FACTORS × Daly's)
    cluster: ClusterSweep

    @property
    def failure_key(self) -> tuple[float, float, float]:
        """What the failure simulation depends on: (job MTBF, δ, R)."""
        return self.mtbf_seconds, self.checkpoint_seconds, self.restart_seconds


@dataclass(frozen=True, eq=False)
class ScaleAnalysis:
    """The analytic half of the view (a few ms: computed on every edit)."""

    throughput: TrainingThroughput
    checkpoint: CheckpointStudy


def checkpoint_study(n_gpus: int, checkpoint_seconds: float, restart_seconds: float,
                     interruptions: Interruptions | None = None) -> CheckpointStudy:
    """Job MTBF from Llama 3's per-GPU rate, Young's and Daly's intervals and Daly's expected goodput."""
    data = interruptions or llama3_interruptions()
    gpu_mtbf = data.gpu_mtbf_seconds
    m = job_mtbf(n_gpus, gpu_mtbf)
    d = require_number(checkpoint_seconds, "checkpoint_seconds", 0, lo_open=True)
    r = require_number(restart_seconds, "restart_seconds", 0)
    young, daly = young_interval(d, m), daly_interval(d, m)
    # whole decades: the axes stay put on small edits and the optimum visibly moves along them
    grid = np.geomspace(*decades(daly / GRID_SPAN, daly * GRID_SPAN), GRID_POINTS)
    exact = expected_goodput(grid, d, m, r)
    return CheckpointStudy(
        n_gpus=int(n_gpus), gpu_mtbf_seconds=gpu_mtbf, mtbf_seconds=m, checkpoint_seconds=d, restart_seconds=r,
        young_seconds=young, daly_seconds=daly, intervals_seconds=grid, goodput=exact, best_goodput=float(exact.max()),
        goodput_at_daly=float(expected_goodput(daly, d, m, r)),
        interruptions_per_day=float(interruptions_per_day(n_gpus, gpu_mtbf)),
        probes_seconds=np.array([f * daly for f in PROBE_FACTORS]), cluster=cluster_sweep(d, r, gpu_mtbf))


def scale_analysis(scenario, params: Params, interruptions: Interruptions | None = None) -> ScaleAnalysis:
    """Throughput at the assumed MFU and the checkpoint study for the scenario's GPU count."""
    return ScaleAnalysis(throughput=training_throughput(scenario, params.mfu),
                         checkpoint=checkpoint_study(scenario.n_gpus, params.checkpoint_seconds,
                                                     params.restart_seconds, interruptions))


@dataclass(frozen=True, eq=False)
class FailureSimulation:
    """Monte Carlo goodput (mean, sd over MC_RUNS runs) at each probe interval, and one simulated run."""

    mtbf_seconds: float
    checkpoint_seconds: float
    restart_seconds: float
    probes_seconds: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    run: RunResult

    @property
    def key(self) -> tuple[float, float, float]:
        return self.mtbf_seconds, self.checkpoint_seconds, self.restart_seconds


def simulate_failures(study: CheckpointStudy, interruptions: Interruptions | None = None,
                      progress: ProgressFn | None = None, cancelled: CancelledFn | None = None) -> FailureSimulation:
    """The study's Monte Carlo check and one run at Daly's interval (causes from Llama 3 Table 5).

    Each run does WORK_MTBFS job MTBFs of work. One probe at a time, so a cancel is prompt:
    raises :class:`engines.core.errors.Cancelled` when ``cancelled()`` turns true.
    """
    progress = progress or (lambda _f, _t: None)
    cancelled = cancelled or (lambda: False)
    causes = interruptions or llama3_interruptions()
    m, d, r = study.failure_key
    work = WORK_MTBFS * m
    means, stds = [], []
    for i, tau in enumerate(study.probes_seconds):
        if cancelled():
            raise Cancelled()
        progress(0.1 + 0.15 * i, "Monte Carlo goodput")
        mean, std = monte_carlo_goodput([tau], work, d, r, m, runs=MC_RUNS, seed=1 + i)
        means.append(mean[0])
        stds.append(std[0])
    progress(0.85, "simulating one run")
    run = simulate_run(work, study.daly_seconds, d, r, m, seed=RUN_SEED, causes=causes)
    run.kind_arrays  # noqa: B018 (build the per-kind arrays here, in the caller's worker thread)
    return FailureSimulation(mtbf_seconds=m, checkpoint_seconds=d, restart_seconds=r,
                             probes_seconds=study.probes_seconds, mean=np.array(means), std=np.array(stds), run=run)


__all__ = ["CLUSTER_SIZES", "MFU_REFERENCES", "GRID_POINTS", "PROBE_FACTORS", "MC_RUNS", "WORK_MTBFS", "RUN_SEED",
           "decades", "ClusterSweep", "cluster_sweep", "CheckpointStudy", "checkpoint_study", "ScaleAnalysis",
           "scale_analysis", "FailureSimulation", "simulate_failures"]
