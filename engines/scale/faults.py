"""A real data-parallel training run with injected faults, the alarms that catch them and the
triage that recovers: what loss-spike handling and silent-data-corruption detection look like in
the signals a run logs.

Each data-parallel replica is a thread holding its own copy of :func:`engines.scale.tiny_lm.build_model`
and talking to the others through real ``torch.distributed`` process groups (NCCL when there is a GPU
per replica; otherwise gloo, on host copies when the replicas share one GPU), so gradients are all-reduced
exactly as in DDP (Li et al. 2020, PyTorch Distributed, VLDB 13(12)). Every step each replica:
reads its share of the global batch, computes loss and gradients, all-reduces them (mean), clips the
global gradient norm, takes an AdamW step, and all-gathers a checksum of its weights.

Faults (:class:`Fault`):
- ``bad_batch``: one replica's share of one global batch is random bytes (a broken shard). It is
  tied to the data, so it comes back whenever that batch is read again.
- ``lr_spike``: the learning rate is multiplied by ``factor`` for ``duration`` steps (a bad schedule
  or a mistyped restart setting). It is tied to the step, so it comes back on a replay.
- ``weight_flip`` / ``grad_flip``: one bit of one float32 weight (after the optimizer step) or of
  one local gradient (before the all-reduce) flips on one replica, once: a transient silent data
  corruption (Dixit et al. 2021, arXiv 2102.11245). It does not come back on a replay.

Detection rules (:func:`alarms_for`), evaluated identically on every replica from all-reduced values:
- ``checksum``: replicas disagree about their weights. Data parallelism keeps them bit-identical, so
  any disagreement is corruption; with three or more replicas the odd one out is named.
- ``nonfinite``: loss or gradient norm is inf/NaN.
- ``loss_z`` / ``grad_z``: the value's z-score against an exponential moving mean and variance of
  the accepted steps exceeds a threshold: ZClip's statistic (Kumar et al. 2025, arXiv 2504.02507),
  used here to raise an alarm rather than to clip. Our choices: α = 0.8 (ZClip's 0.97 remembers
  too much of the steep start of a 120-step run), 6 σ for the loss (a clean run stays below 4 σ)
  and 30 σ for the gradient norm, which in a small model is heavy-tailed: clean runs reach ~17 σ
  on their own (ZClip clips at 2.5 σ; an alarm here costs a rollback).

Triage (:func:`next_action`), a ladder per incident, each rung priced in lost steps and seconds:
1. ``checksum`` → roll back to the last good checkpoint and replay; mark the odd replica
   (deterministic replay isolates incorrect computation: Gemini Team 2023, arXiv 2312.11805, §3).
2. A spike, first time → roll back and replay the same batches: a transient fault does not recur
   (is it the data? replay it: the OPT-175B logbook, Zhang et al. 2022, arXiv 2205.01068).
3. The spike recurs at the same step → roll back and skip the batch seen there (PaLM restarted
   about 100 steps before a spike and skipped 200–500 batches: Chowdhery et al. 2022, §5.1).
4. It recurs with other data → roll back and lower the learning rate (OPT-175B: lowering the
   learning rate and restarting from an earlier checkpoint let the run continue, §2.5). The new
   rate is ``backoff`` × the planned schedule, replacing whatever rate the run used.
Checkpoints are kept in memory every ``checkpoint_every`` steps, only at steps without an alarm.
"""
from __future__ import annotations

import copy
import datetime
from collections import Counter
from contextlib import nullcontext
import math
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from engines.core.errors import Cancelled, ValidationError, require, require_choice, require_int, require_number
from engines.core.threads import torch_threads
from engines.scale.tiny_lm import (batch_tokens, build_model, corpus_sha256, flip_bit, weights_checksum)

FAULT_KINDS = ("bad_batch", "lr_spike", "weight_flip", "grad_flip")
FAULT_LABELS = {"bad_batch": "bad batch", "lr_spike": "learning-rate spike",
                "weight_flip": "bit flip in weights", "grad_flip": "bit flip in a gradient"}
