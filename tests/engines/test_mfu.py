"""MFU against PaLM's published 46.2% and the Llama 3 405B worked case."""
import pytest

from engines.core.errors import ValidationError
from engines.scale.mfu import (flops_per_token, hardware_flops_per_token, mfu, model_flops_per_token,
                         tokens_per_second, training_throughput)
from engines.core.models import PRESETS
from engines.core.scenario import Scenario


def test_palm_540b_published_mfu():
    # PaLM App. B: 540.35B params, 118 layers, 48 heads × 256, T = 2048; 238.3K tok/s on 6144 TPU v4 at 275 TFLOP/s
    f = flops_per_token(540_350_000_000, 118, 48, 256, 2048)
    assert mfu(238.3e3, f, 6144, 275e12) == pytest.approx(0.462, abs=0.0005)


def test_llama3_405b_flops_per_token_and_tokens_per_gpu():
    a = PRESETS["llama3-405b"]
    assert model_flops_per_token(a, 8192, attention=False) == pytest.approx(2.435e12, rel=1e-3)
    f = model_flops_per_token(a, 8192)
    assert f == pytest.approx(2.638e12, rel=1e-3)
    assert f / (6 * a.param_count()) - 1 == pytest.approx(0.083, abs=0.001)
    assert tokens_per_second(0.40, f, 1, 989.4e12) == pytest.approx(150.0, abs=0.1)


def test_mfu_and_tokens_per_second_are_inverse():
    f = 1e12
    assert mfu(tokens_per_second(0.37, f, 512, 989e12), f, 512, 989e12) == pytest.approx(0.37)


def test_recompute_raises_hardware_flops():
    a = PRESETS["llama3-8b"]
    none, sel, full = (hardware_flops_per_token(a, 4096, r) for r in ("none", "selective", "full"))
    assert none == model_flops_per_token(a, 4096) < sel < full
    assert full - none == pytest.approx(2 * 32 * a.layer_params() + 4 * 32 * 32 * 128 * 4096)


def test_full_recompute_hardware_flops_are_narayanans_eq_3():
    """96·BSLh²(1 + S/6h + V/16Lh) per sequence for GPT-3 with full recomputation: the blocks run
    forward twice, the output layer once (bias and norm parameters make the match approximate)."""
    a = PRESETS["gpt3-175b"]
    L, h, V, S = a.layers, a.hidden, a.vocab, 2048
    eq3 = 96 * S * L * h**2 * (1 + S / (6 * h) + V / (16 * L * h)) / S
    assert hardware_flops_per_token(a, S, "full") == pytest.approx(eq3, rel=0.002)


def test_training_throughput_for_scenario():
    s = Scenario(model="llama3-8b", arch=PRESETS["llama3-8b"], n_gpus=64, micro_batch=1, grad_accum=4, seq_len=4096,
                 recompute="none")
    t = training_throughput(s, 0.40)
    assert t.tokens_per_second == pytest.approx(0.4 * 64 * 989.4e12 / model_flops_per_token(s.arch, 4096))
    assert t.global_batch_tokens == 64 * 4 * 4096
    assert t.step_seconds == pytest.approx(t.global_batch_tokens / t.tokens_per_second)
    assert t.hfu == pytest.approx(t.mfu)


def test_bad_input():
    with pytest.raises(ValidationError) as exc:
        mfu(1, 1, 0, 1)
    assert exc.value.field == "n_chips"
    with pytest.raises(ValidationError):
        training_throughput(Scenario(), 1.5)


def test_numpy_bool_is_not_a_peak():
    import numpy as np

    with pytest.raises(ValidationError) as exc:
        mfu(1, 1, 1, np.True_)
    assert exc.value.field == "peak_flops_per_chip"


def test_products_that_overflow_name_a_field_instead_of_returning_inf():
    with pytest.raises(ValidationError) as exc:
        mfu(1e300, 1e300, 1, 1e-300)
    assert exc.value.field == "tokens_per_second"
    with pytest.raises(ValidationError) as exc:
        tokens_per_second(1.0, 1e-300, 1, 1e300)
    assert exc.value.field == "flops_per_token"


@pytest.mark.parametrize("mfu_value, budget, field", [
    (1e-300, 1e308, "token_budget"),     # days to the budget overflows
    (1e-320, 15e12, "mfu"),              # one step takes longer than a float can hold
    (5e-324, 15e12, "mfu"),              # tokens/s rounds to zero
])
def test_training_throughput_that_overflows_names_a_field_instead_of_returning_inf(mfu_value, budget, field):
    with pytest.raises(ValidationError) as exc:
        training_throughput(Scenario(), mfu_value, budget)
    assert exc.value.field == field
