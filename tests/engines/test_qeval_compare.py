"""The panel's reading of evaluations: survival law, Wilson intervals, ranking, and the Params codes."""
from __future__ import annotations

import math

import pytest

from engines.core.errors import ValidationError
from engines.qeval.compare import calibration_rows, comparison, ranking, survival_curve, survival_prediction, wilson
from engines.qeval.config import QuantConfig
from engines.qeval.params import Params, compared_configs, config_code, config_from_code, with_config, without_config
from engines.qeval.result import Evaluation


def _ev(config, ppl, flips, kl, s128, tasks, by_domain=None):
    return Evaluation(config=config, budget="quick", perplexity=ppl,
                      perplexity_by_domain=by_domain or {"prose": ppl, "code": ppl}, flip_rate=flips, mean_kl=kl,
                      survival={32: min(1.0, s128 * 2), 128: s128}, task_accuracy={"copy-16": tasks},
                      task_items={"copy-16": 20})


def test_survival_law_by_hand():
    assert survival_prediction(0.025, [128])[0] == pytest.approx(0.975 ** 128)
    assert survival_prediction(0.025, [128])[0] == pytest.approx(0.0391, abs=5e-4)
    assert survival_prediction(0.0, [1, 50]) == [1.0, 1.0]
    with pytest.raises(ValidationError):
        survival_prediction(1.5, [1])


def test_wilson_interval_8_of_10():
    lo, hi = wilson(8, 10)                      # the textbook example: [0.490, 0.943]
    assert lo == pytest.approx(0.4902, abs=1e-3) and hi == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0.15 < hi < 0.17


def test_ranking_marks_where_metrics_disagree():
    base = _ev(QuantConfig(), 10.0, 0.0, 0.0, 1.0, 0.5)
    a = _ev(QuantConfig(weight_bits=8), 10.03, 0.03, 0.01, 0.05, 0.5)     # ppl fine, output diverges
    b = _ev(QuantConfig(weight_bits=6), 10.4, 0.02, 0.02, 0.40, 0.5)
    c = _ev(QuantConfig(weight_bits=4), 12.0, 0.2, 0.3, 0.0, 0.1)
    rows = ranking([base, a, b, c], base)
    assert [r.config.weight_bits for r in rows] == [16, 8, 6, 4]          # in perplexity order
    w8 = rows[1]
    assert w8.ranks["ppl"] == 2 and w8.ranks["survival128"] == 3
    assert rows[2].ranks["flips"] == 2 and rows[2].ranks["survival128"] == 2
    assert rows[3].disagrees == ()                                        # worst everywhere
    ties = ranking([base, a], base)
    assert ties[0].ranks["tasks"] == ties[1].ranks["tasks"] == 1
    # W6 beats W8 and the baseline on flips and survival order is kept: W6 swaps with W8 only (one swap)
    assert "flips" not in rows[2].disagrees
    # a swap with two others is a disagreement; ties (all diverged: survival 0) are not swaps
    d = _ev(QuantConfig(weight_bits=3), 30.0, 0.01, 0.001, 0.0, 0.1)
    rows = ranking([base, a, b, c, d], base)
    w3 = next(r for r in rows if r.config.weight_bits == 3)
    assert "flips" in w3.disagrees and "kl" in w3.disagrees and "survival128" not in w3.disagrees


def test_calibration_rows_keep_rtn_only_where_a_calibrated_twin_exists():
    base = _ev(QuantConfig(), 10.0, 0, 0, 1, 0.5, {"prose": 10.0, "code": 5.0})
    rtn3 = _ev(QuantConfig(weight_bits=3, group_size=128), 20.0, 0.4, 1, 0, 0.1, {"prose": 20.0, "code": 8.0})
    rtn4 = _ev(QuantConfig(weight_bits=4, group_size=128), 12.0, 0.2, 1, 0, 0.1)
    gptq = _ev(QuantConfig(weight_bits=3, group_size=128, method="gptq", calib_domain="code"), 15.0, 0.3, 1, 0, 0.1,
               {"prose": 15.0, "code": 6.0})
    rows = calibration_rows([base, rtn3, rtn4, gptq], base)
    assert [r.method for r in rows] == ["rtn", "gptq"]
    assert rows[1].calib_domain == "code" and rows[1].change_by_domain["code"] == pytest.approx(0.2)
    assert rows[0].change_by_domain["prose"] == pytest.approx(1.0)


