"""The quantization panel's knobs and view computations, Qt-free: Params, the group fallback, the
heat-map statistics, the SmoothQuant preview, the KV study and a cancelled analysis."""
import dataclasses

import numpy as np
import pytest
import torch

from engines.core.errors import Cancelled, ValidationError
from engines.quant import Params
from engines.quant.params import KV_BLOCKS, PACK_LAYERS, parse_user_ref, user_tensor_ref
from engines.quant.study import (fit_group, fixes_study, heat_profile, kv_memory_gb, kv_study, layer_inputs,
                                 run_analysis, serving_study, setup_layer, smooth_preview, with_memory)
from engines.quant.tensors import kv_layers, layer_keys, profile


def test_params_defaults_round_trip_and_validation():
    p = Params()
    assert (p.tensor, p.bits, p.group_size, p.sq_alpha, p.kv_block, p.kv_bits) == ("minilm.l2.ffn_in", 4, 128, 0.5, 11, 4)
    assert Params(**dataclasses.asdict(p)) == p and Params.from_dict(p.to_dict()) == p
    assert Params(sq_alpha=0.37).sq_alpha == 0.35            # α moves on the sweep's 0.05 grid
    for bad in ({"bits": 9}, {"group_size": 48}, {"tensor": "nope"}, {"kv_block": 3}, {"sq_alpha": 1.5}):
        with pytest.raises(ValidationError, match=next(iter(bad))):
            Params(**bad)


def test_declared_choices_match_the_pack():
    assert PACK_LAYERS == tuple(layer_keys()) and KV_BLOCKS == tuple(kv_layers())


def test_user_tensor_references():
    ref = user_tensor_ref("/tmp/a::b/w.safetensors", "proj.weight")
    assert parse_user_ref(ref) == ("/tmp/a::b/w.safetensors", "proj.weight")
    assert Params(tensor=ref).tensor == ref and parse_user_ref("minilm.l2.query") is None


def test_group_fallback_takes_the_largest_group_that_divides():
    assert fit_group(128, 1536).group_size == 128 and fit_group(128, 1536).note is None
    fit = fit_group(128, 576)
    assert fit.group_size == 64 and "576" in fit.note
    assert fit_group(32, 50).group_size is None and fit_group(None, 50).note is None


def test_setup_uses_the_fitted_group_and_row_zero():
    s = setup_layer(Params(tensor="smollm2.l20.q_proj"))
    assert s.group.group_size == 64 and s.inputs.shape[1] == 576 and s.steps
    assert s.steps[0]["values"] == pytest.approx(s.inputs.weight[0, :8].tolist(), abs=1e-6)


def test_heat_profile_matches_torch_statistics():
    h = heat_profile("smollm2", "down_in")
    data = profile("smollm2", "down_in")
    ratio = data.amax(1) / data.median(1).values
    assert h.worst_block == int(ratio.argmax()) == 11 and h.worst_ratio == pytest.approx(float(ratio.max()), rel=1e-5)
    assert h.worst_channel == int(data[11].argmax()) and h.log_max.shape == tuple(data.shape)
    assert heat_profile("minilm", "mlp_in").common == ((99, 6),)
    assert heat_profile("minilm", "residual") is None


def test_kv_study_and_memory():
    kv = kv_study(11, 2)
    assert kv.bits == 2 and {r["bits"] for r in kv.rows} == {2} and len(kv.top_channels) == 3
    assert kv.error("K", "channel") < kv.error("K", "token")

    class Arch:
        layers, kv_heads, head_dim = 32, 8, 128
    gbs = dict(kv_memory_gb(Arch, 1, 1024))
    assert gbs[16] == pytest.approx(2 * 32 * 8 * 128 * 1024 * 2 / 1e9) and gbs[4] == pytest.approx(gbs[16] / 4)


def test_analysis_result_is_frozen_plain_data_and_previews_alpha():
    w = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
    xc, xe = torch.randn(96, 64), torch.randn(64, 64)
    xc[:, 3] *= 40
    xe[:, 3] *= 40
    from engines.quant.explore import analyse

    a = analyse("toy", w, xc, xe, bits=4, group_size=32)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.bits = 3
    assert isinstance(a.calib_act_max, tuple) and not any(isinstance(v, torch.Tensor)
                                                           for v in dataclasses.asdict(a).values())
    pv = smooth_preview(a, 0.8)
    assert pv.alpha == 0.8 and pv.error == pytest.approx(dict(a.sq_curve)[0.8])
    assert np.argmax(pv.original) == 3 and pv.smoothed[3] < pv.original[3]


def test_user_file_inputs_and_a_cancelled_analysis(tmp_path):
    from safetensors.torch import save_file

    save_file({"proj.weight": torch.randn(16, 64)}, str(tmp_path / "w.safetensors"))
    x = layer_inputs(user_tensor_ref(str(tmp_path / "w.safetensors"), "proj.weight"))
    assert x.shape == (16, 64) and x.calib is None and "proj.weight" in x.name
    s = setup_layer(Params(tensor=user_tensor_ref(str(tmp_path / "w.safetensors"), "proj.weight")))
    assert run_analysis(s, 0.5).shape == (16, 64)
    with pytest.raises(Cancelled):
        run_analysis(setup_layer(Params(tensor="minilm.l2.query")), 0.5, cancelled=lambda: True)


