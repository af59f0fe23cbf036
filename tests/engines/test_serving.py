"""Serving memory and roofline arithmetic against published and hand-worked figures."""
import math

import pytest

from engines.core.errors import ValidationError
from engines.core.models import PRESETS
from engines.core.scenario import Scenario
from engines.serving import (GIB, Workload, activation_bytes, capacity, format_speeds, kv_bytes_per_token,
                             kv_cache_bytes, replica_memory, step_cost, weight_bytes)


def scenario(model="llama3-8b", **kw):
    return Scenario(model=model, arch=PRESETS[model], **kw)


def test_kv_cache_llama3_70b_8k_by_32_bf16_is_80_gib():
    a = PRESETS["llama3-70b"]
    assert kv_cache_bytes(a.layers, a.kv_heads, a.head_dim, 8192, 32) == 80 * GIB
    assert kv_cache_bytes(80, 8, 128, 8192, 32, bytes_per_element=2) == 85_899_345_920


@pytest.mark.parametrize("model,per_token", [("llama3-8b", 131_072), ("llama3-70b", 327_680),
                                             ("llama3-405b", 516_096)])
def test_kv_bytes_per_token_bf16(model, per_token):
    a = PRESETS[model]
    assert kv_cache_bytes(a.layers, a.kv_heads, a.head_dim, 1, 1) == per_token
    assert kv_bytes_per_token(a, 16) == per_token


def test_kv_cache_opt13b_vllm_example():
    # vLLM paper: OPT-13B (40 layers, hidden 5120, MHA) = 819,200 B per token in fp16
    assert kv_cache_bytes(40, 40, 128, 1, 1) == 819_200


def test_kv_cache_scales_with_element_bytes_and_rejects_bad_input():
    assert kv_cache_bytes(80, 8, 128, 8192, 32, bytes_per_element=0.5) == 20 * GIB
    with pytest.raises(ValidationError) as exc:
        kv_cache_bytes(80, 8, 128, -1, 32)
    assert exc.value.field == "seq_len"
    with pytest.raises(ValidationError):
        kv_cache_bytes(80, 8, 128, 8, 32, bytes_per_element=0)


@pytest.mark.parametrize("model,bits,gb", [("llama3-8b", 16, 16.1), ("llama3-70b", 16, 141.1),
                                           ("llama3-70b", 8, 70.6), ("llama3-70b", 4, 37.5),
                                           ("llama3-405b", 4, 215.6)])
def test_weight_bytes_match_reference_table(model, bits, gb):
    assert weight_bytes(PRESETS[model], bits) / 1e9 == pytest.approx(gb, abs=0.05)


def test_replica_memory_parts_sum_and_gpu_count():
    s = scenario("llama3-70b", serve_batch=32, serve_context=8192)
    mem = replica_memory(s)
    assert mem.kv_bytes == 80 * GIB
    assert mem.total_bytes == mem.weights_bytes + mem.kv_bytes + mem.activation_bytes + mem.overhead_bytes
    # 141 GB weights + 86 GB KV do not fit 3 × 72 GB usable; TP must divide 64 heads → 4 H100s
    assert mem.gpus_min == 4 and mem.gpus_needed == 4
    assert mem.per_gpu_bytes <= 0.9 * 80e9
    # the same on H200 (141 GB): 2 GPUs
    assert replica_memory(s.with_changes(gpu="h200")).gpus_needed == 2


def test_gpus_needed_rounds_up_to_a_head_dividing_tp_degree():
    s = scenario("llama3-405b", serve_batch=1, serve_context=1024)
    mem = replica_memory(s)
    assert mem.gpus_min == 12          # 812 GB / (72 − 1.07) GB
    assert mem.gpus_needed == 16       # 12 does not divide 128 heads


def test_capacity_is_consistent_with_replica_memory():
    s = scenario("llama3-8b", serve_batch=8, serve_context=8192)
    cap = capacity(s, n_gpus=1)
    # one more sequence than the maximum must not fit in one H100
    assert replica_memory(s.with_changes(serve_batch=cap.max_batch_at_context)).gpus_needed == 1
    assert replica_memory(s.with_changes(serve_batch=cap.max_batch_at_context + 1)).gpus_needed > 1
    assert cap.max_context_at_batch == cap.max_tokens // 8


