"""Real steps timed against the step-time model's assumptions (CPU here, CUDA when present)."""
from __future__ import annotations

import pytest

from engines.core.errors import Cancelled, ValidationError
from engines.core.scenario import Scenario
from engines.memory.step_measure import StepTimeConfig, catalogue_peak, measure_step_time
from engines.scale.mfu import hardware_flops_per_token, model_flops_per_token

SMALL = StepTimeConfig(hidden=64, head_dim=32, layers=2, vocab=256, seq_len=32, micro_batch=2, repeats=1)


def test_a_real_step_is_timed_and_priced_with_the_models_flops():
    r = measure_step_time(Scenario(), "cpu", SMALL)
    assert r.forward > 0 and r.backward > 0 and r.backward_recompute > 0
    assert r.tokens == 64 and r.arch.layers == 2 and r.arch.mlp == "swiglu"
    assert r.model_flops_per_token == model_flops_per_token(r.arch, 32)
    assert r.achieved_flops == pytest.approx(r.model_flops_per_token * 64 / (r.forward + r.backward))
    assert r.recompute_ratio_model == pytest.approx(hardware_flops_per_token(r.arch, 32, "full")
                                                    / r.model_flops_per_token)
    assert r.efficiency is None and r.peak_flops is None and r.device_name == "CPU"   # no CPU peak in the catalogue


def test_catalogue_peak_matches_cuda_device_names():
    assert catalogue_peak("NVIDIA H200", "bfloat16") == pytest.approx(989.4e12)
    assert catalogue_peak("NVIDIA H100 80GB HBM3", "bfloat16") == pytest.approx(989.4e12)
    assert catalogue_peak("NVIDIA A100-SXM4-80GB", "float32") == pytest.approx(156e12)
    assert catalogue_peak("NVIDIA GeForce RTX 4090", "bfloat16") == pytest.approx(165.2e12)
    assert catalogue_peak("Tesla T4", "bfloat16") is None


def test_cancel_and_bad_config():
    with pytest.raises(Cancelled):
        measure_step_time(Scenario(), "cpu", SMALL, cancelled=lambda: True)
    with pytest.raises(ValidationError, match="repeats"):
        StepTimeConfig(repeats=0)


@pytest.mark.gpu
def test_on_cuda_the_measured_efficiency_is_a_share_of_the_peak():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    r = measure_step_time(Scenario(), "cuda", StepTimeConfig(hidden=1024, head_dim=128, layers=4, seq_len=1024,
                                                             micro_batch=4, repeats=3))
    assert r.peak_flops is not None, f"{r.device_name} has no catalogue peak: add it to assets/presets/gpus.json"
    assert r.peak_flops == catalogue_peak(r.device_name, r.dtype)
    assert 0.01 < r.efficiency < 1           # below 1 % the FLOP count or the clock would be wrong
    assert r.recompute_ratio > 1


def test_the_timing_check_sets_real_steps_beside_the_models_knob():
    from engines.memory.step_measure import check_step_time
    from engines.memory.step_time import BACKWARD_OVER_FORWARD

    check = check_step_time(Scenario(), "cpu", 0.7, SMALL)
    assert check.efficiency_set == 0.7 and check.backward_ratio_model == BACKWARD_OVER_FORWARD
    assert check.measured.forward > 0 and check.measured.config.layers == 2