def test_analysis_entries_are_typed_and_labelled_by_the_engine():
    """One entry per method with its own fields; the label is made from them (never parsed back), and
    the old label-keyed dicts still answer for scripts."""
    from engines.quant.explore import analyse
    from engines.quant.results import FIX_METHODS, WEIGHT_METHODS

    w = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    xc, xe = torch.randn(96, 64), torch.randn(64, 64)
    a = analyse("toy", w, xc, xe, bits=3, group_size=32, sq_alpha=0.35)
    assert tuple(m.method for m in a.methods) == WEIGHT_METHODS
    assert tuple(f.method for f in a.fixes) == FIX_METHODS
    nf4 = a.method("nf4")
    assert (nf4.bits, nf4.block_size, nf4.label) == (4, 64, "NF4 (blocks of 64)")
    assert nf4.bits_per_weight == pytest.approx(4 + 32 / 64)                   # one fp32 absmax per 64
    assert (a.method("rtn").bits, a.method("rtn").block_size) == (3, 32)
    assert a.method("awq").alpha == a.awq_alpha and a.method("fp8_e4m3").label == "FP8 E4M3 (per tensor)"
    sq = a.fix("smoothquant")
    assert sq.alpha == 0.35 and sq.error == pytest.approx(dict(a.sq_curve)[0.35])
    assert a.fix("llm_int8").label == "LLM.int8 (threshold 6)" and a.calib_tokens == 96 and a.heldout_tokens == 64
    assert a.lowest().error == min(a.method(k).error for k in ("rtn", "gptq", "gptq_act_order", "awq"))
    assert a.weight_only["NF4 (blocks of 64)"] == nf4.error and a.bpw["RTN"] == a.method("rtn").bits_per_weight
    assert a.w8a8["SmoothQuant α=0.35"] == sq.error and a.w8a8["_int8_fp16_fraction"] == a.int8_fp16_fraction
    at = {f.method: f for f in a.fixes_at(0.8)}
    assert at["smoothquant"].label == "SmoothQuant α=0.80" and at["smoothquant"].error == dict(a.sq_curve)[0.8]
    assert at["naive"] == a.fix("naive")
    s = fixes_study(a, 0.8)
    assert s.bars == a.fixes_at(0.8) and s.best == min(a.sq_curve, key=lambda t: t[1])
    assert s.naive_error == a.fix("naive").error and s.preview.alpha == 0.8
    b = analyse("toy", w, bits=4, group_size=32)                          # no activations: no W8A8 entries
    assert b.fixes == () and fixes_study(b, 0.5) is None and b.weight_hist.awq is None
    with pytest.raises(KeyError):
        b.method("gptq")


def test_serving_study_and_kv_memory_follow_the_scenario():
    from engines.core.scenario import Scenario

    s = Scenario()
    study = serving_study(s)
    assert (study.batch, study.context, study.model) == (s.serve_batch, s.serve_context, s.arch.label)
    assert len(study.rows) == 6 and study.rows[0]["format"]
    kv = with_memory(kv_study(11, 4), s.arch, s.serve_batch, s.serve_context)
    assert dict(kv.memory.gb) == dict(kv_memory_gb(s.arch, s.serve_batch, s.serve_context))
    assert kv.memory.model == s.arch.label and kv.error("K", "channel") < kv.error("K", "token")


def test_serving_study_gives_the_bf16_cache_beside_the_scenarios_width():
    """B4's sizing slide compares the 4-bit cache with a bf16 one: Llama 3 8B (32 layers, 8 KV heads
    of 128) at batch 8 and 8,192 tokens holds 2·32·8·128·2 bytes a token, 8.6 GB in bf16."""
    from engines.core.scenario import Scenario

    s = Scenario(serve_batch=8, serve_context=8192, kv_bits=4)
    study = serving_study(s)
    assert study.kv16_gb == pytest.approx(2 * 32 * 8 * 128 * 2 * 8 * 8192 / 1e9)
    assert round(study.kv16_gb, 1) == 8.6 and study.rows[0]["kv_gb"] == pytest.approx(study.kv16_gb / 4)


def test_group_sweep_counts_a_scale_alone_beside_scale_and_zero():
    """4 + 16/g bits with a symmetric scale alone, 4 + 32/g with an fp16 zero too (GPTQ §4, AWQ g128)."""
    from engines.quant.explore import analyse

    w = torch.randn(8, 256, generator=torch.Generator().manual_seed(1))
    a = analyse("toy", w, None, None, bits=4, group_size=128)
    rows = {r["group"]: r for r in a.group_sweep}
    assert rows[128]["bpw_scale_only"] == pytest.approx(4.125) and rows[128]["bpw"] == pytest.approx(4.25)
    assert rows[16]["bpw_scale_only"] == pytest.approx(5.0) and rows[256]["bpw_scale_only"] == pytest.approx(4.0625)
