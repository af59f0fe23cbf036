"""The quantization engines on CUDA give the CPU's figures on the shipped real layers.

The panel moves a layer to the compute device and calls ``analyse`` there, so every method it
composes (RTN, NF4, FP8, GPTQ, AWQ, W8A8, SmoothQuant, rotation, LLM.int8, the scheme table) runs
on the GPU when one is present. Floating-point order differs between devices, so the figures are
compared with a tolerance, not bit for bit."""
from __future__ import annotations

import math

import pytest

from engines.quant.explore import analyse
from engines.quant.kv import kv_comparison
from engines.quant.tensors import kv_layers, load_kv, load_layer

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

KEYS = ("minilm.l2.ffn_in", "smollm2.l11.down_proj")


def _close(cpu: float, gpu: float, rel: float = 0.03) -> bool:
    return math.isclose(cpu, gpu, rel_tol=rel, abs_tol=1e-6)


@pytest.mark.parametrize("key", KEYS)
def test_analyse_on_cuda_matches_cpu(key):
    cpu_layer, gpu_layer = load_layer(key), load_layer(key, device="cuda")
    assert gpu_layer.weight.device.type == "cuda"
    args = dict(bits=4, group_size=cpu_layer.group_size, max_rows=64)
    a = analyse(key, cpu_layer.weight, cpu_layer.calib, cpu_layer.heldout, **args)
    b = analyse(key, gpu_layer.weight, gpu_layer.calib, gpu_layer.heldout, **args)
    assert len(b.calib_act_max) == gpu_layer.weight.shape[1]   # plain floats, off the device
    assert a.weight_only.keys() == b.weight_only.keys()
    for method in a.weight_only:
        assert _close(a.weight_only[method], b.weight_only[method]), method
    for name, value in a.w8a8.items():
        assert _close(value, b.w8a8[name]), name
    for (alpha, e_cpu), (_, e_gpu) in zip(a.sq_curve, b.sq_curve):
        assert _close(e_cpu, e_gpu), alpha
    assert a.awq_alpha == pytest.approx(b.awq_alpha, abs=0.051)   # one grid step either way
    assert [r["group"] for r in a.group_sweep] == [r["group"] for r in b.group_sweep]
    assert a.collapse["outlier_channels"] == b.collapse["outlier_channels"]
    for row_cpu, row_gpu in zip(a.schemes, b.schemes):
        for k, v in row_cpu.items():
            if isinstance(v, float):
                assert _close(v, row_gpu[k], rel=0.05), (row_cpu, k)
    # GPTQ and AWQ still beat RTN on the GPU, as the papers say
    assert b.weight_only["GPTQ"] < b.weight_only["RTN"] and b.weight_only["AWQ"] < b.weight_only["RTN"]


def test_kv_cache_comparison_on_cuda_matches_cpu():
    k, v = load_kv(kv_layers()[0])
    cpu = kv_comparison(k, v, 4)
    gpu = kv_comparison(k.cuda(), v.cuda(), 4)
    assert len(cpu) == len(gpu)
    for row_cpu, row_gpu in zip(cpu, gpu):
        for key, value in row_cpu.items():
            if isinstance(value, float):
                assert _close(value, row_gpu[key]), (row_cpu, key)
            else:
                assert value == row_gpu[key]
