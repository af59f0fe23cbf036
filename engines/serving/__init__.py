"""Inference serving: a replica's memory and roofline speed, batching simulated event by event, and
steady-state sizing. Every public name is importable from ``engines.serving`` as before the split.

- :mod:`engines.serving.replica`: weights, KV cache (PagedAttention), activations, KV room, roofline
  step cost, formats.
- :mod:`engines.serving.batching`: Poisson workloads, static vs continuous batching (Orca), latency
  targets (DistServe).
- :mod:`engines.serving.steady`: saturation, steady-state p90s (warm-up dropped, horizon doubled
  until settled), the max rate under a target, sizing with headroom, load curves.
"""
from engines.serving.batching import (DISTRIBUTIONS, MAX_REQUESTS, MIN_RATE_PER_S, POLICIES, LatencyTarget, SimResult,
                                      Workload, simulate_batching)
from engines.serving.params import Params
from engines.serving.replica import (FORMAT_LABELS, GIB, GPU_MEMORY_UTILIZATION, KV_BITS_EFFECTIVE,
                                     PREFILL_CHUNK_TOKENS, RUNTIME_OVERHEAD_PER_GPU, WEIGHT_BITS_EFFECTIVE, Capacity,
                                     FormatSpeed, ReplicaMemory, StepCost, activation_bytes, capacity, compute_format,
                                     format_speeds, kv_bytes_per_token, kv_cache_bytes, replica_memory, step_cost,
                                     valid_tp_degrees, weight_bytes)
from engines.serving.steady import (COOLDOWN_FRACTION, DEFAULT_MAX_UTILISATION, TOLERANCE, WARMUP_FRACTION,
                                    DeploymentStudy, LoadCurve, batching_runs, deployment_study,
                                    RateSearch, Sizing, SteadyState, default_workload, load_curves,
                                    max_rate_under_target, saturation_rate, saturation_throughput, size_deployment,
                                    steady_state)

__all__ = ["POLICIES", "DISTRIBUTIONS", "MAX_REQUESTS", "MIN_RATE_PER_S", "Workload", "SimResult", "simulate_batching",
           "LatencyTarget", "saturation_rate", "saturation_throughput", "SteadyState", "steady_state", "RateSearch",
           "max_rate_under_target", "Sizing", "default_workload", "size_deployment", "LoadCurve", "load_curves", "DeploymentStudy", "deployment_study", "batching_runs",
           "WARMUP_FRACTION", "COOLDOWN_FRACTION", "TOLERANCE", "DEFAULT_MAX_UTILISATION",
           "kv_cache_bytes", "kv_bytes_per_token", "weight_bytes", "activation_bytes", "ReplicaMemory",
           "replica_memory", "Capacity", "capacity", "StepCost", "step_cost", "FormatSpeed", "format_speeds",
           "compute_format", "valid_tp_degrees", "GIB", "FORMAT_LABELS", "WEIGHT_BITS_EFFECTIVE", "KV_BITS_EFFECTIVE",
           "GPU_MEMORY_UTILIZATION", "RUNTIME_OVERHEAD_PER_GPU", "PREFILL_CHUNK_TOKENS", "Params"]
