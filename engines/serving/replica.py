"""One serving replica: its memory, the KV room left, and the roofline speed of a decode or prefill step.

Sources (also in ``assets/lessons/serving.md``):
- KV cache = 2 (K and V) × layers × KV heads × head dim × bytes/element × tokens × sequences
  (Kwon et al., *Efficient Memory Management for LLM Serving with PagedAttention*, SOSP'23,
  arXiv 2309.06180, §2–3; Llama 3 70B at 8,192 tokens × 32 sequences in bf16 = 80 GiB).
- Weights = parameters × bits/8; 4-bit weights carry an fp16 scale and zero per group of 128
  input columns, 4 + 32/128 = 4.25 bits per weight (GPTQ/AWQ group quantization, Frantar et al.
  arXiv 2210.17323, Lin et al. arXiv 2306.00978).
- Decode is bandwidth-bound: each step streams every weight once (shared by the batch) plus each
  sequence's KV cache; prefill is compute-bound at 2 FLOPs per parameter per token plus the
  attention term (Kaplan et al. 2020, arXiv 2001.08361, Table 1; Pope et al., *Efficiently
  Scaling Transformer Inference*, arXiv 2211.05102, §2). Both are roofline bounds (Williams et
  al., CACM 2009): real kernels reach a fraction of them.
- Usable memory per GPU: vLLM's default ``gpu_memory_utilization = 0.9``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


from engines.core.errors import ValidationError, require_int, require_number
from engines.core.hardware import GPU, gpu as gpu_by_key
from engines.core.models import ModelArch

GIB = 2**30

WEIGHT_BITS_EFFECTIVE = {16: 16.0, 8: 8.0, 4: 4.25}
"""Stored bits per weight: bf16; int8/fp8 with per-channel scales (negligible); int4 g128 + fp16 scale/zero."""
KV_BITS_EFFECTIVE = {16: 16.0, 8: 8.0, 4: 4.25}
"""Stored bits per KV element: bf16; fp8 (per-tensor scale); int4 with fp16 scale/zero per 128 elements."""
FORMAT_LABELS = {16: "bf16", 8: "8-bit (fp8/int8)", 4: "int4 g128"}

GPU_MEMORY_UTILIZATION = 0.9
"""Fraction of each GPU the server may use (vLLM default ``gpu_memory_utilization``)."""
RUNTIME_OVERHEAD_PER_GPU = 1 * GIB
"""CUDA context, cuBLAS/NCCL workspaces and allocator slack per GPU: an estimate, framework-dependent."""
PREFILL_CHUNK_TOKENS = 8192
"""Tokens processed in one forward pass when profiling activation memory (vLLM-style chunked prefill)."""


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, seq_len: int, batch: int,
                   bytes_per_element: float = 2) -> int:
    """KV-cache bytes: 2 (K and V) × layers × KV heads × head dim × bytes × tokens × sequences.

    Source: Kwon et al. 2023 (PagedAttention), §3. Fractional ``bytes_per_element`` (0.5 for
    4-bit) is allowed; the result is rounded up to whole bytes.
    """
    layers = require_int(layers, "layers", 1)
    kv_heads = require_int(kv_heads, "kv_heads", 1)
    head_dim = require_int(head_dim, "head_dim", 1)
    seq_len = require_int(seq_len, "seq_len", 0)
    batch = require_int(batch, "batch", 0)
    bpe = require_number(bytes_per_element, "bytes_per_element", 0, 64, lo_open=True)
    return int(math.ceil(2 * layers * kv_heads * head_dim * seq_len * batch * bpe))


def kv_bytes_per_token(arch: ModelArch, kv_bits: int = 16) -> float:
    """KV bytes one token adds to the cache at ``kv_bits`` (see :data:`KV_BITS_EFFECTIVE`)."""
    return 2 * arch.layers * arch.kv_heads * arch.head_dim * _kv_bits(kv_bits) / 8


def weight_bytes(arch: ModelArch, weight_bits: int = 16) -> int:
    """Bytes of all weights at ``weight_bits`` (every matrix quantized, embeddings included)."""
    return int(math.ceil(arch.param_count() * _weight_bits(weight_bits) / 8))


def activation_bytes(arch: ModelArch, batch: int, chunk_tokens: int = PREFILL_CHUNK_TOKENS) -> int:
    """Peak transient activations of one forward pass in bf16 (inference keeps no activations).

    Layers run one after another, so the peak is one layer's live tensors for ``chunk_tokens``
    tokens: residual + normed input (2h), Q/K/V ((n_h + 2 n_kv)·d), and the MLP's gate, up and
    product (3·ffn for SwiGLU, 2·ffn for GeLU), plus fp32 logits for each sequence's last token.
    FlashAttention never materializes the s² score matrix (Dao et al. 2022, arXiv 2205.14135).
    """
    batch = require_int(batch, "batch", 1, 100_000)
    chunk_tokens = require_int(chunk_tokens, "chunk_tokens", 1, 10_000_000)
    per_token = 2 * arch.hidden + (arch.heads + 2 * arch.kv_heads) * arch.head_dim
    per_token += (3 if arch.mlp == "swiglu" else 2) * arch.ffn
    return int(2 * per_token * chunk_tokens + 4 * arch.vocab * batch)


def valid_tp_degrees(arch: ModelArch, limit: int = 1024) -> list[int]:
    """Tensor-parallel degrees that split the attention heads evenly (Megatron-style TP)."""
    return [t for t in range(1, min(arch.heads, limit) + 1) if arch.heads % t == 0]


@dataclass(frozen=True)
class ReplicaMemory:
    """Memory of one serving replica (bytes; GB = 1e9, GiB = 2^30 where shown)."""

    weights_bytes: int
    kv_bytes: int
    activation_bytes: int
    overhead_bytes: int          # runtime overhead summed over the replica's GPUs
    total_bytes: int
    gpus_needed: int             # smallest head-dividing TP degree whose GPUs hold the replica
    gpus_min: int                # memory alone, ignoring how heads split
    gpu: str
    gpu_memory_bytes: float
    usable_per_gpu_bytes: float  # memory × GPU_MEMORY_UTILIZATION
    weight_bits: int
    kv_bits: int
    batch: int
    context: int

    @property
    def per_gpu_bytes(self) -> float:
        return self.total_bytes / self.gpus_needed

    def parts(self) -> list[tuple[str, int]]:
        return [("weights", self.weights_bytes), ("KV cache", self.kv_bytes),
                ("activations", self.activation_bytes), ("overhead", self.overhead_bytes)]


def replica_memory(scenario, gpu_key: str | None = None) -> ReplicaMemory:
    """Memory of one replica serving ``serve_batch`` sequences of ``serve_context`` tokens.

    total = weights(weight_bits) + KV(kv_bits, batch × context) + activations + n × runtime
    overhead; ``gpus_needed`` is the smallest tensor-parallel degree dividing the head count with
    (weights + KV + activations)/n + overhead ≤ 0.9 × GPU memory. The KV cache is split over all n
    GPUs: past the KV-head count pure TP would keep max(1, n_kv/n) heads per GPU and store each more
    than once (vLLM), so a replica that large is assumed to add pipeline stages instead (TP n_kv ×
    PP n/n_kv), which splits the cache without copies.
    """
    arch = scenario.arch
    card = gpu_by_key(gpu_key or scenario.gpu)
    w = weight_bytes(arch, scenario.weight_bits)
    kv = kv_cache_bytes(arch.layers, arch.kv_heads, arch.head_dim, scenario.serve_context,
                        scenario.serve_batch, _kv_bits(scenario.kv_bits) / 8)
    act = activation_bytes(arch, scenario.serve_batch, min(scenario.serve_context, PREFILL_CHUNK_TOKENS))
    usable = card.memory_bytes * GPU_MEMORY_UTILIZATION
    room = usable - RUNTIME_OVERHEAD_PER_GPU
    payload = w + kv + act
    gpus_min = max(1, math.ceil(payload / room))
    gpus = next((t for t in valid_tp_degrees(arch, limit=1_000_000) if t >= gpus_min), gpus_min)
    overhead = gpus * RUNTIME_OVERHEAD_PER_GPU
    return ReplicaMemory(weights_bytes=w, kv_bytes=kv, activation_bytes=act, overhead_bytes=overhead,
                         total_bytes=payload + overhead, gpus_needed=gpus, gpus_min=gpus_min, gpu=card.key,
                         gpu_memory_bytes=card.memory_bytes, usable_per_gpu_bytes=usable,
                         weight_bits=scenario.weight_bits, kv_bits=scenario.kv_bits,
                         batch=scenario.serve_batch, context=scenario.serve_context)


@dataclass(frozen=True)
class Capacity:
    """What fits in the KV room left on ``n_gpus`` GPUs after weights, activations and overhead."""

    n_gpus: int
    kv_room_bytes: float
    max_tokens: int              # total cached tokens across all sequences
    max_batch_at_context: int    # sequences of serve_context tokens
    max_context_at_batch: int    # tokens per sequence at serve_batch sequences


def capacity(scenario, n_gpus: int | None = None) -> Capacity:
    """Largest batch (at the scenario's context) and context (at its batch) that fit."""
    arch = scenario.arch
    n = require_int(n_gpus, "n_gpus", 1) if n_gpus is not None else replica_memory(scenario).gpus_needed
    card = gpu_by_key(scenario.gpu)
    usable = n * (card.memory_bytes * GPU_MEMORY_UTILIZATION - RUNTIME_OVERHEAD_PER_GPU)
    act = activation_bytes(arch, scenario.serve_batch, min(scenario.serve_context, PREFILL_CHUNK_TOKENS))
    room = max(0.0, usable - weight_bytes(arch, scenario.weight_bits) - act)
    per_token = kv_bytes_per_token(arch, scenario.kv_bits)
    tokens = int(room // per_token)
    return Capacity(n_gpus=n, kv_room_bytes=room, max_tokens=tokens,
                    max_batch_at_context=tokens // scenario.serve_context,
                    max_context_at_batch=tokens // scenario.serve_batch)


# --- roofline speed ------------------------------------------------------------------------

@dataclass(frozen=True)
class StepCost:
    """Roofline cost model of one forward iteration on ``n_gpus`` GPUs (ideal tensor parallelism).

    time = max(FLOPs / (n × peak), bytes / (n × HBM bandwidth)) + ``step_overhead_s``.
    FLOPs = 2·P per new token (Kaplan et al. 2020) + 4·L·n_h·d per (token, attended token)
    (QKᵀ and AV, Pope et al. 2022); bytes = weights once + KV of every attended token.
    """

    weight_bytes: float
    kv_bytes_per_token: float
    flops_per_token: float       # 2 × parameters
    attn_flops_per_pair: float   # 4 × layers × heads × head_dim
    peak_flops: float            # per GPU, at the compute format
    bandwidth: float             # per GPU, bytes/s
    n_gpus: int
    step_overhead_s: float = 0.0

    def seconds(self, new_tokens: float, attended_pairs: float, kv_tokens_read: float) -> float:
        compute = (self.flops_per_token * new_tokens + self.attn_flops_per_pair * attended_pairs) / (
            self.n_gpus * self.peak_flops)
        memory = (self.weight_bytes + self.kv_bytes_per_token * kv_tokens_read) / (self.n_gpus * self.bandwidth)
        return max(compute, memory) + self.step_overhead_s

    def decode_step(self, batch: int, context: float) -> float:
        """One decode iteration: ``batch`` new tokens, each attending ``context`` cached tokens."""
        batch = require_int(batch, "batch", 1)
        context = require_number(context, "context", 0)
        return self.seconds(batch, batch * context, batch * context)

    def prefill(self, prompt_tokens: int, sequences: int = 1) -> float:
        """Prefill of ``sequences`` prompts of ``prompt_tokens`` (causal: p(p+1)/2 pairs each)."""
        prompt_tokens = require_int(prompt_tokens, "prompt_tokens", 1)
        sequences = require_int(sequences, "sequences", 1)
        pairs = sequences * prompt_tokens * (prompt_tokens + 1) / 2
        return self.seconds(sequences * prompt_tokens, pairs, sequences * prompt_tokens)


def compute_format(card: GPU, weight_bits: int) -> str:
    """Tensor-core format of the matmuls: W8A8 runs in fp8 (or int8 without fp8); W4A16 and bf16 in bf16.

    4-bit weights are de-quantized in the kernel and multiplied in bf16 (Marlin/AWQ kernels), so
    only 8-bit serving uses the faster tensor-core rate.
    """
    if weight_bits == 8:
        return "fp8" if card.fp8_tflops > 0 else "int8"
    return "bf16"


def step_cost(scenario, n_gpus: int | None = None, gpu_key: str | None = None,
              step_overhead_s: float = 0.0) -> StepCost:
    """The :class:`StepCost` of the scenario's model and formats on ``n_gpus`` of its GPU."""
    arch = scenario.arch
    card = gpu_by_key(gpu_key or scenario.gpu)
    n = require_int(n_gpus, "n_gpus", 1) if n_gpus is not None else replica_memory(scenario, card.key).gpus_needed
    require_number(step_overhead_s, "step_overhead_s", 0, 10)
    return StepCost(weight_bytes=weight_bytes(arch, scenario.weight_bits),
                    kv_bytes_per_token=kv_bytes_per_token(arch, scenario.kv_bits),
                    flops_per_token=2.0 * arch.param_count(),
                    attn_flops_per_pair=4.0 * arch.layers * arch.heads * arch.head_dim,
                    peak_flops=card.peak_flops(compute_format(card, scenario.weight_bits)),
                    bandwidth=card.bandwidth_gbps * 1e9, n_gpus=n, step_overhead_s=step_overhead_s)


@dataclass(frozen=True)
class FormatSpeed:
    """Memory and roofline speed of one weight/KV format pair for the scenario."""

    weight_bits: int
    kv_bits: int
    label: str
    gpus_needed: int
    total_bytes: int
    decode_tokens_per_s: float       # aggregate over the batch at serve_batch × serve_context/2
    decode_tokens_per_s_batch1: float
    prefill_seconds: float           # one prompt of min(serve_context, 2048) tokens
    bound: str                       # "memory" or "compute" for the batched decode step


def format_speeds(scenario) -> list[FormatSpeed]:
    """Speed and memory at every weight/KV format, each on the GPUs that format needs."""
    rows = []
    for wb in (16, 8, 4):
        for kb in (16, 8, 4):
            s = scenario.with_changes(weight_bits=wb, kv_bits=kb)
            mem = replica_memory(s)
            cost = step_cost(s, mem.gpus_needed)
            ctx = s.serve_context / 2
            t = cost.decode_step(s.serve_batch, ctx)
            comp = cost.flops_per_token * s.serve_batch + cost.attn_flops_per_pair * s.serve_batch * ctx
            bound = "compute" if comp / (cost.n_gpus * cost.peak_flops) >= (
                cost.weight_bytes + cost.kv_bytes_per_token * s.serve_batch * ctx) / (cost.n_gpus * cost.bandwidth) \
                else "memory"
            rows.append(FormatSpeed(
                weight_bits=wb, kv_bits=kb, label=f"W {FORMAT_LABELS[wb]} / KV {FORMAT_LABELS[kb]}",
                gpus_needed=mem.gpus_needed, total_bytes=mem.total_bytes,
                decode_tokens_per_s=s.serve_batch / t,
                decode_tokens_per_s_batch1=1.0 / cost.decode_step(1, ctx),
                prefill_seconds=cost.prefill(min(s.serve_context, 2048)), bound=bound))
    return rows


def _bits_of(bits: int, field: str, table: dict[int, float]) -> float:
    try:
        known = not isinstance(bits, bool) and bits in table
    except TypeError:  # unhashable (a list from JSON)
        known = False
    if not known:
        raise ValidationError(field, f"{bits!r} is not supported", ", ".join(str(b) for b in table))
    return table[bits]


def _weight_bits(bits: int) -> float:
    return _bits_of(bits, "weight_bits", WEIGHT_BITS_EFFECTIVE)


def _kv_bits(bits: int) -> float:
    return _bits_of(bits, "kv_bits", KV_BITS_EFFECTIVE)
