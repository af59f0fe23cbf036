"""Time beside memory: one optimizer step of the scenario, priced part by part in seconds.

Every part is its own formula, each cited where it is computed:
- Compute: PaLM's model FLOPs per token 6N + 12·L·H·Q·T (Chowdhery et al. 2022, App. B;
  ``engines.scale.mfu``) at the GPU's dense 16-bit peak (datasheets in ``assets/presets/gpus.json``;
  TF32 for fp32 training, half the 16-bit rate on A100/H100) × a kernel efficiency the user sets.
  Forward is a third of it, backward two thirds (Kaplan et al. 2020, §2.1: 2N forward, 4N backward).
- Recomputation: the hardware FLOPs beyond the model FLOPs (Korthikanti et al. 2022, arXiv
  2205.05198: full recompute repeats the forward, selective the attention core).
- Pipeline bubble: 1F1B idles (p − 1) micro-batch slots per step, a (p − 1)/m share of the ideal
  time (Narayanan et al. 2021, SC'21, arXiv 2104.04473, §2.2).
- Tensor-parallel collectives: Megatron's f/g operators, two all-reduces of the s·b·h activations
  per layer in forward and two in backward (Shoeybi et al. 2019, arXiv 1909.08053, §3), on the
  critical path.
- Data-parallel collectives: ring all-reduce moves 2(n − 1)/n of the buffer per GPU, all-gather and
  reduce-scatter (n − 1)/n each (Patarasuk & Yuan 2009; NCCL's ring); DP and ZeRO-1/2 move 2Ψ per
  step, ZeRO-3/FSDP 3Ψ per micro-batch (Rajbhandari et al. 2020, arXiv 1910.02054, §7). Flat ring
  across nodes runs at the per-GPU network rate; hierarchical (two-level) all-reduce
  reduce-scatters inside a node over NVLink, all-reduces the 1/g piece across nodes and
  all-gathers inside the node again (Jia et al. 2018, arXiv 1807.11205, §4.3). NVLink is half the
  vendor's bidirectional figure per direction.
- Overlap: gradient buckets (DDP, Li et al. 2020, VLDB, arXiv 2006.15704, §3.2.3) and FSDP units
  with prefetch (Zhao et al. 2023, VLDB, arXiv 2304.11277, §3.3) hide a phase's communication
  behind its compute except the last bucket or the first unit: exposed = max(C − K, 0) + min(C, K)/U
  for U buckets or units; without prefetch a unit's all-gather waits for its compute to need it.
- Offload: ZeRO-Offload moves the 16-bit gradients to the CPU and the 16-bit parameters back,
  4Ψ bytes per step over PCIe, and runs Adam on the CPU (Ren et al. 2021, USENIX ATC, arXiv
  2101.06840, §4); ZeRO-Infinity reads and writes the optimizer states from NVMe each step and
  fetches parameter shards every micro-batch (Rajbhandari et al. 2021, arXiv 2104.07857, §5–6).
  PCIe per direction is half the datasheet's bidirectional x16 figure (PCI-SIG base specification:
  16 GT/s Gen4 and 32 GT/s Gen5 lanes, 128b/130b coding).
- Optimizer step: streaming, memory-bound: the gradient is read, every optimizer-state byte read
  and written, the 16-bit weight written; at HBM bandwidth on the GPU, at the host memory
  bandwidth the user sets on the CPU.

MFU = model FLOPs per token × tokens/s ÷ (GPUs × peak) (PaLM App. B).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engines.core.errors import require, require_bool, require_choice, require_int, require_number
from engines.core.hardware import gpu as gpu_spec
from engines.core.scenario import STRATEGIES, Scenario
from engines.memory.analytic import (DDP_BUCKET_BYTES, DEEPSPEED_BUCKET_ELEMENTS, STAGE_OF, _dp_ranks_per_node,
                                     hybrid_valid, optimizer_bytes_per_param, shard_group, stage_layers,
                                     stage_param_counts, weight_bytes)
from engines.scale.mfu import hardware_flops_per_token, model_flops_per_token

COLLECTIVES = ("ring", "hierarchical")
BACKWARD_OVER_FORWARD = 2.0
"""Backward FLOPs over forward FLOPs: 4N against 2N per token (Kaplan et al. 2020, §2.1)."""
PARTS = ("compute", "recompute", "bubble", "tp_comm", "dp_comm", "offload", "optimizer")
PART_LABELS = {"compute": "forward + backward", "recompute": "recomputation", "bubble": "pipeline bubble",
               "tp_comm": "TP collectives", "dp_comm": "DP / ZeRO collectives (exposed)",
               "offload": "offload traffic (exposed)", "optimizer": "optimizer step"}
PART_LETTERS = {"compute": "C", "recompute": "R", "bubble": "B", "tp_comm": "T", "dp_comm": "D", "offload": "O",
                "optimizer": "U"}

PCIE_BIDIRECTIONAL_GBPS = {"a100-80gb": 64.0, "h100-sxm": 128.0, "h200": 128.0, "b200": 128.0, "mi300x": 128.0,
                           "rtx4090": 64.0}
"""Host-link x16 bandwidth, both directions together, GB/s: PCIe Gen4 64 (A100 datasheet; RTX 4090),
Gen5 128 (H100 / H200 datasheets, MI300X datasheet); B200 assumed Gen5 like H100. Halved per direction."""
PCIE_SOURCE = "PCIe x16 per direction = half the datasheet's bidirectional figure (Gen4 32 GB/s, Gen5 64 GB/s)"
TF32_SHARE = 0.5
"""fp32 training runs on TF32 tensor cores at half the dense 16-bit rate (A100: 156 vs 312; H100 SXM:
494.7 vs 989.4 TFLOP/s, NVIDIA datasheets)."""


@dataclass(frozen=True)
class TimeKnobs:
    """The step-time model's own assumptions (``engines.memory.params.Params`` carries them)."""

    efficiency: float = 0.5             # share of the dense peak the forward/backward kernels reach
    wrap_blocks: int = 1                # ZeRO-3/FSDP unit in blocks; 0 = the whole stage is one unit
    forward_prefetch: bool = True
    backward_prefetch: bool = True
    collective: str = "ring"            # "ring" (flat) or "hierarchical" (NVLink inside, network across)
    nvme_gbps: float = 3.0              # NVMe read/write per GPU, GB/s (ZeRO-Infinity target)
    cpu_gbps: float = 25.0              # host memory bandwidth per GPU for the CPU optimizer step, GB/s

    def __post_init__(self) -> None:
        require_number(self.efficiency, "efficiency", 0.01, 1)
        require_int(self.wrap_blocks, "wrap_blocks", 0, 100_000)
        require_bool(self.forward_prefetch, "forward_prefetch")
        require_bool(self.backward_prefetch, "backward_prefetch")
        require_choice(self.collective, "collective", COLLECTIVES)
        require_number(self.nvme_gbps, "nvme_gbps", 0.1, 1000)
        require_number(self.cpu_gbps, "cpu_gbps", 0.1, 10_000)


