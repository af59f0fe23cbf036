"""Memory checked by PyTorch itself: two real FSDP2 training steps of the scenario's model at full
size, on fake tensors (nothing is allocated) over a fake process group (any number of ranks), with
PyTorch's own FSDP2 memory tracker attributing every byte of rank 0.

Sources: FSDP2 ``torch.distributed.fsdp.fully_shard`` (Zhao et al. 2023, arXiv 2304.11277; the FSDP2
RFC pytorch/pytorch#114299); ``torch.distributed._tools.fsdp2_mem_tracker.FSDPMemTracker`` (its
categories: sharded/unsharded parameters and gradients, optimizer state, activations, temporaries,
all-gather and reduce-scatter buffers); ``torch._subclasses.fake_tensor.FakeTensorMode``; the fake
process group of ``torch.testing._internal.distributed.fake_pg``.

What maps to what (the rest is in :func:`compare`): FSDP2 with ``MixedPrecisionPolicy(bf16, fp32
reduce)`` keeps fp32 sharded parameters that double as the master copy, fp32 sharded gradients and
AdamW's two fp32 moments: 4 + 4 + 8 = 16 B/param over the shard group, ZeRO's 2 + 2 + 12 in other
boxes. ZeRO-3 is ``reshard_after_forward=True``, ZeRO-2 ``False`` (the parameters stay gathered from
forward to backward). ZeRO-1 and plain DP have no FSDP2 form: FSDP2 always reduce-scatters gradients
to shards, so they are refused by name.

Private torch APIs (``_tools``, ``testing._internal``) are used on purpose: they are what PyTorch
itself offers for this; :data:`TORCH_TESTED` names the version the tests ran against.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from engines.core.errors import Cancelled, ValidationError, require_choice
from engines.core.models import ModelArch
from engines.core.scenario import Scenario
from engines.memory.analytic import stage_layers

TORCH_TESTED = "2.13"
"""The torch version whose FSDPMemTracker categories this module reads (the tests pin them)."""

FAKE_CATEGORIES = ("sharded_params", "unsharded_params", "sharded_grads", "unsharded_grads", "optimizer",
                   "activations", "temporaries", "all_gather", "reduce_scatter", "buffers", "inputs")
"""FSDPMemTracker's reference types, in our names (``_FSDPRefType`` values in :data:`_TORCH_NAMES`)."""
_TORCH_NAMES = {"Sharded Param": "sharded_params", "Unsharded Param": "unsharded_params",
                "Sharded Grad": "sharded_grads", "Unsharded Grad": "unsharded_grads", "OptState": "optimizer",
                "Activation": "activations", "Temp": "temporaries", "All Gather": "all_gather",
                "Reduce Scatter": "reduce_scatter", "Buffer": "buffers", "Inputs": "inputs"}
RESHARD = {"zero3": True, "fsdp": True, "fsdp-hybrid": True, "zero2": False}
"""Strategies FSDP2 can express, and their ``reshard_after_forward``."""
NOT_EXPRESSIBLE = {
    "dp": "plain data parallelism is DDP, not FSDP2: fully_shard always shards the states",
    "zero1": "ZeRO-1 (sharded optimizer, replicated gradients) has no FSDP2 form: fully_shard always "
             "reduce-scatters gradients to shards, which is ZeRO-2",
}
_LOCK = threading.Lock()   # one fake process group per process: torch.distributed's default group is global


@dataclass(frozen=True)
class Snapshot:
    """Rank 0's bytes by category at one moment of the step: ``module`` (an FSDP unit's module names
    joined by "+", "" the root, "step" at the start, "loss" once the forward ends, "optimizer" after
    the optimizer step) and ``phase`` (FSDPMemTracker's state name, e.g. "After Post-Forward")."""

    module: str
    phase: str
    bytes: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.bytes.values())


