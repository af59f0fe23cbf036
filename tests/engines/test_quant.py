"""Quantizer rules on hand-worked cases (no model data): affine/RTN, bits per weight, GPTQ, AWQ,
formats, rotation, LLM.int8, SmoothQuant algebra, KV layouts, serving arithmetic, user files."""
import math

import numpy as np
import pytest
import torch

from engines.core.errors import ValidationError
from engines.quant import (awq, bits_per_value, fp8_e4m3, gptq, gptq_reference, hadamard, kv_cache_bytes, levels_used,
                           llm_int8, nf4, quantize, quantize_kv, relative_output_error, rotate, rotation_matrix, rtn,
                           serving_table, smoothquant, sqnr_db, worked_example)


def test_asymmetric_2bit_hand_worked():
    # scale = (0.9 − (−0.6)) / 3 = 0.5; zero = round(0.6 / 0.5) = 1; x/scale = [−1.2, −0.2, 0.6, 1.8]
    r = rtn(torch.tensor([[-0.6, -0.1, 0.3, 0.9]]), bits=2)
    assert r.codes.tolist() == [[0, 1, 2, 3]]
    assert torch.allclose(r.dequant, torch.tensor([[-0.5, 0.0, 0.5, 1.0]]))
    assert float(r.scale) == pytest.approx(0.5) and float(r.zero) == 1


def test_asymmetric_range_includes_zero():
    # GPTQ's quantizer widens [1, 4] to [0, 4]: scale = 4/3, zero = 0, so 0 stays exact
    r = rtn(torch.tensor([[1.0, 2.0, 3.0, 4.0]]), bits=2)
    assert float(r.scale) == pytest.approx(4 / 3) and float(r.zero) == 0
    assert r.codes.tolist() == [[1, 2, 2, 3]]


def test_symmetric_4bit_hand_worked():
    # scale = 7 / (2^3 − 1) = 1: codes are the rounded values, signed
    r = rtn(torch.tensor([[-2.8, 1.4, 7.0]]), bits=4, symmetric=True)
    assert r.codes.tolist() == [[-3, 1, 7]]
    assert torch.equal(r.dequant, torch.tensor([[-3.0, 1.0, 7.0]]))


def test_groups_get_their_own_scale():
    w = torch.tensor([[0.0, 3.0, 0.0, 30.0]])
    r = rtn(w, bits=2, group_size=2)
    assert torch.allclose(r.scale, torch.tensor([1.0, 10.0]))
    assert torch.allclose(r.dequant, w)


def test_error_bounded_by_half_a_step():
    w = torch.randn(16, 64, generator=torch.Generator().manual_seed(0))
    for bits in (2, 3, 4, 8):
        r = rtn(w, bits, group_size=16)
        step = r.scale.repeat_interleave(16, dim=1)
        assert bool(((w - r.dequant).abs() <= step / 2 + 1e-6).all())


@pytest.mark.parametrize("bits,g,bpw", [(4, 128, 4.25), (4, 32, 5.0), (4, 64, 4.5), (4, 256, 4.125), (3, 128, 3.25)])
def test_bits_per_weight_counts_fp16_scale_and_zero(bits, g, bpw):
    assert rtn(torch.randn(4, 512), bits, group_size=g).bits_per_weight == pytest.approx(bpw)


def test_bits_per_weight_per_row_and_symmetric():
    assert rtn(torch.randn(4, 256), 4).bits_per_weight == pytest.approx(4 + 32 / 256)
    assert rtn(torch.randn(4, 256), 4, 128, symmetric=True).bits_per_weight == pytest.approx(4.125)
    assert bits_per_value(8, 1 << 20) == pytest.approx(8, abs=1e-4)


def test_one_outlier_collapses_the_levels():
    # per-tensor int8: a channel 100× larger leaves the typical values on about ±1 level (reference §3)
    x = torch.randn(64, 32, generator=torch.Generator().manual_seed(1)).clamp(-1, 1)
    clean = quantize(x, 8, "tensor", symmetric=True)
    x[:, 5] *= 100
    spiked = quantize(x, 8, "tensor", symmetric=True)
    rest = spiked.codes[:, [c for c in range(32) if c != 5]]
    assert levels_used(rest) <= 5 < levels_used(clean.codes)


