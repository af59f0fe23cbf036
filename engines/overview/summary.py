"""Headline numbers of a scenario: parameters from the architecture, 16 B/param training state,
the GPU and the parallel layout (GPUs = DP × TP × PP).

16 B/param is mixed-precision Adam: 2 (bf16 weights) + 2 (bf16 grads) + 12 (fp32 master, m, v),
Rajbhandari et al., "ZeRO", SC'20, §3.1.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.hardware import gpu as gpu_of
from engines.core.scenario import Scenario

BYTES_PER_PARAM_MIXED_ADAM = 16


@dataclass(frozen=True)
class Overview:
    model_label: str
    params: int
    embedding_params: int
    layer_params: int
    layers: int
    training_state_bytes: int      # 16 B/param, before sharding or activations
    bf16_weight_bytes: int
    gpu_label: str
    gpu_memory_bytes: float
    n_gpus: int
    nodes: int
    dp: int
    tp: int
    pp: int
    cluster_memory_bytes: float
    state_per_gpu_if_fully_sharded: float  # 16Ψ / N (ZeRO-3 across all GPUs)
    gpus_to_hold_state: int                 # ⌈16Ψ / GPU memory⌉ ignoring activations

    def rows(self) -> list[dict]:
        return [{"quantity": k, "value": v} for k, v in self.__dict__.items()]


def summarize(s: Scenario) -> Overview:
    g = gpu_of(s.gpu)
    p = s.arch.param_count()
    state = BYTES_PER_PARAM_MIXED_ADAM * p
    return Overview(
        model_label=s.arch.label, params=p, embedding_params=s.arch.embedding_params(),
        layer_params=s.arch.layer_params(), layers=s.arch.layers,
        training_state_bytes=state, bf16_weight_bytes=2 * p, gpu_label=g.label,
        gpu_memory_bytes=g.memory_bytes, n_gpus=s.n_gpus, nodes=-(-s.n_gpus // s.gpus_per_node),
        dp=s.dp, tp=s.tp, pp=s.pp, cluster_memory_bytes=g.memory_bytes * s.n_gpus,
        state_per_gpu_if_fully_sharded=state / s.n_gpus,
        gpus_to_hold_state=int(-(-state // int(g.memory_bytes))),
    )


def human_bytes(n: float, unit: str = "GB") -> str:
    """Decimal units (1 GB = 1e9 B, as the ZeRO paper uses); say so on screen."""
    scale = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit]
    return f"{n / scale:,.2f} {unit}"


def human_count(n: float) -> str:
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.2f}{suffix}"
    return f"{n:.0f}"