RULES = ("checksum", "nonfinite", "loss_z", "grad_z")
ACTIONS = ("replay", "skip_batch", "lower_lr")
EMA_ALPHA = 0.8             # ZClip uses 0.97 over long runs; a 120-step run whose loss falls fast needs a shorter memory
RECUR_STEPS = 3             # an alarm within this many steps of the incident's step counts as a recurrence
REWIND = 2                  # roll back to a checkpoint at least this many steps before the alarm: a spike
                            # shows one step after the update that caused it (PaLM went back ~100 steps)
KEEP_CHECKPOINTS = 3
MAX_ROLLBACKS = 12          # after this many the automatic triage stops and leaves the run to a person

RULE_SOURCES = {
    "checksum": "replicas must hold bit-identical weights (DDP, Li et al. 2020); SDC: Dixit et al. 2021",
    "nonfinite": "a non-finite loss or gradient is never a valid step (PyTorch GradScaler skips such steps)",
    "loss_z": "z-score over an EMA of accepted steps (ZClip, Kumar et al. 2025, arXiv 2504.02507)",
    "grad_z": "z-score over an EMA of accepted steps (ZClip, Kumar et al. 2025, arXiv 2504.02507)",
}
ACTION_SOURCES = {
    "replay": "deterministic replay isolates a transient fault (Gemini Team 2023, §3; OPT-175B logbook)",
    "skip_batch": "restart before the spike and skip the batch (PaLM, Chowdhery et al. 2022, §5.1)",
    "lower_lr": "restart from an earlier checkpoint with a lower learning rate (OPT-175B, Zhang et al. 2022, §2.5; "
                "the team's run chronicles, metaseq projects/OPT/chronicles, Nov 2021)",
}


@dataclass(frozen=True)
class Fault:
    """One injected fault: ``step`` is when it strikes (for ``bad_batch``: the global batch read at
    that step of an undisturbed run), on ``replica``."""

    kind: str
    step: int
    replica: int = 0
    bit: int = 30            # flips: 30 is the top exponent bit (×2¹²⁸ for a value below 1); 0–22 mantissa
    factor: float = 100.0    # lr_spike: learning-rate multiplier
    duration: int = 1        # lr_spike: steps it lasts

    def __post_init__(self) -> None:
        require_choice(self.kind, "kind", FAULT_KINDS)
        require_int(self.step, "step", 1, 100_000)
        require_int(self.replica, "replica", 0, 63)
        require_int(self.bit, "bit", 0, 31)
        require_number(self.factor, "factor", 1.0, 1e6)
        require_int(self.duration, "duration", 1, 100_000)

    @property
    def label(self) -> str:
        extra = (f", bit {self.bit}" if self.kind.endswith("flip") else
                 f", ×{self.factor:g} for {self.duration} step{'s' * (self.duration > 1)}" if self.kind == "lr_spike"
                 else "")
        where = "" if self.kind == "lr_spike" else f" on replica {self.replica}"    # the rate is shared by all
        return f"{FAULT_LABELS[self.kind]} at step {self.step}{where}{extra}"


@dataclass(frozen=True)
class FaultConfig:
    """The run: model size, data-parallel replicas, optimizer, checkpoints, alarm thresholds, triage."""

    seed: int = 0
    steps: int = 100
    replicas: int = 2
    batch: int = 8                 # sequences per replica per step
    seq_len: int = 64
    d_model: int = 64
    layers: int = 2
    heads: int = 4
    lr: float = 2e-3
    warmup: int = 20
    clip: float = 1.0
    checkpoint_every: int = 10
    z_loss: float = 6.0            # loss alarm threshold, in σ
    z_grad: float = 30.0           # gradient-norm alarm threshold: a small model's norm is heavy-tailed
    z_warmup: int = 30             # steps before z-score alarms are armed (the EMA needs history)
    backoff: float = 0.5
    triage: bool = True

    def __post_init__(self) -> None:
        require_int(self.seed, "seed", 0, 2**31 - 1)
        require_int(self.steps, "steps", 1, 100_000)
        require_int(self.replicas, "replicas", 2, 8)
        require_int(self.batch, "batch", 1, 1024)
        require_int(self.seq_len, "seq_len", 4, 4096)
        require_int(self.d_model, "d_model", 8, 4096)
        require_int(self.layers, "layers", 1, 48)
        require_int(self.heads, "heads", 1, 64)
        require(self.d_model % self.heads == 0, "heads", "must divide d_model", "a divisor of d_model")
        require_number(self.lr, "lr", 1e-6, 1.0)
        require_int(self.warmup, "warmup", 0, 100_000)
        require_number(self.clip, "clip", 1e-6, 1e6)
        require_int(self.checkpoint_every, "checkpoint_every", 1, 100_000)
        require_number(self.z_loss, "z_loss", 1.0, 1e6)
        require_number(self.z_grad, "z_grad", 1.0, 1e6)
        require_int(self.z_warmup, "z_warmup", 2, 100_000)
        require_number(self.backoff, "backoff", 1e-3, 1.0)
        require(isinstance(self.triage, bool), "triage", "must be true or false", "true, false")

    def planned_lr(self, step: int) -> float:
        """Linear warm-up to ``lr``, then constant."""
        return self.lr * min(1.0, step / self.warmup) if self.warmup else self.lr


