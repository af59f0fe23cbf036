"""One device choice reaches every engine: with ``cpu`` nothing touches CUDA, even where torch says CUDA is there.

The stub makes ``torch.cuda.is_available()`` answer True (so any engine that probes for itself would take
CUDA) and makes every other way in raise: the ``torch.cuda`` calls the engines use, CUDA's lazy
initialisation (which every CUDA tensor goes through), ``torch.device("cuda")`` and ``Tensor.to("cuda")``.
Each engine entry that takes a device then runs with ``"cpu"`` on a small configuration.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from engines.core import device as core_device  # noqa: E402
from engines.core.scenario import Scenario  # noqa: E402


class CudaTouched(AssertionError):
    """Raised by the stub: something asked for CUDA although the device choice was cpu."""


def _touch(what: str):
    def fail(*_args, **_kwargs):
        raise CudaTouched(f"{what} was called with --device cpu")
    return fail


def _is_cuda(dev) -> bool:
    return (isinstance(dev, str) and dev.startswith("cuda")) or getattr(dev, "type", None) == "cuda"


CUDA_CALLS = ("_lazy_init", "init", "synchronize", "get_device_name", "get_device_properties", "device_count",
              "set_device", "current_device", "current_stream", "Event", "Stream", "stream", "CUDAGraph", "graph",
              "reset_peak_memory_stats", "max_memory_allocated", "memory_allocated", "empty_cache")


@pytest.fixture
def no_cuda(monkeypatch):
    """torch claims CUDA; any use of it raises :class:`CudaTouched`."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for name in CUDA_CALLS:
        monkeypatch.setattr(torch.cuda, name, _touch(f"torch.cuda.{name}"))
    real_device, real_to = torch.device, torch.Tensor.to

    class _DeviceMeta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real_device)

        def __call__(cls, *args, **kwargs):
            dev = real_device(*args, **kwargs)
            if dev.type == "cuda":
                raise CudaTouched(f"torch.device({args[0]!r}) was built with --device cpu")
            return dev

    class GuardedDevice(metaclass=_DeviceMeta):
        pass

    def to(self, *args, **kwargs):
        if any(_is_cuda(a) for a in (*args, kwargs.get("device"))):
            raise CudaTouched("Tensor.to(cuda) was called with --device cpu")
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch, "device", GuardedDevice)
    monkeypatch.setattr(torch.Tensor, "to", to)
    core_device.cuda_available.cache_clear()
    yield
    core_device.cuda_available.cache_clear()


def test_the_stub_catches_each_way_in(no_cuda):
    """Without this, a stub that catches nothing would let every test below pass."""
    assert torch.cuda.is_available()
    assert core_device.resolve_device("auto") == "cuda"        # an engine deciding for itself would take CUDA
    for attempt in (lambda: torch.zeros(2, device="cuda"), lambda: torch.zeros(2).to("cuda"),
                    lambda: torch.device("cuda"), lambda: torch.cuda.synchronize(),
                    lambda: torch.zeros(2).to(device="cuda:0")):
        with pytest.raises(CudaTouched):
            attempt()
    assert isinstance(torch.device("cpu"), torch.device)


def test_core_device_cpu(no_cuda):
    assert core_device.resolve_device("cpu") == "cpu" and core_device.device_label("cpu") == "CPU"


def test_compute_measurement(no_cuda):
    from engines.compute import machine_devices, measure_machine

    m = measure_machine(machine_devices("cpu"), gemm_n=64, copy_bytes=2**20)
    assert {r.device for r in m.rates} == {"cpu"} and len(m.rates) == 2
    assert {r.device for r in measure_machine(None, gemm_n=64, copy_bytes=2**20).rates} == {"cpu"}


def test_machine_devices_follow_the_choice():
    from engines.compute import machine_devices

    assert machine_devices("cpu") == ("cpu",) and machine_devices("cuda") == ("cpu", "cuda")


def test_trading_extraction(no_cuda):
    from engines.trading import ExtractionParams, run_extraction

    run = run_extraction(ExtractionParams(ext_epochs=10), device="cpu")
    assert run.device == "cpu" and run.audit["runtime"]["device"] == "cpu"


def test_pipeline_execution(no_cuda):
    from engines.pipeline.execution import execute

    assert execute("1f1b", 2, 2, device="cpu", hidden=16, layers_per_stage=1, batch=4).device == "cpu"


def test_scale_faults(no_cuda):
    from engines.scale.faults import FaultConfig, run

    assert run(FaultConfig(steps=4, seed=0, replicas=2), device="cpu").device == "cpu"


def test_serving_decode_bench(no_cuda):
    from engines.core.models import ModelArch
    from engines.serving.decode_bench import run_decode_bench

    arch = ModelArch(label="tiny", layers=1, hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256)
    assert run_decode_bench("cpu", batches=(1,), context=16, steps=2, include_smollm2=False, arch=arch).rows


def test_memory_measurements(no_cuda):
    from engines.memory.measure import MeasureConfig, measure_training_step
    from engines.memory.step_measure import StepTimeConfig, measure_step_time

    assert measure_training_step(Scenario(), "cpu", MeasureConfig(layers=1, seq_len=32)).device == "cpu"
    small = StepTimeConfig(hidden=64, head_dim=32, layers=1, vocab=256, seq_len=16, micro_batch=1, repeats=1)
    assert measure_step_time(Scenario(), "cpu", small).device_name == "CPU"


def test_quant_analysis(no_cuda):
    from engines.quant import Params
    from engines.quant.study import run_analysis, setup_layer

    assert run_analysis(setup_layer(Params(tensor="minilm.l2.query")), 0.5, "cpu") is not None


def test_qeval_addition(no_cuda):
    from engines.qeval import addition as A

    ckpt = A.load_checkpoint(device="cpu")
    assert A.score(ckpt.model, per_length=5, device="cpu") is not None


def test_views_saved_with_the_old_h4_device_knob_still_open():
    from engines.core.errors import ValidationError
    from engines.trading import ExtractionParams, Params

    assert Params.from_dict({"ext_device": "cuda", "ext_seed": 3}, version=1) == Params(ext_seed=3)   # a view saved before
    with pytest.raises(ValidationError, match="ext_device"):
        ExtractionParams.from_dict({"ext_device": "cpu"})
