"""The shipped real-tensor pack: outliers are where the reference measured them, and the methods
rank on real layers as the papers say (cropped to a few output rows to stay fast)."""
import pytest

from engines.quant import awq, gptq, llm_int8, relative_output_error, rotate, rtn, smoothquant, w8a8
from engines.quant.tensors import kv_layers, layer_keys, load_kv, load_layer, pack_metadata, profile


def test_pack_contents_and_note():
    assert set(layer_keys()) == {"minilm.l2.query", "minilm.l2.ffn_in", "minilm.l0.ffn_out",
                                 "smollm2.l20.q_proj", "smollm2.l11.down_proj"}
    assert "Q4_1" in pack_metadata()["note"]
    layer = load_layer("smollm2.l11.down_proj")
    assert layer.weight.shape == (576, 1536) and layer.calib.shape[1] == 1536
    assert layer.heldout.shape[0] > 100 and layer.group_size == 128
    assert load_layer("smollm2.l20.q_proj").group_size == 64          # 576 = 9 · 64


def test_decoder_activations_have_a_channel_over_50x_the_median():
    down = profile("smollm2", "down_in")                               # (30 blocks, 1536)
    ratio = down.amax(dim=1) / down.median(dim=1).values
    assert float(ratio.max()) > 50
    assert int(ratio.argmax()) == 11 and float(ratio[11]) > 1000         # L11 down_proj: thousands ×
    resid = profile("smollm2", "residual")
    assert int(resid[20].argmax()) == 507 and float(resid[20].max() / resid[20].median()) > 50


def test_minilm_channel_99_in_every_layer():
    mlp_in = profile("minilm", "mlp_in")
    assert mlp_in.argmax(dim=1).tolist() == [99] * 6


def _crop(key, rows):
    layer = load_layer(key)
    return layer.weight[:rows], layer.calib, layer.heldout, layer.group_size


@pytest.mark.parametrize("key,rows", [("minilm.l2.ffn_in", 192), ("smollm2.l11.down_proj", 64)])
def test_gptq_and_awq_beat_rtn_on_real_layers(key, rows):
    w, xc, xe, g = _crop(key, rows)
    err = lambda w_hat: relative_output_error(xe, w, w_hat)  # noqa: E731  held-out tokens
    base = err(rtn(w, 4, g).dequant)
    assert err(gptq(w, xc, 4, g, act_order=True).dequant) < 0.9 * base
    assert err(awq(w, xc, 4, g).dequant) < 0.9 * base


def test_awq_picks_a_high_alpha_on_the_5000x_layer():
    w, xc, xe, g = _crop("smollm2.l11.down_proj", 48)
    assert awq(w, xc, 4, g, clip=False).alpha >= 0.5


def test_each_fix_beats_naive_per_tensor_w8a8_on_an_outlier_heavy_layer():
    layer = load_layer("minilm.l2.ffn_in")                               # channel 99, ~17× median
    w, xe = layer.weight, layer.heldout
    xq, wq = w8a8(xe, w, "tensor", "tensor")
    naive = relative_output_error(xe, w, wq, xq)
    sm = smoothquant(xe, w, 0.5, act_max=layer.calib.abs().amax(0))
    xq, wq = w8a8(sm.x, sm.w, "tensor", "tensor")
    smooth = relative_output_error(sm.x, sm.w, wq, xq)
    xr, wr, _ = rotate(xe, w)
    xq, wq = w8a8(xr, wr, "tensor", "tensor")
    rotated = relative_output_error(xr, wr, wq, xq)
    dec = llm_int8(xe, w, 6.0)
    decomposed = relative_output_error(xe, w, dec.w_hat, dec.x_hat)
    assert decomposed < rotated < smooth < naive                       # reference §4 order
    assert dec.fraction_fp16 < 0.05


def test_keys_prefer_per_channel_scales():
    from engines.quant import kv_comparison

    for block in kv_layers():
        rows = {(r["tensor"], r["axis"]): r["relative_error"] for r in kv_comparison(*load_kv(block), bits=4)}
        assert rows[("K", "channel")] < rows[("K", "token")]