@dataclass(frozen=True)
class StepRecord:
    """One executed step as logged (``kept`` False: later undone by a rollback)."""

    step: int
    attempt: int             # how many rollbacks happened before this step ran
    batch_id: int
    loss: float
    grad_norm: float         # global L2 norm of the averaged gradient, before clipping
    lr: float
    checksums: tuple[int, ...]
    seconds: float
    alarms: tuple[str, ...]
    kept: bool


@dataclass(frozen=True)
class Alarm:
    step: int
    attempt: int
    rule: str
    value: float             # z-score, or the number of disagreeing replicas for ``checksum``
    detail: str
    source: str


@dataclass(frozen=True)
class Action:
    """One triage decision and its price."""

    step: int                # the step whose alarm triggered it
    kind: str
    to_step: int             # the checkpoint rolled back to
    lost_steps: int          # executed steps thrown away
    lost_seconds: float      # their measured time plus the restore
    detail: str
    source: str


@dataclass(frozen=True)
class Run:
    """Everything a run logged: per-step signals, alarms, triage actions, and their cost."""

    config: FaultConfig
    faults: tuple[Fault, ...]
    device: str
    backend: str
    records: tuple[StepRecord, ...]
    alarms: tuple[Alarm, ...]
    actions: tuple[Action, ...]
    injected: tuple[str, ...]      # what each fault did when it struck ("replica 1 qkv.weight[…]: 0.012 → 4.1e36")
    suspects: tuple[int, ...]      # replicas named by the checksum majority
    seconds: float
    corpus_sha256: str
    gave_up: bool = False

    @property
    def kept(self) -> tuple[StepRecord, ...]:
        return tuple(r for r in self.records if r.kept)

    @property
    def final_loss(self) -> float:
        kept = self.kept
        return kept[-1].loss if kept else math.nan

    @property
    def lost_steps(self) -> int:
        return sum(a.lost_steps for a in self.actions)

    @property
    def lost_seconds(self) -> float:
        return sum(a.lost_seconds for a in self.actions)

    @property
    def steps_per_second(self) -> float:
        """Executed steps (kept or not) per second of step time."""
        busy = sum(r.seconds for r in self.records)
        return len(self.records) / busy if busy else 0.0

    def first_alarm(self, rule: str | None = None) -> Alarm | None:
        return next((a for a in self.alarms if rule is None or a.rule == rule), None)


@dataclass(frozen=True)
class FaultStudy:
    """A faulty run beside the clean reference run of the same seed."""

    run: Run
    reference: Run


# --- detection rules ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Ema:
    """Exponential moving mean and variance (ZClip's update, Kumar et al. 2025, Algorithm 1)."""

    mean: float = 0.0
    var: float = 0.0
    count: int = 0

    def z(self, value: float) -> float:
        if self.count == 0:
            return 0.0
        return (value - self.mean) / max(math.sqrt(self.var), 1e-3 * abs(self.mean), 1e-12)

    def update(self, value: float, alpha: float = EMA_ALPHA) -> "Ema":
        if self.count == 0:
            return Ema(value, 0.0, 1)
        mean = alpha * self.mean + (1 - alpha) * value
        var = alpha * self.var + (1 - alpha) * (value - mean) ** 2
        return Ema(mean, var, self.count + 1)


