"""Measure this machine: a matrix multiply's FLOP/s and a memory copy's bytes/s with torch, on the CPU
and on CUDA when present, to set beside the datasheet peaks.

- GEMM: C = A·B of n×n matrices is 2n³ FLOP (n³ multiply-adds); float32 on the CPU, bfloat16 on CUDA
  (the precision the GPU's tensor-core peak is quoted in).
- Copy: ``dst.copy_(src)`` of S bytes reads S and writes S, counted as 2S bytes moved, as the STREAM
  benchmark's Copy kernel counts it (McCalpin 1995).
- Each figure is the median of timed repeats after a warm-up; CUDA work is synchronised before the
  clock is read. Nothing here is a model: these are this machine's numbers.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from engines.core.errors import Cancelled, require_choice, require_int
from engines.core.threads import torch_threads

KINDS = ("gemm", "copy")


@dataclass(frozen=True)
class Rate:
    """One measured rate on one device."""

    device: str            # "cpu" or "cuda"
    device_name: str
    kind: str              # "gemm" (FLOP/s) or "copy" (bytes/s)
    dtype: str
    size: int              # n for GEMM, bytes for copy
    value: float           # FLOP/s or bytes/s
    seconds: float         # median time of one repeat
    repeats: int
    threads: int


@dataclass(frozen=True)
class MachineMeasurement:
    rates: tuple[Rate, ...]
    peaks: tuple[float | None, ...] = ()   # the datasheet peak of each rate's device where the catalogue knows it

    def get(self, device: str, kind: str) -> Rate | None:
        return next((r for r in self.rates if r.device == device and r.kind == kind), None)


def _device_name(torch, device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    import platform

    return platform.processor() or platform.machine() or "CPU"


def _timed(torch, device: str, fn: Callable[[], None], repeats: int, cancelled: Callable[[], bool]) -> float:
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    fn()
    sync()
    times = []
    for _ in range(repeats):
        if cancelled():
            raise Cancelled()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure_gemm(device: str = "cpu", n: int = 1024, repeats: int = 5, threads: int = 2,
                 cancelled: Callable[[], bool] = lambda: False) -> Rate:
    """FLOP/s of an n×n matrix multiply on ``device`` (float32 on the CPU, bfloat16 on CUDA)."""
    import torch

    require_choice(device, "device", ("cpu", "cuda"))
    n = require_int(n, "n", 16, 16_384)
    repeats = require_int(repeats, "repeats", 1, 1000)
    threads = require_int(threads, "threads", 1, 256)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with torch_threads(threads):
        g = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(n, n, generator=g).to(device=device, dtype=dtype)
        b = torch.randn(n, n, generator=g).to(device=device, dtype=dtype)
        out = torch.empty(n, n, device=device, dtype=dtype)
        secs = _timed(torch, device, lambda: torch.matmul(a, b, out=out), repeats, cancelled)
    return Rate(device, _device_name(torch, device), "gemm", str(dtype).replace("torch.", ""), n,
                2.0 * n ** 3 / secs, secs, repeats, threads)


def measure_copy(device: str = "cpu", nbytes: int = 256 * 2**20, repeats: int = 5, threads: int = 2,
                 cancelled: Callable[[], bool] = lambda: False) -> Rate:
    """Bytes/s of copying ``nbytes`` between two buffers on ``device`` (read + write counted, as STREAM does)."""
    import torch

    require_choice(device, "device", ("cpu", "cuda"))
    nbytes = require_int(nbytes, "nbytes", 2**20, 2**34)
    repeats = require_int(repeats, "repeats", 1, 1000)
    threads = require_int(threads, "threads", 1, 256)
    with torch_threads(threads):
        src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        dst = torch.empty_like(src)
        secs = _timed(torch, device, lambda: dst.copy_(src), repeats, cancelled)
    moved = 2.0 * src.numel() * 4
    return Rate(device, _device_name(torch, device), "copy", "float32", int(src.numel() * 4), moved / secs, secs,
                repeats, threads)


def machine_devices(device: str) -> tuple[str, ...]:
    """What to measure for the app's compute device: the CPU always (the baseline every machine has), and
    CUDA only when it is the chosen device, so ``--device cpu`` never touches CUDA."""
    require_choice(device, "device", ("cpu", "cuda"))
    return ("cpu",) if device == "cpu" else ("cpu", "cuda")


def measure_machine(devices: tuple[str, ...] | None = None, gemm_n: int = 1024, copy_bytes: int = 256 * 2**20,
                    threads: int = 2, progress: Callable[[float, str], None] = lambda f, s: None,
                    cancelled: Callable[[], bool] = lambda: False) -> MachineMeasurement:
    """GEMM and copy on each device in ``devices`` (CUDA sizes grow 4× for GEMM and 8× for copy so the
    GPU is not measured on a job too small to fill it). ``devices`` None: the CPU only; pass
    :func:`machine_devices` of the app's device to add CUDA."""
    if devices is None:
        devices = ("cpu",)
    for d in devices:
        require_choice(d, "devices", ("cpu", "cuda"))
    rates: list[Rate] = []
    steps = [(d, k) for d in devices for k in KINDS]
    for i, (d, k) in enumerate(steps):
        progress(i / len(steps), f"{k} on {d}")
        if k == "gemm":
            rates.append(measure_gemm(d, gemm_n * (4 if d == "cuda" else 1), threads=threads, cancelled=cancelled))
        else:
            rates.append(measure_copy(d, copy_bytes * (8 if d == "cuda" else 1), threads=threads, cancelled=cancelled))
    progress(1.0, "done")
    return MachineMeasurement(tuple(rates), tuple(_peak_of(r) for r in rates))


def _peak_of(rate: Rate) -> float | None:
    """The catalogue's datasheet peak for a measured CUDA device (its bf16 FLOP/s or HBM bytes/s); None on a CPU."""
    if rate.device != "cuda":
        return None
    from engines.core.hardware import GPUS
    from engines.memory.step_measure import catalogue_peak

    if rate.kind == "gemm":
        return catalogue_peak(rate.device_name, "bfloat16")
    name = rate.device_name.lower().replace(" ", "")
    card = next((c for k, c in GPUS.items() if k.split("-")[0] in name), None)
    return card.bandwidth_gbps * 1e9 if card else None