def test_decode_is_bandwidth_bound_at_batch_1():
    # H100 SXM 3.35 TB/s, bf16 Llama 3 8B: ≤ ~209 tokens/s (reference §5)
    cost = step_cost(scenario("llama3-8b"), n_gpus=1)
    tok_s = 1 / cost.decode_step(1, 0)
    assert tok_s == pytest.approx(3350e9 / weight_bytes(PRESETS["llama3-8b"], 16))
    assert tok_s == pytest.approx(208.6, abs=0.5)


def test_prefill_is_compute_bound():
    cost = step_cost(scenario("llama3-8b"), n_gpus=1)
    p = 2048
    flops = 2 * PRESETS["llama3-8b"].param_count() * p + 4 * 32 * 32 * 128 * p * (p + 1) / 2
    assert cost.prefill(p) == pytest.approx(flops / 989.4e12)


def test_quantized_formats_decode_faster():
    rows = {(r.weight_bits, r.kv_bits): r for r in format_speeds(scenario("llama3-8b"))}
    assert rows[(4, 4)].decode_tokens_per_s > rows[(8, 8)].decode_tokens_per_s > rows[(16, 16)].decode_tokens_per_s
    assert rows[(16, 16)].bound == "memory"
    assert math.isfinite(rows[(4, 16)].prefill_seconds)


def test_kv_cache_rejects_numpy_bool_bytes():
    import numpy as np

    with pytest.raises(ValidationError) as exc:
        kv_cache_bytes(80, 8, 128, 8192, 32, bytes_per_element=np.True_)
    assert exc.value.field == "bytes_per_element"


@pytest.mark.parametrize("args,field", [((-1, 0), "batch"), ((float("nan"), 0), "batch"), ((0, 10), "batch"),
                                        ((1, -1), "context"), ((1, float("nan")), "context"), ((1, "5"), "context")])
def test_decode_step_validates_input(args, field):
    cost = step_cost(scenario("llama3-8b"), n_gpus=1)
    with pytest.raises(ValidationError) as exc:
        cost.decode_step(*args)
    assert exc.value.field == field


@pytest.mark.parametrize("args,field", [((-5,), "prompt_tokens"), ((0,), "prompt_tokens"), ((2.5,), "prompt_tokens"),
                                        ((10, 0), "sequences"), ((10, True), "sequences")])
def test_prefill_validates_input(args, field):
    cost = step_cost(scenario("llama3-8b"), n_gpus=1)
    with pytest.raises(ValidationError) as exc:
        cost.prefill(*args)
    assert exc.value.field == field


@pytest.mark.parametrize("call, field", [
    (lambda: weight_bytes(PRESETS["llama3-8b"], [16]), "weight_bits"),
    (lambda: weight_bytes(PRESETS["llama3-8b"], 3), "weight_bits"),
    (lambda: kv_bytes_per_token(PRESETS["llama3-8b"], [16]), "kv_bits"),
    (lambda: kv_bytes_per_token(PRESETS["llama3-8b"], {16: 1}), "kv_bits"),
    (lambda: activation_bytes(PRESETS["llama3-8b"], 1, chunk_tokens=-1), "chunk_tokens"),
    (lambda: activation_bytes(PRESETS["llama3-8b"], 0), "batch"),
    (lambda: activation_bytes(PRESETS["llama3-8b"], 1, chunk_tokens=2.5), "chunk_tokens"),
    (lambda: Workload(rate_per_s=1e-308), "rate_per_s"),
    (lambda: Workload(rate_per_s=5e-324), "rate_per_s"),
])
def test_serving_helpers_reject_bad_input_naming_the_field(call, field):
    with pytest.raises(ValidationError) as e:
        call()
    assert e.value.field == field


def test_slowest_allowed_rate_keeps_the_simulation_finite():
    import numpy as np

    from engines.serving import MIN_RATE_PER_S, simulate_batching

    cost = step_cost(scenario(), 1)
    res = simulate_batching(cost, Workload(rate_per_s=MIN_RATE_PER_S, n_requests=50), "continuous", 8)
    assert np.isfinite(res.makespan) and np.all(np.isfinite(res.ttft)) and np.all(res.ttft >= 0)