def odd_replicas(checksums: tuple[int, ...]) -> tuple[int, ...]:
    """Replicas whose checksum differs from the majority's; all of them when there is no majority."""
    counts = Counter(checksums)
    if len(counts) == 1:
        return ()
    majority, votes = counts.most_common(1)[0]
    if votes * 2 <= len(checksums):
        return tuple(range(len(checksums)))
    return tuple(i for i, c in enumerate(checksums) if c != majority)


def alarms_for(step: int, loss: float, grad_norm: float, checksums: tuple[int, ...], loss_ema: Ema,
               grad_ema: Ema, config: FaultConfig) -> list[tuple[str, float, str]]:
    """The rules that fire for one step's logged values: (rule, value, detail)."""
    fired = []
    odd = odd_replicas(checksums)
    if odd:
        who = (f"replica {', '.join(map(str, odd))} disagrees with the majority" if len(odd) < len(checksums)
               else "replicas disagree and no majority can name the odd one")
        fired.append(("checksum", float(len(odd)), who))
    if not (math.isfinite(loss) and math.isfinite(grad_norm)):
        fired.append(("nonfinite", math.nan, f"loss {loss:.4g}, gradient norm {grad_norm:.4g}"))
        return fired
    if step > config.z_warmup:
        for rule, value, ema, limit in (("loss_z", loss, loss_ema, config.z_loss),
                                        ("grad_z", grad_norm, grad_ema, config.z_grad)):
            z = ema.z(value)
            if z > limit:
                what = "loss" if rule == "loss_z" else "gradient norm"
                fired.append((rule, z, f"{what} {value:.4g} is {z:.3g} σ above its moving mean {ema.mean:.4g}"))
    return fired


@dataclass
class Incident:
    """The triage ladder's memory: the step an alarm first hit and how far up the ladder it went."""

    step: int
    rung: int


def next_action(rules: tuple[str, ...], step: int, incident: Incident | None) -> tuple[str, Incident]:
    """Which rung of the ladder an alarm at ``step`` calls for, given the open incident."""
    if "checksum" in rules:
        return "replay", Incident(step, 0)
    if incident is not None and abs(step - incident.step) <= RECUR_STEPS:
        rung = min(incident.rung + 1, 2)
        return ACTIONS[rung], Incident(incident.step, rung)
    return "replay", Incident(step, 0)


# --- the run -------------------------------------------------------------------------------------

@dataclass
class _Checkpoint:
    step: int
    cursor: int
    model: dict
    optim: dict
    loss_ema: Ema
    grad_ema: Ema
    lr_scale: float | None


@dataclass
class _Shared:
    """What rank 0 logs for the caller (only rank 0 writes it)."""

    records: list = field(default_factory=list)
    alarms: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    injected: list = field(default_factory=list)
    suspects: set = field(default_factory=set)
    gave_up: bool = False
    error: BaseException | None = None


def _backend(device: str, replicas: int) -> str:
    import torch

    if device == "cuda" and torch.cuda.device_count() >= replicas and torch.distributed.is_nccl_available():
        return "nccl"
    return "gloo"


def _make_group(backend: str, store, rank: int, world: int):
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=120)
    if backend == "nccl":
        return dist.ProcessGroupNCCL(store, rank, world)
    return dist.ProcessGroupGloo(store, rank, world, timeout)


def _flip_target(model, seed: int, step: int, replica: int, grads: bool):
    """A seeded choice of one weight matrix and one element in it."""
    mats = [(n, p) for n, p in model.named_parameters() if p.dim() >= 2]
    rng = np.random.default_rng([seed, step, replica, 1 if grads else 0])
    name, p = mats[int(rng.integers(len(mats)))]
    return name, p, int(rng.integers(p.numel()))


