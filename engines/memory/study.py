"""What the training-memory views show: ``memory_study`` (every strategy's breakdown, the sweep over
1…1024 GPUs and the DP → ZeRO-3 sharding timeline for one scenario and one set of knobs, in one
call), ``step_time_study`` and ``throughput_study`` (the step-time model beside the memory verdict)
and ``memory_export`` (the JSON export)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engines.core.errors import ValidationError
from engines.core.hardware import gpu as gpu_spec
from engines.memory.analytic import (CATEGORIES, SHARD_ORDER, STAGE_OF, STRATEGIES, MemoryBreakdown, MemorySweep,
                                     Options, ZeroFrame, breakdown, sweep, totals_at, zero_timeline)
from engines.memory.labels import CATEGORY_LABELS
from engines.core.scenario import Scenario
from engines.memory.step_time import StepTime, ThroughputSweep, TimeKnobs, TimeVerdict, step_time, step_times, \
    throughput_sweep, time_verdict

SWEEP_MAX_GPUS = 1024
"""The sweep spans 1…1024 GPUs, whatever the scenario's own count."""
FRAME_CATEGORIES = CATEGORIES
"""What the sharding animation stacks per GPU: every category, so its key frames are the bars' totals."""


@dataclass(frozen=True)
class ShardBlock:
    """One category of one GPU in a sharding frame: its bytes now and what it keeps.

    ``kept`` is the part the GPU keeps once the split ends (its own 1/N shard; nothing when the
    category is offloaded; all of it while the category is not being split), ``where`` where the
    category is headed ("GPU", "CPU" or "NVMe")."""

    category: str
    total: float
    kept: float
    split: float
    sharding: bool
    shard: int = 1
    where: str = "GPU"

    @property
    def label(self) -> str:
        """What the block is: "optimizer states 1/8", "… 1/8 → CPU" while it moves, "… 1/8 on CPU"."""
        text = CATEGORY_LABELS[self.category] + (f" 1/{self.shard}" if self.sharding else "")
        if self.where == "GPU":
            return text
        return f"{text} {'on' if self.split >= 1 or not self.sharding else '→'} {self.where}"


@dataclass(frozen=True)
class MemoryStudy:
    """Every strategy's per-GPU breakdown (``None`` where a strategy does not apply, e.g. hybrid
    sharding on part of a node), the GPU-count sweep and the sharding timeline."""

    scenario: Scenario
    options: Options
    strategies: tuple[str, ...]
    breakdowns: tuple[MemoryBreakdown | None, ...]
    sweep: MemorySweep
    frames: tuple[ZeroFrame, ...]
    chapters: tuple[tuple[int, str], ...]
    sweep_scenario: Scenario        # the scenario the sweep was computed for (its GPU count does not matter)

    @property
    def own(self) -> MemoryBreakdown:
        """The breakdown of the scenario's own strategy."""
        return self.breakdowns[self.strategies.index(self.scenario.strategy)]

    def by_strategy(self) -> dict[str, MemoryBreakdown | None]:
        return dict(zip(self.strategies, self.breakdowns))

    @property
    def offloads(self) -> bool:
        """The scenario offloads optimizer states or parameters (the offload rates matter)."""
        return self.scenario.offload_optimizer or self.scenario.offload_params

    @property
    def gpu_label(self) -> str:
        """The catalogue's name of the scenario's GPU (the verdict names it)."""
        return gpu_spec(self.scenario.gpu).label

    @property
    def default_frame(self) -> int:
        """The end of the scenario's own stage in the animation (FSDP ≈ ZeRO-3: the last frame)."""
        stage = STAGE_OF[self.scenario.strategy]
        if stage == 3:
            return len(self.frames) - 1
        return self.chapters[stage + 1][0] - 1

    def shard_blocks(self, index: int) -> tuple[ShardBlock, ...]:
        """Frame ``index`` per category: each GPU keeps what the frame's chapter leaves it of a
        category being split (its 1/N shard, or nothing when offloaded) while the rest fades out."""
        frame = self.frames[index]
        out = []
        for cat in FRAME_CATEGORIES:
            total = frame.bytes[cat]
            split = frame.split.get(cat, 0.0)
            sharding = cat in SHARD_ORDER and split > 0
            out.append(ShardBlock(cat, total, min(frame.kept.get(cat, total), total), split, sharding,
                                  frame.shard or frame.dp, frame.offloaded.get(cat, "GPU")))
        return tuple(out)

    def fits_at(self, strategy: str, n_gpus) -> np.ndarray:
        """Whether ``strategy`` fits in GPU memory at each GPU count (False where a count does not
        apply): the verdict the throughput chart draws, from the same bytes as the bars."""
        totals, _states = totals_at(self.scenario, strategy, n_gpus, self.options)
        return np.nan_to_num(totals, nan=np.inf) <= self.sweep.gpu_memory

    def table(self) -> list[dict]:
        """One flat row per strategy that applies (the CSV export)."""
        rows = []
        smallest = self.sweep.smallest_fit
        for s, b in zip(self.strategies, self.breakdowns):
            if b is None:
                continue
            rows.append({"strategy": s, **{f"{c}_GB": round(v / 1e9, 4) for c, v in b.categories().items()},
                         "total_GB": round(b.total / 1e9, 4), "fits": b.fits, "smallest_fitting_gpus": smallest.get(s),
                         "comm_GB_per_step": round(b.comm.total_bytes / 1e9, 4),
                         "comm_seconds": round(b.comm.seconds, 5), "cpu_offload_GB": round(b.cpu / 1e9, 4),
                         "nvme_offload_GB": round(b.nvme / 1e9, 4)})
        return rows

    def per_strategy(self) -> dict[str, dict]:
        """Categories, total, verdict and traffic of every strategy that applies (the JSON export)."""
        return {s: {**b.categories(), "total": b.total, "fits": b.fits, "comm_bytes": b.comm.total_bytes,
                    "comm_seconds": b.comm.seconds}
                for s, b in zip(self.strategies, self.breakdowns) if b is not None}


