"""Pipeline and tensor parallelism, one topic package.

* :mod:`.schedules` – pipeline schedules (per-rank action orders), the simulator, bubble formulas.
* :mod:`.execution` – executed mode: a schedule run on real torch (torch imported lazily).
* :mod:`.layout` – the tensor-parallel split of a transformer block and the DP × TP × PP rank grid.
* :mod:`.params` – the pipeline panel's knobs (:class:`Params`).
* :mod:`.study` – what the panel shows, as frozen results: both schedules compared, the executed
  run in milliseconds, the TP steps and the 3D layout with per-stage memory.

Their old module names stay importable through the alias table in :mod:`engines` (``OLD_NAMES``).
"""
from __future__ import annotations

from engines.pipeline.schedules import (KINDS, MAX_CHUNKS, MAX_MICROBATCHES, MAX_SECONDS, MAX_STAGES, OPS, Action,
                                        BubbleFormula, Simulation, TimedOp, _interleaved_rank, _one_f_one_b_rank,
                                        _summarise, _zb_h1_rank, _zb_v_rank, bubble_formulas, check_layers,
                                        check_orders, op_costs, schedule, simulate, stage_to_rank,
                                        timed_from_measurements)  # noqa: F401 (private names: tests)
from engines.pipeline.execution import ExecutedRun, ExecutionCancelled, execute, run_order
from engines.pipeline.layout import (COLLECTIVES, Group, Layout3D, RankPlace, TPStep, collective_counts,
                                     layout_from_scenario, rank_grid, ring_bytes, tp_layer_steps, verify_tp_split)
from engines.pipeline.params import KIND_LABELS, Params
from engines.pipeline.study import (DEMO_M, DEMO_P, Costs, ExecRequest, ExecutedView, LayoutStudy,
                                    PipelineShape, ScheduleComparison, ScheduleRequest, SideResult, TPStudy,
                                    backward_split, chunks_for, compare_schedules, in_ms, layout_study,
                                    pipeline_shape, run_executed, schedule_request, timeline_marks, tp_study)

__all__ = [
    "KINDS", "MAX_CHUNKS", "MAX_MICROBATCHES", "MAX_SECONDS", "MAX_STAGES", "OPS", "Action", "BubbleFormula",
    "Simulation", "TimedOp", "bubble_formulas", "check_layers", "check_orders", "op_costs", "schedule", "simulate",
    "stage_to_rank", "timed_from_measurements",
    "ExecutedRun", "ExecutionCancelled", "execute", "run_order",
    "COLLECTIVES", "Group", "Layout3D", "RankPlace", "TPStep", "collective_counts", "layout_from_scenario",
    "rank_grid", "ring_bytes", "tp_layer_steps", "verify_tp_split",
    "KIND_LABELS", "Params",
    "DEMO_M", "DEMO_P", "Costs", "ExecRequest", "ExecutedView", "LayoutStudy", "PipelineShape", "ScheduleComparison",
    "ScheduleRequest", "SideResult",
    "TPStudy", "backward_split", "chunks_for", "compare_schedules", "in_ms", "layout_study", "pipeline_shape",
    "run_executed", "schedule_request", "timeline_marks", "tp_study",
]
