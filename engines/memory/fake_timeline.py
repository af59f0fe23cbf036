"""The PyTorch check's step as a timeline: FSDPMemTracker's snapshots of rank 0, in the order they
were taken, grouped into what a reader follows through one training step (the sharded states that
stay, the FSDP unit gathered for compute and freed after it, the activations that grow through the
forward and are freed through the backward, the temporaries of backward and the optimizer step).

Source: ``torch.distributed._tools.fsdp2_mem_tracker`` (its module states "Before/After
Pre-Forward", "… Post-Forward", "… Pre-Backward", "… Post-Backward"); the grouping follows the FSDP
paper's account of a unit's life (Zhao et al. 2023, arXiv 2304.11277, §3.2–3.3).
"""
from __future__ import annotations

from dataclasses import dataclass

STEP_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sharded", "sharded states (params, grads, Adam)", ("sharded_params", "sharded_grads", "optimizer")),
    ("gathered", "gathered unit (all-gather, unsharded params/grads, reduce-scatter)",
     ("unsharded_params", "all_gather", "unsharded_grads", "reduce_scatter")),
    ("activations", "activations", ("activations",)),
    ("temporaries", "temporaries", ("temporaries",)),
    ("other", "buffers and inputs", ("buffers", "inputs")),
)
"""(key, label, FSDPMemTracker categories) for each band of the animated step, bottom to top."""
PHASES = ("start", "forward", "backward", "optimizer")


@dataclass(frozen=True)
class StepFrame:
    """One moment of the step: where it is (``phase`` of :data:`PHASES`, the FSDP unit ``module``,
    the tracker's ``state``), the bytes of each :data:`STEP_GROUPS` band and their total."""

    index: int
    phase: str
    module: str
    state: str
    bytes: dict[str, int]
    total: int

    @property
    def label(self) -> str:
        where = self.module or "root"
        return f"{self.phase}: {where}, {self.state}"


@dataclass(frozen=True)
class StepTimeline:
    """Every frame of the checked step, the index of its peak and the first frame of each phase
    (chapters for a player or a slider's ticks). ``tracker_peak``: the tracker's own peak total, which
    it records inside a module's compute, between two snapshots, so it can exceed every frame."""

    frames: tuple[StepFrame, ...]
    peak_index: int
    chapters: tuple[tuple[int, str], ...]
    world_size: int
    torch_version: str
    tracker_peak: int

    @property
    def peak(self) -> StepFrame:
        return self.frames[self.peak_index]


def _phase(module: str, state: str, previous: str) -> str:
    if module == "step":
        return "start"
    if module == "optimizer":
        return "optimizer"
    if module == "loss" or "Forward" in state:
        return "forward" if previous in ("start", "forward") else previous
    if "Backward" in state:
        return "backward"
    return previous


def step_timeline(fake) -> StepTimeline:   # fake: engines.memory.fake_check.FakeStep (which imports this)
    """:class:`StepTimeline` of ``fake``'s snapshots: one frame per snapshot, bytes summed by band."""
    frames: list[StepFrame] = []
    phase = "start"
    chapters: list[tuple[int, str]] = []
    for i, snap in enumerate(fake.snapshots):
        phase = _phase(snap.module, snap.phase, phase)
        if not chapters or chapters[-1][1] != phase:
            chapters.append((i, phase))
        groups = {key: sum(snap.bytes.get(c, 0) for c in cats) for key, _, cats in STEP_GROUPS}
        frames.append(StepFrame(i, phase, snap.module, snap.phase, groups, sum(groups.values())))
    if not frames:
        raise ValueError("the PyTorch check recorded no snapshots")
    peak = max(range(len(frames)), key=lambda k: frames[k].total)
    return StepTimeline(tuple(frames), peak, tuple(chapters), fake.world_size, fake.torch_version, fake.peak_total)


__all__ = ["STEP_GROUPS", "PHASES", "StepFrame", "StepTimeline", "step_timeline"]