def memory_study(scenario: Scenario, options: Options | None = None,
                 previous: MemoryStudy | None = None) -> MemoryStudy:
    """Breakdowns, sweep and timeline for ``scenario``. The sweep does not depend on the GPU count:
    it is taken from ``previous`` when only the count (or nothing it reads) changed. Raises
    :class:`ValidationError` when the scenario's own strategy does not apply."""
    options = options or Options()
    own = breakdown(scenario, scenario.strategy, options)
    breakdowns = tuple(own if s == scenario.strategy else _try_breakdown(scenario, s, options) for s in STRATEGIES)
    sweep_scenario = dataclasses.replace(scenario, n_gpus=scenario.tp * scenario.pp)
    if previous is not None and (previous.sweep_scenario, previous.options) == (sweep_scenario, options):
        sw = previous.sweep
    else:
        sw = sweep(scenario, STRATEGIES, SWEEP_MAX_GPUS, options)
    frames, chapters = zero_timeline(scenario, options=options)
    return MemoryStudy(scenario, options, STRATEGIES, breakdowns, sw, tuple(frames), tuple(chapters), sweep_scenario)


@dataclass(frozen=True)
class StepTimeStudy:
    """Step time of every strategy that applies at the scenario's GPU count, whether each fits in
    memory (the bars' verdict), and the scenario's strategy set against the fastest one that fits."""

    strategy: str
    knobs: TimeKnobs
    scenario: Scenario
    shown: tuple[str, ...]                 # strategies with both a step time and a breakdown here
    times: tuple[StepTime, ...]            # one per ``shown``
    fits: tuple[bool, ...]                 # one per ``shown``
    verdict: TimeVerdict
    every: tuple[tuple[str, StepTime | None], ...] = ()   # every strategy's time (None: does not apply)

    @property
    def own(self) -> StepTime:
        return self.times[self.shown.index(self.strategy)]

    def by_strategy(self) -> dict[str, StepTime | None]:
        return dict(self.every)

    @property
    def own_fits(self) -> bool:
        return self.fits[self.shown.index(self.strategy)]


