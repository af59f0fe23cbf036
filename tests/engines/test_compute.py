"""The compute engine against hand-worked values and published figures (Qt-free)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engines.compute import (FITS, Fit, Params, allreduce_seconds, annual_energy_mwh, campus_capex,
                             capital_recovery_factor, chinchilla_frontier, chinchilla_loss, chinchilla_optimum, demand,
                             facility_power_mw, fit_scaling_law, gpu_hours, implied_mfu, iso_flop_curve, kaplan_loss_c,
                             kaplan_loss_n, load_table, measure_copy, measure_gemm, node_power, parse_table,
                             power_budget, power_trace, published_runs, scenario_run, step_network, tokens_per_day,
                             train_days, training_flops)
from engines.compute import cost_per_gpu_hour
from engines.compute.data import LAYOUT, data_path
from engines.core.errors import ValidationError
from engines.core.hardware import GPUS
from engines.core.scenario import Scenario

CHINCHILLA_C = 5.76e23
H100_BF16 = 989.4e12


def _hand_optimum(E, A, B, alpha, beta, C):
    """Hoffmann Eq. 4 worked by hand: G = (αA/(βB))^(1/(α+β)), N = G·(C/6)^(β/(α+β)), D = C/(6N)."""
    G = math.exp(math.log(alpha * A / (beta * B)) / (alpha + beta))
    n = G * math.exp(beta / (alpha + beta) * math.log(C / 6))
    return n, C / (6 * n)


# --- scaling laws ------------------------------------------------------------------------------

@pytest.mark.parametrize("fit, constants, n_published, d_published, ratio", [
    ("hoffmann", (1.69, 406.4, 410.7, 0.34, 0.28), 32.2e9, 2.98e12, 93),
    ("hoffmann-unrounded", (math.exp(0.5267228), math.exp(6.0073404), math.exp(6.0179186), 0.33917084, 0.2849083),
     40.4e9, 2.38e12, 59),
    ("besiroglu", (math.exp(0.59711), 482.00572, 2085.43420, 0.347813, 0.365854), 72.4e9, 1.33e12, 18.3),
])
def test_chinchilla_optimum_at_chinchillas_budget_for_each_fit(fit, constants, n_published, d_published, ratio):
    n, d = chinchilla_optimum(CHINCHILLA_C, fit)
    n_hand, d_hand = _hand_optimum(*constants, CHINCHILLA_C)
    assert n == pytest.approx(n_hand, rel=1e-12) and d == pytest.approx(d_hand, rel=1e-12)
    assert n == pytest.approx(n_published, rel=5e-3) and d == pytest.approx(d_published, rel=5e-3)
    assert d / n == pytest.approx(ratio, rel=1e-2)
    assert 6 * n * d == pytest.approx(CHINCHILLA_C, rel=1e-12)


def test_the_printed_constants_do_not_give_twenty_tokens_per_parameter_and_the_refit_nearly_does():
    ratios = {f: (lambda nd: nd[1] / nd[0])(chinchilla_optimum(CHINCHILLA_C, f)) for f in FITS}
    assert ratios["hoffmann"] > 90 and ratios["hoffmann-unrounded"] > 55
    assert 15 < ratios["besiroglu"] < 22


def test_the_optimum_minimises_the_loss_along_its_iso_flop_curve():
    for fit in FITS:
        n, loss = iso_flop_curve(CHINCHILLA_C, fit, n_points=401)
        n_opt, d_opt = chinchilla_optimum(CHINCHILLA_C, fit)
        assert n[np.argmin(loss)] == pytest.approx(n_opt, rel=0.05)
        assert loss.min() == pytest.approx(chinchilla_loss(n_opt, d_opt, fit), abs=1e-5)
    ns, ds, ls = chinchilla_frontier(np.array([1e20, CHINCHILLA_C]), "besiroglu")
    assert ns[1] == pytest.approx(chinchilla_optimum(CHINCHILLA_C, "besiroglu")[0])


def test_chinchilla_loss_is_the_printed_formula():
    assert chinchilla_loss(70e9, 1.4e12, "hoffmann") == pytest.approx(
        1.69 + 406.4 / 70e9 ** 0.34 + 410.7 / 1.4e12 ** 0.28, rel=1e-12)


def test_a_measured_fit_plugs_into_the_closed_form():
    fit = Fit(E=1.69, A=406.4, B=410.7, alpha=0.34, beta=0.28, huber=0.0, rmse_log=0.0, n_points=5)
    assert chinchilla_optimum(CHINCHILLA_C, fit) == pytest.approx(chinchilla_optimum(CHINCHILLA_C, "hoffmann"))
    assert callable(fit_scaling_law)


def test_kaplan_laws():
    assert kaplan_loss_n(2e9) / kaplan_loss_n(1e9) == pytest.approx(2 ** -0.076)
    assert kaplan_loss_c(2 * 8.64e19) / kaplan_loss_c(8.64e19) == pytest.approx(2 ** -0.050)
    assert kaplan_loss_n(8.8e13) == pytest.approx(1.0)


# --- compute, GPU-hours, MFU ---------------------------------------------------------------------

def test_six_nd_for_gpt3_and_llama3_405b():
    assert training_flops(175e9, 300e9) == pytest.approx(3.15e23)            # Brown et al. report 3.14e23
    assert training_flops(175e9, 300e9) == pytest.approx(3.14e23, rel=5e-3)
    assert training_flops(405e9, 15.6e12) == pytest.approx(3.7908e25)        # the paper reports 3.8e25
    assert training_flops(405e9, 15.6e12) == pytest.approx(3.8e25, rel=5e-3)


def test_llama31_model_card_gpu_hours_and_the_mfu_they_imply():
    mfu = implied_mfu(3.8e25, 30.84e6, H100_BF16)
    assert mfu == pytest.approx(3.8e25 / (30.84e6 * 3600 * 989.4e12)) and mfu == pytest.approx(0.3459, abs=5e-4)
    assert gpu_hours(3.8e25, "h100-sxm", mfu=mfu) == pytest.approx(30.84e6)
    # at the paper's steady-state 38–43 % MFU the same compute needs fewer hours than the card logs
    assert gpu_hours(3.8e25, "h100-sxm", mfu=0.43) < gpu_hours(3.8e25, "h100-sxm", mfu=0.38) < 30.84e6
    assert gpu_hours(3.8e25, GPUS["h100-sxm"], mfu=0.4) == pytest.approx(3.8e25 / (989.4e12 * 0.4 * 3600))
    # 16,384 H100s at 40 % MFU: 3.8e25 / (16384 × 989.4e12 × 0.4) s
    assert train_days(3.8e25, 16384, H100_BF16, 0.4) == pytest.approx(3.8e25 / (16384 * 989.4e12 * 0.4) / 86400)
    llama = {r.label: r for r in published_runs("hoffmann")}["Llama 3 405B"]
    assert llama.implied_mfu == pytest.approx(mfu) and llama.flop == 3.8e25


def test_the_scenario_run_is_six_nd_on_its_gpus():
    sc = Scenario()
    run = scenario_run(sc, 15e12, 0.4)
    n = sc.arch.param_count()
    assert run.point.flop_6nd == pytest.approx(6 * n * 15e12)
    assert run.days == pytest.approx(6 * n * 15e12 / (sc.n_gpus * H100_BF16 * 0.4) / 86400)
    assert run.gpu_hours == pytest.approx(run.days * 24 * sc.n_gpus)


# --- network -----------------------------------------------------------------------------------

def test_ring_allreduce_of_a_70b_models_gradients():
    assert allreduce_seconds(140e9, 8, 450e9) == pytest.approx(140e9 / 450e9 * 2 * 7 / 8)   # 0.544 s on NVLink
    assert allreduce_seconds(140e9, 8, 450e9) == pytest.approx(0.5444, abs=1e-4)
    assert allreduce_seconds(140e9, 8, 50e9) == pytest.approx(4.9)                        # 400 Gb/s NICs
    assert allreduce_seconds(1e9, 1, 1e9) == 0.0


def test_step_network_puts_the_same_gradients_on_both_fabrics():
    sc = Scenario()
    net = step_network(sc)
    assert net.grad_bytes == pytest.approx(2 * sc.arch.param_count())
    assert net.network_seconds / net.nvlink_seconds == pytest.approx(450 / 50)
    assert net.compute_seconds > 0


# --- power -------------------------------------------------------------------------------------

def test_facility_power_and_energy():
    assert facility_power_mw(24576, 8, 10.2, 1.0) == pytest.approx(31.3344)        # 3,072 DGX H100 nodes
    assert facility_power_mw(24576, 8, 10.2, 1.58) == pytest.approx(31.3344 * 1.58)
    assert facility_power_mw(9, 8, 10.0, 1.0) == pytest.approx(0.02)                 # a partial node is a node
    assert annual_energy_mwh(1000.0) == pytest.approx(8.76e6)                        # 1 GW = 8.76 TWh a year
    assert annual_energy_mwh(10.0, 0.5) == pytest.approx(43_800)


def test_node_power_from_the_dgx_guides_or_the_node_factor():
    h = node_power("h100-sxm")
    assert h.kw == 10.2 and h.gpu_kw == pytest.approx(5.6) and h.kw / h.gpu_kw == pytest.approx(1.82, abs=0.01)
    assert node_power("b200").kw == 14.3
    assert node_power("mi300x").kw == pytest.approx(8 * 0.750 * 1.82)


def test_power_budget_of_the_llama3_run():
    b = power_budget("h100-sxm", 16384, 8, 1.0, 0.10, 0.5, 1.0, 30.84e6)
    assert b.gpu_w == pytest.approx(16384 * 700)                                      # 11.5 MW of boards
    assert b.it_w == pytest.approx(2048 * 10.2e3)
    run_kwh = 30.84e6 * 10.2 / 8
    assert b.run_j == pytest.approx(run_kwh * 3.6e6)
    assert b.run_cost == pytest.approx(run_kwh * 0.10) and b.run_co2_kg == pytest.approx(run_kwh / 1000 * 0.5 * 1000)
    assert b.facility_w == pytest.approx(facility_power_mw(16384, 8, 10.2, 1.0) * 1e6)
    assert b.annual_j == pytest.approx(annual_energy_mwh(b.facility_w / 1e6) * 3.6e9)


def test_power_trace_swings_by_the_gpu_share_that_stops_computing():
    sc = Scenario(n_gpus=16384)
    tr = power_trace(sc, pue=1.0, waiting_share=0.0, steps=6, checkpoint_every=3, checkpoint_seconds=10.0)
    assert tr.swing_w == pytest.approx(16384 * 700)
    assert tr.phase.count("checkpoint") == 2 and len(tr.t) == len(tr.w) + 1
    assert np.all(np.diff(tr.t) > 0)


# --- cost ----------------------------------------------------------------------------------------

def test_cost_per_gpu_hour_by_hand():
    b = cost_per_gpu_hour(40_000, 5, 11.7e6, 1.275, 15, 1.3, 0.0892)
    assert b.server == pytest.approx(40_000 / 5 / 8760)
    assert b.facility == pytest.approx(11.7e6 * 0.001275 / 15 / 8760)                 # $14,917.50 per GPU
    assert b.power == pytest.approx(1.275 * 1.3 * 0.0892)
    assert b.total == pytest.approx(b.server + b.facility + b.power)
    assert sum(b.shares().values()) == pytest.approx(1.0)
    half = cost_per_gpu_hour(40_000, 5, 11.7e6, 1.275, 15, 1.3, 0.0892, utilisation=0.5, opex_per_hour=0.2)
    assert half.server == pytest.approx(2 * b.server) and half.power == pytest.approx(b.power) and half.opex == 0.2
    assert b.times(1000)["total"] == pytest.approx(1000 * b.total)


def test_cost_of_capital_uses_the_capital_recovery_factor():
    assert capital_recovery_factor(0.0, 5) == pytest.approx(0.2)
    assert capital_recovery_factor(0.08, 5) == pytest.approx(0.08 * 1.08 ** 5 / (1.08 ** 5 - 1))
    b = cost_per_gpu_hour(40_000, 5, 0.0, 1.0, 15, 1.0, 0.0, rate=0.08)
    assert b.server == pytest.approx(40_000 * 0.250456 / 8760, rel=1e-5)


def test_campus_capex_splits_the_building_by_the_published_shares():
    c = campus_capex(1000, 40_000, 1.275, 11.7e6)
    assert c.servers == 40e6 and c.facility == pytest.approx(1.275 * 11.7e6)
    assert sum(v for _, v, _ in c.facility_parts) == pytest.approx(c.facility)
    assert sum(s for _, s, _ in c.published_split) == pytest.approx(1.0)


# --- demand --------------------------------------------------------------------------------------

def test_inference_overtakes_training_after_three_d_over_t_days():
    t = tokens_per_day(1000, 640)
    assert t == 1000 * 640 * 86400
    d = demand(70e9, 15e12, t)
    assert d.crossover_days == pytest.approx(3 * 15e12 / t)
    assert d.inference_flop_per_day == pytest.approx(2 * 70e9 * t)
    assert demand(70e9, 15e12, 0.0).crossover_days == math.inf


# --- bad input names the field ---------------------------------------------------------------------

@pytest.mark.parametrize("call, field", [
    (lambda: training_flops(-1, 1e9), "params"),
    (lambda: training_flops(1e9, float("nan")), "tokens"),
    (lambda: chinchilla_loss(0, 1e9), "N"),
    (lambda: chinchilla_optimum(1e23, "kaplan"), "fit"),
    (lambda: chinchilla_optimum(0, "hoffmann"), "C"),
    (lambda: gpu_hours(1e23, "h100-sxm", mfu=1.5), "mfu"),
    (lambda: gpu_hours(1e23, "tpu-v9"), "gpu"),
    (lambda: implied_mfu(1e23, 0, 1e15), "gpu_hours"),
    (lambda: train_days(1e23, 0, 1e15, 0.4), "n_gpus"),
    (lambda: facility_power_mw(8, 8, 10.2, 0.9), "pue"),
    (lambda: annual_energy_mwh(10, 1.2), "load_factor"),
    (lambda: allreduce_seconds(1e9, 0, 1e9), "n"),
    (lambda: allreduce_seconds(1e9, 8, 0), "link_bytes_per_s"),
    (lambda: cost_per_gpu_hour(40_000, 0, 11.7e6, 1.3, 15, 1.3, 0.08), "server_life_years"),
    (lambda: cost_per_gpu_hour(40_000, 5, 11.7e6, 1.3, 15, 1.3, 0.08, utilisation=0), "utilisation"),
    (lambda: Params(pue=0.8), "pue"),
    (lambda: Params(fit="kaplan"), "fit"),
])
def test_bad_input_raises_validation_error_naming_the_field(call, field):
    with pytest.raises(ValidationError) as exc:
        call()
    assert exc.value.field == field


def test_params_round_trip():
    p = Params()
    assert Params(**p.to_dict()) == p and p.mfu == 0.4 and p.tokens == 15e12


# --- data files ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_every_shipped_figure_is_dated_sourced_and_tagged(name):
    table = load_table(name)
    doc = json.loads(data_path(name).read_text(encoding="utf-8"))
    assert doc["schema_version"] == 1
    for section, rows in table.items():
        if section == "as_of":
            continue
        for row in rows if isinstance(rows, tuple) else (rows,):
            assert row.source.strip() and row.date and row.confidence


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["rows"][0].pop("source"), "rows[0].source"),
    (lambda d: d["rows"][1].__setitem__("date", "last year"), "rows[1].date"),
    (lambda d: d["rows"][2].__setitem__("confidence", "sure"), "rows[2].confidence"),
    (lambda d: d["rows"][0].__setitem__("N", -5), "rows[0].N"),
    (lambda d: d["rows"][0].__setitem__("colour", "red"), "rows[0].colour"),
    (lambda d: d["rows"][4].__setitem__("gpu", "h800"), "rows[4].gpu"),
    (lambda d: d.__setitem__("schema_version", 99), "schema_version"),
    (lambda d: d.__setitem__("kind", "explorer-compute-market"), "kind"),
])
def test_a_broken_data_file_names_what_is_wrong(edit, field):
    doc = json.loads(data_path("runs.json").read_text(encoding="utf-8"))
    edit(doc)
    with pytest.raises(ValidationError) as exc:
        parse_table("runs.json", doc)
    assert exc.value.field == field


def test_an_assumption_outside_its_own_range_is_refused():
    doc = json.loads(data_path("assumptions.json").read_text(encoding="utf-8"))
    doc["rows"][4]["value"] = 9.0
    with pytest.raises(ValidationError, match="outside its own range"):
        parse_table("assumptions.json", doc)


def test_the_catalogue_carries_board_power_from_the_datasheets():
    assert {k: g.tdp_w for k, g in GPUS.items()} == {"a100-80gb": 400, "h100-sxm": 700, "h200": 700, "b200": 1000,
                                                      "mi300x": 750, "rtx4090": 450}
    assert all(g.tdp_source for g in GPUS.values())


# --- measurements ----------------------------------------------------------------------------------

def test_cpu_measurements_are_real_rates():
    g = measure_gemm("cpu", n=256, repeats=2)
    assert g.kind == "gemm" and g.value == pytest.approx(2 * 256 ** 3 / g.seconds) and g.value > 1e8
    c = measure_copy("cpu", nbytes=2 ** 22, repeats=2)
    assert c.value == pytest.approx(2 * c.size / c.seconds) and c.value > 1e8


@pytest.mark.gpu
def test_cuda_measurements_beat_the_cpu():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from engines.compute.measure import _peak_of

    n, nbytes = 4096, 2 ** 28                      # the same job on both devices
    g, cpu_g = measure_gemm("cuda", n=n, repeats=5), measure_gemm("cpu", n=n, repeats=2)
    assert g.dtype == "bfloat16" and g.size == cpu_g.size == n
    assert g.value > 10 * cpu_g.value             # tensor cores against a few CPU cores on one n × n product
    c, cpu_c = measure_copy("cuda", nbytes=nbytes, repeats=3), measure_copy("cpu", nbytes=nbytes, repeats=2)
    assert c.size == cpu_c.size and c.value > 5 * cpu_c.value       # HBM against DRAM, the same bytes
    # and each against its datasheet: a real share of the peak, never above it
    for rate, low in ((g, 0.25), (c, 0.3)):
        peak = _peak_of(rate)
        assert peak is not None, f"{rate.device_name} is not in the GPU catalogue"
        assert low < rate.value / peak <= 1.05, (rate.kind, rate.value / peak)