def test_bad_inputs_raise_validation_errors():
    with pytest.raises(ValidationError, match="group_size"):
        rtn(torch.randn(4, 100), 4, group_size=128)
    with pytest.raises(ValidationError, match="bits"):
        rtn(torch.randn(4, 8), 9)
    with pytest.raises(ValidationError, match="w"):
        rtn(torch.randn(8), 4)
    with pytest.raises(ValidationError, match="NaN"):
        rtn(torch.tensor([[1.0, float("nan")]]), 4)
    with pytest.raises(ValidationError, match="x"):
        gptq(torch.randn(4, 8), torch.randn(10, 7), 4)


def test_worked_example_steps_end_in_the_dequantized_values():
    steps = worked_example([-0.6, -0.1, 0.3, 0.9], bits=2)
    assert [s["step"] for s in steps][:3] == ["range", "scale", "zero"]
    assert steps[-2]["row"] == pytest.approx([-0.5, 0.0, 0.5, 1.0])
    assert max(abs(e) for e in steps[-1]["row"]) <= steps[0]["scale"] / 2 + 1e-12


def test_gptq_equals_rtn_when_inputs_are_uncorrelated():
    # H = (2/n)·XᵀX is diagonal for X = √n·I, so the error feedback term U[i, i+1:] is zero
    w = torch.randn(8, 32, generator=torch.Generator().manual_seed(2))
    x = torch.eye(32) * 3.0
    for g in (None, 8):
        assert torch.allclose(gptq(w, x, 3, group_size=g).dequant, rtn(w, 3, group_size=g).dequant, atol=1e-6)


def test_gptq_blocks_change_speed_not_answer():
    gen = torch.Generator().manual_seed(3)
    w = torch.randn(16, 48, generator=gen)
    x = torch.randn(200, 48, generator=gen) @ torch.randn(48, 48, generator=gen)
    a = gptq(w, x, 3, block_size=128).dequant
    b = gptq(w, x, 3, block_size=5).dequant
    c = gptq_reference(w, x, 3).dequant
    assert torch.allclose(a, b, atol=1e-4) and torch.allclose(a, c, atol=1e-4)


def test_gptq_and_awq_beat_rtn_on_correlated_calibration_data():
    gen = torch.Generator().manual_seed(4)
    w = torch.randn(32, 64, generator=gen)
    x = torch.randn(512, 64, generator=gen) @ torch.randn(64, 64, generator=gen)
    x[:, 3] *= 20                                                   # one salient channel
    base = relative_output_error(x, w, rtn(w, 3, 32).dequant)
    assert relative_output_error(x, w, gptq(w, x, 3, 32).dequant) < base
    res = awq(w, x, 3, group_size=32)
    assert relative_output_error(x, w, res.dequant) < base
    assert len(res.extra["losses"]) == 20 and res.alpha in res.extra["alphas"]
    assert res.extra["losses"][0] >= min(res.extra["losses"])


def test_relative_output_error_definition():
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    w = torch.tensor([[3.0, 4.0]])
    assert relative_output_error(x, w, torch.tensor([[3.0, 4.0]])) == 0
    # ‖[3,4] − [0,4]‖ / ‖[3,4]‖ = 3/5
    assert relative_output_error(x, w, torch.tensor([[0.0, 4.0]])) == pytest.approx(0.6)
    assert relative_output_error(x, w, w, x_hat=2 * x) == pytest.approx(1.0)


def test_sqnr_of_uniform_quantizer_gains_about_6db_per_bit():
    x = torch.rand(256, 256, generator=torch.Generator().manual_seed(5)) * 2 - 1
    s4 = sqnr_db(x, quantize(x, 4, "tensor").dequant)
    s8 = sqnr_db(x, quantize(x, 8, "tensor").dequant)
    assert (s8 - s4) / 4 == pytest.approx(6.02, abs=0.3)
    assert sqnr_db(x, x) == math.inf