def step_time_study(study: MemoryStudy, knobs: TimeKnobs, previous: StepTimeStudy | None = None) -> StepTimeStudy:
    """:func:`step_times` of ``study``'s scenario, with the memory verdict of each strategy. The
    times are taken from ``previous`` when its scenario and knobs are the same."""
    sc = study.scenario
    if previous is not None and (previous.scenario, previous.knobs) == (sc, knobs):
        all_times = dict(previous.every)
    else:
        all_times = step_times(sc, knobs)
    breakdowns = study.by_strategy()
    shown = tuple(s for s in STRATEGIES if all_times.get(s) is not None and breakdowns.get(s) is not None)
    times = tuple(all_times[s] for s in shown)
    fits = tuple(breakdowns[s].fits for s in shown)
    verdict = time_verdict(dict(zip(shown, times)), dict(zip(shown, fits)), sc.strategy)
    return StepTimeStudy(sc.strategy, knobs, sc, shown, times, fits, verdict, tuple(all_times.items()))


@dataclass(frozen=True)
class ThroughputStudy:
    """Tokens/s per GPU of every strategy over GPU counts, with where each fits in memory."""

    strategy: str
    n_gpus: int                            # the scenario's own count (the chart's marker)
    sweep: ThroughputSweep
    fits: np.ndarray                       # bool, strategies × counts: the bars' bytes at every count
    key: tuple                             # what the sweep was computed for (the GPU count does not matter)

    @property
    def per_gpu(self) -> np.ndarray:
        return self.sweep.per_gpu


def throughput_study(study: MemoryStudy, knobs: TimeKnobs, previous: ThroughputStudy | None = None) -> ThroughputStudy:
    """:func:`throughput_sweep` with :meth:`MemoryStudy.fits_at` per strategy. The sweep is taken
    from ``previous`` when only the GPU count changed."""
    sc = study.scenario
    key = (study.sweep_scenario, study.options, knobs)
    if previous is not None and previous.key == key:
        return dataclasses.replace(previous, n_gpus=sc.n_gpus)
    sw = throughput_sweep(sc, knobs)
    fits = np.array([study.fits_at(s, sw.n_gpus) for s in sw.strategies])
    return ThroughputStudy(sc.strategy, sc.n_gpus, sw, fits, key)


def memory_export(study: MemoryStudy, knobs: TimeKnobs, measured=None, fsdp=None, step_measured=None,
                  check=None) -> dict | None:
    """The JSON export of one memory view: the own strategy's breakdown, every strategy's totals,
    the step time, whatever real runs were measured and the PyTorch check's comparison table when
    ``check`` is of this scenario (None where the own strategy does not apply)."""
    b = study.by_strategy().get(study.scenario.strategy)
    if b is None:
        return None
    out = {"breakdown": dataclasses.asdict(b), "total": b.total, "fits": b.fits,
           "per_strategy": study.per_strategy(), "smallest_fit": study.sweep.smallest_fit}
    if measured is not None:
        out["measured"] = {"measured": measured.measured, "analytic": measured.analytic}
    if fsdp is not None:
        out["fsdp"] = dataclasses.asdict(fsdp)
    own = step_time(study.scenario, None, knobs)
    if own is not None:
        out["step_time"] = {**dataclasses.asdict(own), "total": own.total, "tokens_per_second": own.tokens_per_second,
                            "mfu": own.mfu}
    if step_measured is not None:
        out["step_measured"] = dataclasses.asdict(step_measured)
    if check_applies(study, check):
        out["pytorch_check"] = check.export()
    return out


def check_applies(study: MemoryStudy, check) -> bool:
    """Whether ``check`` (the PyTorch check; None: not run) is of the scenario ``study`` shows: an
    export carries no comparison of another scenario."""
    return check is not None and check.fake.scenario == study.scenario


def memory_table(study: MemoryStudy, check=None) -> list[dict]:
    """The CSV export: one row per strategy, then the PyTorch check's comparison rows when it is of
    this scenario."""
    return study.table() + (check.table() if check_applies(study, check) else [])


def _try_breakdown(scenario: Scenario, strategy: str, options: Options) -> MemoryBreakdown | None:
    try:
        return breakdown(scenario, strategy, options)
    except ValidationError:
        return None
