"""The compute panel's one study call (Qt-free): published figures come through it, knobs in display
units are converted once, the curves the view draws are computed here; and the panel does no arithmetic."""
from __future__ import annotations

import ast
import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

from engines.compute import Params, cost_per_gpu_hour, node_power, study
from engines.compute.study import CHINCHILLA_C, ISO_BUDGETS
from engines.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def default():
    return study(Scenario(), Params())


@pytest.mark.parametrize("fit, n_published, d_published, ratio", [
    ("hoffmann", 32.2e9, 2.98e12, 93),          # the printed constants (Hoffmann 2022 §3.3; Besiroglu 2024 Table 1)
    ("besiroglu", 72.4e9, 1.33e12, 18.3),       # Besiroglu et al. 2024 refit: close to Table 3's 70B on 1.4T
])
def test_chinchilla_optimum_at_its_budget_through_the_study(fit, n_published, d_published, ratio):
    s = study(Scenario(), Params(fit=fit)).scaling
    o = next(o for o in s.optima if o.fit == fit)
    assert o.chosen and sum(x.chosen for x in s.optima) == 1
    assert o.params == pytest.approx(n_published, rel=5e-3) and o.tokens == pytest.approx(d_published, rel=5e-3)
    assert o.tokens_per_param == pytest.approx(ratio, rel=1e-2)
    assert 6 * o.params * o.tokens == pytest.approx(CHINCHILLA_C, rel=1e-12)


def test_the_frontier_passes_through_the_optimum_and_each_iso_curve_bottoms_out_on_it(default):
    s = default.scaling
    line = s.chosen
    assert line.fit == "besiroglu" and 6 * line.params * line.tokens == pytest.approx(line.flop, rel=1e-12)
    opt = next(o for o in s.optima if o.chosen)
    logn = np.interp(math.log(CHINCHILLA_C), np.log(line.flop), np.log(line.params))
    assert math.exp(logn) == pytest.approx(opt.params, rel=1e-6)       # a power law: exact in log space
    assert [c.flop for c in s.iso[:-1]] == list(ISO_BUDGETS) and s.iso[-1].scenario
    assert s.iso[-1].flop == s.scenario.point.flop_6nd
    for c in s.iso:
        assert c.params[np.argmin(c.loss)] == pytest.approx(c.optimum_params, rel=0.06)
        assert s.iso_loss_low <= c.optimum_loss < s.iso_loss_high


def test_kaplans_slope_is_drawn_through_gpt3(default):
    s = default.scaling
    gpt3 = next(x for x in s.runs if x.label.startswith("GPT-3"))
    logn = np.interp(math.log(gpt3.flop), np.log(s.kaplan_flop), np.log(s.kaplan_params))
    assert math.exp(logn) == pytest.approx(gpt3.N, rel=1e-6)


def test_knobs_in_display_units_are_converted_once(default):
    sc, p = Scenario(), Params()
    b = default.power.budget
    assert b.price_per_kwh == pytest.approx(p.price_c_per_kwh / 100) and b.grid_t_per_mwh == p.grid_kg_per_mwh / 1000
    assert b.load_factor == p.load_pct / 100 and b.run_gpu_hours == default.run.gpu_hours
    hand = cost_per_gpu_hour(p.server_capex_k * 1000, p.server_life_years, p.facility_m_per_mw * 1e6,
                             node_power(sc.gpu, sc.gpus_per_node).kw_per_gpu, p.facility_life_years, p.pue,
                             p.price_c_per_kwh / 100, p.utilisation_pct / 100, p.opex_per_gpu_hour, p.rate_pct / 100)
    assert default.cost.breakdown == hand
    assert default.cost.run_dollars == pytest.approx(hand.total * default.run.gpu_hours)
    assert default.cost.run_power_dollars == pytest.approx(hand.power * default.run.gpu_hours)
    assert default.run.point.D == p.tokens_b * 1e9 and default.run.mfu == p.mfu_pct / 100
    half = study(sc, Params(server_capex_k=p.server_capex_k / 2)).cost.breakdown
    assert half.server == pytest.approx(hand.server / 2) and half.power == hand.power