def test_config_codes_round_trip_and_bad_codes_name_the_field():
    cfg = QuantConfig(weight_bits=3, group_size=128, method="gptq", calib_tokens=256, calib_domain="code")
    assert config_from_code(config_code(cfg)) == cfg.canonical()
    assert config_code(QuantConfig()) == "baseline"
    text = with_config(with_config("", cfg), QuantConfig(k_bits=4, k_axis="channel"))
    assert len(compared_configs(text)) == 2 and with_config(text, cfg) == text
    assert compared_configs(without_config(text, cfg)) == (QuantConfig(k_bits=4, k_axis="channel"),)
    for bad in ("bits=4", "weight_bits=7", "weight_bits=four"):
        with pytest.raises(ValidationError) as err:
            Params(compared=bad)
        assert err.value.field in ("compared", "weight_bits")
    with pytest.raises(ValidationError) as err:
        Params(curve="nonsense")
    assert err.value.field == "curve"
    p = Params(weight_bits=4, group_size=32, compared=text)
    assert Params.from_dict(p.to_dict()) == p and p.config() == QuantConfig(weight_bits=4, group_size=32)


def test_the_b3_calibration_captions_quote_the_shipped_measurements():
    """Every percentage the B3 tour's calibration steps quote is read from the shipped evaluations:
    re-measuring them (scripts/measure_qeval_calibration.py) must come with new captions."""
    import json
    from pathlib import Path

    from engines.core.assets import asset_path
    from engines.qeval.store import load_evaluations

    evs = load_evaluations(asset_path("qeval", "shipped.json")) + load_evaluations(asset_path("qeval", "calibration.json"))
    base = next(e for e in evs if e.config.canonical() == QuantConfig())
    rows = {(r.method, r.calib_domain, r.calib_tokens): r.change_by_domain for r in calibration_rows(evs, base)}

    def quoted(method, domain, tokens, judged_on):
        return f"+{round(100 * rows[(method, domain, tokens)][judged_on])} %"

    steps = {s["claim"]: s["caption"] for s in
             json.loads(Path(asset_path("tours", "B3.json")).read_text(encoding="utf-8"))["steps"] if s["panel"] == "qeval"}
    size = steps["How much calibration data the methods need"]
    for tokens in (256, 1024, 2048):
        assert quoted("gptq", "prose", tokens, "prose") in size
    # more calibration text helps, with diminishing returns
    assert rows[("gptq", "prose", 256)]["prose"] > rows[("gptq", "prose", 1024)]["prose"] > rows[("gptq", "prose", 2048)]["prose"]
    mismatch = steps["Why AWQ tolerates calibration mismatch better than GPTQ"]
    for key in (("gptq", "code", 1024, "prose"), ("gptq", "prose", 1024, "prose"), ("gptq", "prose", 1024, "code"),
                ("rtn", "—", 0, "code"), ("awq", "prose", 1024, "prose"), ("awq", "code", 1024, "prose")):
        assert quoted(*key) in mismatch, key
    # the claim itself: judging on another domain than the calibration text costs GPTQ more than AWQ
    gptq_cost = rows[("gptq", "code", 1024)]["prose"] - rows[("gptq", "prose", 1024)]["prose"]
    awq_cost = rows[("awq", "code", 1024)]["prose"] - rows[("awq", "prose", 1024)]["prose"]
    assert gptq_cost > 2 * awq_cost > 0


def test_comparison_reads_baseline_floor_and_flags_looks_fine_but_differs():
    base = _ev(QuantConfig(), 10.0, 0.0, 0.0, 1.0, 0.5)
    floor = _ev(QuantConfig(method="bf16"), 10.001, 0.002, 1e-5, 0.9, 0.5)
    fine_but_differs = _ev(QuantConfig(weight_bits=8), 10.1, 0.03, 0.01, 0.05, 0.8)
    measured = {e.config.canonical(): e for e in (base, floor, fine_but_differs)}
    configs = [QuantConfig(weight_bits=8), QuantConfig(method="bf16"), QuantConfig(), QuantConfig(weight_bits=3)]
    result = comparison(configs, lambda c: (measured.get(c.canonical()), "here" if c.canonical() in measured else ""))
    assert result.baseline is base and result.floor is floor
    row = result.rows[0]
    assert row.ppl_change == pytest.approx(0.01) and row.looks_fine_differs and not result.rows[1].looks_fine_differs
    assert result.rows[3].evaluation is None and math.isnan(result.rows[3].ppl_change)
    cell = result.tasks[0]["copy-16"]                     # 16 of 20 right: Wilson by hand [0.584, 0.919]
    assert (cell.items, cell.accuracy) == (20, 0.8) and cell.low == pytest.approx(0.5840, abs=1e-3)
    assert [r.label for r in result.ranking][0] == base.config.label() and len(result.ranking) == 3
    curve = survival_curve(fine_but_differs)
    assert curve.lengths == (32, 128) and curve.predicted[-1] == pytest.approx(0.97 ** 128)
    assert survival_curve(None) is None
    empty = comparison([QuantConfig(weight_bits=3)], lambda c: (None, ""))
    assert empty.baseline is None and empty.ranking == () and empty.calibration == ()
