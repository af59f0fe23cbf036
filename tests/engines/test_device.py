"""Compute-device resolution: what the status bar names and what engines are handed."""
from __future__ import annotations

import pytest

from engines.core.device import cuda_available, device_label, resolve_device
from engines.core.errors import ValidationError


def test_cpu_is_always_there_and_named():
    assert resolve_device("cpu") == "cpu" and device_label("cpu") == "CPU"


def test_unknown_devices_name_the_field():
    with pytest.raises(ValidationError) as exc:
        resolve_device("tpu")
    assert exc.value.field == "device"


def test_auto_and_cuda_follow_what_torch_sees():
    if cuda_available():
        assert resolve_device("auto") == resolve_device("cuda") == "cuda"
    else:
        assert resolve_device("auto") == "cpu"
        with pytest.raises(ValidationError) as exc:
            resolve_device("cuda")
        assert exc.value.field == "device"


def test_the_status_bar_names_the_card_torch_reports(monkeypatch):
    """Runs everywhere: torch's device-name call answers a name we chose, and the label must carry it."""
    torch = pytest.importorskip("torch")
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=None: asked.append(i) or "Example Card 9000")
    assert device_label("cuda") == "CUDA: Example Card 9000" and asked == [0]
    assert device_label("cpu") == "CPU" and asked == [0]                   # the CPU label asks torch nothing


@pytest.mark.gpu
def test_the_status_bar_names_the_cuda_device():
    import torch

    name = torch.cuda.get_device_properties(0).name                        # the driver's name for card 0
    assert name and device_label("cuda") == "CUDA: " + name