@dataclass(frozen=True)
class FakeStep:
    """What PyTorch's FSDP2 memory tracker saw on rank 0 during the second of two training steps.

    ``peaks``: each category's largest value over the step (bytes); ``at_peak``: the categories at
    the moment the total peaked (what must fit); ``at_rest``: after the optimizer step, before the
    gradients are dropped (the model states; AdamW's foreach scratch inside the step counts as
    optimizer state in the tracker and is gone here); ``activations_after_forward``: activations
    once the loss is computed, before backward (the figure our activation model predicts);
    ``snapshots`` in time order."""

    scenario: Scenario
    strategy: str
    recompute: str
    world_size: int
    layers: int
    param_count: int
    peaks: dict[str, int]
    at_peak: dict[str, int]
    at_rest: dict[str, int]
    peak_total: int
    activations_after_forward: int
    snapshots: tuple[Snapshot, ...]
    seconds: float
    torch_version: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def model_states(self) -> int:
        """Sharded parameters + sharded gradients + optimizer state after the step, bytes per rank."""
        return self.at_rest["sharded_params"] + self.at_rest["sharded_grads"] + self.at_rest["optimizer"]


class FakeStepCancelled(Cancelled):
    """The caller's ``cancelled()`` turned true during the fake step."""


# --------------------------------------------------------------------------------------------
# The model: the scenario's shape, as FSDP2 users write it
# --------------------------------------------------------------------------------------------
def _build_model(arch: ModelArch, layers: int, with_head: bool, recompute: str):
    """A decoder of ``arch``'s family: ``layers`` shared blocks (:func:`engines.core.gpt_block.decoder_block`),
    the embedding, and (last stage) the final norm and head. Attention is SDPA with ``enable_gqa`` (no
    K/V copies); RMSNorm is the fused one of :func:`engines.memory.measure.rms_norm_class`; GPT blocks
    drop out their residual branches with 1-byte masks (Korthikanti's assumption); logits are cast to
    fp32 for the loss (Korthikanti §4.3). ``selective`` checkpoints the attention core, ``full`` each
    block (torch.utils.checkpoint)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    from engines.core.gpt_block import decoder_block
    from engines.memory.measure import rms_norm_class

    rms = rms_norm_class()
    gpt = arch.mlp == "gelu"
    p_drop = 0.1 if gpt else 0.0

    def norm(h):
        return nn.LayerNorm(h) if arch.norm == "layernorm" else rms(h)

    def drop(x):
        return torch.native_dropout(x, p_drop, True)[0] if p_drop else x

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(arch.vocab, arch.hidden)
            self.pos = nn.Embedding(arch.max_positions, arch.hidden) if arch.max_positions else None
            self.blocks = nn.ModuleList(decoder_block(arch, norm, p_drop, recompute=recompute)
                                        for _ in range(layers))
            self.final_norm = norm(arch.hidden) if with_head else None
            self.head = (nn.Linear(arch.hidden, arch.vocab, bias=False)
                         if with_head and not arch.tied_embeddings else None)

        def forward(self, tokens, targets):
            x = self.embed(tokens)
            if self.pos is not None:
                x = x + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
            x = drop(x)
            for block in self.blocks:
                x = block(x)
            if self.final_norm is None:          # a first pipeline stage: its output goes to the next
                return x.float().pow(2).mean()
            x = self.final_norm(x)
            logits = (F.linear(x, self.embed.weight) if self.head is None else self.head(x)).float()
            # a vocab-parallel head's logits are a DTensor: the loss runs under loss_context()
            return F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    return Decoder()


def _units(blocks, wrap_blocks: int) -> list:
    """FSDP units: ``wrap_blocks`` consecutive blocks each (the panel's wrapping unit); 0: none (the
    root gathers the whole stage at once)."""
    blocks = list(blocks)
    if wrap_blocks <= 0:
        return []
    return [blocks[i:i + wrap_blocks] for i in range(0, len(blocks), wrap_blocks)]


def shard_and_optimizer(model, scenario: Scenario, params, mesh):
    """:func:`shard_model`, then the scenario's optimizer over the sharded parameters. One code path
    for the fake check and the cluster run, so both run the same FSDP2 set-up."""
    shard_model(model, scenario, params, mesh)
    return make_optimizer(model, scenario)


def make_optimizer(model, scenario: Scenario):
    """AdamW (also for 8-bit Adam, which torch lacks) or SGD with momentum, as the scenario says."""
    import torch

    if scenario.optimizer == "sgd-momentum":
        return torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    return torch.optim.AdamW(model.parameters(), lr=1e-4)


def tensor_parallel(model, tp_mesh) -> None:
    """Megatron-style TP (Shoeybi et al. 2019) with torch's ``parallelize_module``: Q, K, V, gate, up
    and fc1 split by columns, O, down by rows; the embedding vocab-parallel (rows) and the head
    vocab-parallel (columns) with the loss computed on the vocabulary shards (``loss_parallel``)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    plan = {"embed": RowwiseParallel(input_layouts=Replicate())}
    if model.head is not None:
        plan["head"] = ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)
    parallelize_module(model, tp_mesh, plan)
    for block in model.blocks:
        cols = [n for n in ("q", "k", "v", "gate", "up", "fc1") if hasattr(block, n)]
        parallelize_module(block, tp_mesh, {**{n: ColwiseParallel() for n in cols},
                                            "o": RowwiseParallel(), "down": RowwiseParallel()})


