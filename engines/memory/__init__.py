"""Training memory per GPU: analytic accounting (``analytic``), the panel's knobs (``params``), the
study one view draws (``study``), a real torch step (``measure``), a real FSDP2 run
(``fsdp_probe``) and FSDP2 at full size on fake tensors (``fake_check``). ``engines.memory`` keeps
every name it had as a single module."""
from __future__ import annotations

# re-exported: ``engines.memory`` keeps every name (and the private ones tests use) it had as one module
from engines.memory.analytic import (ADAM8BIT_BLOCK, CATEGORIES, DDP_BUCKET_BYTES, DEEPSPEED_BUCKET_ELEMENTS,  # noqa: F401
                                     DEFAULT_RESERVE_FRACTION, RECOMPUTE_MODES, SHARD_ORDER, STAGE_OF,
                                     STRATEGIES, TIMELINE_STAGES, Communication, MemoryBreakdown, MemorySweep,
                                     ModelStates, Options, Precision, StageMemory, ZeroFrame, _activation_dims,
                                     _buffer_bytes, _dp_ranks_per_node, _recompute_working_bytes, _stage_memory,
                                     _states, activation_bytes_per_layer, breakdown, communication,
                                     embedding_activation_bytes, gb, has_dropout, hybrid_valid,
                                     in_flight_microbatches, layer_activation_bytes, model_state_bytes,
                                     optimizer_bytes_per_param, output_activation_bytes, per_stage_memory,
                                     precision_of, shard_group, smallest_fitting_gpus, stage_activations,
                                     stage_layers, stage_param_counts, sweep, weight_bytes, zero_timeline,
                                     offloaded_categories, timeline_strategies, totals_at)
from engines.memory.step_time import (StepTime, ThroughputSweep, TimeKnobs, step_time, step_times,  # noqa: F401
                                      throughput_sweep)
from engines.memory.step_measure import MeasuredStepTime, StepTimeConfig, measure_step_time  # noqa: F401
from engines.memory.labels import (CATEGORY_LABELS, CATEGORY_LETTERS, STRATEGY_LABELS, STRATEGY_SHORT,  # noqa: F401
                                   STRATEGY_TICKS)
from engines.memory.params import Params
from engines.memory.fake_check import CategoryDiff, FakeStep, Snapshot, compare, fake_step  # noqa: F401


__all__ = [
    "ModelStates", "model_state_bytes", "activation_bytes_per_layer", "layer_activation_bytes",
    "optimizer_bytes_per_param", "per_stage_memory", "StageMemory", "breakdown", "MemoryBreakdown",
    "sweep", "MemorySweep", "smallest_fitting_gpus", "communication", "Communication", "zero_timeline",
    "ZeroFrame", "Options", "gb", "step_time", "step_times", "StepTime", "TimeKnobs", "throughput_sweep",
    "ThroughputSweep", "measure_step_time", "MeasuredStepTime", "StepTimeConfig", "Params",
    "fake_step", "FakeStep", "Snapshot", "compare", "CategoryDiff",
]
