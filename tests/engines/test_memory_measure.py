"""Measured mode on real torch (CPU, runs in CI): analytic within 10 % per category."""
from __future__ import annotations

import pytest

from engines.memory.measure import (MEASURE_CATEGORIES, MeasureConfig, MeasurementCancelled, measure_training_step,
                                    scaled_down_arch)
from engines.core.models import PRESETS
from engines.core.scenario import Scenario

pytest.importorskip("torch")


def test_default_scaled_down_model_agrees_within_10_percent():
    result = measure_training_step(Scenario(), device="cpu")
    psi = result.arch.param_count()
    # weights and gradients are counted byte for byte: exactly 2 B × Ψ
    assert result.measured["params"] == 2 * psi
    assert result.measured["grads"] == 2 * psi
    for category in MEASURE_CATEGORIES:
        assert result.ratio(category) == pytest.approx(1.0, abs=0.10), category


def test_gpt_shape_with_dropout_agrees():
    result = measure_training_step(Scenario(model="gpt3-175b", arch=PRESETS["gpt3-175b"], optimizer="sgd-momentum"),
                                   config=MeasureConfig(layers=1, seq_len=128))
    for category in MEASURE_CATEGORIES:
        assert result.ratio(category) == pytest.approx(1.0, abs=0.10), category
    assert result.measured["optimizer"] == pytest.approx(8 * result.arch.param_count(), rel=0.01)


def test_scaled_down_arch_keeps_the_family():
    small = scaled_down_arch(PRESETS["llama3-8b"])
    assert (small.mlp, small.norm, small.tied_embeddings) == ("swiglu", "rmsnorm", False)
    assert small.heads // small.kv_heads == 4 and small.ffn == 448  # 14336/4096 × 128


def test_cancel_stops_the_step():
    with pytest.raises(MeasurementCancelled):
        measure_training_step(Scenario(), cancelled=lambda: True)


@pytest.mark.gpu
def test_cuda_measurement_agrees_and_reports_peak():
    result = measure_training_step(Scenario(), device="cuda")
    for category in MEASURE_CATEGORIES:
        assert result.ratio(category) == pytest.approx(1.0, abs=0.10), category
    # at the end of the forward pass the weights, masters and every saved tensor are allocated at once
    assert result.peak_allocated >= result.measured["params"] + result.measured["activations"]


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("model", ["llama3-8b", "gpt3-175b", "smollm2-135m"])
def test_cuda_measurement_agrees_for_each_family_and_precision(model, precision):
    """At a GPU-sized step (hidden 1024, 1,024 tokens × 4) every category is still within 10 %."""
    scenario = Scenario(model=model, arch=PRESETS[model], precision=precision)
    config = MeasureConfig(hidden=1024, head_dim=64, layers=4, seq_len=1024, micro_batch=4, vocab=8192)
    result = measure_training_step(scenario, device="cuda", config=config)
    for category in MEASURE_CATEGORIES:
        assert result.ratio(category) == pytest.approx(1.0, abs=0.10), (category, result.ratio(category))