def test_fp8_and_nf4():
    w = torch.tensor([[448.0, 1.0, -0.5, 3.3]])
    r = fp8_e4m3(w)
    assert r.dequant[0, :3].tolist() == [448.0, 1.0, -0.5]      # exactly representable in E4M3
    assert float(r.dequant[0, 3]) == 3.25                       # 3 mantissa bits: 3.3 → 3.25
    n = nf4(torch.randn(4, 128))
    assert n.bits_per_weight == pytest.approx(4.5)              # QLoRA: 32-bit absmax per 64
    assert n.codes.max() <= 15
    assert torch.allclose(nf4(torch.tensor([[-2.0] + [0.0] * 62 + [2.0]])).dequant[0, [0, 1, 63]],
                          torch.tensor([-2.0, 0.0, 2.0]))


def test_rotation_preserves_product_and_spreads_a_spike():
    for n in (64, 384, 576):
        H = hadamard(n)
        assert (H @ H.T == n * np.eye(n)).all()
    x = torch.randn(16, 576)
    x[:, 7] = 1000.0
    w = torch.randn(8, 576)
    xr, wr, Q = rotate(x, w)
    assert torch.allclose(xr @ wr.T, x @ w.T, rtol=1e-3, atol=1e-1)
    c = x.abs().amax(0)
    cr = xr.abs().amax(0)
    assert float(cr.max() / cr.median()) < 5 < float(c.max() / c.median())
    with pytest.raises(ValidationError, match="rotation"):
        hadamard(7)
    _, _, Q = rotate(torch.randn(4, 7), torch.randn(3, 7), kind="orthogonal")
    assert torch.allclose(Q @ Q.T, torch.eye(7), atol=1e-5)


def test_llm_int8_keeps_outlier_columns_exact():
    x = torch.randn(32, 16)
    x[:, 2] = 50.0
    w = torch.randn(8, 16)
    r = llm_int8(x, w, threshold=6.0)
    assert r.outlier_columns == [2] and r.fraction_fp16 == 1 / 16
    assert torch.allclose(r.x_hat[:, 2], x[:, 2])
    assert relative_output_error(x, w, r.w_hat, r.x_hat) < 0.02


def test_smoothquant_algebra():
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(64, 32, generator=gen)
    x[:, 4] *= 50
    w = torch.randn(16, 32, generator=gen)
    s = smoothquant(x, w, alpha=0.5, norm_weight=torch.ones(32))
    assert torch.allclose(s.x @ s.w.T, x @ w.T, rtol=1e-4, atol=1e-3)          # exact migration
    prod = x.abs().amax(0) * w.abs().amax(0)
    assert torch.allclose(s.x.abs().amax(0), prod.sqrt(), rtol=1e-4)             # (max|X|·max|W|)^(1−α)
    assert torch.allclose(s.w.abs().amax(0), prod.sqrt(), rtol=1e-4)             # (…)^α
    assert torch.allclose(s.norm_weight, 1 / s.scales)


def test_kv_per_channel_isolates_a_key_outlier_channel():
    gen = torch.Generator().manual_seed(7)
    k = torch.randn(128, 128, generator=gen)
    k[:, 10] += 40                                         # a fixed outlier key channel
    tok = quantize_kv(k, 4, "token")
    ch = quantize_kv(k, 4, "channel")
    assert torch.linalg.norm(k - ch.dequant) < 0.5 * torch.linalg.norm(k - tok.dequant)


