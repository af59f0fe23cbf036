"""The scale panel's knobs as data: assumed MFU, checkpoint write and restart costs, run-timeline zoom."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.params import ParamsBase, param

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