def loss_context(scenario: Scenario):
    """``loss_parallel()`` with TP (the cross-entropy works on vocabulary shards, forward and
    backward, so both must run inside it), else nothing."""
    from contextlib import nullcontext

    if scenario.tp > 1:
        from torch.distributed.tensor.parallel import loss_parallel
        return loss_parallel()
    return nullcontext()


def shard_model(model, scenario: Scenario, params, mesh) -> None:
    """``fully_shard`` the embedding, each unit of ``params.wrap_blocks`` blocks, the final norm with
    the head, then the root, as the scenario's strategy, precision and offload say.

    The embedding and the head are units of their own (as torchtitan wraps Llama): left in the root,
    FSDP2 gathers them at the root's pre-forward and keeps them whole through the entire forward and
    backward (2Vh parameters for an untied model, 4.2 GB at 70B), where our model gathers one unit
    of at most max(block, Vh) at a time. Tied embeddings stay in the root (the head reuses the
    embedding's weight outside its forward); so does everything when ``wrap_blocks`` is 0."""
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    low = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(scenario.precision)
    policy = MixedPrecisionPolicy(param_dtype=low, reduce_dtype=torch.float32) if low else MixedPrecisionPolicy()
    offload = {}
    if scenario.offload_optimizer or scenario.offload_params:
        from torch.distributed.fsdp import CPUOffloadPolicy
        offload = {"offload_policy": CPUOffloadPolicy(pin_memory=False)}
    reshard = RESHARD[scenario.strategy]
    units = _units(model.blocks, params.wrap_blocks)
    if units and model.head is not None:
        units = [[model.embed], *units, [model.final_norm, model.head]]
    elif units and model.final_norm is None:       # a first pipeline stage: no head
        units = [[model.embed], *units]
    for unit in units:
        fully_shard(unit if len(unit) > 1 else unit[0], mesh=mesh, mp_policy=policy,
                    reshard_after_forward=reshard, **offload)
    fully_shard(model, mesh=mesh, mp_policy=policy, reshard_after_forward=reshard, **offload)