def test_serving_decode_is_bytes_over_bandwidth():
    from engines.core.hardware import gpu
    from engines.core.models import PRESETS

    arch, g = PRESETS["llama3-8b"], gpu("h100-sxm")
    rows = {r["format"].split()[0]: r for r in serving_table(arch, g, batch=1, context=1, kv_bits=16)}
    bf16 = rows["BF16"]
    assert bf16["weights_gb"] == pytest.approx(arch.param_count() * 2 / 1e9)
    assert bf16["decode_tok_s"] == pytest.approx(g.bandwidth_gbps / bf16["total_gb"], rel=1e-9)
    assert rows["W4A16"]["weight_bits"] == pytest.approx(4.25)
    speedup = rows["W4A16"]["decode_tok_s"] / bf16["decode_tok_s"]
    assert speedup == pytest.approx(bf16["total_gb"] / rows["W4A16"]["total_gb"])
    assert 2.5 < speedup < 4                                # embeddings/head stay 16-bit


@pytest.mark.parametrize("card, int4", [("a100-80gb", True), ("rtx4090", True), ("h100-sxm", False),
                                         ("h200", False), ("b200", False), ("mi300x", False)])
def test_w4a4_runs_on_int4_tensor_cores_only_where_the_datasheet_lists_them(card, int4):
    """A100 (1,248 dense int4 TOPS, datasheet) and Ada (Table 2 of its whitepaper) multiply W4A4 in int4;
    Hopper, Blackwell and MI300X list no int4 rate, so W4A4 falls back to bf16 there."""
    from engines.core.hardware import gpu
    from engines.core.models import PRESETS

    g = gpu(card)
    rows = {r["format"].split()[0]: r for r in serving_table(PRESETS["llama3-8b"], g, batch=512, context=1)}
    assert rows["W4A4"]["tensor_core"] is int4
    if int4:
        assert g.peak_flops("int4") == pytest.approx(2 * g.peak_flops("int8"))
        assert rows["W4A4"]["decode_tok_s"] > rows["W8A8"]["decode_tok_s"]   # compute-bound at batch 512
    assert gpu("a100-80gb").int4_tops == 1248


def test_user_files(tmp_path):
    from safetensors.torch import save_file

    from engines.quant.tensors import matrices, read_user_file, user_matrix

    save_file({"a.weight": torch.randn(4, 6), "a.bias": torch.randn(4)}, str(tmp_path / "m.safetensors"))
    t = read_user_file(tmp_path / "m.safetensors")
    assert matrices(t) == {"a.weight": (4, 6)}
    assert user_matrix(t, "a.weight").shape == (4, 6)
    with pytest.raises(ValidationError, match="not 2-D"):
        user_matrix(t, "a.bias")
    np.save(tmp_path / "x.npy", np.ones((3, 5), dtype=np.float16))
    assert read_user_file(tmp_path / "x.npy")["array"].shape == (3, 5)
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    torch.save({"layer": {"w": torch.ones(2, 2)}}, tmp_path / "s.pt")
    assert matrices(read_user_file(tmp_path / "s.pt")) == {"layer.w": (2, 2)}
    torch.save({"x": torch.ones(2, 2), "f": ValidationError("a", "b")}, tmp_path / "pickled.pt")
    (tmp_path / "broken.safetensors").write_bytes(b"\x05\x00\x00\x00garbage")
    (tmp_path / "notes.txt").write_text("hi")
    for bad in ("obj.npy", "pickled.pt", "broken.safetensors", "notes.txt", "missing.npy"):
        with pytest.raises(ValidationError, match="file"):
            read_user_file(tmp_path / bad)


def test_subnormal_range_does_not_underflow_the_scale():
    """A row of subnormal weights: (max − min)/15 underflows to 0 in fp32; the result must stay finite."""
    import torch

    from engines.quant import rtn

    w = torch.full((1, 2), 1.4013e-45)
    for symmetric in (False, True):
        res = rtn(w, 4, symmetric=symmetric)
        assert bool(torch.isfinite(res.dequant).all())
        assert float((res.dequant - w).abs().max()) <= 1e-44


@pytest.mark.parametrize("symmetric", [False, True])
def test_subnormal_weights_quantize_to_exact_zeros(symmetric):
    """A range whose scale would be subnormal (5.6e-45 / 3 rounds to the smallest float, too coarse
    to halve) is treated like an all-zero range: the weights come back as zeros, within half a step."""
    from engines.quant import rtn

    w = torch.tensor([[5.6052e-45, 5.6052e-45, -2.8e-45]])
    res = rtn(w, 2, None, symmetric)
    assert torch.equal(res.dequant, torch.zeros_like(w))
    assert float(res.scale.min()) >= torch.finfo(torch.float32).tiny


