"""Training at scale: MFU and failures. Every public name is importable from ``engines.scale``
(the old module names stay importable through the alias table in :mod:`engines`).

- :mod:`engines.scale.params`: ``Params``, the panel's knobs (assumed MFU, checkpoint write δ,
  restart R, run-timeline zoom).
- :mod:`engines.scale.mfu`: PaLM's training FLOPs per token, MFU, HFU, tokens/s at an assumed MFU.
- :mod:`engines.scale.reliability`: Young's and Daly's checkpoint intervals, Daly's expected goodput,
  job MTBF, Llama 3's interruption table, event-level and vectorised Monte Carlo runs.
- :mod:`engines.scale.study`: what the view shows: ``scale_analysis`` (analytic, every edit) and
  ``simulate_failures`` (Monte Carlo probes and one run: the panel's one background job).

The function ``mfu`` is not re-exported here: ``engines.scale.mfu`` stays the module (use
``engines.scale.mfu.mfu``).
"""
from engines.scale.mfu import (TrainingThroughput, flops_per_token, hardware_flops_per_token, model_flops_per_token,
                               tokens_per_second, training_throughput)
from engines.scale.params import ZOOM_INTERVALS, Params
from engines.scale.reliability import (DAY, SPAN_KINDS, Cause, Failure, Interruptions, RunResult, ScalePoint, Span,
                                       checkpoint_seconds, daly_interval, expected_goodput, goodput_vs_cluster,
                                       interruptions_per_day, job_mtbf, llama3_interruptions, monte_carlo_goodput,
                                       simulate_run, young_interval, young_waste)
from engines.scale.study import (CLUSTER_SIZES, GRID_POINTS, MC_RUNS, MFU_REFERENCES, PROBE_FACTORS, RUN_SEED,
                                 WORK_MTBFS, CheckpointStudy, ClusterSweep, FailureSimulation, ScaleAnalysis,
                                 checkpoint_study, cluster_sweep, decades, scale_analysis, simulate_failures)

__all__ = ["Params", "ZOOM_INTERVALS",
           "flops_per_token", "model_flops_per_token", "hardware_flops_per_token", "tokens_per_second",
           "TrainingThroughput", "training_throughput",
           "DAY", "SPAN_KINDS", "young_interval", "daly_interval", "young_waste", "expected_goodput", "job_mtbf",
           "interruptions_per_day", "checkpoint_seconds", "llama3_interruptions", "Interruptions", "Cause",
           "simulate_run", "RunResult", "Span", "Failure", "monte_carlo_goodput", "goodput_vs_cluster", "ScalePoint",
           "CLUSTER_SIZES", "MFU_REFERENCES", "GRID_POINTS", "PROBE_FACTORS", "MC_RUNS", "WORK_MTBFS", "RUN_SEED",
           "decades", "ClusterSweep", "cluster_sweep", "CheckpointStudy", "checkpoint_study", "ScaleAnalysis",
           "scale_analysis", "FailureSimulation", "simulate_failures"]
