"""engines.quant under random matrices: RTN's de-quantized error is at most half a step per
element, codes stay in range, more bits never hurt, GPTQ/AWQ/KV stay finite, and bad tensors or
settings are ValidationErrors naming the argument."""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from engines.core.errors import ValidationError
from engines.quant import gptq, quantize, quantize_kv, rtn, sqnr_db

torch = pytest.importorskip("torch")
FAST = settings(max_examples=40, deadline=None)
SLOW = settings(max_examples=10, deadline=None)
finite = st.floats(-1e3, 1e3, allow_nan=False, width=32)


@st.composite
def weights(draw, max_rows=12):
    rows = draw(st.integers(1, max_rows))
    groups = draw(st.integers(1, 4))
    g = draw(st.sampled_from([2, 4, 8, 16]))
    scale = draw(st.sampled_from([1e-3, 1.0, 100.0]))
    a = draw(arrays(np.float32, (rows, groups * g), elements=finite)) * np.float32(scale / 1e3)
    return torch.from_numpy(a), g


def _per_element(t, rows, cols, group):
    """Broadcast a squeezed per-row / per-group parameter back to (rows, cols)."""
    t = t.reshape(rows, -1)
    return t.repeat_interleave(cols // t.shape[1], dim=1) if t.shape[1] != cols else t


@FAST
@given(weights(), st.integers(2, 8), st.booleans(), st.booleans())
def test_rtn_error_at_most_half_a_step(wg, bits, grouped, symmetric):
    w, g = wg
    rows, cols = w.shape
    res = rtn(w, bits, g if grouped else None, symmetric)
    assert res.dequant.shape == w.shape and bool(torch.isfinite(res.dequant).all())
    scale = _per_element(res.scale, rows, cols, g)
    err = (res.dequant - w).abs()
    # half a quantization step (scale/2) per element, plus float32 rounding of the arithmetic
    tol = scale / 2 + 1e-5 * (w.abs() + scale)
    assert bool((err <= tol).all()), float((err - tol).max())
    lo, hi = (-(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1) if symmetric else (0, 2 ** bits - 1)
    assert int(res.codes.min()) >= lo and int(res.codes.max()) <= hi
    values_per_scale = g if grouped else cols
    assert res.bits_per_weight == pytest.approx(bits + (16 if symmetric else 32) / values_per_scale)


@FAST
@given(weights(), st.integers(2, 7))
def test_more_bits_never_worse_on_the_same_grid(wg, bits):
    w, g = wg
    e_lo = float((rtn(w, bits, g).dequant - w).abs().max())
    e_hi = float((rtn(w, bits + 1, g).dequant - w).abs().max())
    # the max error bound halves with each extra bit; allow the bound of the coarser grid, which
    # spans the weights and zero (an asymmetric grid includes 0): weights of one sign have a wider
    # grid than their own spread, and a lucky coarse grid can beat a finer one by that much
    span = float(w.amax().clamp(min=0) - w.amin().clamp(max=0)) if w.numel() else 0.0
    step = span / (2 ** bits - 1)
    assert e_hi <= max(e_lo, step / 2) * (1 + 1e-5) + 1e-6


@FAST
@given(weights(), st.sampled_from(["tensor", "row", "column"]), st.integers(2, 8))
def test_granularities_are_finite_and_zero_is_exact(wg, gran, bits):
    w, _ = wg
    w = w.clone()
    w[0, 0] = 0.0
    res = quantize(w, bits, gran)
    assert bool(torch.isfinite(res.dequant).all())
    assert float(res.dequant[0, 0].abs()) <= 1e-6 * (1 + float(w.abs().max()))  # asymmetric grids include 0


@SLOW
@given(st.integers(4, 16).map(lambda r: r * 1), st.sampled_from([8, 16, 32]), st.integers(3, 8), st.integers(0, 2**16))
def test_gptq_is_finite_and_not_worse_than_rtn_on_its_calibration_set(rows, cols, bits, seed):
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, cols, generator=gen)
    x = torch.randn(4 * cols, cols, generator=gen)
    res = gptq(w, x, bits)
    assert bool(torch.isfinite(res.dequant).all())
    err_g = float(((x @ (res.dequant - w).T) ** 2).sum())
    err_r = float(((x @ (rtn(w, bits).dequant - w).T) ** 2).sum())
    # GPTQ quantizes greedily, column by column, against a dampened Hessian: no single case is
    # guaranteed to beat round-to-nearest (hypothesis found 7×8 at 6 bits 5.2 % worse), so one case
    # may be a little worse; on average it is clearly better (next test)
    assert err_g <= err_r * 1.10 + 1e-6


def test_gptq_beats_rtn_on_average_over_random_layers():
    ratios = []
    for seed in range(40):
        gen = torch.Generator().manual_seed(seed)
        w = torch.randn(12, 16, generator=gen)
        x = torch.randn(64, 16, generator=gen)
        res = gptq(w, x, 4)
        ratios.append(float(((x @ (res.dequant - w).T) ** 2).sum()) / float(((x @ (rtn(w, 4).dequant - w).T) ** 2).sum()))
    assert sum(ratios) / len(ratios) < 0.95 and max(ratios) < 1.10


@FAST
@given(st.integers(1, 32), st.sampled_from([1, 2, 3]), st.sampled_from([8, 16]), st.integers(2, 8),
       st.sampled_from(["token", "channel", "token-rotated"]), st.integers(0, 999))
def test_kv_quantization_finite_with_positive_sqnr_at_8_bits(tokens, heads, head_dim, bits, axis, seed):
    t = torch.randn(tokens, heads * head_dim, generator=torch.Generator().manual_seed(seed))
    res = quantize_kv(t, bits, axis, head_dim)
    assert bool(torch.isfinite(res.dequant).all())
    if bits == 8 and tokens > 1:
        assert sqnr_db(t, res.dequant) > 20


BAD_TENSORS = [None, "w", 3.0, [[1.0]], np.zeros((0, 4), np.float32), np.zeros((2, 2, 2), np.float32),
               np.array([[1.0, float("nan")]], np.float32), np.array([[1.0, float("inf")]], np.float32)]


@pytest.mark.parametrize("bad", BAD_TENSORS, ids=lambda b: type(b).__name__ + str(getattr(b, "shape", "")))
def test_bad_tensors_name_the_argument(bad):
    with pytest.raises(ValidationError) as e:
        rtn(bad, 4)
    assert e.value.field == "w"


@FAST
@given(st.one_of(st.integers(-5, 40), st.none(), st.text(max_size=2), st.floats(allow_nan=True)),
       st.one_of(st.none(), st.integers(-3, 40), st.text(max_size=2)))
def test_bad_bits_or_group_name_the_field(bits, group):
    w = torch.ones(4, 8)
    try:
        rtn(w, bits, group)
    except ValidationError as e:
        assert e.field in ("bits", "group_size"), e.field
        return
    assert isinstance(bits, int) and 2 <= bits <= 8
    assert group is None or (isinstance(group, int) and 1 <= group <= 8 and 8 % group == 0)
