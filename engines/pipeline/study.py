"""What the pipeline panel shows, computed: frozen results the panel only draws.

* :func:`compare_schedules` – both sides' schedules simulated with the backward split into I and W,
  and the published bubble formulas beside each (an invalid side carries its reason instead).
* :func:`run_executed` – one schedule run on real torch, its timelines converted to milliseconds.
* :func:`tp_study` – the tensor-parallel steps of one block for a scenario, with collective counts.
* :func:`layout_study` – the DP × TP × PP rank grid and per-stage memory for a scenario.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from engines.core.errors import Cancelled, ValidationError
from engines.pipeline.layout import COLLECTIVES, Layout3D, TPStep, collective_counts, layout_from_scenario, \
    tp_layer_steps
from engines.pipeline.params import Params
from engines.pipeline.schedules import BubbleFormula, Simulation, TimedOp, bubble_formulas, check_layers, \
    schedule, simulate

Progress = Callable[[float, str], None]
CancelledFn = Callable[[], bool]


def chunks_for(kind: str, v: int) -> int:
    """Model chunks per rank: v for interleaving, 2 for the V-shaped ZB-V, else 1."""
    return {"interleaved-1f1b": v, "zb-v": 2}.get(kind, 1)


def backward_split(t_b: float, w_share_pct: float) -> tuple[float, float]:
    """(T_I, T_W): the full backward ``t_b`` split into its input- and weight-gradient parts."""
    w = w_share_pct / 100.0
    return t_b * (1 - w), t_b * w


@dataclass(frozen=True)
class Costs:
    """Per-rank stage costs (time units): forward, full backward, its I and W parts, p2p latency."""

    t_f: float
    t_b: float
    t_i: float
    t_w: float
    t_comm: float

    @classmethod
    def of(cls, params: Params) -> "Costs":
        t_i, t_w = backward_split(params.t_b, params.w_share_pct)
        return cls(params.t_f, params.t_b, t_i, t_w, params.t_comm)


@dataclass(frozen=True)
class ScheduleRequest:
    """Everything the two schedules depend on: equal requests give equal results."""

    kinds: tuple[str, str]
    p: int
    m: int
    v: int
    layers: int
    costs: Costs

    def ops(self) -> int:
        """The larger side's action count p·m·chunks (how long a simulation takes)."""
        return self.p * self.m * max(chunks_for(k, self.v) for k in self.kinds)


DEMO_P, DEMO_M = 4, 8
"""The pipeline the panel shows when the scenario has none (PP = 1): the bubble is (4-1)/8 = 37.5 %."""


@dataclass(frozen=True)
class PipelineShape:
    """The p and m the schedules are drawn for: the scenario's own, or the demonstration values
    when the scenario has no pipeline (``demo``)."""

    p: int
    m: int
    demo: bool = False

    def scenario_changes(self, **override: int) -> dict[str, int]:
        """The scenario edit that makes this shape the scenario's own (``pp``/``grad_accum`` overrides)."""
        return {"pp": self.p, "grad_accum": self.m, **override}


def pipeline_shape(pp: int, grad_accum: int) -> PipelineShape:
    """The scenario's (pp, grad_accum) when it has a pipeline (PP > 1), else the demonstration
    (:data:`DEMO_P`, :data:`DEMO_M`): one stage has no bubble to show."""
    return PipelineShape(pp, grad_accum) if pp > 1 else PipelineShape(DEMO_P, DEMO_M, demo=True)


def schedule_request(params: Params, pp: int, grad_accum: int, layers: int) -> ScheduleRequest:
    """The request for ``params`` on a scenario with PP ``pp``, ``grad_accum`` micro-batches and ``layers``."""
    return ScheduleRequest((params.left_kind, params.right_kind), pp, grad_accum, params.v, layers, Costs.of(params))


