"""Reading a set of evaluations side by side: the panel's arithmetic, kept out of Qt.

* Error compounding: if each generated token differs from the baseline's with probability p, independently
  along the text, a continuation is still identical after t tokens with probability (1 − p)^t (a
  geometric survival law). p is the teacher-forced top-1 flip rate of the configuration.
* Task accuracy intervals: Wilson score interval at 95 % (Wilson 1927, JASA 22:209; recommended for small
  counts by Brown, Cai & DasGupta 2001, Statist. Sci. 16:101).
* Ranking: each metric ranks the configurations (1 = closest to the baseline, ties share a rank). A
  configuration *disagrees* under a metric when it swaps order with ``DISAGREE`` or more other configurations
  compared with perplexity (strictly: a tie under either metric is no swap, so configurations that all
  diverged completely do not count as disagreeing).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from engines.core.errors import require
from engines.qeval.config import CALIB_DOMAINS, QuantConfig
from engines.qeval.result import Evaluation

Z95 = 1.959963984540054
DISAGREE = 2


def survival_prediction(p: float, lengths) -> list[float]:
    """(1 − p)^t for each t in ``lengths``: the survival a per-token difference rate p predicts."""
    require(0.0 <= p <= 1.0, "p", f"{p!r} is not a probability", "0 … 1")
    return [(1.0 - p) ** t for t in lengths]


def wilson(k: float, n: int) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion k/n (k may be a share times n)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def ppl_change(ev: Evaluation, base: Evaluation) -> float:
    """Relative perplexity change against the baseline (0.03 = +3 %)."""
    return ev.perplexity / base.perplexity - 1.0


def mean_task_accuracy(ev: Evaluation) -> float:
    vals = list(ev.task_accuracy.values())
    return sum(vals) / len(vals) if vals else float("nan")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    value: Callable[[Evaluation, Evaluation], float]
    higher_is_better: bool


def _survival_at(n: int) -> Callable[[Evaluation, Evaluation], float]:
    return lambda e, _b: e.survival_at(n)


METRICS = (
    Metric("ppl", "Perplexity change", ppl_change, False),
    Metric("kl", "Mean KL", lambda e, _b: e.mean_kl, False),
    Metric("flips", "Top-1 flips", lambda e, _b: e.flip_rate, False),
    Metric("survival32", "Identical through 32 tokens", _survival_at(32), True),
    Metric("survival128", "Identical through 128 tokens", _survival_at(128), True),
    Metric("tasks", "Mean task accuracy", lambda e, _b: mean_task_accuracy(e), True),
)


@dataclass(frozen=True)
class RankRow:
    label: str
    config: QuantConfig
    values: dict[str, float]
    ranks: dict[str, int]
    disagrees: tuple[str, ...]       # metrics whose rank is DISAGREE or more from the perplexity rank


def _ranks(values: list[float], higher_is_better: bool) -> list[int]:
    """Competition ranks (1 = best; ties share the best rank), NaN last."""
    key = [(-v if higher_is_better else v) if not math.isnan(v) else math.inf for v in values]
    return [1 + sum(1 for other in key if other < k - 1e-12) for k in key]


def ranking(evaluations, base: Evaluation) -> tuple[RankRow, ...]:
    """Rank every configuration under every metric; rows ordered by the perplexity rank."""
    evs = list(evaluations)
    values = {m.key: [m.value(e, base) for e in evs] for m in METRICS}
    ranks = {m.key: _ranks(values[m.key], m.higher_is_better) for m in METRICS}
    rows = []
    for i, e in enumerate(evs):
        r = {k: ranks[k][i] for k in ranks}
        rows.append(RankRow(label=e.config.label(), config=e.config, values={k: values[k][i] for k in values},
                            ranks=r, disagrees=tuple(k for k in r if k != "ppl" and _swaps(ranks, k, i) >= DISAGREE)))
    return tuple(sorted(rows, key=lambda row: (row.ranks["ppl"], row.label)))


def _swaps(ranks: dict[str, list[int]], key: str, i: int) -> int:
    """How many configurations perplexity and metric ``key`` order strictly oppositely against ``i``."""
    p, m = ranks["ppl"], ranks[key]
    return sum(1 for j in range(len(p)) if (p[i] - p[j]) * (m[i] - m[j]) < 0)


def find(evaluations, config: QuantConfig) -> Evaluation | None:
    """The evaluation of ``config`` (compared in canonical form), if there is one."""
    want = config.canonical()
    return next((e for e in evaluations if e.config.canonical() == want), None)


@dataclass(frozen=True)
class CalibrationRow:
    """A calibrated (GPTQ/AWQ) configuration's perplexity on each evaluation domain."""

    label: str
    method: str
    calib_domain: str
    calib_tokens: int
    by_domain: dict[str, float]
    change_by_domain: dict[str, float]


def calibration_rows(evaluations, base: Evaluation) -> tuple[CalibrationRow, ...]:
    """Calibrated (GPTQ/AWQ) configurations beside plain RTN at the same bits and groups.

    Ordered RTN, GPTQ, AWQ, then by calibration text and size, so neighbouring rows differ in one thing."""
    methods, domains = ("rtn", "gptq", "awq"), CALIB_DOMAINS
    evs = sorted((e for e in evaluations if e.config.quantizes_weights and e.config.method in methods),
                 key=lambda e: (e.config.weight_bits, e.config.group_size or 0, methods.index(e.config.method),
                                domains.index(e.config.calib_domain) if e.config.calib_domain in domains else 9,
                                e.config.calib_tokens))
    shapes = {(e.config.weight_bits, e.config.group_size) for e in evs if e.config.calibrated}
    rows = []
    for e in evs:
        c = e.config
        if (c.weight_bits, c.group_size) not in shapes:
            continue
        rows.append(CalibrationRow(label=c.label(), method=c.method, calib_domain=c.calib_domain if c.calibrated else "—",
                                   calib_tokens=c.calib_tokens if c.calibrated else 0,
                                   by_domain=dict(e.perplexity_by_domain),
                                   change_by_domain={d: v / base.perplexity_by_domain[d] - 1
                                                     for d, v in e.perplexity_by_domain.items()
                                                     if d in base.perplexity_by_domain}))
    return tuple(rows)


