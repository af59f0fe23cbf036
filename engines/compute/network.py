"""The network inside one step: the gradient all-reduce over NVLink against over the network, beside
the step's compute.

Ring all-reduce, bandwidth term: t = (S/B)·2(n−1)/n for S bytes over n ranks with per-rank one-way
link bandwidth B, latency ignored (NVIDIA nccl-tests ``doc/PERFORMANCE.md``: bus bandwidth =
algorithm bandwidth × 2(n−1)/n; Patarasuk & Yuan 2009). NVLink per direction is half NVIDIA's
both-directions figure (H100: 900 GB/s → 450 GB/s); one 400 Gb/s NIC per GPU is 50 GB/s each way.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require_int, require_number
from engines.core.hardware import gpu as gpu_spec


def allreduce_seconds(nbytes: float, n: int, link_bytes_per_s: float) -> float:
    """Lower bound on a ring all-reduce of ``nbytes`` over ``n`` ranks at ``link_bytes_per_s`` each way."""
    s = require_number(nbytes, "nbytes", 0.0)
    n = require_int(n, "n", 1)
    b = require_number(link_bytes_per_s, "link_bytes_per_s", 0.0, None, lo_open=True)
    return s / b * 2.0 * (n - 1) / n


@dataclass(frozen=True)
class StepNetwork:
    """One step's gradient all-reduce on the fast and the slow fabric, and the step's compute."""

    grad_bytes: float
    n_gpus: int
    gpus_per_node: int
    nvlink_bytes_per_s: float
    network_bytes_per_s: float
    nvlink_seconds: float        # the same all-reduce if every rank sat inside one NVLink domain
    network_seconds: float       # flat ring over the per-GPU NIC (what crossing nodes costs)
    compute_seconds: float       # forward + backward of one step (from the step-time engine)
    source: str

    @property
    def network_over_compute(self) -> float:
        return self.network_seconds / self.compute_seconds if self.compute_seconds > 0 else float("inf")


def step_network(scenario, efficiency: float = 0.5) -> StepNetwork:
    """The scenario's 16-bit gradients all-reduced over its data-parallel ranks on NVLink and on the
    network, against one step's compute from :func:`engines.memory.step_time.step_time` at ``efficiency``."""
    from engines.memory.step_time import TimeKnobs, step_time

    card = gpu_spec(scenario.gpu)
    grad_bytes = 2.0 * scenario.arch.param_count() / (scenario.tp * scenario.pp)
    n = max(scenario.dp, 1)
    nvlink = card.nvlink_gbps * 1e9 / 2.0
    network = scenario.internode_gbps * 1e9
    st = step_time(scenario, "dp", TimeKnobs(efficiency=efficiency))
    return StepNetwork(grad_bytes, n, scenario.gpus_per_node, nvlink, network,
                       allreduce_seconds(grad_bytes, n, nvlink), allreduce_seconds(grad_bytes, n, network),
                       st.compute + st.recompute,
                       f"ring all-reduce t = (S/B)·2(n−1)/n (nccl-tests PERFORMANCE.md); NVLink {card.nvlink_gbps:g} GB/s "
                       f"both ways ({card.source}); network {scenario.internode_gbps:g} GB/s per GPU (scenario)")