def _rank_loop(rank: int, config: FaultConfig, faults: tuple[Fault, ...], device: str, backend: str, store,
               initial, shared: _Shared, progress: Callable[[float, str], None],
               cancelled: Callable[[], bool]) -> None:
    import torch

    if backend != "nccl":
        torch.set_num_threads(1)   # this thread's own pool size, whatever other jobs set meanwhile: same sums
    torch_device = torch.device(f"cuda:{rank}" if backend == "nccl" else device)
    if backend == "nccl":
        torch.cuda.set_device(torch_device)     # the current device is per thread; NCCL uses it
    group = _make_group(backend, store, rank, config.replicas)
    comm = torch_device if backend == "nccl" else torch.device("cpu")   # gloo gets host copies of CUDA tensors
    model = copy.deepcopy(initial).to(torch_device)     # as DDP broadcasts rank 0's weights: all start equal
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=config.lr, betas=(0.9, 0.95), weight_decay=0.1)
    n_params = sum(p.numel() for p in params)
    log = rank == 0
    stopping = False

    def report(fraction: float, text: str) -> None:
        """Rank 0's progress; a job's progress raises Cancelled once it is stopped, and a replica that
        left the loop there would leave the others waiting in the all-reduce (gloo's 120 s timeout, then
        a "failed" job). The stop is said at the next all-reduce instead, so every replica stops together."""
        nonlocal stopping
        try:
            progress(fraction, text)
        except Cancelled:
            stopping = True

    def checkpoint(step: int, cursor: int) -> _Checkpoint:
        return _Checkpoint(step, cursor, copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()),
                           loss_ema, grad_ema, lr_scale)

    step, cursor, attempt = 0, 0, 0           # cursor: the next global batch id to read
    loss_ema, grad_ema, lr_scale = Ema(), Ema(), None
    skipped: set[int] = set()
    fired: set[int] = set()                   # transient faults that already struck
    incident: Incident | None = None
    rollbacks = 0
    saved = [checkpoint(0, 0)]                # the last few good checkpoints, oldest first
    while step < config.steps:
        step += 1
        t0 = time.perf_counter()
        while cursor in skipped:
            cursor += 1
        batch_id = cursor
        cursor += 1
        corrupt = any(f.kind == "bad_batch" and f.replica == rank and f.step == batch_id + 1 for f in faults)
        x, y = (torch.from_numpy(a).to(torch_device)
                for a in batch_tokens(config.seed, batch_id, rank, config.batch, config.seq_len, corrupt))
        lr = config.planned_lr(step)
        if lr_scale is not None:
            lr *= lr_scale
        else:
            for f in faults:
                if f.kind == "lr_spike" and f.step <= step < f.step + f.duration:
                    lr *= f.factor
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=False)
        loss = model(x, y)
        loss.backward()
        for i, f in enumerate(faults):
            if f.kind == "grad_flip" and f.step == step and i not in fired:
                fired.add(i)
                if f.replica == rank:
                    name, p, idx = _flip_target(model, config.seed, step, rank, grads=True)
                    before, after = flip_bit(p.grad, idx, f.bit)
                    shared.injected.append(f"step {step}, replica {rank}: gradient of {name}[{idx}] bit {f.bit}: "
                                           f"{before:.4g} → {after:.4g}")
        flat = torch.cat([p.grad.reshape(-1) for p in params] +
                         [loss.detach().reshape(1), torch.tensor([float(log and (stopping or cancelled()))], device=torch_device)])
        if comm != torch_device:
            flat = flat.to(comm)
        group.allreduce([flat]).wait()
        flat = flat.to(torch_device)
        if flat[-1].item() > 0:
            raise Cancelled()
        flat /= config.replicas
        mean_loss = float(flat[-2])
        grads = flat[:n_params]
        grad_norm = float(torch.linalg.vector_norm(grads.double()))   # float64: a flipped exponent overflows a float32 sum of squares
        scale = min(1.0, config.clip / (grad_norm + 1e-6)) if math.isfinite(grad_norm) else 0.0
        offset = 0
        for p in params:
            p.grad.copy_(grads[offset:offset + p.numel()].view_as(p) * scale)
            offset += p.numel()
        opt.step()
        for i, f in enumerate(faults):
            if f.kind == "weight_flip" and f.step == step and i not in fired:
                fired.add(i)
                if f.replica == rank:
                    name, p, idx = _flip_target(model, config.seed, step, rank, grads=False)
                    with torch.no_grad():
                        before, after = flip_bit(p.data, idx, f.bit)
                    shared.injected.append(f"step {step}, replica {rank}: weight {name}[{idx}] bit {f.bit}: "
                                           f"{before:.4g} → {after:.4g}")
        sums = [torch.zeros(1, dtype=torch.int64, device=comm) for _ in range(config.replicas)]
        group.allgather([sums], [torch.tensor([weights_checksum(model)], dtype=torch.int64, device=comm)]).wait()
        checksums = tuple(int(s.item()) for s in sums)
        seconds = time.perf_counter() - t0

        fired_rules = alarms_for(step, mean_loss, grad_norm, checksums, loss_ema, grad_ema, config)
        rules = tuple(r for r, _v, _d in fired_rules)
        if log:
            shared.records.append(StepRecord(step, attempt, batch_id, mean_loss, grad_norm, lr, checksums, seconds,
                                             rules, True))
            shared.alarms.extend(Alarm(step, attempt, r, v, d, RULE_SOURCES[r]) for r, v, d in fired_rules)
            report(min(0.99, step / config.steps), f"step {step}/{config.steps}, loss {mean_loss:.3f}")
        if not rules:
            loss_ema, grad_ema = loss_ema.update(mean_loss), grad_ema.update(grad_norm)
            if incident is not None and step > incident.step + RECUR_STEPS:
                incident = None
            if step % config.checkpoint_every == 0:
                saved = (saved + [checkpoint(step, cursor)])[-KEEP_CHECKPOINTS:]
            continue
        if not config.triage or rollbacks >= MAX_ROLLBACKS:
            if log:
                shared.gave_up = shared.gave_up or (config.triage and rollbacks >= MAX_ROLLBACKS)
            continue
        kind, incident = next_action(rules, step, incident)
        t_restore = time.perf_counter()
        good = next((c for c in reversed(saved) if c.step <= step - REWIND), saved[0])
        saved = [c for c in saved if c.step <= good.step]
        model.load_state_dict(good.model)
        opt.load_state_dict(good.optim)
        lowered = config.backoff * (lr_scale or 1.0)
        lr_scale = good.lr_scale
        detail = f"roll back to step {good.step} and replay"
        if kind == "skip_batch":
            skipped.add(batch_id)
            detail = f"roll back to step {good.step} and skip batch {batch_id}"
        elif kind == "lower_lr":
            lr_scale = lowered
            detail = f"roll back to step {good.step} with the learning rate at {lr_scale:g} × plan"
        if "checksum" in rules:
            odd = odd_replicas(checksums)
            if len(odd) < config.replicas:
                detail += f"; suspect replica {', '.join(map(str, odd))}"
                if log:
                    shared.suspects.update(odd)
        restore = time.perf_counter() - t_restore
        if log:
            lost = [r for r in shared.records if r.kept and r.step > good.step]
            shared.records[:] = [replace(r, kept=False) if r.kept and r.step > good.step else r
                                 for r in shared.records]
            shared.actions.append(Action(step, kind, good.step, len(lost), sum(r.seconds for r in lost) + restore,
                                         detail, ACTION_SOURCES[kind]))
        rollbacks += 1
        attempt += 1
        step, cursor = good.step, good.cursor
        loss_ema, grad_ema = good.loss_ema, good.grad_ema