@dataclass(frozen=True)
class ShownRow:
    """One row of the comparison: a configuration, its evaluation if measured (and where), and its readings."""

    config: QuantConfig
    evaluation: Evaluation | None
    where: str
    ppl_change: float            # against the baseline; NaN when either is not measured
    mean_tasks: float
    looks_fine_differs: bool     # perplexity within LOOKS_FINE while most 128-token outputs differ


@dataclass(frozen=True)
class TaskCell:
    """A task's exact-match accuracy with its 95 % Wilson interval over ``items`` items."""

    accuracy: float
    low: float
    high: float
    items: int


@dataclass(frozen=True)
class SurvivalCurve:
    """Measured survival at ``lengths`` beside the (1 − p)^t prediction from the flip rate p."""

    evaluation: Evaluation
    lengths: tuple[int, ...]
    measured: tuple[float, ...]
    predicted: tuple[float, ...]


@dataclass(frozen=True)
class Comparison:
    """Every reading the comparison tabs show, from one list of (configuration, evaluation, where)."""

    rows: tuple[ShownRow, ...]
    baseline: Evaluation | None
    floor: Evaluation | None                       # bf16 rounding: the noise floor
    tasks: tuple[dict[str, TaskCell], ...]         # per measured evaluation, in row order
    ranking: tuple[RankRow, ...]
    calibration: tuple[CalibrationRow, ...]

    @property
    def evaluations(self) -> tuple[Evaluation, ...]:
        return tuple(r.evaluation for r in self.rows if r.evaluation is not None)


LOOKS_FINE = 0.02


def baseline_of(rows) -> Evaluation | None:
    """The measured full-precision baseline among ``rows`` (ShownRow), if any."""
    return next((r.evaluation for r in rows if r.evaluation is not None and r.config.canonical() == QuantConfig()), None)


def floor_of(rows) -> Evaluation | None:
    """The measured bf16-rounding configuration among ``rows``: differences below it are noise."""
    return next((r.evaluation for r in rows if r.evaluation is not None and r.config.method == "bf16"), None)


def task_cells(ev: Evaluation) -> dict[str, TaskCell]:
    out = {}
    for k, acc in ev.task_accuracy.items():
        n = ev.task_items.get(k, 0)
        lo, hi = wilson(acc * n, n)
        out[k] = TaskCell(acc, lo, hi, n)
    return out


def shown_rows(configs, lookup: Callable[[QuantConfig], tuple[Evaluation | None, str]]) -> tuple[ShownRow, ...]:
    """A ShownRow per configuration, ``lookup(config)`` giving (evaluation or None, where)."""
    found = [(c, *lookup(c)) for c in configs]
    base = next((e for c, e, _w in found if e is not None and c.canonical() == QuantConfig()), None)
    rows = []
    for c, e, where in found:
        change = ppl_change(e, base) if e is not None and base is not None else float("nan")
        rows.append(ShownRow(c, e, where, change, mean_task_accuracy(e) if e is not None else float("nan"),
                             e is not None and abs(change) < LOOKS_FINE and e.survival_at(128) < 0.5))
    return tuple(rows)


def comparison(configs, lookup: Callable[[QuantConfig], tuple[Evaluation | None, str]]) -> Comparison:
    """The comparison study: rows, baseline, noise floor, task intervals, ranking and calibration rows."""
    rows = shown_rows(configs, lookup)
    base = baseline_of(rows)
    evs = [r.evaluation for r in rows if r.evaluation is not None]
    return Comparison(rows=rows, baseline=base, floor=floor_of(rows), tasks=tuple(task_cells(e) for e in evs),
                      ranking=ranking(evs, base) if base is not None and evs else (),
                      calibration=calibration_rows(evs, base) if base is not None else ())


def survival_curve(ev: Evaluation | None) -> SurvivalCurve | None:
    """The measured survival of ``ev`` and the geometric prediction from its flip rate."""
    if ev is None:
        return None
    ns = tuple(sorted(ev.survival))
    return SurvivalCurve(ev, ns, tuple(ev.survival[n] for n in ns), tuple(survival_prediction(ev.flip_rate, ns)))


def measure_all(configs, budget: str = "quick", device: str = "cpu", name: str = "smollm2",
                progress: Callable[[float, str], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> tuple[Evaluation, ...]:
    """Load the model once (kept for the next call) and evaluate each configuration, baseline first."""
    from engines.qeval import evaluate, load

    configs = [QuantConfig()] + [c for c in configs if c.canonical() != QuantConfig()]
    outer = progress or (lambda f, t="": None)
    outer(0.0, "loading SmolLM2-135M")
    key = (name, device)
    if key not in _MODELS:
        _MODELS.clear()                      # one model in memory at a time (≈1 GB in float32)
        _MODELS[key] = load(name, device)
    lm = _MODELS[key]
    out = []
    for i, cfg in enumerate(configs):
        label = cfg.label()
        out.append(evaluate(lm, cfg, budget,
                            lambda f, t="", i=i, label=label: outer((i + f) / len(configs), f"{label}: {t}"),
                            cancelled))
    return tuple(out)


_MODELS: dict = {}