@dataclass(frozen=True)
class Collective:
    """One collective on one buffer: bytes each GPU sends over NVLink and over the network, and seconds."""

    kind: str            # "all-reduce", "all-gather" or "reduce-scatter"
    buffer_bytes: float  # the whole (unsharded) buffer
    group: int
    intra_bytes: float
    inter_bytes: float
    seconds: float


@dataclass(frozen=True)
class StepTime:
    """One optimizer step on one GPU of the busiest pipeline stage, in seconds, part by part."""

    strategy: str
    n_gpus: int
    dp: int
    compute: float
    recompute: float
    bubble: float
    tp_comm: float
    dp_comm: float           # exposed (not hidden behind compute)
    offload: float           # exposed PCIe / NVMe traffic
    optimizer: float         # GPU or CPU optimizer step
    dp_comm_total: float     # all data-parallel collective time, hidden or not
    offload_total: float
    comm_bytes: float        # data-parallel bytes each GPU sends per step
    pcie_bytes: float        # bytes over the GPU's PCIe link per step
    nvme_bytes: float
    global_batch: int        # sequences per optimizer step (DP × micro-batch × accumulation)
    global_tokens: int
    model_flops_per_token: float
    hardware_flops_per_token: float
    peak_flops: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total(self) -> float:
        return sum(getattr(self, p) for p in PARTS)

    @property
    def tokens_per_second(self) -> float:
        return self.global_tokens / self.total

    @property
    def mfu(self) -> float:
        """Model FLOPs delivered over the cluster's peak (PaLM App. B)."""
        return self.model_flops_per_token * self.tokens_per_second / (self.n_gpus * self.peak_flops)

    @property
    def hfu(self) -> float:
        """As MFU, counting recomputation's FLOPs too (Korthikanti et al. 2022)."""
        return self.mfu * self.hardware_flops_per_token / self.model_flops_per_token

    @property
    def comm_bytes_per_sample(self) -> float:
        return self.comm_bytes / self.global_batch

    @property
    def dp_comm_hidden(self) -> float:
        """Seconds of data-parallel collectives hidden behind compute (not part of the step)."""
        return self.dp_comm_total - self.dp_comm

    def parts(self) -> dict[str, float]:
        return {p: getattr(self, p) for p in PARTS}