def run(config: FaultConfig, faults: tuple[Fault, ...] | list[Fault] = (), device: str = "cpu",
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None) -> Run:
    """Train ``config.replicas`` data-parallel replicas for ``config.steps`` steps with ``faults``
    injected, detecting and (with ``config.triage``) recovering from them. Deterministic for a seed."""
    import torch
    import torch.distributed as dist

    if not isinstance(config, FaultConfig):
        raise ValidationError("config", f"expected FaultConfig, got {type(config).__name__}", "FaultConfig")
    faults = tuple(faults)
    for f in faults:
        if not isinstance(f, Fault):
            raise ValidationError("faults", f"expected Fault, got {type(f).__name__}", "Fault")
        require_int(f.replica, "replica", 0, config.replicas - 1)
        require_int(f.step, "step", 1, config.steps)
    require_choice(device, "device", ("cpu", "cuda"))
    if device == "cuda" and not torch.cuda.is_available():
        raise ValidationError("device", "CUDA was requested but torch sees no CUDA device", "cpu")
    progress = progress or (lambda f, m: None)
    cancelled = cancelled or (lambda: False)
    backend = _backend(device, config.replicas)
    store = dist.HashStore()
    shared = _Shared()
    start = time.perf_counter()
    initial = build_model(config.d_model, config.layers, config.heads, config.seq_len, config.seed)

    def worker(rank: int) -> None:
        try:
            _rank_loop(rank, config, faults, device, backend, store, initial, shared, progress, cancelled)
        except BaseException as exc:     # noqa: BLE001 - handed to the caller below
            if shared.error is None or isinstance(shared.error, Cancelled):
                shared.error = exc

    threads = [threading.Thread(target=worker, args=(r,), name=f"replica-{r}", daemon=True)
               for r in range(config.replicas)]
    with torch_threads(1) if device == "cpu" else nullcontext():   # the replicas are the parallelism
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if shared.error is not None:
        raise shared.error
    progress(1.0, "done")
    return Run(config, faults, device, backend, tuple(shared.records), tuple(shared.alarms), tuple(shared.actions),
               tuple(shared.injected), tuple(sorted(shared.suspects)), time.perf_counter() - start, corpus_sha256(),
               shared.gave_up)


