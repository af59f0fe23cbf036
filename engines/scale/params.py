"""The scale panel's knobs as data: assumed MFU, checkpoint write and restart costs, run-timeline zoom,
and the fault run's injected fault, replicas, triage switch and seed."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require
from engines.core.params import ParamsBase, param

FAULT_CHOICES = ("none", "bad_batch", "lr_spike", "weight_flip", "grad_flip")
FAULT_FIELDS = frozenset({"fault_kind", "fault_step", "fault_replica", "fault_bit", "replicas", "triage", "fault_seed"})
ZOOM_INTERVALS = (12, 60, 0)
"""Run-timeline windows: this many checkpoint intervals around the cursor; 0 shows the whole run."""


@dataclass(frozen=True)
class Params(ParamsBase):
    """One training-at-scale view: what the MFU gauge assumes and what a checkpoint and a restart cost."""

    mfu_pct: int = param(40, 5, 80, label="Assumed MFU", unit="%",
                         tip="Model FLOPs utilization assumed for the throughput (PaLM App. B; Llama 3 reached 38–43%)")
    checkpoint_min: float = param(1.0, 0.1, 30, label="Checkpoint write δ", unit="min", step=0.1, decimals=1,
                                  tip="Wall time to write one checkpoint (δ in Young 1974 and Daly 2006)")
    restart_min: int = param(5, 0, 60, label="Restart R", unit="min",
                             tip="Wall time from a failure to computing again: detect, reschedule, reload (R in Daly 2006)")
    zoom_intervals: int = param(12, label="Run timeline view", choices=ZOOM_INTERVALS,
                                tip="The run is long: follow the cursor with a window of this many checkpoint "
                                    "intervals, or show the whole run (0)")

    fault_kind: str = param("bad_batch", label="Injected fault", choices=FAULT_CHOICES,
                            tip="What goes wrong in the fault run: a broken data shard, a learning-rate spike, or one "
                                "flipped bit in a replica's weights or gradient (silent data corruption)")
    fault_step: int = param(50, 35, 95, label="Fault at step",
                            tip="When the fault strikes (the alarms are armed from step 30)")
    fault_replica: int = param(1, 0, 3, label="On replica", tip="Which data-parallel replica the fault hits")
    fault_bit: int = param(30, 0, 31, label="Flipped bit",
                           tip="0–22 mantissa, 23–30 exponent (30 multiplies a value below 1 by 2¹²⁸), 31 sign")
    replicas: int = param(2, 2, 4, label="Replicas",
                          tip="Data-parallel replicas (threads joined by gloo); with 3 or more a checksum "
                              "majority names the corrupted one")
    triage: bool = param(True, label="Automatic triage",
                         tip="Roll back and replay, skip the batch, or lower the learning rate when an alarm fires")
    fault_seed: int = param(0, 0, 999, label="Seed", tip="The run is deterministic for a seed")

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.fault_replica < self.replicas, "fault_replica", f"must be below replicas ({self.replicas})",
                f"0…{self.replicas - 1}")

    @property
    def mfu(self) -> float:
        """The assumed MFU as a fraction."""
        return self.mfu_pct / 100.0

    @property
    def checkpoint_seconds(self) -> float:
        return self.checkpoint_min * 60.0

    @property
    def restart_seconds(self) -> float:
        return self.restart_min * 60.0