@dataclass(frozen=True)
class SideResult:
    """One side: its kind and chunks, and either the simulation with its formulas or the error."""

    kind: str
    chunks: int
    sim: Simulation | None = None
    formulas: tuple[BubbleFormula, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class ScheduleComparison:
    request: ScheduleRequest
    sides: tuple[SideResult, ...]


def compare_schedules(req: ScheduleRequest, cancelled: CancelledFn = lambda: False) -> ScheduleComparison:
    """Schedule and simulate both sides (per-chunk costs are 1/chunks of the stage's); an invalid
    combination (layers, p, m, v) becomes that side's ``error``. Raises :class:`Cancelled`."""
    c = req.costs
    sides = []
    for kind in req.kinds:
        chunks = chunks_for(kind, req.v)
        try:
            check_layers(req.layers, req.p, chunks)
            sim = simulate(schedule(kind, req.p, req.m, chunks), t_f=c.t_f / chunks, t_b=c.t_b / chunks,
                           t_i=c.t_i / chunks, t_w=c.t_w / chunks, t_comm=c.t_comm)
            formulas = tuple(bubble_formulas(kind, req.p, req.m, chunks, t_f=c.t_f, t_b=c.t_b, t_w=c.t_w))
        except ValidationError as exc:
            sides.append(SideResult(kind, chunks, error=str(exc)))
            continue
        if cancelled():
            raise Cancelled()
        sides.append(SideResult(kind, chunks, sim, formulas))
    return ScheduleComparison(req, tuple(sides))


def timeline_marks(sim: Simulation) -> tuple[float | None, float | None]:
    """(start of the first backward, start of the last forward) of ``sim``: where warm-up ends and
    the drain begins."""
    b_start = min((o.start for o in sim.ops if o.action.op in ("B", "I")), default=None)
    f_end = max((o.start for o in sim.ops if o.action.op == "F"), default=None)
    return b_start, f_end


# --- executed mode ---------------------------------------------------------------------------


def in_ms(sim: Simulation) -> Simulation:
    """A copy of a measured Simulation with times in milliseconds, for readable axes."""
    return replace(sim, ops=[TimedOp(o.rank, o.action, o.start * 1e3, o.end * 1e3) for o in sim.ops],
                   makespan=sim.makespan * 1e3, busy=[b * 1e3 for b in sim.busy],
                   in_flight=[[(t * 1e3, c) for t, c in steps] for steps in sim.in_flight])


@dataclass(frozen=True)
class ExecRequest:
    kind: str
    p: int
    m: int
    v: int
    hidden: int
    device: str

    @classmethod
    def of(cls, params: Params, pp: int, grad_accum: int, device: str) -> "ExecRequest":
        """The left schedule of ``params`` on the scenario's p and m."""
        return cls(params.left_kind, pp, grad_accum, chunks_for(params.left_kind, params.v), params.hidden, device)


@dataclass(frozen=True)
class ExecutedView:
    """An executed run and its two timelines in milliseconds (measured, simulated from measured costs)."""

    run: object                   # engines.pipeline.execution.ExecutedRun
    measured_ms: Simulation
    simulated_ms: Simulation

    @property
    def t_max_ms(self) -> float:
        """The longer of the two makespans: one time range for both charts."""
        return max(self.measured_ms.makespan, self.simulated_ms.makespan)


def run_executed(req: ExecRequest, progress: Progress | None = None,
                 cancelled: CancelledFn | None = None) -> ExecutedView:
    """Run ``req``'s schedule on real torch (a small MLP, 2 layers per stage, batch 64). Raises
    :class:`ValidationError` for a schedule the executed mode cannot run, :class:`Cancelled` when
    ``cancelled()`` turns true."""
    from engines.pipeline.execution import ExecutionCancelled, execute

    try:
        run = execute(req.kind, req.p, req.m, req.v, device=req.device, hidden=req.hidden, layers_per_stage=2,
                      batch=64, progress=progress, cancelled=cancelled)
    except ExecutionCancelled:
        raise Cancelled() from None
    return ExecutedView(run, in_ms(run.measured), in_ms(run.simulated))


# --- tensor parallelism and the 3D layout ------------------------------------------------------


@dataclass(frozen=True)
class TPStudy:
    """The TP steps of one block for a scenario, and per phase how many of each collective."""

    steps: tuple[TPStep, ...]
    forward: tuple[tuple[str, int], ...]     # (collective, count) in COLLECTIVES order
    backward: tuple[tuple[str, int], ...]
    bytes_per_gpu: float                     # ring traffic per GPU per layer per micro-batch
    tp: int = 1                              # the scenario's t, sequence parallelism and model it is for
    sequence_parallel: bool = False
    model_label: str = ""


def tp_study(scenario) -> TPStudy:
    """Raises :class:`ValidationError` when the scenario's TP cannot split its model."""
    sc = scenario
    steps = tp_layer_steps(sc.tp, sc.sequence_parallel, sc.arch.hidden, sc.arch.ffn, sc.seq_len, sc.micro_batch,
                           4 if sc.precision == "fp32" else 2)
    counts = collective_counts(steps)
    per_phase = [tuple((c, counts[phase].get(c, 0)) for c in COLLECTIVES) for phase in ("forward", "backward")]
    return TPStudy(tuple(steps), per_phase[0], per_phase[1], sum(s.bytes_per_gpu for s in steps), sc.tp,
                   bool(sc.sequence_parallel), sc.arch.label)


MEMORY_PARTS = ("params", "grads", "optimizer", "activations", "buffers")
"""Per-stage memory parts, bottom to top; ``buffers`` includes the reserve."""


@dataclass(frozen=True)
class LayoutStudy:
    """The rank grid, links and per-stage memory (GB) of a scenario."""

    layout: Layout3D
    nvlink_gbps: float
    gpu_memory_gb: float
    stage_memory: tuple = ()                              # engines.memory StageMemory per stage
    parts_gb: tuple[tuple[float, ...], ...] = ()          # per MEMORY_PARTS entry: GB per stage
    memory_error: str | None = None
    internode_gbps: float = 0.0                           # the scenario's network bandwidth per GPU

    @property
    def totals_gb(self) -> tuple[float, ...]:
        return tuple(sum(col) for col in zip(*self.parts_gb)) if self.parts_gb else ()


def layout_study(scenario) -> LayoutStudy:
    from engines.core.hardware import gpu
    from engines.memory import per_stage_memory

    spec = gpu(scenario.gpu)
    layout = layout_from_scenario(scenario)
    try:
        stages = tuple(per_stage_memory(scenario))
    except ValidationError as exc:
        return LayoutStudy(layout, spec.nvlink_gbps, spec.memory_bytes / 1e9, memory_error=str(exc),
                           internode_gbps=scenario.internode_gbps)
    parts = tuple(tuple(getattr(st, attr) / 1e9 + (st.reserve / 1e9 if attr == "buffers" else 0) for st in stages)
                  for attr in MEMORY_PARTS)
    return LayoutStudy(layout, spec.nvlink_gbps, spec.memory_bytes / 1e9, stages, parts,
                       internode_gbps=scenario.internode_gbps)
