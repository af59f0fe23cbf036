"""Compute-device resolution. torch is imported only when a device is actually needed."""
from __future__ import annotations

from functools import lru_cache

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
    try:
        return bool(torch_module().cuda.is_available())
    except Exception:  # torch missing or broken: CPU only
        return False


def device_label(device: str) -> str:
    """Human name of a device for the status bar: the CUDA device name, or 'CPU'."""
    if device.startswith("cuda"):
        torch = torch_module()
        return f"CUDA: {torch.cuda.get_device_name(0)}"
    return "CPU"
