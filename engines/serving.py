"""Inference serving arithmetic: replica memory, capacity, roofline decode/prefill speed.

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

- Batching: static batching (a naive loop: a batch runs until its longest request ends) versus
  iteration-level "continuous" batching, where requests join and leave at every step (Yu et al.,
  *Orca*, OSDI'22); simulated event by event under Poisson arrivals (see :func:`simulate_batching`).
  Latency targets on time to first token and time per output token follow DistServe (Zhong et
  al., OSDI'24, arXiv 2401.09670).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from engines.errors import ValidationError, require_int, require_number
from engines.hardware import GPU, gpu as gpu_by_key
from engines.models import ModelArch

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


# --- discrete-event batching simulation ----------------------------------------------------

DISTRIBUTIONS = ("fixed", "uniform", "exponential")
MIN_RATE_PER_S = 1e-9
"""Slowest arrival rate: the arrival span (≈ n_requests / rate) then stays far inside float range."""
POLICIES = ("static", "continuous")


@dataclass(frozen=True)
class Workload:
    """Poisson arrivals at ``rate_per_s`` with prompt/output lengths drawn around their means.

    ``exponential`` lengths (clipped to 1…4× the mean) mimic chat traces whose outputs vary
    widely; ``uniform`` draws from 0.5…1.5× the mean; ``fixed`` uses the means.
    """

    rate_per_s: float
    n_requests: int = 300
    prompt_mean: int = 512
    output_mean: int = 128
    distribution: str = "exponential"
    seed: int = 0

    def __post_init__(self) -> None:
        require_number(self.rate_per_s, "rate_per_s", MIN_RATE_PER_S, 1e6)
        require_int(self.n_requests, "n_requests", 1, 100_000)
        require_int(self.prompt_mean, "prompt_mean", 1, 1_000_000)
        require_int(self.output_mean, "output_mean", 1, 1_000_000)
        if self.distribution not in DISTRIBUTIONS:
            raise ValidationError("distribution", f"{self.distribution!r} is not known", ", ".join(DISTRIBUTIONS))
        require_int(self.seed, "seed", 0)

    def sample(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Arrival times (s), prompt lengths and output lengths (tokens), reproducible from ``seed``."""
        rng = np.random.default_rng(self.seed)
        arrivals = np.cumsum(rng.exponential(1.0 / self.rate_per_s, self.n_requests))
        return arrivals, self._lengths(rng, self.prompt_mean), self._lengths(rng, self.output_mean)

    def _lengths(self, rng: np.random.Generator, mean: int) -> np.ndarray:
        n = self.n_requests
        if self.distribution == "fixed":
            return np.full(n, mean, dtype=np.int64)
        if self.distribution == "uniform":
            x = rng.uniform(0.5 * mean, 1.5 * mean, n)
        else:
            x = rng.exponential(mean, n)
        return np.clip(np.rint(x), 1, 4 * mean).astype(np.int64)


@dataclass(frozen=True)
class SimResult:
    """Per-request times (s) and the percentiles a serving benchmark reports."""

    policy: str
    max_batch: int
    arrival: np.ndarray
    start: np.ndarray          # admitted into a batch
    first_token: np.ndarray
    finish: np.ndarray
    slot: np.ndarray           # batch slot the request occupied (for the timeline)
    prompt: np.ndarray
    output: np.ndarray
    iterations: int

    @property
    def makespan(self) -> float:
        return float(self.finish.max() - self.arrival.min())

    @property
    def throughput_tokens_per_s(self) -> float:
        """Output tokens per second over the whole simulated span."""
        return float(self.output.sum()) / self.makespan

    @property
    def ttft(self) -> np.ndarray:
        return self.first_token - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        """Time per output token after the first (requests with one output token are left out)."""
        many = self.output > 1
        return (self.finish[many] - self.first_token[many]) / (self.output[many] - 1)

    @property
    def latency(self) -> np.ndarray:
        return self.finish - self.arrival

    def percentile(self, metric: str, q: float) -> float:
        values = {"ttft": self.ttft, "tpot": self.tpot, "latency": self.latency}[metric]
        return float(np.percentile(values, q)) if values.size else 0.0

    def summary(self) -> dict:
        out = {"policy": self.policy, "max_batch": self.max_batch, "requests": int(self.arrival.size),
               "throughput_tokens_per_s": self.throughput_tokens_per_s, "iterations": self.iterations}
        for metric in ("ttft", "tpot", "latency"):
            for q in (50, 90, 99):
                out[f"{metric}_p{q}_s"] = self.percentile(metric, q)
        return out


