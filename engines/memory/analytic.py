"""Training memory per GPU: model states under DP / ZeRO-1,2,3 / FSDP, activations, buffers, comms.

Sources (cited again beside each formula):
- Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
  SC'20, arXiv 1910.02054, §5 and Fig. 1: model states (2 + 2 + K)·Ψ and how each stage shards them;
  §7: communication 2Ψ for DP, ZeRO-1, ZeRO-2 and 3Ψ for ZeRO-3.
- Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
  arXiv 2205.05198, §4–5 and Table 2: activation bytes per layer, TP, sequence parallel, recompute,
  the 1F1B first-stage total (Eq. 5) and the embedding / output-layer extras (§4.3).
- Zhao et al. 2023, "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel",
  VLDB, arXiv 2304.11277: full vs hybrid sharding, unit-wise all-gather with prefetch.
- Ren et al. 2021, "ZeRO-Offload", USENIX ATC, arXiv 2101.06840, and the DeepSpeed estimators
  (``estimate_zero2/3_model_states_mem_needs``): what moves to CPU RAM with offload.
- Rajbhandari et al. 2021, "ZeRO-Infinity: Breaking the GPU Memory Wall for Extreme Scale Deep
  Learning", SC'21, arXiv 2104.07857, §5: the same offloaded states placed on NVMe instead
  (DeepSpeed ``offload_optimizer``/``offload_param`` with ``device: nvme``).
- Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization", ICLR, arXiv 2110.02861:
  two 1-byte Adam states plus one fp32 scale per 2048-element block.

All sizes are bytes per GPU; readouts convert with GB = 1e9 B (the ZeRO paper's unit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from engines.core.errors import ValidationError, require, require_bool, require_choice, require_int, require_number
from engines.core.hardware import gpu as gpu_spec
from engines.memory.labels import STRATEGY_LABELS
from engines.core.models import ModelArch
from engines.core.scenario import STRATEGIES, Scenario

RECOMPUTE_MODES = ("none", "selective", "full")
CATEGORIES = ("params", "grads", "optimizer", "activations", "buffers", "reserve")
STAGE_OF = {"dp": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "fsdp-hybrid": 3}
TIMELINE_STAGES = ("dp", "zero1", "zero2", "zero3")
SHARD_ORDER = ("optimizer", "grads", "params")  # what ZeRO stage 1, 2, 3 adds to the shards

DDP_BUCKET_BYTES = 25 * 2**20
"""PyTorch DDP ``bucket_cap_mb=25`` default: one gradient bucket in flight."""
DEEPSPEED_BUCKET_ELEMENTS = 5e8
"""DeepSpeed ZeRO-1/2 ``reduce_bucket_size`` and ``allgather_bucket_size`` defaults (elements)."""
ADAM8BIT_BLOCK = 2048
"""Block size of block-wise 8-bit Adam (Dettmers et al. 2022, §2)."""
DEFAULT_RESERVE_FRACTION = 0.05
"""Allowance for allocator fragmentation and reserved-but-unused cache: an assumption, shown as such."""


# --------------------------------------------------------------------------------------------
# Public building blocks with exact signatures
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelStates:
    """Bytes per GPU of 16-bit parameters, 16-bit gradients and optimizer states (ZeRO §5)."""

    params: float
    grads: float
    optimizer: float
    total: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.params + self.grads + self.optimizer)


def model_state_bytes(params: float, n_gpus: int, stage: int,
                      optimizer_bytes_per_param: float = 12) -> ModelStates:
    """ZeRO's 2 + 2 + K accounting (Rajbhandari et al. 2020, §5.1 and Fig. 1).

    Stage 0 (plain DP) replicates everything; stage 1 shards the K·Ψ optimizer states over the
    N_d GPUs, stage 2 also the 2Ψ gradients, stage 3 also the 2Ψ parameters. With Ψ = 7.5e9 and
    N_d = 64 this gives 120 / 31.4 / 16.6 / 1.9 GB, the paper's Figure 1.
    """
    psi = require_number(params, "params", 0, lo_open=True)
    n = require_int(n_gpus, "n_gpus", 1)
    stage = require_int(stage, "stage", 0, 3)
    k = require_number(optimizer_bytes_per_param, "optimizer_bytes_per_param", 0)
    states = ModelStates(
        params=2 * psi / (n if stage >= 3 else 1),
        grads=2 * psi / (n if stage >= 2 else 1),
        optimizer=k * psi / (n if stage >= 1 else 1),
    )
    # each input can be finite while 2Ψ or K·Ψ (or their sum) is not: name the field that drove it there
    if not np.isfinite(states.total):
        field_ = "optimizer_bytes_per_param" if np.isfinite(4 * psi) else "params"
        raise ValidationError(field_, "the result overflows a float", "values whose product stays below 1e308")
    return states


def activation_bytes_per_layer(seq_len: int, micro_batch: int, hidden: int, heads: int, tp: int = 1,
                               sequence_parallel: bool = False, recompute: str = "none") -> float:
    """Activation bytes one GPT layer keeps for backward (Korthikanti et al. 2022, §4, Table 2).

    16-bit activations, 1-byte dropout masks, s = seq_len, b = micro_batch, h, a = heads, t = tp:
    none: sbh(10 + 24/t + 5as/(ht)); with SP: sbh/t·(34 + 5as/h);
    selective (recompute the as² attention core): sbh(10 + 24/t); with SP: 34·sbh/t;
    full (keep only each layer's input): 2sbh.
    GPT-3 175B (s=2048, b=1, h=12288, a=96, t=8): 2.869 GB without parallelism, 0.579 with TP,
    0.359 with TP+SP, 0.327 TP+selective, 0.107 TP+SP+selective, 0.050 full recompute.
    """
    s = require_int(seq_len, "seq_len", 1)
    b = require_int(micro_batch, "micro_batch", 1)
    h = require_int(hidden, "hidden", 1)
    a = require_int(heads, "heads", 1)
    t = require_int(tp, "tp", 1)
    require(h % a == 0, "heads", f"{a} heads do not divide hidden {h}", "a divisor of hidden")
    require(a % t == 0, "tp", f"TP {t} does not divide {a} heads", "a divisor of the head count")
    require_choice(recompute, "recompute", RECOMPUTE_MODES)
    require_bool(sequence_parallel, "sequence_parallel")
    sbh = float(s) * b * h
    if recompute == "full":
        return 2 * sbh
    attention_core = 0.0 if recompute == "selective" else 5 * a * s / h
    if sequence_parallel:
        return sbh / t * (34 + attention_core)
    return sbh * (10 + 24 / t + attention_core / t)


# --------------------------------------------------------------------------------------------
# Bytes per element and per parameter
# --------------------------------------------------------------------------------------------
def weight_bytes(precision: str) -> int:
    """Bytes of a working weight/gradient/activation element: 2 for bf16/fp16, 4 for fp32."""
    require_choice(precision, "precision", ("bf16", "fp16", "fp32"))
    return 4 if precision == "fp32" else 2


def optimizer_bytes_per_param(optimizer: str, precision: str) -> float:
    """K in ZeRO's 2 + 2 + K: optimizer state bytes per parameter.

    Mixed precision (bf16/fp16) keeps an fp32 master copy (4 B) beside the states (ZeRO §3.1;
    Micikevicius et al. 2018). AdamW: master 4 + m 4 + v 4 = 12. SGD with momentum: 4 + 4 = 8.
    8-bit Adam (Dettmers et al. 2022): 4 + 1 + 1 plus two fp32 block scales per 2048 values.
    Pure fp32 training needs no master copy: AdamW 8, SGD-momentum 4, 8-bit Adam 2 + scales.
    """
    require_choice(optimizer, "optimizer", ("adamw", "sgd-momentum", "adam-8bit"))
    master = 0.0 if weight_bytes(precision) == 4 else 4.0
    states = {"adamw": 8.0, "sgd-momentum": 4.0, "adam-8bit": 2.0 + 2 * 4.0 / ADAM8BIT_BLOCK}[optimizer]
    return master + states


# --------------------------------------------------------------------------------------------
# Activations for any architecture (generalises Korthikanti's GPT layer)
# --------------------------------------------------------------------------------------------
def has_dropout(arch: ModelArch) -> bool:
    """GPT-style blocks (GeLU MLP) train with dropout as in Korthikanti; Llama-style blocks don't."""
    return arch.mlp == "gelu"


def layer_activation_bytes(arch: ModelArch, seq_len: int, micro_batch: int, tp: int = 1,
                           sequence_parallel: bool = False, recompute: str = "none",
                           element_bytes: int = 2) -> float:
    """Per-layer activation bytes for ``arch``, term by term after Korthikanti et al. §4.1.

    Replicated across TP ranks unless SP: two norm inputs 4sbh, QKV and first-MLP GEMM inputs
    4sbh, two dropout masks 2sbh (1 B each, GPT only). Split by TP: Q 2sbh, K and V 4sb·h_kv
    (h_kv = kv_heads·head_dim, GQA), projection input 2sbh, MLP 4sbf (GeLU: its input and
    output) or 8sbf (SwiGLU: gate, up, SiLU(gate), product); K and V split up to t = kv_heads, a
    whole KV head per GPU beyond. Attention core, split by TP and
    dropped by selective recompute: softmax output 2as²b, plus dropout mask as²b and output
    2as²b (GPT only). For GPT with f = 4h and h_kv = h this is exactly
    :func:`activation_bytes_per_layer`. Llama-style terms assume eager attention (no dropout);
    FlashAttention never stores the as² core, which is what ``selective`` models.
    """
    require_choice(recompute, "recompute", RECOMPUTE_MODES)
    s, b, t = _activation_dims(arch, seq_len, micro_batch, tp)
    require_bool(sequence_parallel, "sequence_parallel")
    require_int(element_bytes, "element_bytes", 1, 8)
    h, a, f = arch.hidden, arch.heads, arch.ffn
    sb = float(s) * b
    e = element_bytes / 2  # Korthikanti counts 2-byte elements; masks stay 1 byte
    if recompute == "full":
        return 2 * e * sb * h
    drop = has_dropout(arch)
    replicated = e * 8 * sb * h + (2 * sb * h if drop else 0.0)
    mlp = (4 if arch.mlp == "gelu" else 8) * sb * f
    split = e * (2 * sb * h + 2 * sb * h + mlp)
    # K and V: past t = kv_heads each GPU keeps one whole KV head (replicated, as in serving)
    kv = e * 4 * sb * arch.head_dim * max(arch.kv_heads / t, 1.0)
    core = 0.0 if recompute == "selective" else (e * 2 + (e * 2 + 1 if drop else 0)) * a * s * s * b
    return (replicated / (t if sequence_parallel else 1)) + split / t + kv + core / t


def _activation_dims(arch: ModelArch, seq_len: int, micro_batch: int, tp: int) -> tuple[int, int, int]:
    """Check s, b and t as the scenario does (its ranges) and that TP divides the heads."""
    require(isinstance(arch, ModelArch), "arch", "must be a ModelArch")
    s = require_int(seq_len, "seq_len", *Scenario.limits("seq_len"))
    b = require_int(micro_batch, "micro_batch", *Scenario.limits("micro_batch"))
    t = require_int(tp, "tp", *Scenario.limits("tp"))
    require(arch.heads % t == 0, "tp", f"TP {t} does not divide {arch.heads} heads", "a divisor of the head count")
    return s, b, t


def embedding_activation_bytes(arch: ModelArch, seq_len: int, micro_batch: int, tp: int = 1,
                               sequence_parallel: bool = False) -> float:
    """First-stage extra: the embedding-dropout mask, sbh at 1 B per micro-batch, on a 1/t slice of
    the sequence with sequence parallelism (Korthikanti §4.3: sbhp/t for p in flight; GPT only)."""
    seq_len, micro_batch, tp = _activation_dims(arch, seq_len, micro_batch, tp)
    require_bool(sequence_parallel, "sequence_parallel")
    if not has_dropout(arch):
        return 0.0
    return float(seq_len) * micro_batch * arch.hidden / (tp if sequence_parallel else 1)


def output_activation_bytes(arch: ModelArch, seq_len: int, micro_batch: int, tp: int = 1,
                            sequence_parallel: bool = False, element_bytes: int = 2) -> float:
    """Last-stage extra: final-norm input and output-GEMM input (2sbh each) and fp32 logits 4sbv,
    vocabulary-parallel over TP (Korthikanti §4.3: 4sbh/t·(1 + v/h))."""
    seq_len, micro_batch, tp = _activation_dims(arch, seq_len, micro_batch, tp)
    require_bool(sequence_parallel, "sequence_parallel")
    require_int(element_bytes, "element_bytes", 1, 8)
    sb = float(seq_len) * micro_batch
    norm_and_gemm = element_bytes * 2 * sb * arch.hidden / (tp if sequence_parallel else 1)
    return norm_and_gemm + 4 * sb * arch.vocab / tp


# --------------------------------------------------------------------------------------------
# Pipeline stages: which parameters and how many in-flight micro-batches each holds
# --------------------------------------------------------------------------------------------
def stage_layers(layers: int, pp: int) -> list[int]:
    """Layers per pipeline stage: as even as possible, the remainder on the earliest stages."""
    layers = require_int(layers, "layers", 1)
    pp = require_int(pp, "pp", *Scenario.limits("pp"))
    require(pp <= layers, "pp", f"PP {pp} exceeds {layers} layers", f"integer 1…{layers}")
    base, extra = divmod(layers, pp)
    return [base + (1 if i < extra else 0) for i in range(pp)]


def stage_param_counts(arch: ModelArch, pp: int) -> list[float]:
    """Parameters held by each pipeline stage (before TP): blocks, plus the embedding (and learned
    positions) on the first stage, the final norm and output head on the last. Tied embeddings keep
    a copy on the last stage when pp > 1 (Megatron-LM). With ``params_override`` the total is
    rescaled to the stated Ψ."""
    layers = stage_layers(arch.layers, pp)
    emb = arch.vocab * arch.hidden + arch.max_positions * arch.hidden
    head = arch.vocab * arch.hidden if (not arch.tied_embeddings or pp > 1) else 0
    final_norm = 2 * arch.hidden if arch.norm == "layernorm" else arch.hidden
    counts = [float(n * arch.layer_params()) for n in layers]
    counts[0] += emb
    counts[-1] += head + final_norm
    if arch.params_override is not None:
        natural = (arch.embedding_params() + arch.layers * arch.layer_params() + final_norm)
        counts = [c * arch.params_override / natural for c in counts]
    return counts


def in_flight_microbatches(stage: int, pp: int, grad_accum: int) -> int:
    """1F1B: stage i holds min(p − i, m) micro-batches of activations (Narayanan et al. 2021;
    Korthikanti §4.2.3: the first stage holds p, i.e. L layers' worth for any p)."""
    return max(1, min(pp - stage, grad_accum))


# --------------------------------------------------------------------------------------------
# Strategy arithmetic, vectorised over the data-parallel degree
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Precision:
    """Bytes per parameter for the working copy, the gradient and the optimizer (K)."""

    weight: float
    grad: float
    optimizer: float
    element: int


def precision_of(scenario: Scenario, fp32_grad_accum: bool = False) -> Precision:
    """Per-parameter bytes from the scenario's precision and optimizer. ``fp32_grad_accum`` adds a
    4-byte fp32 gradient accumulator beside the 16-bit gradient (the HF Ultra-Scale Playbook's
    2 + 2 + 4 + 12 = 20 B/param; Megatron's ``main_grad``), sharded like the gradients."""
    w = weight_bytes(scenario.precision)
    grad = w + (4 if fp32_grad_accum and w == 2 else 0)
    return Precision(weight=w, grad=grad, optimizer=optimizer_bytes_per_param(scenario.optimizer, scenario.precision),
                     element=w)


def shard_group(strategy: str, dp, gpus_per_node: int, tp: int, pp: int):
    """How many GPUs share one model-state shard set: the whole DP group, or, for hybrid sharding,
    the DP ranks inside one node (FSDP paper §3.2.2: shard within a node, replicate across).
    ``pp`` is taken for the callers' convenience and does not change the answer."""
    dp = np.asarray(dp)
    if strategy != "fsdp-hybrid":
        return dp
    return np.minimum(dp, _dp_ranks_per_node(gpus_per_node, tp))


def _dp_ranks_per_node(gpus_per_node: int, tp: int) -> int:
    """DP ranks of one group inside a node. Megatron orders ranks TP fastest, then DP, then PP
    (``parallel_layout.rank_grid``): a node holds gpus_per_node/tp consecutive DP ranks of one
    pipeline stage; PP does not change that (it only sets how many such groups there are)."""
    return max(1, gpus_per_node // tp)


def hybrid_valid(dp, gpus_per_node: int, tp: int, pp: int):
    """Hybrid sharding needs the DP group to be one partial node or whole nodes' worth of shards."""
    per_node = _dp_ranks_per_node(gpus_per_node, tp)
    dp = np.asarray(dp)
    return (dp <= per_node) | (dp % per_node == 0)


@dataclass(frozen=True)
class Options:
    """Knobs that are not scenario fields."""

    fp32_grad_accum: bool = False
    reserve_fraction: float = DEFAULT_RESERVE_FRACTION
    wrap_blocks: int = 1          # ZeRO-3/FSDP unit: blocks gathered at once (0: the whole stage as one unit)
    prefetch: bool = True         # FSDP prefetch: the next unit is gathered while this one computes


def gather_unit_params(arch: ModelArch, stage_layers_: int, psi_gpu, tp: int, wrap_blocks: int):
    """Parameters per GPU in one ZeRO-3/FSDP unit: ``wrap_blocks`` blocks (the largest tensor group
    at least; FSDP paper §3.2.1: the wrapping policy sets how much is unsharded at once), at most
    the stage's own Ψ; ``wrap_blocks`` 0 wraps the whole stage (embedding and head too) as one unit."""
    psi_gpu = np.asarray(psi_gpu, dtype=float)
    if wrap_blocks <= 0:
        return psi_gpu
    unit = max(wrap_blocks * arch.layer_params(), arch.largest_layer_params()) / tp
    return unit + 0 * psi_gpu if wrap_blocks == 1 else np.minimum(unit, psi_gpu)   # never more than the stage


def gathered_units(options: Options, stage_layers_: int) -> int:
    """Units unsharded at once: the current one and, with prefetch, the next (FSDP paper §3.3);
    a stage wrapped as one unit has no next unit."""
    return 1 if options.wrap_blocks <= 0 or not options.prefetch else 2


def offloaded_categories(stage: int, offload_optimizer: bool, offload_params: bool) -> tuple[str, ...]:
    """Model-state categories that leave the GPU at ZeRO ``stage`` under the offload flags.

    The optimizer states with ZeRO-Offload from stage 1, the gradient partitions with it from
    stage 2 (Ren et al. 2021, §4), the parameter shards with parameter offload at stage 3
    (ZeRO-Infinity; FSDP CPUOffload)."""
    out = []
    if offload_optimizer and stage >= 1:
        out.append("optimizer")
        if stage >= 2:
            out.append("grads")
    if offload_params and stage >= 3:
        out.append("params")
    return tuple(c for c in SHARD_ORDER if c in out)


def _states(psi, shard, stage: int, prec: Precision, offload_opt: bool, offload_params: bool):
    """(params, grads, optimizer, cpu) bytes per GPU for Ψ parameters and shard degree arrays."""
    params = prec.weight * psi / (shard if stage >= 3 else 1)
    grads = prec.grad * psi / (shard if stage >= 2 else 1)
    opt = prec.optimizer * psi / (shard if stage >= 1 else 1)
    cpu = 0 * params
    moved = offloaded_categories(stage, offload_opt, offload_params)
    if "optimizer" in moved:  # ZeRO-Offload: fp32 master + states (and the fp32 gradient copy) in CPU RAM
        cpu = cpu + opt + 4.0 * psi / shard
        opt = 0 * opt
    if "grads" in moved:
        grads = 0 * grads  # gradient partitions stream to CPU; only buckets stay on the GPU
    if "params" in moved:  # ZeRO-Infinity / FSDP CPUOffload: shards wait in CPU RAM
        cpu = cpu + params
        params = 0 * params
    return params, grads, opt, cpu


def _buffer_bytes(stage: int, psi_gpu, unit_params, prec: Precision, gathered: int = 2):
    """Communication buffers: DDP's 25 MiB bucket; DeepSpeed ZeRO-1/2 reduce + all-gather buckets
    (5e8 elements each, capped at Ψ); ZeRO-3/FSDP: ``gathered`` unsharded units (current +
    prefetched, FSDP paper §3.3) and one unsharded gradient unit before its reduce-scatter. Works on
    arrays of Ψ."""
    psi_gpu = np.asarray(psi_gpu, dtype=float)
    if stage == 0:
        return np.minimum(DDP_BUCKET_BYTES, prec.grad * psi_gpu)
    if stage in (1, 2):
        return 2 * np.minimum(DEEPSPEED_BUCKET_ELEMENTS, psi_gpu) * prec.weight
    return (gathered * prec.weight + prec.grad) * unit_params + 0 * psi_gpu


def _recompute_working_bytes(arch: ModelArch, scenario: Scenario) -> float:
    """Full recompute rebuilds one layer's activations during its backward: a transient peak."""
    if scenario.recompute != "full":
        return 0.0
    return layer_activation_bytes(arch, scenario.seq_len, scenario.micro_batch, scenario.tp,
                                  scenario.sequence_parallel, "none", weight_bytes(scenario.precision))


def stage_activations(scenario: Scenario) -> np.ndarray:
    """Activation bytes held by each pipeline stage: per-layer bytes × its layers × its in-flight
    micro-batches, plus the embedding extra on the first stage and the output extra on the last."""
    arch, e = scenario.arch, weight_bytes(scenario.precision)
    s, b, t, sp, pp = scenario.seq_len, scenario.micro_batch, scenario.tp, scenario.sequence_parallel, scenario.pp
    per_layer = layer_activation_bytes(arch, s, b, t, sp, scenario.recompute, e)
    layers = np.array(stage_layers(arch.layers, pp), dtype=float)
    flights = np.maximum(1, np.minimum(pp - np.arange(pp), scenario.grad_accum))
    acts = per_layer * layers * flights
    acts[0] += embedding_activation_bytes(arch, s, b, t, sp) * flights[0]
    acts[-1] += output_activation_bytes(arch, s, b, t, sp, e)
    return acts


# --------------------------------------------------------------------------------------------
# Communication per step
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Communication:
    """Bytes each GPU sends per optimizer step for data-parallel traffic, and the time it takes."""

    intra_bytes: float
    inter_bytes: float
    seconds: float
    psi_multiple: float  # volume in units of the ZeRO paper's Ψ (2 for DP, 3 for ZeRO-3)

    @property
    def total_bytes(self) -> float:
        return self.intra_bytes + self.inter_bytes

    @property
    def links(self) -> str:
        """Which links carry the traffic: "NVLink", "network" or "NVLink + network"."""
        return "NVLink" if self.inter_bytes == 0 else ("network" if self.intra_bytes == 0 else "NVLink + network")


def communication(scenario: Scenario, strategy: str | None = None, dp: int | None = None,
                  psi_gpu: float | None = None) -> Communication:
    """Ring-collective volume per GPU per step (ZeRO §7; Patarasuk & Yuan 2009 ring all-reduce).

    All-reduce = reduce-scatter + all-gather = 2Ψ·(N−1)/N; ZeRO-1/2 = 2Ψ; ZeRO-3/FSDP = 3Ψ
    (all-gather in forward, again in backward, reduce-scatter of gradients). Gradient accumulation
    over m micro-batches: DP and ZeRO-1 accumulate locally and communicate once; ZeRO-2 reduce-
    scatters every micro-batch (its gradients are sharded) and ZeRO-3/FSDP gathers and reduces
    every micro-batch. Hybrid sharding does the 3Ψ inside a node and all-reduces the 1/n shard
    across nodes. Time uses NVLink (half the quoted bidirectional figure) when the DP group fits
    in a node, else the scenario's per-GPU network bandwidth.
    """
    strategy = strategy or scenario.strategy
    require_choice(strategy, "strategy", STRATEGIES)
    dp = scenario.dp if dp is None else require_int(dp, "dp", *Scenario.limits("n_gpus"))
    if psi_gpu is None:
        psi_gpu = max(stage_param_counts(scenario.arch, scenario.pp)) / scenario.tp
    else:
        psi_gpu = require_number(psi_gpu, "psi_gpu", 0)
    e = weight_bytes(scenario.precision)
    m = scenario.grad_accum
    stage = STAGE_OF[strategy]
    ring = (dp - 1) / dp
    nvlink = gpu_spec(scenario.gpu).nvlink_gbps * 1e9 / 2
    network = scenario.internode_gbps * 1e9
    fits_node = scenario.tp * dp <= scenario.gpus_per_node
    if strategy == "fsdp-hybrid":
        n_s = int(shard_group(strategy, dp, scenario.gpus_per_node, scenario.tp, scenario.pp))
        replicas = dp // n_s
        intra = 3 * m * psi_gpu * e * (n_s - 1) / n_s
        inter = 2 * psi_gpu / n_s * e * (replicas - 1) / replicas
        multiple = 3 * m * (n_s - 1) / n_s + 2 / n_s * (replicas - 1) / replicas
        return Communication(intra, inter, intra / nvlink + inter / network, multiple)
    multiple = {0: 2.0, 1: 2.0, 2: 1.0 + m, 3: 3.0 * m}[stage] * ring
    volume = multiple * psi_gpu * e
    if fits_node:
        return Communication(volume, 0.0, volume / nvlink, multiple)
    return Communication(0.0, volume, volume / network, multiple)


# --------------------------------------------------------------------------------------------
# Whole breakdown
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StageMemory:
    """Bytes per GPU of one pipeline stage."""

    stage: int
    layers: int
    params: float
    grads: float
    optimizer: float
    activations: float
    buffers: float
    reserve: float
    cpu: float
    nvme: float = 0.0

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer + self.activations + self.buffers + self.reserve


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-GPU memory of the busiest pipeline stage, with the verdict and the per-step traffic."""

    strategy: str
    label: str
    zero_stage: int
    n_gpus: int
    dp: int
    shard: int
    params: float
    grads: float
    optimizer: float
    activations: float
    buffers: float
    reserve: float
    cpu: float
    gpu_memory: float
    comm: Communication
    stages: list[StageMemory]
    notes: list[str] = field(default_factory=list)
    nvme: float = 0.0          # bytes per GPU offloaded to NVMe (ZeRO-Infinity) instead of CPU RAM

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer + self.activations + self.buffers + self.reserve

    @property
    def fits(self) -> bool:
        return self.total <= self.gpu_memory

    @property
    def headroom(self) -> float:
        return self.gpu_memory - self.total

    def categories(self) -> dict[str, float]:
        return {c: getattr(self, c) for c in CATEGORIES}


def _stage_bytes(scenario: Scenario, strategy: str, options: Options, shard) -> dict[str, np.ndarray]:
    """Per-GPU bytes of every pipeline stage (rows) at each shard degree in ``shard`` (columns).

    By category (:data:`CATEGORIES`) plus ``host`` (offloaded bytes) and ``total``. The one computation
    behind the headline, the strategy bars, the sharding animation's key frames and the sweep over
    GPU counts, so those views cannot disagree."""
    prec = precision_of(scenario, options.fp32_grad_accum)
    stage = STAGE_OF[strategy]
    arch = scenario.arch
    layers_ = stage_layers(arch.layers, scenario.pp)
    psis = np.array(stage_param_counts(arch, scenario.pp)) / scenario.tp
    shard = np.atleast_1d(np.asarray(shard, dtype=float))[None, :]
    zeros = np.zeros((len(psis), shard.shape[1]))
    p, g, o, host = _states(psis[:, None], shard, stage, prec, scenario.offload_optimizer, scenario.offload_params)
    unit = np.array([float(gather_unit_params(arch, n, q, scenario.tp, options.wrap_blocks))
                     for n, q in zip(layers_, psis)])
    gathered = np.array([gathered_units(options, n) for n in layers_])
    buf = _buffer_bytes(stage, psis, unit, prec, gathered) + _recompute_working_bytes(arch, scenario)
    out = {"params": p + zeros, "grads": g + zeros, "optimizer": o + zeros,
           "activations": stage_activations(scenario)[:, None] + zeros, "buffers": buf[:, None] + zeros}
    out["reserve"] = options.reserve_fraction * (out["params"] + out["grads"] + out["optimizer"]
                                                 + out["activations"] + out["buffers"])
    out["total"] = (out["params"] + out["grads"] + out["optimizer"] + out["activations"] + out["buffers"]
                    + out["reserve"])   # StageMemory.total's order: the same float sum everywhere
    out["host"] = host + zeros
    return out


def _stage_memory(scenario: Scenario, strategy: str, options: Options) -> list[StageMemory]:
    shard = shard_group(strategy, scenario.dp, scenario.gpus_per_node, scenario.tp, scenario.pp)
    b = _stage_bytes(scenario, strategy, options, shard)
    on_nvme = scenario.offload_target == "nvme"   # ZeRO-Infinity: the same bytes, on NVMe
    out = []
    for i, n_layers in enumerate(stage_layers(scenario.arch.layers, scenario.pp)):
        host = float(b["host"][i, 0])
        out.append(StageMemory(i, n_layers, *(float(b[c][i, 0]) for c in CATEGORIES),
                               0.0 if on_nvme else host, host if on_nvme else 0.0))
    return out


def per_stage_memory(scenario: Scenario, strategy: str | None = None,
                     fp32_grad_accum: bool = False) -> list[StageMemory]:
    """Per-GPU bytes for every pipeline stage of ``scenario`` (used by the pipeline panel)."""
    strategy = strategy or scenario.strategy
    require_choice(strategy, "strategy", STRATEGIES)
    return _stage_memory(scenario, strategy, Options(fp32_grad_accum=fp32_grad_accum))


def breakdown(scenario: Scenario, strategy: str | None = None, options: Options | None = None) -> MemoryBreakdown:
    """Everything one GPU holds under ``strategy`` (default: the scenario's), for its busiest stage."""
    strategy = strategy or scenario.strategy
    require_choice(strategy, "strategy", STRATEGIES)
    options = options or Options()
    require_number(options.reserve_fraction, "reserve_fraction", 0, 1)
    require_int(options.wrap_blocks, "wrap_blocks", 0, 100_000)
    require_bool(options.prefetch, "prefetch")
    if strategy == "fsdp-hybrid" and not hybrid_valid(scenario.dp, scenario.gpus_per_node, scenario.tp, scenario.pp):
        per_node = _dp_ranks_per_node(scenario.gpus_per_node, scenario.tp)
        raise ValidationError("n_gpus", f"hybrid sharding needs DP ≤ {per_node} or a multiple of it (whole nodes); "
                                        f"DP is {scenario.dp}", f"DP a multiple of {per_node}")
    stages = _stage_memory(scenario, strategy, options)
    worst = max(stages, key=lambda st: st.total)
    stage = STAGE_OF[strategy]
    notes = []
    if scenario.offload_optimizer and stage < 1:   # DeepSpeed offloads the optimizer of a ZeRO stage only
        notes.append("optimizer offload needs ZeRO (stage 1 or higher; Ren et al. 2021): ignored for plain DP")
    if scenario.offload_params and stage < 3:
        notes.append("parameter offload needs ZeRO-3 / FSDP: ignored for this strategy")
    if worst.nvme:
        notes.append("NVMe offload (ZeRO-Infinity): CPU RAM still holds pinned staging buffers, not counted here")
    if scenario.arch.mlp == "swiglu":
        notes.append("Llama-style activations: Korthikanti's terms re-derived for SwiGLU, GQA and no dropout")
    if scenario.recompute == "full":
        notes.append("buffers include one layer's activations rebuilt during backward (full recompute)")
    psi_gpu = max(stage_param_counts(scenario.arch, scenario.pp)) / scenario.tp
    return MemoryBreakdown(
        strategy=strategy, label=STRATEGY_LABELS[strategy], zero_stage=stage, n_gpus=scenario.n_gpus,
        dp=scenario.dp, shard=int(shard_group(strategy, scenario.dp, scenario.gpus_per_node, scenario.tp, scenario.pp)),
        params=worst.params, grads=worst.grads, optimizer=worst.optimizer, activations=worst.activations,
        buffers=worst.buffers, reserve=worst.reserve, cpu=worst.cpu, nvme=worst.nvme,
        gpu_memory=gpu_spec(scenario.gpu).memory_bytes,
        comm=communication(scenario, strategy, psi_gpu=psi_gpu), stages=stages, notes=notes,
    )


# --------------------------------------------------------------------------------------------
# Sweep over strategies × GPU counts (vectorised)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemorySweep:
    """Per-GPU bytes for each strategy (rows) at each GPU count (columns); NaN where the count is
    not a multiple of TP × PP."""

    strategies: tuple[str, ...]
    n_gpus: np.ndarray
    totals: np.ndarray
    model_states: np.ndarray
    gpu_memory: float
    smallest_fit: dict[str, int | None]


def totals_at(scenario: Scenario, strategy: str, n_gpus, options: Options | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-GPU bytes of the busiest stage (total, model states) at each GPU count in ``n_gpus``.

    NaN where a count is not a multiple of TP × PP (or, for hybrid sharding, not whole nodes). The same :func:`_stage_bytes` as :func:`breakdown`, evaluated at
    many shard degrees at once: the sweep, the throughput chart's verdict and the headline agree."""
    require_choice(strategy, "strategy", STRATEGIES)
    options = options or Options()
    n = np.atleast_1d(np.asarray(n_gpus))
    mp = scenario.tp * scenario.pp
    valid = (n >= 1) & (n % mp == 0)
    dp = np.maximum(n // mp, 1)
    shard = shard_group(strategy, dp, scenario.gpus_per_node, scenario.tp, scenario.pp)
    b = _stage_bytes(scenario, strategy, options, shard)
    cols = np.arange(len(n))
    worst = b["total"].argmax(axis=0)     # the first busiest stage, as breakdown's max() picks it
    total = b["total"][worst, cols]
    states = (b["params"] + b["grads"] + b["optimizer"])[worst, cols]
    if strategy == "fsdp-hybrid":
        valid = valid & hybrid_valid(dp, scenario.gpus_per_node, scenario.tp, scenario.pp)
    return np.where(valid, total, np.nan), np.where(valid, states, np.nan)


def sweep(scenario: Scenario, strategies: Sequence[str] = STRATEGIES, max_gpus: int = 1024,
          options: Options | None = None) -> MemorySweep:
    """Whole-breakdown totals for N = 1…max_gpus at once.

    :func:`totals_at`: one [stages × N] numpy evaluation per strategy kind, the busiest stage its
    column maximum."""
    max_gpus = require_int(max_gpus, "max_gpus", 1, 1_048_576)
    for s in strategies:
        require_choice(s, "strategy", STRATEGIES)
    options = options or Options()
    n = np.arange(1, max_gpus + 1)
    totals = np.full((len(strategies), max_gpus), np.nan)
    states_out = np.full((len(strategies), max_gpus), np.nan)
    smallest: dict[str, int | None] = {}
    memory = gpu_spec(scenario.gpu).memory_bytes
    cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    for row, strategy in enumerate(strategies):
        key = (STAGE_OF[strategy], strategy == "fsdp-hybrid")   # FSDP full shard is ZeRO-3's bytes
        if key not in cache:
            cache[key] = totals_at(scenario, strategy, n, options)
        totals[row], states_out[row] = cache[key]
        fit = np.flatnonzero(totals[row] <= memory)
        smallest[strategy] = int(n[fit[0]]) if fit.size else None
    return MemorySweep(tuple(strategies), n, totals, states_out, memory, smallest)


def smallest_fitting_gpus(scenario: Scenario, max_gpus: int = 1024, options: Options | None = None) -> dict[str, int | None]:
    """Smallest GPU count (a multiple of TP × PP, ≤ max_gpus) at which each strategy fits; None if none."""
    return sweep(scenario, STRATEGIES, max_gpus, options).smallest_fit


# --------------------------------------------------------------------------------------------
# Timeline: DP → ZeRO-1 → ZeRO-2 → ZeRO-3, one category splitting into shards at a time
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZeroFrame:
    """One animation frame: per-GPU bytes of every category, and what is split or offloaded.

    ``bytes`` holds all :data:`CATEGORIES`, so a chapter's last frame is the strategy bar's total;
    ``split`` says how far each model-state category is split (0…1), ``kept`` what stays on this
    GPU once the chapter ends, ``offloaded`` where the offloaded categories go ("CPU" or "NVMe")
    and ``host`` the bytes already off the GPU."""

    index: int
    stage_label: str
    split: dict[str, float]
    bytes: dict[str, float]
    dp: int
    shard: int = 0                  # GPUs one shard set spans (hybrid sharding: a node's DP ranks)
    kept: dict[str, float] = field(default_factory=dict)
    offloaded: dict[str, str] = field(default_factory=dict)
    host: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.bytes.values())


def timeline_strategies(scenario: Scenario) -> tuple[str, ...]:
    """The strategies the animation's chapters end on: DP, ZeRO-1, ZeRO-2 and a stage-3 one.

    The last is hybrid sharding when it is the scenario's, else ZeRO-3 (FSDP full shard holds
    ZeRO-3's bytes)."""
    return (*TIMELINE_STAGES[:3], "fsdp-hybrid" if scenario.strategy == "fsdp-hybrid" else "zero3")


def zero_timeline(scenario: Scenario, frames_per_step: int = 15, hold: int = 8,
                  options: Options | None = None) -> tuple[list[ZeroFrame], list[tuple[int, str]]]:
    """Frames (and chapter marks) that shard the optimizer, then gradients, then parameters.

    Each chapter ends on a key frame that IS that strategy's :func:`breakdown` (with offload the
    offloaded states leave the GPU there), and every category's bytes interpolate linearly from
    one key frame to the next while the chapter's category splits 0 → 1.
    """
    frames_per_step = require_int(frames_per_step, "frames_per_step", 1, 600)
    hold = require_int(hold, "hold", 0, 600)
    options = options or Options()
    path = timeline_strategies(scenario)
    keys = [breakdown(scenario, s, options) for s in path]
    host_name = "NVMe" if scenario.offload_target == "nvme" else "CPU"
    dp = max(1, scenario.dp)
    frames: list[ZeroFrame] = []
    chapters: list[tuple[int, str]] = []
    split = {c: 0.0 for c in SHARD_ORDER}

    def emit(j: int, t: float) -> None:
        """A frame ``t`` of the way from key frame j − 1 to key frame j (j = 0: DP itself)."""
        a, b = keys[max(j - 1, 0)], keys[j]
        now = {c: (1 - t) * getattr(a, c) + t * getattr(b, c) for c in CATEGORIES}   # t = 1: exactly b
        moving = SHARD_ORDER[j - 1] if j else None
        kept = {c: (getattr(b, c) if c == moving else now[c]) for c in CATEGORIES}
        moved = offloaded_categories(STAGE_OF[path[j]], scenario.offload_optimizer, scenario.offload_params)
        host = (1 - t) * (a.cpu + a.nvme) + t * (b.cpu + b.nvme)
        frames.append(ZeroFrame(len(frames), STRATEGY_LABELS[path[j]], dict(split), now, dp, b.shard, kept,
                                {c: host_name for c in moved}, host))

    chapters.append((0, STRATEGY_LABELS[path[0]]))
    for _ in range(hold):
        emit(0, 1.0)
    for j, category in enumerate(SHARD_ORDER, start=1):
        chapters.append((len(frames), STRATEGY_LABELS[path[j]]))
        for k in range(1, frames_per_step + 1):
            split[category] = k / frames_per_step
            emit(j, k / frames_per_step)
        for _ in range(hold):
            emit(j, 1.0)
    return frames, chapters


def gb(x: float) -> float:
    """Bytes → GB (1e9), the ZeRO paper's unit."""
    return x / 1e9


__all__ = [
    "ModelStates", "model_state_bytes", "activation_bytes_per_layer", "layer_activation_bytes",
    "optimizer_bytes_per_param", "per_stage_memory", "StageMemory", "breakdown", "MemoryBreakdown",
    "sweep", "MemorySweep", "smallest_fitting_gpus", "communication", "Communication", "zero_timeline",
    "ZeroFrame", "Options", "gb", "totals_at", "offloaded_categories", "timeline_strategies",
]
