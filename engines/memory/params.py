"""The training-memory panel's own knobs as data (everything else it shows is a scenario field)."""
from __future__ import annotations

from dataclasses import dataclass

from engines.memory.analytic import Options
from engines.memory.step_time import COLLECTIVES, TimeKnobs
from engines.core.params import ParamsBase, param

WRAP_CHOICES = (1, 2, 4, 8, 0)
"""FSDP/ZeRO-3 wrapping unit in transformer blocks; 0 wraps the whole pipeline stage as one unit."""


@dataclass(frozen=True)
class Params(ParamsBase):
    """Accounting choices of one training-memory view, and the step-time model's assumptions."""

    fp32_grad_accum: bool = param(False, label="fp32 grad acc.",
                                  tip="Keep a 4-byte fp32 gradient accumulator beside the 16-bit gradient "
                                      "(20 B/param)")
    efficiency: float = param(0.5, 0.05, 1.0, label="Efficiency", unit="of peak", step=0.05, decimals=2,
                              tip="Share of the GPU's dense 16-bit peak the forward and backward kernels reach "
                                  "(an assumption: large GEMMs on H100 reach roughly 0.6–0.8)")
    wrap_blocks: int = param(1, label="FSDP unit", choices=WRAP_CHOICES,
                             tip="Blocks gathered at once by ZeRO-3 / FSDP (FSDP paper §3.2.1); 0 = the whole "
                                 "stage as one unit")
    forward_prefetch: bool = param(True, label="fwd prefetch",
                                   tip="Gather the next unit while this one computes in forward (FSDP §3.3)")
    backward_prefetch: bool = param(True, label="bwd prefetch",
                                    tip="Gather the next unit's weights before this unit's gradient reduce-scatter "
                                        "in backward (FSDP §3.3)")
    collective: str = param("ring", label="Collectives", choices=COLLECTIVES,
                            tip="Flat ring over every GPU, or hierarchical: NVLink inside a node, the network "
                                "between nodes (Jia et al. 2018)")
    nvme_gbps: float = param(3.0, 0.5, 50.0, label="NVMe", unit="GB/s/GPU", step=0.5, decimals=1,
                             tip="Assumption: a node's NVMe read/write rate shared by its GPUs (ZeRO-Infinity)")
    cpu_gbps: float = param(25.0, 1.0, 400.0, label="CPU RAM", unit="GB/s/GPU", step=1, decimals=0,
                            tip="Assumption: host memory bandwidth one GPU's CPU optimizer step gets "
                                "(ZeRO-Offload's CPU Adam streams every state byte)")
    pytorch_check: bool = param(False, label="Check with PyTorch",
                                tip="Run the PyTorch check (FSDP2 on fake tensors) for this scenario and keep it "
                                    "current as the scenario changes; it takes seconds to minutes on a CPU")

    @property
    def options(self) -> Options:
        """The analytic engine's options for these knobs."""
        return Options(fp32_grad_accum=self.fp32_grad_accum, wrap_blocks=self.wrap_blocks,
                       prefetch=self.forward_prefetch or self.backward_prefetch)

    @property
    def time_knobs(self) -> TimeKnobs:
        """The step-time model's assumptions for these knobs."""
        return TimeKnobs(efficiency=self.efficiency, wrap_blocks=self.wrap_blocks,
                         forward_prefetch=self.forward_prefetch, backward_prefetch=self.backward_prefetch,
                         collective=self.collective, nvme_gbps=self.nvme_gbps, cpu_gbps=self.cpu_gbps)