def simulate_batching(cost: StepCost, workload: Workload, policy: str, max_batch: int,
                      kv_capacity_tokens: int | None = None) -> SimResult:
    """Discrete-event simulation of one replica under ``workload``.

    ``static``: when idle, take up to ``max_batch`` queued requests, prefill them padded to the
    longest prompt, then decode every slot until the longest output is done; nobody joins
    mid-batch. ``continuous`` (Orca's iteration-level scheduling): before every iteration, admit
    queued requests while a slot and KV room (prompt + output reserved, as Orca does) are free;
    newcomers are prefilled inside that iteration, every running request gains one token, and
    finished requests leave at once. Iteration time comes from the roofline :class:`StepCost`.
    """
    if policy not in POLICIES:
        raise ValidationError("policy", f"{policy!r} is not known", ", ".join(POLICIES))
    max_batch = require_int(max_batch, "max_batch", 1, 100_000)
    arrival, prompt, output = workload.sample()
    cap = float("inf") if kv_capacity_tokens is None else require_int(kv_capacity_tokens, "kv_capacity_tokens", 1)
    need = prompt + output
    if np.any(need > cap):
        raise ValidationError("kv_capacity_tokens", f"a request of {int(need.max())} tokens exceeds the KV room "
                              f"of {int(cap)} tokens", "more GPUs, fewer KV bits or shorter requests")
    run = _simulate_static if policy == "static" else _simulate_continuous
    start, first, finish, slot, iters = run(cost, arrival, prompt, output, max_batch, cap)
    return SimResult(policy=policy, max_batch=max_batch, arrival=arrival, start=start, first_token=first,
                     finish=finish, slot=slot, prompt=prompt, output=output, iterations=iters)


def _step_times(cost: StepCost, batch: int, contexts: np.ndarray) -> np.ndarray:
    """Vectorized :meth:`StepCost.decode_step` over an array of contexts."""
    compute = (cost.flops_per_token * batch + cost.attn_flops_per_pair * batch * contexts) / (cost.n_gpus * cost.peak_flops)
    memory = (cost.weight_bytes + cost.kv_bytes_per_token * batch * contexts) / (cost.n_gpus * cost.bandwidth)
    return np.maximum(compute, memory) + cost.step_overhead_s


def _simulate_static(cost, arrival, prompt, output, max_batch, cap):
    n = arrival.size
    start, first, finish, slot = (np.zeros(n) for _ in range(4))
    t, i, iters = 0.0, 0, 0
    while i < n:
        t = max(t, arrival[i])
        j = int(np.searchsorted(arrival, t, side="right"))
        b = max(1, min(j - i, max_batch))
        p_max, o_max = int(prompt[i:i + b].max()), int(output[i:i + b].max())
        while b > 1 and b * (p_max + o_max) > cap:        # padded reservation must fit the KV room
            b -= 1
            p_max, o_max = int(prompt[i:i + b].max()), int(output[i:i + b].max())
        idx = np.arange(i, i + b)
        t_first = t + cost.prefill(p_max, b)
        steps = np.cumsum(_step_times(cost, b, p_max + np.arange(1, o_max))) + t_first
        start[idx], first[idx], slot[idx] = t, t_first, np.arange(b)
        finish[idx] = np.where(output[idx] > 1, steps[np.maximum(output[idx] - 2, 0)] if steps.size else t_first,
                               t_first)
        t = steps[-1] if steps.size else t_first
        iters += o_max
        i += b
    return start, first, finish, slot, iters


