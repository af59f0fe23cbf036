"""Measured where possible: real training steps of a scaled-down model of the scenario, timed on
the compute device and set against the step-time model's assumptions.

What is compared (``engines.memory.step_time``):
- the model's split of a step, backward = 2 × forward (Kaplan et al. 2020, arXiv 2001.08361, §2.1:
  2N FLOPs per token forward, 4N backward), against the measured forward and backward seconds;
- the compute efficiency the model takes as an input: the measured model FLOP/s (PaLM App. B FLOPs
  per token × tokens ÷ seconds) over the device's dense peak, where the catalogue knows the device
  (``assets/presets/gpus.json``); on a CPU there is no catalogue peak and only FLOP/s are reported;
- full recomputation's extra forward (Korthikanti et al. 2022): the same step with every block
  checkpointed (``torch.utils.checkpoint``), against the model's hardware-FLOPs ratio.

Timing uses ``time.perf_counter`` around whole steps after a warm-up step, with
``torch.cuda.synchronize`` on CUDA; the median of the repeats is reported.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

from engines.core.errors import Cancelled, require_int
from engines.core.hardware import GPUS
from engines.core.models import ModelArch
from engines.core.scenario import Scenario
from engines.memory.measure import MeasureConfig, build_model, scaled_down_arch
from engines.memory.step_time import BACKWARD_OVER_FORWARD
from engines.scale.mfu import hardware_flops_per_token, model_flops_per_token


@dataclass(frozen=True)
class StepTimeConfig:
    """Size of the timed model: big enough that a step is compute, not Python overhead."""

    hidden: int = 256
    head_dim: int = 64
    layers: int = 4
    vocab: int = 2048
    seq_len: int = 256
    micro_batch: int = 4
    repeats: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        require_int(self.hidden, "hidden", 32, 8192)
        require_int(self.head_dim, "head_dim", 8, 256)
        require_int(self.layers, "layers", 1, 64)
        require_int(self.vocab, "vocab", 16, 262_144)
        require_int(self.seq_len, "seq_len", 8, 16_384)
        require_int(self.micro_batch, "micro_batch", 1, 256)
        require_int(self.repeats, "repeats", 1, 50)


@dataclass(frozen=True)
class MeasuredStepTime:
    """Median seconds of forward and backward, with and without full recomputation."""

    arch: ModelArch
    config: StepTimeConfig
    device: str
    device_name: str
    dtype: str
    forward: float
    backward: float
    backward_recompute: float              # backward with every block checkpointed (includes the re-forward)
    model_flops_per_token: float
    hardware_flops_per_token_full: float
    peak_flops: float | None               # the catalogue's dense peak for this device, if known
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def tokens(self) -> int:
        return self.config.seq_len * self.config.micro_batch

    @property
    def step(self) -> float:
        return self.forward + self.backward

    @property
    def backward_ratio(self) -> float:
        """Measured backward ÷ forward (the model takes 2)."""
        return self.backward / self.forward

    @property
    def backward_ratio_diff_pct(self) -> float:
        """Measured backward ÷ forward against the model's :data:`BACKWARD_OVER_FORWARD`, in percent."""
        return 100.0 * (self.backward_ratio / BACKWARD_OVER_FORWARD - 1.0)

    @property
    def recompute_diff_pct(self) -> float:
        return 100.0 * (self.recompute_ratio / self.recompute_ratio_model - 1.0)

    @property
    def achieved_flops(self) -> float:
        """Model FLOP/s delivered by one real step."""
        return self.model_flops_per_token * self.tokens / self.step

    @property
    def efficiency(self) -> float | None:
        """Achieved FLOP/s over the device's catalogue peak: the model's efficiency input, measured."""
        return None if self.peak_flops is None else self.achieved_flops / self.peak_flops

    @property
    def recompute_ratio(self) -> float:
        """Measured (forward + checkpointed backward) ÷ (forward + backward)."""
        return (self.forward + self.backward_recompute) / self.step

    @property
    def recompute_ratio_model(self) -> float:
        """The step-time model's ratio: hardware FLOPs with full recomputation ÷ model FLOPs."""
        return self.hardware_flops_per_token_full / self.model_flops_per_token


@dataclass(frozen=True)
class StepTimingCheck:
    """Real steps timed beside the step-time model's assumptions: the measured table's rows.

    ``efficiency_set`` is the Efficiency knob the model prices steps with; ``measured.efficiency``
    is what the device reached (None without a catalogue peak)."""

    measured: MeasuredStepTime
    efficiency_set: float
    backward_ratio_model: float = BACKWARD_OVER_FORWARD


