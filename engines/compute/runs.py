"""From FLOPs to GPU-hours and days, the MFU a logged run implies, and the runs published so far.

GPU-hours = C / (peak × MFU × 3600); days = C / (n_GPUs × peak × MFU) / 86 400; MFU implied by
logged hours = C / (GPU-hours × 3600 × peak) (PaLM, Chowdhery et al. 2022, App. B, defines MFU as
model FLOPs delivered over peak). Peaks are the dense datasheet figures in ``assets/presets/gpus.json``.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.compute.data import Run, load_table
from engines.compute.scaling import chinchilla_loss, chinchilla_optimum, training_flops
from engines.core.errors import require_int, require_number
from engines.core.hardware import GPU, gpu as gpu_spec

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0


def _peak(gpu, precision: str) -> float:
    card = gpu if isinstance(gpu, GPU) else gpu_spec(gpu)
    return card.peak_flops(precision)


def gpu_hours(C: float, gpu, precision: str = "bf16", mfu: float = 0.4) -> float:
    """Accelerator-hours to deliver C FLOP on ``gpu`` (a catalogue key or :class:`GPU`) at ``mfu`` of its dense peak."""
    C = require_number(C, "C", 0.0, None, lo_open=True)
    mfu = require_number(mfu, "mfu", 0.0, 1.0, lo_open=True)
    return C / (_peak(gpu, precision) * mfu * SECONDS_PER_HOUR)


def implied_mfu(C: float, gpu_hours: float, peak_flops: float) -> float:
    """The average MFU a run's logged ``gpu_hours`` imply for C FLOP at ``peak_flops`` per GPU."""
    C = require_number(C, "C", 0.0, None, lo_open=True)
    hours = require_number(gpu_hours, "gpu_hours", 0.0, None, lo_open=True)
    peak = require_number(peak_flops, "peak_flops", 0.0, None, lo_open=True)
    return C / (hours * SECONDS_PER_HOUR * peak)


def train_days(C: float, n_gpus: int, peak_flops: float, mfu: float) -> float:
    """Wall-clock days for C FLOP on ``n_gpus`` GPUs of ``peak_flops`` each at ``mfu`` (no failures, no restarts)."""
    C = require_number(C, "C", 0.0, None, lo_open=True)
    n = require_int(n_gpus, "n_gpus", 1)
    peak = require_number(peak_flops, "peak_flops", 0.0, None, lo_open=True)
    mfu = require_number(mfu, "mfu", 0.0, 1.0, lo_open=True)
    return C / (n * peak * mfu) / SECONDS_PER_DAY


@dataclass(frozen=True)
class RunPoint:
    """One training run placed on the scaling chart: its size, data, compute and what a fit predicts."""

    label: str
    N: float
    D: float
    flop_6nd: float
    reported_flop: float | None
    gpu_hours: float | None       # logged (published) or computed at the scenario's MFU
    implied_mfu: float | None     # from logged hours, where published
    predicted_loss: float
    optimum_N: float              # the fit's compute-optimal size at this run's compute
    optimum_D: float
    source: str
    short: str = ""
    confidence: str = ""

    @property
    def flop(self) -> float:
        """The compute the source reports, else 6ND."""
        return self.reported_flop if self.reported_flop is not None else self.flop_6nd

    @property
    def tokens_per_param(self) -> float:
        return self.D / self.N


def place_run(run: Run, fit: str = "hoffmann") -> RunPoint:
    """A published run with its 6ND, the MFU its logged hours imply (on its GPU's bf16 peak) and the fit's view of it."""
    c6 = training_flops(run.N, run.D)
    flop = run.reported_flop if run.reported_flop is not None else c6
    mfu = implied_mfu(flop, run.gpu_hours, _peak(run.gpu, "bf16")) if run.gpu_hours and run.gpu else None
    n_opt, d_opt = chinchilla_optimum(flop, fit)
    return RunPoint(run.label, run.N, run.D, c6, run.reported_flop, run.gpu_hours, mfu,
                    chinchilla_loss(run.N, run.D, fit), n_opt, d_opt, run.citation, run.short or run.label,
                    run.confidence)


def published_runs(fit: str = "hoffmann") -> tuple[RunPoint, ...]:
    """Every row of ``assets/compute/runs.json`` placed with :func:`place_run`."""
    return tuple(place_run(r, fit) for r in load_table("runs.json")["rows"])


@dataclass(frozen=True)
class ScenarioRun:
    """The scenario's model trained on its token budget: compute, GPU-hours and days at an MFU."""

    point: RunPoint
    gpu: str
    n_gpus: int
    mfu: float
    peak_flops: float
    gpu_hours: float
    days: float


def scenario_run(scenario, tokens: float, mfu: float, fit: str = "hoffmann") -> ScenarioRun:
    """C = 6·N·D for the scenario's model (all parameters, as Chinchilla counts them) on ``tokens``,
    its GPU-hours on the scenario's GPU and the days on its ``n_gpus`` at ``mfu``."""
    n = float(scenario.arch.param_count())
    c = training_flops(n, tokens)
    peak = _peak(scenario.gpu, "bf16")
    hours = gpu_hours(c, scenario.gpu, "bf16", mfu)
    n_opt, d_opt = chinchilla_optimum(c, fit)
    point = RunPoint(f"scenario: {scenario.arch.label}", n,
                     float(tokens), c, None, hours, None, chinchilla_loss(n, tokens, fit), n_opt, d_opt,
                     "the scenario's model and your token budget; C = 6ND (Kaplan 2020 §2.1)")
    return ScenarioRun(point, scenario.gpu, scenario.n_gpus, mfu, peak, hours,
                       train_days(c, scenario.n_gpus, peak, mfu))