# --------------------------------------------------------------------------------------------
# Links and collectives
# --------------------------------------------------------------------------------------------
def nvlink_bytes_per_s(gpu_key: str) -> float:
    """Per-direction NVLink: half the datasheet's bidirectional per-GPU figure."""
    return gpu_spec(gpu_key).nvlink_gbps * 1e9 / 2


def pcie_bytes_per_s(gpu_key: str) -> float:
    """Per-direction PCIe x16 host link of ``gpu_key`` (see :data:`PCIE_BIDIRECTIONAL_GBPS`)."""
    require_choice(gpu_key, "gpu", tuple(PCIE_BIDIRECTIONAL_GBPS))
    return PCIE_BIDIRECTIONAL_GBPS[gpu_key] * 1e9 / 2


def ring_bytes_per_gpu(kind: str, buffer_bytes: float, n: int) -> float:
    """Bytes each of ``n`` ranks sends in a ring collective on a ``buffer_bytes`` buffer: all-reduce
    2(n − 1)/n, all-gather and reduce-scatter (n − 1)/n (Patarasuk & Yuan 2009)."""
    require_choice(kind, "kind", ("all-reduce", "all-gather", "reduce-scatter"))
    v = require_number(buffer_bytes, "buffer_bytes", 0)
    n = require_int(n, "n", 1)
    return (2.0 if kind == "all-reduce" else 1.0) * v * (n - 1) / n


def collective(kind: str, buffer_bytes: float, n: int, per_node: int, nvlink: float, network: float,
               algorithm: str = "ring") -> Collective:
    """Time of one collective over ``n`` ranks, ``per_node`` of them in each node.

    Inside one node: the ring at NVLink speed. Across nodes, ``ring``: the whole ring volume at the
    per-GPU network rate (every GPU's traffic crosses its NIC); ``hierarchical``: f·V(g − 1)/g over
    NVLink and f·(V/g)(k − 1)/k across the k nodes (Jia et al. 2018, §4.3), f = 2 for all-reduce."""
    require_choice(algorithm, "collective", COLLECTIVES)
    n = require_int(n, "n", 1)
    g = max(1, min(require_int(per_node, "per_node", 1), n))
    if n <= g:
        intra = ring_bytes_per_gpu(kind, buffer_bytes, n)
        return Collective(kind, buffer_bytes, n, intra, 0.0, intra / nvlink)
    if algorithm == "ring":
        inter = ring_bytes_per_gpu(kind, buffer_bytes, n)
        return Collective(kind, buffer_bytes, n, 0.0, inter, inter / network)
    k = math.ceil(n / g)
    f = 2.0 if kind == "all-reduce" else 1.0
    intra = f * buffer_bytes * (g - 1) / g
    inter = f * buffer_bytes / g * (k - 1) / k
    return Collective(kind, buffer_bytes, n, intra, inter, intra / nvlink + inter / network)


def exposed(comm: float, compute: float, units: int, overlap: bool = True) -> float:
    """Communication left on the critical path when ``units`` pieces of it pipeline with ``compute``:
    all of it without overlap; else max(C − K, 0) + min(C, K)/U (the last bucket or first unit)."""
    if not overlap or comm <= 0:
        return comm
    units = max(1, int(units))
    return max(comm - compute, 0.0) + min(comm, compute) / units


