"""Compute-device resolution. torch is imported only when a device is actually needed."""
from __future__ import annotations

import ctypes
import importlib.util
import re
import sys
from functools import lru_cache
from pathlib import Path

from engines.core.errors import ValidationError

DEVICES = ("auto", "cpu", "cuda")


def torch_module():
    """Import torch on first use (it costs ~1.6 s, so never at start-up)."""
    import torch

    return torch


def resolve_device(name: str | None = "auto") -> str:
    """Map ``auto|cpu|cuda`` to a concrete torch device string; ``cuda`` without a GPU is an error."""
    name = name or "auto"
    if name not in DEVICES:
        raise ValidationError("device", f"{name!r} is not a device", ", ".join(DEVICES))
    if name == "cpu":
        return "cpu"
    cuda = cuda_available()
    if name == "cuda" and not cuda:
        raise ValidationError("device", "CUDA was requested but torch sees no CUDA device", "cpu, auto")
    return "cuda" if cuda else "cpu"


@lru_cache(maxsize=1)
def cuda_available() -> bool:
    """Whether torch sees a CUDA device. When torch is not loaded yet and could not see one anyway
    (a CPU-only build, or no NVIDIA driver), the answer comes without importing it: the window's
    device label then costs no torch (~200 MB resident) at start-up."""
    if "torch" not in sys.modules and not cuda_possible():
        return False
    try:
        return bool(torch_module().cuda.is_available())
    except Exception:  # torch missing or broken: CPU only
        return False


def cuda_possible() -> bool:
    """False only when torch certainly sees no GPU: its build names no CUDA or ROCm version
    (``torch/version.py``, read as text), or the NVIDIA driver's library does not load. Anything it
    cannot tell (a packaged app without the file, an unusual layout) leaves the question to torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return False
    try:
        text = (Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text(encoding="utf-8")
    except OSError:
        return True
    built_for = dict(re.findall(r"^(cuda|hip)\b[^=\n]*=\s*(.+?)\s*$", text, flags=re.M))
    if built_for and all(v == "None" for v in built_for.values()):
        return False
    if built_for.get("cuda", "None") == "None":
        return True                          # a ROCm build: torch.cuda is HIP, no NVIDIA driver to look for
    driver = {"win32": "nvcuda.dll", "darwin": ""}.get(sys.platform, "libcuda.so.1")
    if not driver:
        return False
    try:
        ctypes.CDLL(driver)
    except OSError:
        return False
    return True


def device_label(device: str) -> str:
    """Human name of a device for the status bar: the CUDA device name, or 'CPU'."""
    if device.startswith("cuda"):
        torch = torch_module()
        return f"CUDA: {torch.cuda.get_device_name(0)}"
    return "CPU"
