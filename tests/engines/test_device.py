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


def _fake_torch(tmp_path, monkeypatch, version_py: str | None):
    import importlib.machinery

    import engines.core.device as core_device

    pkg = tmp_path / "torch"
    pkg.mkdir()
    if version_py is not None:
        (pkg / "version.py").write_text(version_py, encoding="utf-8")
    spec = importlib.machinery.ModuleSpec("torch", None, is_package=True)
    spec.submodule_search_locations = [str(pkg)]
    monkeypatch.setattr(core_device.importlib.util, "find_spec", lambda name: spec if name == "torch" else None)
    return core_device


@pytest.mark.parametrize("version_py, driver_loads, expected", [
    ("cuda: Optional[str] = None\nhip: Optional[str] = None\n", True, False),     # a CPU build
    ("cuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n", False, False),  # CUDA build, no driver
    ("cuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n", True, True),
    ("cuda: Optional[str] = None\nhip: Optional[str] = '6.4'\n", False, True),    # ROCm: torch decides
    (None, False, True),                                                          # cannot tell: torch decides
])
def test_whether_cuda_is_possible_is_told_without_torch(tmp_path, monkeypatch, version_py, driver_loads, expected):
    core_device = _fake_torch(tmp_path, monkeypatch, version_py)
    loaded = []

    def cdll(name):
        loaded.append(name)
        if not driver_loads:
            raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(core_device.ctypes, "CDLL", cdll)
    monkeypatch.setattr(core_device.sys, "platform", "linux")
    assert core_device.cuda_possible() is expected
    if version_py and "'12.8'" in version_py:
        assert loaded == ["libcuda.so.1"]


def test_choosing_a_device_on_a_machine_without_cuda_imports_no_torch():
    """The window's device probe runs at start-up: without a GPU it must not load torch (~200 MB)."""
    import subprocess
    import sys

    from engines.core.device import cuda_possible

    if cuda_possible():
        pytest.skip("this machine could have CUDA: torch has to be asked")
    code = ("import sys; from engines.core.device import device_label, resolve_device; "
            "d = resolve_device('auto'); print(d, device_label(d), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["cpu", "CPU", "False"]