def fault_study(config: FaultConfig, faults: tuple[Fault, ...] | list[Fault] = (), device: str = "cpu",
                progress: Callable[[float, str], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> FaultStudy:
    """The faulty run and, for comparison, the same seed without faults (progress split between them)."""
    progress = progress or (lambda f, m: None)
    faulty = run(config, faults, device, lambda f, m: progress(0.5 * f, f"faulty run: {m}"), cancelled)
    reference = run(config, (), device, lambda f, m: progress(0.5 + 0.5 * f, f"clean reference: {m}"), cancelled)
    return FaultStudy(faulty, reference)


fault_study.measured_fields = frozenset({"seconds", "lost_seconds"})   # wall-clock times: differ run to run
# the same seed on another CPU: float32 sums round differently, so the weights' bits (their checksums)
# differ while the replicas still agree with each other; grad norms agree to ~1e-5 (seen 7.7e-6)
fault_study.platform_fields = frozenset({"checksums"})
fault_study.reproducible_rel = 1e-4


def from_params(params) -> tuple[FaultConfig, tuple[Fault, ...]]:
    """The run the scale panel's knobs describe (``engines.scale.Params``)."""
    config = FaultConfig(seed=params.fault_seed, replicas=params.replicas, triage=params.triage)
    if params.fault_kind == "none":
        return config, ()
    return config, (Fault(params.fault_kind, params.fault_step, params.fault_replica, params.fault_bit),)


def summary(study: FaultStudy) -> str:
    """What happened, in one paragraph of plain text (for the view and exports)."""
    r, ref = study.run, study.reference
    if not r.faults:
        return (f"No fault injected: {len(r.records)} steps, final loss {r.final_loss:.3f}, "
                f"{len(r.alarms)} alarms.")
    f = r.faults[0]
    first = next((a for a in r.alarms if a.step >= f.step), None)
    seen = (f"first alarm at step {first.step} ({first.rule}: {first.detail})" if first
            else "no alarm fired: the fault stayed silent")
    acts = "; ".join(f"{a.detail} (−{a.lost_steps} steps, {a.lost_seconds:.2f} s)" for a in r.actions) or "none"
    same = [x.loss for x in r.kept] == [x.loss for x in ref.kept]
    same_note = (" (every kept step identical: the replay is deterministic)" if same and r.actions else
                 " (every step identical)" if same else "")
    return (f"{f.label[0].upper()}{f.label[1:]}: {seen}. Triage: {acts}. Cost: {r.lost_steps} steps redone, "
            f"{r.lost_seconds:.2f} s. Final loss {r.final_loss:.3f} against {ref.final_loss:.3f} for the clean run"
            f"{same_note}.")