# --------------------------------------------------------------------------------------------
# The step
# --------------------------------------------------------------------------------------------
def step_time(scenario: Scenario, strategy: str | None = None, knobs: TimeKnobs | None = None,
              n_gpus: int | None = None) -> StepTime:
    """Seconds of one optimizer step under ``strategy`` (default: the scenario's) at ``n_gpus``
    (default: the scenario's), part by part; see the module docstring for every formula."""
    strategy = strategy or scenario.strategy
    require_choice(strategy, "strategy", STRATEGIES)
    knobs = knobs or TimeKnobs()
    require(isinstance(knobs, TimeKnobs), "knobs", "must be TimeKnobs")
    if n_gpus is not None and n_gpus != scenario.n_gpus:
        scenario = scenario.with_changes(n_gpus=require_int(n_gpus, "n_gpus", 1))
    arch, sc = scenario.arch, scenario
    tp, pp, dp, m, b, s = sc.tp, sc.pp, sc.dp, sc.grad_accum, sc.micro_batch, sc.seq_len
    stage = STAGE_OF[strategy]
    per_node_dp = _dp_ranks_per_node(sc.gpus_per_node, tp)
    if strategy == "fsdp-hybrid":
        require(bool(hybrid_valid(dp, sc.gpus_per_node, tp, pp)), "n_gpus",
                f"hybrid sharding needs DP ≤ {per_node_dp} or a multiple of it (whole nodes); DP is {dp}",
                f"DP a multiple of {per_node_dp}")
    card = gpu_spec(sc.gpu)
    peak = card.peak_flops("bf16") * (TF32_SHARE if sc.precision == "fp32" else 1.0)
    rate = peak * knobs.efficiency
    nvlink, network, pcie = nvlink_bytes_per_s(sc.gpu), sc.internode_gbps * 1e9, pcie_bytes_per_s(sc.gpu)
    notes: list[str] = []

    # compute (PaLM App. B), recompute (Korthikanti), bubble (Narayanan §2.2)
    f_model = model_flops_per_token(arch, s)
    f_hw = hardware_flops_per_token(arch, s, sc.recompute)
    tokens_mb = b * s
    mb_compute = f_model * tokens_mb / (tp * pp * rate)           # one micro-batch, forward + backward
    mb_recompute = (f_hw - f_model) * tokens_mb / (tp * pp * rate)
    fwd = mb_compute / (1 + BACKWARD_OVER_FORWARD)
    bwd = mb_compute - fwd + mb_recompute
    compute, recompute = m * mb_compute, m * mb_recompute
    bubble = (pp - 1) * (mb_compute + mb_recompute)

    # tensor parallel: 4 all-reduces of sbh per layer per micro-batch (6 with full recompute)
    e = weight_bytes(sc.precision)
    layers = max(stage_layers(arch.layers, pp))
    tp_comm = 0.0
    if tp > 1:
        per_ar = collective("all-reduce", float(s) * b * arch.hidden * e, tp, sc.gpus_per_node, nvlink, network)
        tp_comm = m * layers * (6 if sc.recompute == "full" else 4) * per_ar.seconds

    # data parallel / ZeRO (ZeRO §7) with overlap (DDP buckets, FSDP units)
    psi_gpu = max(stage_param_counts(arch, pp)) / tp
    v = psi_gpu * e
    n_s = int(shard_group(strategy, dp, sc.gpus_per_node, tp, pp))
    alg = knobs.collective

    def coll(kind: str, size: float, n: int) -> Collective:
        return collective(kind, size, n, per_node_dp, nvlink, network, alg)

    units = 1 if knobs.wrap_blocks <= 0 else max(1, math.ceil(layers / knobs.wrap_blocks))
    comm_bytes = dp_total = dp_exposed = 0.0
    pcie_bytes = nvme_bytes = off_total = off_exposed = 0.0
    shard_psi = psi_gpu / (n_s if stage >= 1 else 1)
    if dp > 1 or (stage == 3 and sc.offload_params):
        if stage == 0:
            ar = coll("all-reduce", v, dp)
            buckets = math.ceil(v / DDP_BUCKET_BYTES)
            dp_total, comm_bytes = ar.seconds, ar.intra_bytes + ar.inter_bytes
            dp_exposed = exposed(ar.seconds, bwd, buckets)
        elif stage in (1, 2):
            rs, ag = coll("reduce-scatter", v, dp), coll("all-gather", v, dp)
            buckets = math.ceil(psi_gpu / DEEPSPEED_BUCKET_ELEMENTS)
            times = m if stage == 2 else 1          # ZeRO-2's sharded gradients: reduce every micro-batch
            dp_total = times * rs.seconds + ag.seconds
            comm_bytes = times * (rs.intra_bytes + rs.inter_bytes) + ag.intra_bytes + ag.inter_bytes
            dp_exposed = times * exposed(rs.seconds, bwd, buckets) + ag.seconds   # gather after the step
        else:
            ag, rs = coll("all-gather", v, n_s), coll("reduce-scatter", v, n_s)
            fetch = 0.0
            if sc.offload_params:   # each micro-batch fetches its shard over PCIe (or NVMe) for fwd and bwd
                link = min(pcie, knobs.nvme_gbps * 1e9) if sc.offload_target == "nvme" else pcie
                shard_bytes = psi_gpu * e / n_s
                fetch = shard_bytes / link
                pcie_bytes += 2 * m * shard_bytes
                if sc.offload_target == "nvme":
                    nvme_bytes += 2 * m * shard_bytes
                off_total += 2 * m * fetch

            def phases(gather: float) -> float:   # exposed seconds of one micro-batch's forward + backward
                f_exp = exposed(gather, fwd, units, knobs.forward_prefetch)
                if knobs.backward_prefetch:
                    return f_exp + exposed(gather + rs.seconds, bwd, units)
                return f_exp + gather + exposed(rs.seconds, bwd, units)

            dp_total = m * (2 * ag.seconds + rs.seconds)
            comm_bytes = m * (2 * (ag.intra_bytes + ag.inter_bytes) + rs.intra_bytes + rs.inter_bytes)
            dp_exposed = m * phases(ag.seconds)
            off_exposed += m * phases(ag.seconds + fetch) - dp_exposed   # what the shard fetches add
            if strategy == "fsdp-hybrid" and dp > n_s:
                replicas = dp // n_s
                cross = collective("all-reduce", v / n_s, replicas, 1, nvlink, network, "ring")
                dp_total += cross.seconds
                comm_bytes += cross.intra_bytes + cross.inter_bytes
                dp_exposed += exposed(cross.seconds, bwd, units)
        if units == 1 and stage == 3 and knobs.wrap_blocks <= 0:
            notes.append("one unit for the whole stage: no gather can hide behind compute (FSDP paper §3.2.1)")

    # optimizer step: GPU (HBM) or CPU (ZeRO-Offload), with its PCIe traffic
    k = optimizer_bytes_per_param(sc.optimizer, sc.precision)
    step_bytes = (4 + 2 * k + e) * shard_psi          # read the gradient, read+write the states, write the weight
    if sc.offload_optimizer and stage >= 1:
        grads_down, params_up = e * shard_psi, e * shard_psi   # ZeRO-Offload: 2Ψ + 2Ψ of 16-bit bytes
        pcie_bytes += grads_down + params_up
        down, up = grads_down / pcie, params_up / pcie
        cpu_step = step_bytes / (knobs.cpu_gbps * 1e9)
        off_total += down + up
        off_exposed += exposed(down, bwd, max(units, 1)) + up   # gradients stream out during backward
        if sc.offload_target == "nvme":     # ZeRO-Infinity: states read from and written back to NVMe
            nvme_states = 2 * (k + 4) * shard_psi
            nvme_bytes += nvme_states
            nvme_s = nvme_states / (knobs.nvme_gbps * 1e9)
            off_total += nvme_s
            off_exposed += max(0.0, nvme_s - cpu_step)   # streamed under the CPU step by sub-groups (§6)
        optimizer = cpu_step
        notes.append("optimizer step on the CPU at the host bandwidth you set (ZeRO-Offload)")
    else:
        optimizer = step_bytes / (card.bandwidth_gbps * 1e9)
        if sc.offload_optimizer:
            notes.append("optimizer offload needs ZeRO stage 1 or higher: priced on the GPU here")

    global_batch = dp * m * b
    return StepTime(strategy=strategy, n_gpus=sc.n_gpus, dp=dp, compute=compute, recompute=recompute, bubble=bubble,
                    tp_comm=tp_comm, dp_comm=dp_exposed, offload=off_exposed, optimizer=optimizer,
                    dp_comm_total=dp_total, offload_total=off_total, comm_bytes=comm_bytes, pcie_bytes=pcie_bytes,
                    nvme_bytes=nvme_bytes, global_batch=global_batch, global_tokens=global_batch * s,
                    model_flops_per_token=f_model, hardware_flops_per_token=f_hw, peak_flops=peak, notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# Every strategy, and over GPU counts
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ThroughputSweep:
    """Tokens/s of each strategy (rows) at each GPU count (columns); NaN where it does not apply."""

    strategies: tuple[str, ...]
    n_gpus: np.ndarray
    tokens_per_second: np.ndarray
    mfu: np.ndarray

    @property
    def per_gpu(self) -> np.ndarray:
        """Tokens/s per GPU: flat for perfect scaling, falling where communication is exposed."""
        return self.tokens_per_second / self.n_gpus[None, :]


def sweep_counts(scenario: Scenario, max_gpus: int = 1024) -> np.ndarray:
    """Powers of two times TP × PP up to ``max_gpus`` (and the scenario's own count)."""
    mp = scenario.tp * scenario.pp
    counts = {mp * 2 ** i for i in range(0, 21) if mp * 2 ** i <= max_gpus} | {scenario.n_gpus}
    return np.array(sorted(counts))


def throughput_sweep(scenario: Scenario, knobs: TimeKnobs | None = None, max_gpus: int = 1024) -> ThroughputSweep:
    """:func:`step_time` of every strategy at every :func:`sweep_counts` GPU count."""
    counts = sweep_counts(scenario, require_int(max_gpus, "max_gpus", 1, 1_048_576))
    tps = np.full((len(STRATEGIES), len(counts)), np.nan)
    util = np.full_like(tps, np.nan)
    for col, n in enumerate(counts):
        sc = scenario.with_changes(n_gpus=int(n))
        for row, strategy in enumerate(STRATEGIES):
            if strategy == "fsdp-hybrid" and not hybrid_valid(sc.dp, sc.gpus_per_node, sc.tp, sc.pp):
                continue
            st = step_time(sc, strategy, knobs)
            tps[row, col], util[row, col] = st.tokens_per_second, st.mfu
    return ThroughputSweep(STRATEGIES, counts, tps, util)


def step_times(scenario: Scenario, knobs: TimeKnobs | None = None) -> dict[str, StepTime | None]:
    """:func:`step_time` of every strategy at the scenario's GPU count (None where one does not apply)."""
    out: dict[str, StepTime | None] = {}
    for strategy in STRATEGIES:
        ok = strategy != "fsdp-hybrid" or hybrid_valid(scenario.dp, scenario.gpus_per_node, scenario.tp, scenario.pp)
        out[strategy] = step_time(scenario, strategy, knobs) if ok else None
    return out


@dataclass(frozen=True)
class TimeVerdict:
    """The scenario's strategy set against the fastest strategy that fits in GPU memory."""

    strategy: str
    fastest_fitting: str | None
    slower_pct: float | None     # how much longer the strategy's step is than the fastest fitting one's


def time_verdict(times: dict[str, StepTime | None], fits: dict[str, bool], strategy: str) -> TimeVerdict:
    """Which strategy that fits has the shortest step, and how much longer ``strategy``'s step is."""
    require_choice(strategy, "strategy", tuple(times))
    ok = [s for s, t in times.items() if t is not None and fits.get(s)]
    best = min(ok, key=lambda s: times[s].total) if ok else None
    own = times[strategy]
    pct = None if best is None or own is None else 100.0 * (own.total / times[best].total - 1.0)
    return TimeVerdict(strategy, best, pct)


__all__ = ["BACKWARD_OVER_FORWARD", "TimeKnobs", "TimeVerdict", "time_verdict", "StepTime", "Collective", "ThroughputSweep", "step_time", "step_times", "throughput_sweep",
           "collective", "ring_bytes_per_gpu", "exposed", "pcie_bytes_per_s", "nvlink_bytes_per_s", "sweep_counts",
           "PARTS", "PART_LABELS", "PART_LETTERS", "COLLECTIVES"]
