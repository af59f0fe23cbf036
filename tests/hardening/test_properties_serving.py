"""engines.serving, engines.scale.reliability and engines.scale.mfu under random inputs: the monotone facts
the panels animate hold everywhere, results stay finite, garbage is a ValidationError."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engines import serving
from engines.core.errors import ValidationError
from engines.core.hardware import GPUS
from engines.core.models import PRESETS
from engines.core.scenario import Scenario
from engines.scale import mfu, reliability

FAST = settings(max_examples=40, deadline=None)
SLOW = settings(max_examples=12, deadline=None)
pos = st.floats(1e-3, 1e9, allow_nan=False)
garbage = st.one_of(st.none(), st.text(max_size=4), st.just(float("nan")), st.just(float("inf")),
                    st.floats(max_value=0), st.booleans(), st.lists(st.integers(), max_size=1))


# --- serving ---------------------------------------------------------------------------------
@FAST
@given(st.integers(1, 200), st.integers(1, 64), st.sampled_from([64, 128]), st.integers(0, 1_000_000),
       st.integers(0, 512), st.sampled_from([0.5, 1, 2, 4]))
def test_kv_cache_grows_linearly_with_tokens_and_batch(layers, kv_heads, head_dim, seq, batch, bpe):
    a = serving.kv_cache_bytes(layers, kv_heads, head_dim, seq, batch, bpe)
    assert a >= 0
    assert serving.kv_cache_bytes(layers, kv_heads, head_dim, seq + 1, batch, bpe) >= a
    assert serving.kv_cache_bytes(layers, kv_heads, head_dim, seq, batch + 1, bpe) >= a
    assert a == math.ceil(2 * layers * kv_heads * head_dim * seq * batch * bpe)


@st.composite
def serve_scenarios(draw):
    model = draw(st.sampled_from(sorted(PRESETS)))
    return Scenario().with_changes(model=model, weight_bits=draw(st.sampled_from([16, 8, 4])),
                                   kv_bits=draw(st.sampled_from([16, 8, 4])),
                                   serve_batch=draw(st.integers(1, 256)),
                                   serve_context=draw(st.integers(16, 131_072)),
                                   gpu=draw(st.sampled_from(sorted(GPUS))))


@FAST
@given(serve_scenarios())
def test_fewer_bits_never_need_more_memory_and_gpus_fit(s):
    m = serving.replica_memory(s)
    assert m.total_bytes > 0 and math.isfinite(m.total_bytes)
    assert m.gpus_needed >= m.gpus_min >= 1
    assert s.arch.heads % m.gpus_needed == 0 or m.gpus_needed == m.gpus_min
    assert m.per_gpu_bytes <= m.usable_per_gpu_bytes * (1 + 1e-9) or m.gpus_needed == m.gpus_min
    for field, bits in (("weight_bits", 4), ("kv_bits", 4)):
        if getattr(s, field) > bits:
            fewer = serving.replica_memory(s.with_changes(**{field: bits}))
            assert fewer.total_bytes <= m.total_bytes
            assert fewer.gpus_needed <= m.gpus_needed
    longer = serving.replica_memory(s.with_changes(serve_context=s.serve_context * 2))
    assert longer.kv_bytes >= m.kv_bytes


@FAST
@given(serve_scenarios(), st.integers(1, 64))
def test_capacity_and_step_cost_monotone_in_gpus(s, n):
    a, b = serving.capacity(s, n), serving.capacity(s, n + 1)
    assert b.max_tokens >= a.max_tokens >= 0
    c1, c2 = serving.step_cost(s, n), serving.step_cost(s, n + 1)
    for batch in (1, 8, 64):
        t1, t2 = c1.decode_step(batch, s.serve_context), c2.decode_step(batch, s.serve_context)
        assert 0 < t2 <= t1 and math.isfinite(t1)
        assert c1.decode_step(batch + 1, s.serve_context) >= t1  # more work never faster


@SLOW
@given(serve_scenarios(), st.floats(0.2, 20), st.sampled_from(serving.POLICIES), st.integers(1, 32),
       st.sampled_from(serving.DISTRIBUTIONS))
def test_batching_simulation_is_causal(s, rate, policy, max_batch, dist):
    cost = serving.step_cost(s, 8)
    wl = serving.Workload(rate_per_s=rate, n_requests=40, prompt_mean=64, output_mean=16, distribution=dist)
    r = serving.simulate_batching(cost, wl, policy, max_batch)
    assert np.all(r.start >= r.arrival - 1e-12)
    assert np.all(r.first_token >= r.start - 1e-12)
    assert np.all(r.finish >= r.first_token - 1e-12)
    assert np.all(np.isfinite(r.finish))
    assert r.throughput_tokens_per_s > 0
    assert np.all(r.ttft >= 0) and np.all(r.tpot >= 0)


@FAST
@given(garbage, st.sampled_from(["rate_per_s", "n_requests", "prompt_mean", "output_mean", "distribution", "seed"]))
def test_workload_garbage_names_the_field(bad, field):
    kwargs = {"rate_per_s": 1.0, field: bad}
    with pytest.raises(ValidationError) as e:
        serving.Workload(**kwargs)
    assert e.value.field == field


@FAST
@given(garbage, st.sampled_from(["layers", "kv_heads", "head_dim", "seq_len", "batch", "bytes_per_element"]))
def test_kv_cache_garbage_names_the_field(bad, field):
    kwargs = dict(layers=2, kv_heads=2, head_dim=64, seq_len=10, batch=1, bytes_per_element=2)
    kwargs[field] = bad
    with pytest.raises(ValidationError) as e:
        serving.kv_cache_bytes(**kwargs)
    assert e.value.field == field


# --- reliability -------------------------------------------------------------------------------
@FAST
@given(st.floats(1, 3600), st.floats(60, 1e8))
def test_optimal_intervals_grow_with_mtbf_and_goodput_is_a_fraction(d, m):
    y, dl = reliability.young_interval(d, m), reliability.daly_interval(d, m)
    assert y > 0 and dl > 0
    assert reliability.young_interval(d, m * 2) >= y
    assert reliability.daly_interval(d, m * 2) >= dl - 1e-9
    g = reliability.expected_goodput(dl, d, m)
    assert 0 < g < 1
    # Daly's interval is (close to) the best on the exact goodput curve
    for t in (dl / 3, dl * 3):
        assert reliability.expected_goodput(t, d, m) <= g * (1 + 1e-3)
    # a restart cost never helps
    assert reliability.expected_goodput(dl, d, m, restart_seconds=60) <= g


@FAST
@given(st.integers(1, 100_000), st.floats(3600, 1e9))
def test_more_gpus_more_interruptions_less_goodput(n, gpu_mtbf):
    assert reliability.job_mtbf(n + 1, gpu_mtbf) < reliability.job_mtbf(n, gpu_mtbf)
    pts = reliability.goodput_vs_cluster([n, 2 * n], gpu_mtbf, 60.0, 120.0)
    assert pts[1].interruptions_per_day >= pts[0].interruptions_per_day
    assert pts[1].goodput <= pts[0].goodput + 1e-12
    assert all(0 <= p.goodput <= 1 for p in pts)


@SLOW
@given(st.floats(600, 20_000), st.floats(10, 1000), st.floats(1, 60), st.floats(0, 60), st.floats(2000, 1e6),
       st.integers(0, 2**16))
def test_simulated_run_accounts_for_every_second(work, tau, d, r, m, seed):
    assume(m > 3 * (tau + d))
    run = reliability.simulate_run(work, tau, d, r, m, seed=seed)
    assert 0 < run.goodput <= 1
    assert run.wall_seconds == pytest.approx(work + run.lost_seconds + run.checkpoint_total + run.restart_total,
                                             rel=1e-9, abs=1e-6)
    spans = run.spans
    assert all(s.end >= s.start for s in spans)
    assert all(b.start >= a.end - 1e-6 for a, b in zip(spans, spans[1:]))


@FAST
@given(garbage, st.sampled_from(["checkpoint_seconds", "mtbf_seconds"]))
def test_reliability_garbage_names_the_field(bad, field):
    kwargs = {"checkpoint_seconds": 60.0, "mtbf_seconds": 3600.0, field: bad}
    with pytest.raises(ValidationError) as e:
        reliability.young_interval(**kwargs)
    assert e.value.field == field


# --- MFU -------------------------------------------------------------------------------------------
@FAST
@given(st.sampled_from(sorted(PRESETS)), st.integers(1, 131_072), st.floats(0.01, 1), st.integers(1, 100_000))
def test_mfu_inverts_throughput_and_recompute_adds_work(model, seq, u, chips):
    arch = PRESETS[model]
    f = mfu.model_flops_per_token(arch, seq)
    peak = 989e12
    tps = mfu.tokens_per_second(u, f, chips, peak)
    assert mfu.mfu(tps, f, chips, peak) == pytest.approx(u, rel=1e-9)
    hw = {r: mfu.hardware_flops_per_token(arch, seq, r) for r in ("none", "selective", "full")}
    assert hw["none"] == pytest.approx(f) and hw["none"] <= hw["selective"] <= hw["full"]
    assert mfu.model_flops_per_token(arch, seq, attention=False) <= f


@FAST
@given(garbage, st.sampled_from(["tokens_per_second", "flops_per_token", "n_chips", "peak_flops_per_chip"]))
def test_mfu_garbage_names_the_field(bad, field):
    args = {"tokens_per_second": 1.0, "flops_per_token": 1.0, "n_chips": 1, "peak_flops_per_chip": 1.0}
    if field == "tokens_per_second" and bad in (0.0, -0.0):
        return  # zero throughput is a valid (idle) input
    args[field] = bad
    with pytest.raises(ValidationError) as e:
        mfu.mfu(args["tokens_per_second"], args["flops_per_token"], args["n_chips"], args["peak_flops_per_chip"])
    assert e.value.field == field