def test_gptq_without_groups_takes_row_ranges_before_zeroing_dead_inputs():
    """Upstream fasterquant calls find_params(W) before W[:, dead] = 0: a dead column's large
    weights still set their row's range."""
    torch.manual_seed(0)
    w, x = torch.randn(16, 64), torch.randn(256, 64)
    x[:, 3] = 0
    w[:5, 3] = 50.0
    res = gptq(w, x, 4)
    scale = (w.amax(dim=1).clamp(min=0) - w.amin(dim=1).clamp(max=0)) / 15   # GPTQ's zero-including range
    live = torch.ones(64, dtype=torch.bool)
    live[3] = False
    steps = (res.dequant[:5][:, live] / scale[:5, None])
    assert torch.allclose(steps, steps.round(), atol=1e-3)   # rows 0-4 sit on the grid of the 50-wide range


def test_degenerate_calibration_and_huge_values_name_the_field():
    torch.manual_seed(0)
    w, x = torch.randn(32, 512), torch.randn(16, 512)          # fewer tokens than inputs: H singular
    with pytest.raises(ValidationError) as e:
        gptq(w, x, 4, damp=0)
    assert e.value.field == "damp"
    with pytest.raises(ValidationError) as e:
        awq(w, x * 1e18, 4, 128)
    assert e.value.field == "x"
    with pytest.raises(ValidationError) as e:
        rtn(torch.tensor([[3e38, -3e38, 1.0, 0.0]]), 4)
    assert e.value.field == "w"
    with pytest.raises(ValidationError) as e:
        rtn(torch.randn(4, 8, dtype=torch.complex64), 4)
    assert e.value.field == "w"


def test_awq_clip_samples_tokens_as_llm_awq():
    """llm-awq auto_clip keeps every (n // 512)-th token: all 1,000 of 1,000; 512 of 2,048 (0, 4, 8…)."""
    from engines.quant.awq import _clip

    torch.manual_seed(0)
    w, x = torch.randn(8, 128), torch.randn(2048, 128)
    assert torch.equal(_clip(w, x, 4, 128), _clip(w, x[::4], 4, 128))


@pytest.mark.parametrize("call, field", [
    (lambda: bits_per_value(4, 0), "values_per_scale"),
    (lambda: bits_per_value(4, 2.5), "values_per_scale"),
    (lambda: bits_per_value(0, 128), "bits"),
    (lambda: worked_example(None, 4), "values"),
    (lambda: worked_example([], 4), "values"),
    (lambda: worked_example(["a", 1.0], 4), "values"),
    (lambda: worked_example([float("inf"), 1.0], 4), "values"),
    (lambda: worked_example(range(100), 4), "values"),
    (lambda: worked_example([1.0, 2.0], 4, symmetric="no"), "symmetric"),
    (lambda: kv_cache_bytes(-1, 8, 128, 8192, 1, 16), "layers"),
    (lambda: kv_cache_bytes(32, 8, 128, -1, 1, 16), "context"),
    (lambda: kv_cache_bytes(32, 8, 128, 8192, 1, -4), "bits"),
    (lambda: rotation_matrix(-1, "orthogonal"), "n"),
    (lambda: rotation_matrix(2.5, "orthogonal"), "n"),
    (lambda: rotation_matrix(10**9, "orthogonal"), "n"),
    (lambda: rotation_matrix(2.5, "hadamard"), "n"),
    (lambda: rotation_matrix(4, seed="a"), "seed"),
    (lambda: rotation_matrix(4, "orthogonal", seed=-1), "seed"),
])
def test_quant_helpers_reject_bad_input_naming_the_field(call, field):
    with pytest.raises(ValidationError) as e:
        call()
    assert e.value.field == field