def test_the_result_is_frozen_and_its_cached_curves_read_only(default):
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.scaling = None
    with pytest.raises(ValueError):
        default.scaling.chosen.params[0] = 1.0
    assert study(Scenario(), Params()).scaling.frontier is default.scaling.frontier      # cached per fit


def test_every_figure_on_the_power_and_cost_views_has_a_source(default):
    for rows in (default.power.sources, default.cost.sources):
        assert rows and all(a and b for a, b in rows)
    assert any(f"PUE {Params().pue:.2f}" == a for a, _ in default.power.sources)


# --- the panel only draws --------------------------------------------------------------------------
PANEL = ROOT / "panels" / "compute.py"
FORMULAS = re.compile(r"\b(chinchilla_\w+|iso_flop_curve|kaplan_(allocation|loss_\w)|power_budget|power_trace|"
                      r"cost_per_gpu_hour|campus_capex|step_network|scenario_run|published_runs|demand|"
                      r"tokens_per_day|node_power)\(")


def test_the_compute_panel_does_no_arithmetic_on_results():
    tree = ast.parse(PANEL.read_text(encoding="utf-8"))
    arithmetic = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.BitOr):      # X | None is a type hint
            strings = [o for o in (node.left, node.right) if isinstance(o, (ast.Constant, ast.JoinedStr))
                       and not isinstance(getattr(o, "value", ""), (int, float))]
            if not (isinstance(node.op, ast.Add) and strings):                       # joining text is not arithmetic
                arithmetic.append(f"line {node.lineno}: {ast.unparse(node)}")
    assert arithmetic == []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "study"]
    assert len(calls) == 1


def test_the_compute_views_call_no_formula():
    for path in [PANEL, *sorted((ROOT / "panels").glob("_compute_*.py"))]:
        if path.name == "_compute_experiment.py":         # runs its own experiment job through the engine
            continue
        hits = FORMULAS.findall(path.read_text(encoding="utf-8"))
        assert hits == [], f"{path.name} computes {hits}"


def test_machine_rates_set_each_rate_against_the_gpus_datasheet_peak(default):
    """The machine view's bars: this CPU measured, the scenario's GPU from its datasheet, the
    catalogue's CPUs derived; every rate under the GPU's peak carries how many times under it."""
    from engines.compute.measure import MachineMeasurement, Rate

    m = default.machine
    peak, hbm = m.gpu.peak_flops("bf16"), m.gpu.bandwidth_gbps * 1e9
    assert peak == pytest.approx(989.4e12) and hbm == pytest.approx(3.35e12)   # H100 SXM datasheet: dense BF16, HBM3
    bare = m.rates(None)
    assert bare.flops[0].value is None and bare.cpu_below_gpu is None             # not measured yet
    assert [r.source for r in bare.flops] == ["measured", "datasheet"] + ["derived"] * len(m.cpus)
    gpu_row = bare.flops[1]
    assert gpu_row.value == peak and gpu_row.below_peak == 0.0                     # the peak is not under itself
    for r, c in zip(bare.flops[2:], m.cpus):
        assert r.value == c.flops and r.below_peak == pytest.approx(peak / c.flops)
    for r, c in zip(bare.bytes[2:], m.cpus):
        assert r.value == c.bytes_per_s and r.below_peak == pytest.approx(hbm / c.bytes_per_s)
    cpu = Rate(device="cpu", device_name="x86_64", kind="gemm", dtype="float32", size=1024, repeats=5,
               seconds=0.01, value=1.0e11, threads=2)
    copy = Rate(device="cpu", device_name="x86_64", kind="copy", dtype="float32", size=2**28, repeats=5,
                seconds=0.02, value=2.0e10, threads=2)
    rates = m.rates(MachineMeasurement(rates=(cpu, copy)))
    assert rates.flops[0].value == 1.0e11 and rates.flops[0].below_peak == pytest.approx(9894)
    assert rates.bytes[0].value == 2.0e10 and rates.bytes[0].below_peak == pytest.approx(167.5)
    assert rates.cpu_below_gpu == pytest.approx(9894)