def check_step_time(scenario: Scenario, device: str, efficiency: float, config: StepTimeConfig | None = None,
                    progress: Callable[[float, str], None] | None = None,
                    cancelled: Callable[[], bool] | None = None) -> StepTimingCheck:
    """:func:`measure_step_time`, set against the model's backward ratio and its ``efficiency`` knob."""
    measured = measure_step_time(scenario, device, config, progress=progress, cancelled=cancelled)
    return StepTimingCheck(measured, efficiency)


def catalogue_peak(device_name: str, dtype: str) -> float | None:
    """The catalogue's dense peak for a CUDA device whose name matches a catalogue entry (H100 →
    ``h100-sxm``, H200 → ``h200`` …); None on a CPU or an unknown card."""
    name = device_name.lower()
    for key, card in GPUS.items():
        stem = key.split("-")[0]
        if stem in name.replace(" ", "").lower() or stem in name:
            peak = card.peak_flops("bf16")
            return peak * (0.5 if dtype == "float32" else 1.0)
    return None


def measure_step_time(scenario: Scenario, device: str = "cpu", config: StepTimeConfig | None = None,
                      progress: Callable[[float, str], None] | None = None,
                      cancelled: Callable[[], bool] | None = None) -> MeasuredStepTime:
    """Time real forward and backward passes of the scenario's family, scaled down, on ``device``."""
    import torch
    from torch.utils.checkpoint import checkpoint

    config = config or StepTimeConfig()
    progress = progress or (lambda f, msg: None)
    cancelled = cancelled or (lambda: False)
    cuda = device.startswith("cuda")
    arch = scaled_down_arch(scenario.arch, MeasureConfig(hidden=config.hidden, head_dim=config.head_dim,
                                                         layers=config.layers, vocab=config.vocab,
                                                         seq_len=config.seq_len, micro_batch=config.micro_batch))
    dtype = torch.bfloat16 if cuda else torch.float32      # CPUs run bf16 matmuls far below their fp32 rate
    notes = [] if cuda else ["fp32 on the CPU: bf16 matmuls on most CPUs are slower than fp32"]
    torch.manual_seed(config.seed)
    model = build_model(arch, config.seq_len, dtype, device)
    model.train()
    tokens = torch.randint(0, arch.vocab, (config.micro_batch, config.seq_len), device=device)
    targets = torch.randint(0, arch.vocab, (config.micro_batch, config.seq_len), device=device)
    blocks = _blocks(model)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def one(recompute: bool) -> tuple[float, float]:
        originals = []
        if recompute:
            for blk in blocks:
                originals.append(blk.forward)
                blk.forward = (lambda f: (lambda *a, **k: checkpoint(f, *a, use_reentrant=False, **k)))(blk.forward)
        try:
            sync()
            t0 = time.perf_counter()
            loss = model(tokens, targets)
            sync()
            t1 = time.perf_counter()
            loss.backward()
            sync()
            t2 = time.perf_counter()
        finally:
            for blk, f in zip(blocks, originals):
                blk.forward = f
        model.zero_grad(set_to_none=True)
        return t1 - t0, t2 - t1

    total = 2 * (config.repeats + 1)
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    done = 0
    for recompute in (False, True):
        for i in range(config.repeats + 1):       # the first is a warm-up
            if cancelled():
                raise Cancelled("step timing cancelled")
            result = one(recompute)
            if i:
                runs[recompute].append(result)
            done += 1
            progress(done / total, f"{'checkpointed ' if recompute else ''}step {done} of {total}")
    fwd = statistics.median(f for f, _b in runs[False])
    bwd = statistics.median(b for _f, b in runs[False])
    bwd_rc = statistics.median(b for _f, b in runs[True])
    name = torch.cuda.get_device_name() if cuda else "CPU"
    peak = catalogue_peak(name, str(dtype).split(".")[-1]) if cuda else None
    if cuda and peak is None:
        notes.append(f"{name} is not in the GPU catalogue: no peak to set the FLOP/s against")
    return MeasuredStepTime(arch=arch, config=config, device=device, device_name=name, dtype=str(dtype).split(".")[-1],
                            forward=fwd, backward=bwd, backward_recompute=bwd_rc,
                            model_flops_per_token=model_flops_per_token(arch, config.seq_len),
                            hardware_flops_per_token_full=hardware_flops_per_token(arch, config.seq_len, "full"),
                            peak_flops=peak, notes=tuple(notes))


def _blocks(model) -> list:
    """The transformer blocks of a :func:`build_model` model (the modules that carry a layer each)."""
    for name in ("blocks", "layers", "h"):
        seq = getattr(model, name, None)
        if seq is not None:
            return list(seq)
    raise AttributeError("the measured model has no block list")


__all__ = ["StepTimeConfig", "MeasuredStepTime", "measure_step_time", "catalogue_peak", "StepTimingCheck",
           "check_step_time"]
