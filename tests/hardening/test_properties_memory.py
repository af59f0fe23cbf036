"""engines.memory under random inputs: finite results, sharding never increases per-GPU bytes,
and bad input is always a ValidationError naming the field."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import memory
from engines.core.errors import ValidationError
from engines.core.models import PRESETS
from engines.core.scenario import Scenario

FAST = settings(max_examples=40, deadline=None)
params = st.floats(1e6, 2e12, allow_nan=False)
gpus = st.integers(1, 100_000)


@FAST
@given(params, gpus, st.integers(0, 3), st.floats(0, 32))
def test_more_sharding_never_more_bytes_per_gpu(psi, n, stage, k):
    a = memory.model_state_bytes(psi, n, stage, k)
    assert all(math.isfinite(v) and v >= 0 for v in (a.params, a.grads, a.optimizer, a.total))
    assert a.total == pytest.approx(a.params + a.grads + a.optimizer)
    if stage < 3:
        b = memory.model_state_bytes(psi, n, stage + 1, k)
        assert b.total <= a.total * (1 + 1e-12)
        assert b.params <= a.params and b.grads <= a.grads and b.optimizer <= a.optimizer
    more = memory.model_state_bytes(psi, n + 1, stage, k)
    assert more.total <= a.total * (1 + 1e-12)
    # stage 0 replicates everything: (2 + 2 + K)·Ψ, whatever N is (ZeRO §5.1)
    assert memory.model_state_bytes(psi, n, 0, k).total == pytest.approx((4 + k) * psi)


@FAST
@given(st.one_of(st.none(), st.text(max_size=3), st.just(float("nan")), st.just(-1.0), st.just(0.0),
                 st.just(True)))
def test_bad_params_name_the_field(bad):
    with pytest.raises(ValidationError) as e:
        memory.model_state_bytes(bad, 8, 1)
    assert e.value.field == "params" and "params" in str(e.value)


@FAST
@given(st.one_of(st.integers(max_value=0), st.floats(), st.text(max_size=2), st.none()),
       st.sampled_from(["n_gpus", "stage"]))
def test_bad_counts_name_the_field(bad, which):
    kwargs = {"params": 1e9, "n_gpus": 8, "stage": 1, which: bad}
    if which == "stage" and isinstance(bad, int) and 0 <= bad <= 3:
        return
    with pytest.raises(ValidationError) as e:
        memory.model_state_bytes(**kwargs)
    assert e.value.field == which


@FAST
@given(st.integers(1, 65_536), st.integers(1, 8), st.sampled_from([(4096, 32), (12288, 96), (2048, 16)]),
       st.sampled_from([1, 2, 4, 8]), st.sampled_from(memory.RECOMPUTE_MODES), st.booleans())
def test_activations_finite_and_recompute_never_costs_more(s, b, ha, t, mode, sp):
    h, a = ha
    x = memory.activation_bytes_per_layer(s, b, h, a, t, sp, mode)
    assert math.isfinite(x) and x > 0
    order = {m: memory.activation_bytes_per_layer(s, b, h, a, t, sp, m) for m in memory.RECOMPUTE_MODES}
    assert order["full"] <= order["selective"] <= order["none"]
    # more TP never stores more per GPU
    if a % (2 * t) == 0:
        assert memory.activation_bytes_per_layer(s, b, h, a, 2 * t, sp, mode) <= x * (1 + 1e-12)


def scenarios():
    """Valid training scenarios over presets, cluster shapes and options."""
    @st.composite
    def build(draw):
        model = draw(st.sampled_from(sorted(PRESETS)))
        arch = PRESETS[model]
        tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if arch.heads % t == 0]))
        pp = draw(st.sampled_from([p for p in (1, 2, 4) if p <= arch.layers]))
        dp = draw(st.sampled_from([1, 2, 4, 8, 16]))
        return Scenario(model=model, arch=arch, tp=tp, pp=pp, n_gpus=tp * pp * dp,
                        strategy=draw(st.sampled_from(["dp", "zero1", "zero2", "zero3", "fsdp"])),
                        micro_batch=draw(st.integers(1, 8)), seq_len=draw(st.sampled_from([512, 2048, 8192])),
                        grad_accum=draw(st.integers(1, 16)),
                        precision=draw(st.sampled_from(["bf16", "fp16", "fp32"])),
                        optimizer=draw(st.sampled_from(["adamw", "sgd-momentum", "adam-8bit"])),
                        recompute=draw(st.sampled_from(["none", "selective", "full"])),
                        sequence_parallel=draw(st.booleans()) and tp > 1)
    return build()


@FAST
@given(scenarios())
def test_breakdown_finite_and_model_states_shrink_with_zero_stage(s):
    previous = None
    for strategy in ("dp", "zero1", "zero2", "zero3"):
        b = memory.breakdown(s, strategy)
        parts = [b.params, b.grads, b.optimizer, b.activations, b.buffers, b.reserve]
        assert all(math.isfinite(v) and v >= 0 for v in parts), (strategy, parts)
        states = b.params + b.grads + b.optimizer
        if previous is not None:
            assert states <= previous * (1 + 1e-9), (strategy, states, previous)
        previous = states


@FAST
@given(scenarios())
def test_breakdown_per_gpu_model_states_never_grow_with_more_data_parallel_gpus(s):
    if s.strategy == "dp":
        return
    bigger = s.with_changes(n_gpus=s.n_gpus * 2)
    a, b = memory.breakdown(s), memory.breakdown(bigger)
    assert b.params + b.grads + b.optimizer <= (a.params + a.grads + a.optimizer) * (1 + 1e-9)


@FAST
@given(st.text(min_size=1, max_size=8))
def test_unknown_strategy_is_named(name):  # "" / None mean "the scenario's strategy"
    if name in memory.STAGE_OF:
        return
    with pytest.raises(ValidationError) as e:
        memory.breakdown(Scenario(), name)
    assert e.value.field == "strategy"