def make_mesh(scenario: Scenario, world: int, device: str = "cpu"):
    """The mesh over ``world`` ranks: 1-D data parallel, (replicate × shard) for hybrid sharding, or
    (dp × tp) with tensor parallelism.
    Made outside FakeTensorMode (inside it, the mesh's rank tensors would be fake)."""
    from torch.distributed.device_mesh import init_device_mesh

    if scenario.tp > 1:
        return init_device_mesh(device, (world // scenario.tp, scenario.tp), mesh_dim_names=("dp", "tp"))
    if scenario.strategy == "fsdp-hybrid":
        from engines.memory.analytic import shard_group
        shard = int(shard_group("fsdp-hybrid", world, scenario.gpus_per_node, scenario.tp, scenario.pp))
        return init_device_mesh(device, (world // shard, shard), mesh_dim_names=("replicate", "shard"))
    return init_device_mesh(device, (world,))


# --------------------------------------------------------------------------------------------
# The step
# --------------------------------------------------------------------------------------------
def _check_expressible(scenario: Scenario) -> None:
    require_choice(scenario.strategy, "strategy", tuple(RESHARD) + tuple(NOT_EXPRESSIBLE))
    if scenario.strategy in NOT_EXPRESSIBLE:
        raise ValidationError("strategy", NOT_EXPRESSIBLE[scenario.strategy], "ZeRO-2, ZeRO-3 or FSDP")
    if scenario.tp > 1 and scenario.strategy == "fsdp-hybrid":
        raise ValidationError("tp", "hybrid sharding with tensor parallelism is not checked (a 3-D mesh)", "TP 1")
    if scenario.tp > 1 and scenario.arch.tied_embeddings:
        raise ValidationError("tp", "tied embeddings with tensor parallelism are not checked", "TP 1")
    if scenario.sequence_parallel:
        raise ValidationError("sequence_parallel", "sequence parallelism is not checked yet", "off")


def fake_step(scenario: Scenario, params=None, progress: Callable[[float, str], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> FakeStep:
    """Two FSDP2 training steps of ``scenario``'s busiest pipeline stage on fake tensors over
    ``scenario.dp`` fake ranks, under FSDPMemTracker; rank 0's bytes of the second step.

    ``params``: the memory panel's :class:`engines.memory.params.Params` (its wrapping unit); None
    takes its defaults. Raises :class:`ValidationError` for what FSDP2 cannot express."""
    import torch
    import torch._prims  # noqa: F401 - registers prims.device_put, which fake-tensor dispatch reads

    from engines.memory.params import Params

    params = params or Params()
    progress = progress or (lambda f, m: None)
    cancelled = cancelled or (lambda: False)
    _check_expressible(scenario)
    notes: list[str] = []
    arch = scenario.arch
    layers = stage_layers(arch.layers, scenario.pp)[0]
    with_head = scenario.pp == 1
    if scenario.pp > 1:
        notes.append(f"pipeline stage 0 of {scenario.pp} ({layers} layers and the embedding), one micro-batch "
                     "in flight (1F1B keeps up to PP of them: activations here are one micro-batch's)")
    if scenario.optimizer == "adam-8bit":
        notes.append("8-bit Adam is not in torch: checked with AdamW (8 B/param of moments instead of ≈ 2)")
    if scenario.offload_optimizer or scenario.offload_params:
        notes.append("CPU offload: FSDP2's CPUOffloadPolicy moves parameters, gradients and the optimizer "
                     "step to the host together; on this CPU-only check host and device are one, so the "
                     "offloaded bytes are counted where they would have left from")
    if params.wrap_blocks > 1:
        notes.append(f"FSDP unit of {params.wrap_blocks} blocks: each group is one fully_shard call")
    with _LOCK:
        return _run(scenario, params, arch, layers, with_head, notes, progress, cancelled, torch)


def _run(scenario, params, arch, layers, with_head, notes, progress, cancelled, torch) -> FakeStep:
    import torch.distributed as dist
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.testing._internal.distributed.fake_pg import FakeStore

    world = scenario.dp * scenario.tp
    if dist.is_initialized():
        raise ValidationError("fake_step", "a torch.distributed process group is already running in this process",
                              "a process without one")
    start = time.perf_counter()
    progress(0.02, f"fake process group of {world} ranks")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    try:
        mesh = make_mesh(scenario, world)
        mixed = scenario.precision != "fp32"
        if scenario.tp > 1:
            # TP × FSDP2: build on the meta device and shard outside the fake mode (DTensor's own
            # propagation runs a fake mode of its own), then materialise inside it
            with torch.device("meta"):
                model = _build_model(arch, layers, with_head, scenario.recompute)
            tensor_parallel(model, mesh["tp"])
            shard_model(model, scenario, params, mesh["dp"])
        # meta tensors inside DTensors reach the fake mode as they are: it must accept them
        with FakeTensorMode(allow_non_fake_inputs=scenario.tp > 1):
            progress(0.05, f"building {layers} layers on fake tensors")
            if scenario.tp > 1:
                model.to_empty(device="cpu")
                opt = make_optimizer(model, scenario)
            else:
                model = _build_model(arch, layers, with_head, scenario.recompute)
                opt = shard_and_optimizer(model, scenario, params, mesh)
            shape = (scenario.micro_batch, scenario.seq_len)
            tokens = torch.randint(0, arch.vocab, shape)
            targets = torch.randint(0, arch.vocab, shape)
            tracker = _Tracker(model, opt)
            tracker.track_inputs((tokens, targets))
            total_blocks = 2 * max(1, layers)

            def tick(module, *_):
                if cancelled():
                    raise FakeStepCancelled()
                tick.n += 1
                progress(min(0.95, 0.1 + 0.85 * tick.n / (2 * total_blocks)), f"step {1 + tick.n // total_blocks} of 2")
            tick.n = 0
            hooks = [b.register_forward_pre_hook(tick) for b in model.blocks]
            with tracker:
                for step in range(2):
                    with loss_context(scenario):
                        loss = model(tokens, targets)
                        tracker.mark("loss", "After Forward")
                        loss.backward()
                    if cancelled():
                        raise FakeStepCancelled()
                    opt.step()
                    tracker.mark("optimizer", "After Step")
                    opt.zero_grad()
                    if step == 0:
                        tracker.reset_mod_stats()
                        tracker.order.clear()
                        tracker.marks.clear()
                        tracker.mark("step", "Start")
                        tracker.restart_peak()
                    tick.n = total_blocks * (step + 1)
            for h in hooks:
                h.remove()
            param_count = sum(int(p.numel()) for p in model.parameters())   # DTensor numel: the global count
            result = tracker.result()
    finally:
        dist.destroy_process_group()
    peaks, at_peak, at_rest, after_fwd, snaps = result
    if scenario.strategy == "fsdp-hybrid":
        notes.append("hybrid sharding: a (replicate × shard) mesh, states sharded within a node")
    if mixed and scenario.precision == "fp16":
        notes.append("fp16 without a loss scaler: the scaler's few scalars are not counted")
    progress(1.0, "done")
    return FakeStep(scenario=scenario, strategy=scenario.strategy, recompute=scenario.recompute, world_size=world,
                    layers=layers,
                    param_count=param_count, peaks=peaks, at_peak=at_peak, at_rest=at_rest,
                    peak_total=sum(at_peak.values()),
                    activations_after_forward=after_fwd, snapshots=snaps, seconds=time.perf_counter() - start,
                    torch_version=str(torch.__version__), notes=tuple(notes))


def _tracker_class():
    """FSDPMemTracker that also remembers the order its snapshots were taken in (it files them by
    module and state only), so the step can be replayed as a timeline."""
    from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker

    class Tracker(FSDPMemTracker):
        def __init__(self, mod, optm):
            super().__init__(mod, optm)
            self.order: list[tuple[int, dict]] = []      # (id, snapshot): kept alive so ids stay unique
            self.marks: list[tuple[int, str, str, dict]] = []

        def get_tracker_snapshot(self, type: str = "current"):   # noqa: A002 (torch's signature)
            snap = super().get_tracker_snapshot(type)
            if type == "current":
                self.order.append((id(snap), snap))
            return snap

        def restart_peak(self) -> None:
            """Forget the first step's peak: it holds one-off costs (the optimizer's lazily created state
            and, in a fresh process, transients of the first fake dispatch) that differ from run to run."""
            from copy import deepcopy

            from torch.distributed._tools.mem_tracker import _TOTAL_KEY

            self._peak_mem_snap = deepcopy(self._curr_mem_snap)
            self._peak_mem = {dev: snap[_TOTAL_KEY] for dev, snap in self._peak_mem_snap.items()}

        def mark(self, module: str, phase: str) -> None:
            self.marks.append((len(self.order), module, phase, self.get_tracker_snapshot()))

        def result(self):
            def ours(dev_snap) -> dict[str, int]:
                out = {c: 0 for c in FAKE_CATEGORIES}
                for k, v in dev_snap.items():
                    name = _TORCH_NAMES.get(getattr(k, "value", k))
                    if name:
                        out[name] += int(v)
                return out

            def one_device(snap) -> dict[str, int]:
                out = {c: 0 for c in FAKE_CATEGORIES}
                for dev_snap in snap.values():
                    for c, v in ours(dev_snap).items():
                        out[c] += v
                return out

            seq = {i: n for n, (i, _) in enumerate(self.order)}
            timeline: list[tuple[float, Snapshot]] = []
            for module, stats in self.memory_tracking.items():
                name = stats.mod_fqn
                name = "" if name == type(self._root_mod).__name__ else name.split(".", 1)[-1]
                for state, snaps in stats.snapshots.items():
                    phase = getattr(state, "value", str(state))
                    if phase.startswith("Peak"):
                        continue
                    for k, snap in enumerate(snaps):
                        n = seq.get(id(snap))
                        if n is None:    # "Before Pre-*": a copy of the peak entry taken at the same moment
                            twin = stats.snapshots.get(_peak_of(state), [])
                            n = seq.get(id(twin[k])) if k < len(twin) else None
                        if n is None:
                            continue
                        s = Snapshot(name, phase, one_device(snap))
                        timeline.append((n - 0.5 if phase.startswith("Before") else n, s))
            for n, module_, phase, snap in self.marks:
                timeline.append((n, Snapshot(module_, phase, one_device(snap))))
            timeline.sort(key=lambda t: t[0])
            merged: list[tuple[float, Snapshot]] = []
            for n, s in timeline:     # a unit of several modules files one moment under each: one entry
                last = merged[-1][1] if merged else None
                if last and last.phase == s.phase and last.bytes == s.bytes and s.module not in last.module.split("+"):
                    first = merged[-1][1]
                    names = "+".join(sorted([*first.module.split("+"), s.module]))
                    merged[-1] = (n, Snapshot(names, s.phase, first.bytes))
                else:
                    merged.append((n, s))
            snaps = tuple(s for _, s in merged)
            peak = one_device(self.get_tracker_snapshot("peak"))
            peaks = {c: max([s.bytes[c] for s in snaps] + [peak[c]]) for c in FAKE_CATEGORIES}
            at_rest = [s for s in snaps if s.module == "optimizer"][-1].bytes
            after_fwd = [s for s in snaps if s.module == "loss"][-1].bytes["activations"]
            return peaks, peak, at_rest, after_fwd, snaps

    return Tracker


def _peak_of(state):
    from torch.distributed._tools.fsdp2_mem_tracker import _FSDPModState

    return _FSDPModState.PEAK_FW if "Forward" in state.value else _FSDPModState.PEAK_BW


def _Tracker(model, opt):  # noqa: N802 (reads as the class it builds)
    return _tracker_class()(model, opt)


# --------------------------------------------------------------------------------------------
# Ours beside PyTorch's
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CategoryDiff:
    """One category per GPU: our analytic bytes, PyTorch's tracked bytes, and why they differ."""

    category: str
    ours: float
    pytorch: float
    reason: str

    @property
    def difference(self) -> float:
        """PyTorch's minus ours, bytes."""
        return self.pytorch - self.ours

    @property
    def relative(self) -> float:
        """The difference as a share of ours (0 when ours is 0 and PyTorch's too)."""
        return self.difference / self.ours if self.ours else (0.0 if not self.pytorch else float("inf"))


def attention_core_bytes(scenario: Scenario, layers: int) -> float:
    """Bytes our "none" counts for the stored attention core (softmax, and for GPT its dropout mask
    and output) over ``layers`` layers: the part SDPA's fused kernels never store."""
    from engines.memory.analytic import layer_activation_bytes, weight_bytes

    args = (scenario.arch, scenario.seq_len, scenario.micro_batch, scenario.tp, scenario.sequence_parallel)
    e = weight_bytes(scenario.precision)
    return layers * (layer_activation_bytes(*args, "none", e) - layer_activation_bytes(*args, "selective", e))


def compare(breakdown, fake: FakeStep) -> list[CategoryDiff]:
    """Our :class:`~engines.memory.analytic.MemoryBreakdown` beside ``fake``, category by category,
    each difference explained in words (conventions named; what remains is the model's to answer)."""
    if breakdown.strategy != fake.strategy:
        raise ValidationError("strategy", f"the breakdown is {breakdown.strategy}, the PyTorch check "
                                          f"{fake.strategy}", fake.strategy)
    psi, n = fake.param_count, fake.world_size
    p = fake.at_rest
    zero2 = not RESHARD[fake.strategy]
    whole = fake.peaks["unsharded_params"] if zero2 else 0
    rows = [
        CategoryDiff("params", breakdown.params, p["sharded_params"] + whole,
                     "FSDP2 keeps the fp32 parameter shard (4 B/param) as the master copy and casts to "
                     "16 bits when it gathers; ZeRO counts a 16-bit copy here and the fp32 master under "
                     "optimizer" + ("; ZeRO-2 here: the 16-bit parameters stay gathered from forward to "
                                    "backward (reshard_after_forward=False), counted with the shard" if zero2
                                    else "")),
        CategoryDiff("grads", breakdown.grads, p["sharded_grads"],
                     "FSDP2 reduce-scatters in fp32 (reduce_dtype) into fp32 gradient shards: 4 B/param "
                     "where ZeRO keeps 16-bit gradient partitions (2 B)"),
        CategoryDiff("optimizer", breakdown.optimizer, p["optimizer"],
                     "AdamW's two fp32 moments (8 B/param) plus a 4-byte step per tensor; ZeRO's K = 12 "
                     "includes the fp32 master, which FSDP2 stores as the parameter itself"),
    ]
    ours_states = breakdown.params + breakdown.grads + breakdown.optimizer
    theirs_states = sum(r.pytorch for r in rows)
    why = ("the same 16 B/param in different boxes (2 + 2 + 12 against 4 + 4 + 8)" if not zero2 else
           f"FSDP2 keeps fp32 gradient shards: 2 B/param over {n} ranks more than ZeRO-2's 16-bit "
           f"partitions ({2 * psi / n / 1e6:,.1f} MB here), with the same whole 16-bit parameters")
    if fake.scenario.tp > 1:
        why += "; with TP the norm weights are replicated on every TP rank, not split"
    host = breakdown.cpu + breakdown.nvme
    if fake.scenario.offload_optimizer or fake.scenario.offload_params:
        ours_states += host
        why = (f"with offload, ours counts GPU and host together here ({host / 1e9:,.3f} GB on the host): "
               "FSDP2's CPUOffloadPolicy moves parameters, gradients and the optimizer step to the host as "
               "one, and this CPU-only check cannot tell the two apart; ZeRO-Offload keeps a 16-bit "
               "parameter shard on the GPU beside the host's fp32 master and fp32 gradients (2 + 4 + 4 + 8 "
               "B/param over the shard group), FSDP2 casts from its fp32 shard as it gathers (4 + 4 + 8)")
    rows.insert(0, CategoryDiff("model states", ours_states, theirs_states, why))
    core = attention_core_bytes(fake.scenario, fake.layers) if fake.recompute == "none" else 0
    act_why = ["saved-for-backward tensors when the forward ends; PyTorch also keeps norm statistics, "
               "SDPA's log-sum-exp and the token ids"]
    if core:
        act_why.insert(0, f"SDPA's fused kernel stores no s×s attention matrix ({core / 1e9:,.3f} GB of ours "
                          "is eager attention's softmax, and for GPT its dropout mask and output: Korthikanti "
                          "§4.1); with SDPA, PyTorch's 'none' is our 'selective'")
    if fake.layers != breakdown.stages[0].layers or len(breakdown.stages) > 1:
        act_why.append("pipeline: ours holds the busiest stage's in-flight micro-batches, PyTorch's one")
    rows.append(CategoryDiff("activations", breakdown.activations, fake.activations_after_forward,
                             "; ".join(act_why)))
    at = fake.at_peak
    gathered = at["unsharded_params"] + at["unsharded_grads"] + at["all_gather"] + at["reduce_scatter"]
    parts = ", ".join(f"{label} {at[c] / 1e9:,.3f} GB" for c, label in
                      (("unsharded_params", "gathered parameters"), ("all_gather", "all-gather output"),
                       ("unsharded_grads", "unsharded gradients"), ("reduce_scatter", "reduce-scatter input")))
    if zero2:
        ours_buf = "DeepSpeed's reduce and all-gather buckets (5e8 elements each, capped at Ψ)"
    else:
        ours_buf = ("the current and prefetched unit (2 B/param) plus one unsharded gradient unit (FSDP paper "
                    "§3.3); FSDP2 reduce-scatters in fp32 (4 B/param) and frees that input only when the next "
                    "unit's reduce-scatter is issued")
    rows.append(CategoryDiff("buffers", breakdown.buffers, gathered,
                             f"at PyTorch's peak: {parts}; ours: {ours_buf}"))
    rows.append(CategoryDiff("temporaries", 0.0, at["temporaries"],
                             "backward's activation gradients and the optimizer's scratch at the peak: "
                             "not modelled by us (the reserve allowance stands in for them)"))
    rows.append(CategoryDiff("total", breakdown.total - breakdown.reserve, fake.peak_total,
                             "ours without the reserve allowance, PyTorch's at its peak moment"))
    return rows


@dataclass(frozen=True)
class PyTorchCheck:
    """What the memory panel's "Checked by PyTorch" view shows: the fake step and our breakdown of
    the same scenario and knobs, category by category."""

    fake: FakeStep
    diffs: tuple[CategoryDiff, ...]
    timeline: object = None
    """The step as frames (:class:`engines.memory.fake_timeline.StepTimeline`), for the animation."""

    def export(self) -> dict:
        """The comparison table for the JSON export: what was checked, then per category ours,
        PyTorch's and why they differ (bytes per GPU, rank 0)."""
        f = self.fake
        return {"torch_version": f.torch_version, "strategy": f.strategy, "recompute": f.recompute,
                "world_size": f.world_size, "layers": f.layers, "param_count": f.param_count,
                "peak_total": f.peak_total, "notes": list(f.notes),
                "rows": [{"category": d.category, "ours": d.ours, "pytorch": d.pytorch,
                          "difference": d.difference, "why": d.reason} for d in self.diffs]}

    def table(self) -> list[dict]:
        """The comparison table as flat CSV rows in GB (10⁹ bytes), one per category."""
        return [{"check_category": d.category, "ours_GB": round(d.ours / 1e9, 4),
                 "pytorch_GB": round(d.pytorch / 1e9, 4), "difference_GB": round(d.difference / 1e9, 4),
                 "why": d.reason} for d in self.diffs]


def pytorch_check(scenario: Scenario, params=None, progress: Callable[[float, str], None] | None = None,
                  cancelled: Callable[[], bool] | None = None) -> PyTorchCheck:
    """:func:`fake_step` of ``scenario`` beside :func:`~engines.memory.analytic.breakdown` with the
    panel's ``params`` (its wrapping unit and accounting options): one job, one result."""
    from engines.memory.analytic import breakdown
    from engines.memory.params import Params

    params = params or Params()
    from engines.memory.fake_timeline import step_timeline

    fake = fake_step(scenario, params, progress, cancelled)
    return PyTorchCheck(fake, tuple(compare(breakdown(scenario, options=params.options), fake)), step_timeline(fake))


pytorch_check.measured_fields = frozenset({"seconds"})   # wall-clock time: differs run to run

__all__ = ["FakeStep", "Snapshot", "CategoryDiff", "compare", "attention_core_bytes", "PyTorchCheck",
           "pytorch_check", "FakeStepCancelled", "fake_step", "FAKE_CATEGORIES", "NOT_EXPRESSIBLE", "TORCH_TESTED",
           "shard_and_optimizer", "shard_model", "make_optimizer", "make_mesh", "tensor_parallel", "loss_context"]