def _simulate_continuous(cost, arrival, prompt, output, max_batch, cap):
    n = arrival.size
    start, first, finish, slot = (np.zeros(n) for _ in range(4))
    waiting: deque[int] = deque()
    run_ids = np.zeros(0, dtype=np.int64)   # running requests, their context length and tokens still to emit
    ctx = np.zeros(0, dtype=np.int64)
    left = np.zeros(0, dtype=np.int64)
    free_slots = list(range(max_batch - 1, -1, -1))
    reserved = 0.0
    t, nxt, done, iters = 0.0, 0, 0, 0
    while done < n:
        while nxt < n and arrival[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        joined = []
        while waiting and free_slots and reserved + prompt[waiting[0]] + output[waiting[0]] <= cap:
            r = waiting.popleft()
            reserved += prompt[r] + output[r]
            joined.append(r)
            start[r], slot[r] = t, free_slots.pop()
        if run_ids.size == 0 and not joined:
            t = arrival[nxt]
            continue
        if joined:                                       # one iteration: prefill newcomers + one decode step
            p = prompt[joined].astype(float)
            ctx_sum = float(ctx.sum())
            t += cost.seconds(p.sum() + run_ids.size, float((p * (p + 1) / 2).sum()) + ctx_sum, p.sum() + ctx_sum)
            steps = 1
            first[joined] = t
            ctx, left = ctx + 1, left - 1
            run_ids = np.concatenate([run_ids, joined])
            ctx = np.concatenate([ctx, prompt[joined] + 1])
            left = np.concatenate([left, output[joined] - 1])
        else:                                            # pure decode: fast-forward until a finish or a join
            k = int(left.min())
            times = np.cumsum(_step_times(cost, run_ids.size, ctx.sum() / run_ids.size + np.arange(k)))
            if not waiting and free_slots and nxt < n:   # the next arrival joins after the step it lands in
                k = min(k, int(np.searchsorted(t + times, arrival[nxt], side="left")) + 1)
            t += float(times[k - 1])
            steps = k
            ctx, left = ctx + k, left - k
        iters += steps
        gone = left <= 0
        for r in run_ids[gone]:
            finish[r] = t
            free_slots.append(int(slot[r]))
            reserved -= prompt[r] + output[r]
        done += int(gone.sum())
        run_ids, ctx, left = run_ids[~gone], ctx[~gone], left[~gone]
    return start, first, finish, slot, iters


@dataclass(frozen=True)
class LatencyTarget:
    """Service-level objective on the 90th percentiles of TTFT and TPOT (DistServe-style)."""

    ttft_p90_s: float = 2.0
    tpot_p90_s: float = 0.10

    def __post_init__(self) -> None:
        require_number(self.ttft_p90_s, "ttft_p90_s", 0, 3600, lo_open=True)
        require_number(self.tpot_p90_s, "tpot_p90_s", 0, 60, lo_open=True)

    def met_by(self, result: SimResult) -> bool:
        return result.percentile("ttft", 90) <= self.ttft_p90_s and result.percentile("tpot", 90) <= self.tpot_p90_s


def saturation_rate(cost: StepCost, workload: Workload, max_batch: int) -> float:
    """Requests/s a full continuous batch can sustain (roofline): batch / (output × step time)."""
    max_batch = require_int(max_batch, "max_batch", 1, 100_000)
    ctx = workload.prompt_mean + workload.output_mean / 2
    return max_batch / (workload.output_mean * float(_step_times(cost, max_batch, np.array([ctx]))[0])
                        + workload.prompt_mean * cost.flops_per_token / (cost.n_gpus * cost.peak_flops))


def max_rate_under_target(cost: StepCost, workload: Workload, policy: str, max_batch: int, target: LatencyTarget,
                          kv_capacity_tokens: int | None = None, iterations: int = 12) -> tuple[float, SimResult | None]:
    """Highest Poisson rate (req/s) whose simulation meets ``target``, by bisection; (0, None) if none does."""
    iterations = require_int(iterations, "iterations", 0, 100)
    hi = 3.0 * saturation_rate(cost, workload, max_batch)
    lo, best = 0.0, None

    def run(rate: float) -> SimResult:
        return simulate_batching(cost, _with_rate(workload, rate), policy, max_batch, kv_capacity_tokens)

    low_probe = run(hi / 1000)
    if not target.met_by(low_probe):
        return 0.0, None
    lo, best = hi / 1000, low_probe
    for _ in range(iterations):
        mid = (lo + hi) / 2
        res = run(mid)
        if target.met_by(res):
            lo, best = mid, res
        else:
            hi = mid
    return lo, best


@dataclass(frozen=True)
class Sizing:
    """Replicas and GPUs for a traffic estimate under a latency target."""

    rate_per_s: float
    policy: str
    max_rate_per_replica: float
    replicas: int
    gpus_per_replica: int
    gpus: int
    throughput_per_replica_tokens_per_s: float
    feasible: bool


def size_deployment(scenario, rate_per_s: float, target: LatencyTarget, policy: str = "continuous",
                    workload: Workload | None = None) -> Sizing:
    """GPUs needed to serve ``rate_per_s`` requests/s: replicas = ⌈rate / per-replica max rate⌉.

    A load balancer splits a Poisson stream into independent Poisson streams, so each replica is
    simulated at rate/replicas with the scenario's batch as its slot count.
    """
    rate = require_number(rate_per_s, "rate_per_s", 0, 1e7, lo_open=True)
    mem = replica_memory(scenario)
    cost = step_cost(scenario, mem.gpus_needed)
    wl = workload or Workload(rate_per_s=1.0, prompt_mean=min(512, scenario.serve_context // 2),
                              output_mean=min(128, max(1, scenario.serve_context // 4)))
    cap = capacity(scenario, mem.gpus_needed).max_tokens
    per, best = max_rate_under_target(cost, wl, policy, scenario.serve_batch, target, cap)
    if per <= 0 or best is None:
        return Sizing(rate, policy, 0.0, 0, mem.gpus_needed, 0, 0.0, False)
    replicas = math.ceil(rate / per)
    return Sizing(rate_per_s=rate, policy=policy, max_rate_per_replica=per, replicas=replicas,
                  gpus_per_replica=mem.gpus_needed, gpus=replicas * mem.gpus_needed,
                  throughput_per_replica_tokens_per_s=best.throughput_tokens_per_s, feasible=True)


def _with_rate(workload: Workload, rate: float) -> Workload:
    from dataclasses import replace

    return replace(workload, rate_per_s=rate)


__all__ = ["POLICIES", "DISTRIBUTIONS", "Workload", "SimResult", "simulate_batching", "LatencyTarget", "saturation_rate",
           "max_rate_under_target", "Sizing", "size_deployment", "kv_cache_bytes", "kv_bytes_per_token", "weight_bytes", "activation_bytes", "ReplicaMemory",
           "replica_memory", "Capacity", "capacity", "StepCost", "step_cost", "FormatSpeed", "format_speeds",
           "compute_format", "valid_tp_degrees", "GIB"]
