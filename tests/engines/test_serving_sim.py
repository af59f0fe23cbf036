"""The batching simulator: continuous batching beats static batching at the same latency bound."""
import numpy as np
import pytest

from engines.core.errors import ValidationError
from engines.core.models import PRESETS
from engines.core.scenario import Scenario
from engines.serving import (LatencyTarget, Workload, max_rate_under_target, replica_memory, simulate_batching,
                             size_deployment, step_cost)


@pytest.fixture(scope="module")
def cost():
    return step_cost(Scenario(model="llama3-8b", arch=PRESETS["llama3-8b"]), n_gpus=1)


def test_continuous_beats_static_throughput_at_same_latency_bound(cost):
    wl = Workload(rate_per_s=1.0, n_requests=200, prompt_mean=512, output_mean=128, seed=11)
    target = LatencyTarget(ttft_p90_s=2.0, tpot_p90_s=0.1)
    rate_s, res_s = max_rate_under_target(cost, wl, "static", 16, target, iterations=8)
    rate_c, res_c = max_rate_under_target(cost, wl, "continuous", 16, target, iterations=8)
    assert target.met_by(res_s) and target.met_by(res_c)
    assert rate_c > 2 * rate_s
    assert res_c.throughput_tokens_per_s > 2 * res_s.throughput_tokens_per_s


def test_every_request_is_served_in_order_of_events(cost):
    for policy in ("static", "continuous"):
        r = simulate_batching(cost, Workload(rate_per_s=20, n_requests=150, seed=3), policy, 8)
        assert np.all(r.start >= r.arrival - 1e-12)
        assert np.all(r.first_token > r.start)
        assert np.all(r.finish >= r.first_token)
        assert r.slot.max() < 8
        # no two requests share a slot at the same time
        for s in range(8):
            mine = np.argsort(r.start[r.slot == s])
            st, fi = r.start[r.slot == s][mine], r.finish[r.slot == s][mine]
            assert np.all(st[1:] >= fi[:-1] - 1e-12)


def test_single_request_matches_roofline_by_hand(cost):
    wl = Workload(rate_per_s=0.001, n_requests=1, prompt_mean=100, output_mean=10, distribution="fixed")
    for policy in ("static", "continuous"):
        r = simulate_batching(cost, wl, policy, 4)
        expected_first = cost.prefill(100)
        decode = sum(cost.decode_step(1, 100 + k) for k in range(1, 10))
        assert r.ttft[0] == pytest.approx(expected_first)
        assert r.latency[0] == pytest.approx(expected_first + decode)


def test_static_batch_waits_for_its_longest_member(cost):
    # a burst: request 0 runs alone, then static takes {1, 2} and {3, 4}; continuous refills a slot at once
    wl = Workload(rate_per_s=1e6, n_requests=5, prompt_mean=64, output_mean=64, distribution="uniform", seed=1)
    s = simulate_batching(cost, wl, "static", 2)
    c = simulate_batching(cost, wl, "continuous", 2)
    assert s.start[1] == s.start[2] == pytest.approx(s.finish[0])
    assert s.start[3] == pytest.approx(max(s.finish[1:3]))
    assert c.start[2] == pytest.approx(min(c.finish[:2]))
    assert c.finish.max() < s.finish.max()


def test_kv_capacity_is_enforced(cost):
    with pytest.raises(ValidationError) as exc:
        simulate_batching(cost, Workload(rate_per_s=1, n_requests=5, prompt_mean=100, output_mean=10,
                                         distribution="fixed"), "continuous", 4, kv_capacity_tokens=50)
    assert exc.value.field == "kv_capacity_tokens"
    r = simulate_batching(cost, Workload(rate_per_s=100, n_requests=20, prompt_mean=100, output_mean=10,
                                         distribution="fixed"), "continuous", 8, kv_capacity_tokens=220)
    live = [(r.start <= t) & (r.finish > t) for t in np.linspace(0, r.finish.max(), 200)]
    assert max(int(x.sum()) for x in live) <= 2


def test_sizing_scales_replicas_with_traffic():
    s = Scenario(model="llama3-8b", arch=PRESETS["llama3-8b"], serve_batch=16, serve_context=2048)
    wl = Workload(rate_per_s=1.0, n_requests=150, prompt_mean=512, output_mean=128, seed=2)
    small = size_deployment(s, 5.0, LatencyTarget(2.0, 0.1), workload=wl)
    big = size_deployment(s, 500.0, LatencyTarget(2.0, 0.1), workload=wl)
    assert small.feasible and small.replicas >= 1
    assert big.replicas == int(np.ceil(500.0 / big.max_rate_per_replica))
    assert big.gpus == big.replicas * replica_memory(s).gpus_needed


def test_bad_workload_names_field():
    with pytest.raises(ValidationError) as exc:
        Workload(rate_per_s=0)
    assert exc.value.field == "rate_per_s"
    with pytest.raises(ValidationError) as exc:
        Workload(rate_per_s=1, distribution="zipf")
    assert exc.value.field == "distribution"


@pytest.mark.parametrize("bad", [-3, 0, 1.5, True])
def test_saturation_rate_validates_max_batch(cost, bad):
    from engines.serving import saturation_rate

    with pytest.raises(ValidationError) as exc:
        saturation_rate(cost, Workload(rate_per_s=1.0), bad)
    assert exc.value.field == "max_batch"


@pytest.mark.parametrize("bad", ["x", -1, 2.0, None])
def test_max_rate_validates_iterations(cost, bad):
    with pytest.raises(ValidationError) as exc:
        max_rate_under_target(cost, Workload(rate_per_s=1.0, n_requests=20), "continuous", 4, LatencyTarget(),
                              iterations=bad)
    assert exc.value.field == "iterations"
