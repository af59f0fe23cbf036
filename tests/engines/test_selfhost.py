"""Self-hosting engine: the five public formulas on hand-worked cases, the price file, the study's wiring
to the steady-state sizing, the operating figures and the privacy trees."""
import json
import math
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from engines.core.cited import CONFIDENCE
from engines.core.errors import ValidationError
from engines.core.scenario import Scenario
from engines.selfhost import (HOURS_PER_MONTH, Params, api_monthly_cost, break_even_utilisation,
                              cost_per_million_output_tokens, dump_prices, load_prices, owned_cost_per_gpu_hour,
                              parse_price_text, replicas_for_peak, tco)
from engines.selfhost import outlook, peak_rate, price_mix, sizing_key
from engines.selfhost.operate import capacity_plan, diurnal_shape, retirement_signals, upgrade_cost
from engines.selfhost.prices import age_days, age_words, is_stale
from engines.selfhost.privacy import load_privacy_trees, privacy_problems
from engines.serving.steady import Sizing, size_deployment

DATA = Path(__file__).resolve().parents[1] / "data"

TODAY = date(2026, 12, 1)


# ---- the public formulas, worked by hand ---------------------------------------------------------

def test_a_month_is_730_hours():
    assert HOURS_PER_MONTH == 730


def test_cost_per_million_output_tokens_by_hand():
    # 3.99 $/h, one GPU, 3,500 tok/s at 40 %: 3.99e6 / (3,600 × 3,500 × 0.4) = 0.7917 $ per M
    assert cost_per_million_output_tokens(3.99, 1, 3500, 0.4) == pytest.approx(3.99e6 / 5.04e6)
    # + 1,000 $/month fixed: (3.99 × 730 + 1,000) / (3,600 × 730 × 3,500 × 0.4 / 1e6) = 3,912.7 / 3,679.2
    assert cost_per_million_output_tokens(3.99, 1, 3500, 0.4, 1000.0) == pytest.approx(3912.7 / 3679.2)
    # twice the GPUs per replica doubles it; full load instead of 40 % divides it by 2.5
    assert cost_per_million_output_tokens(3.99, 2, 3500, 1.0) == pytest.approx(2 * 0.7916667 / 2.5, rel=1e-6)


@pytest.mark.parametrize("p_in, p_out, expected", [
    (0.15, 0.60, 0.263889),   # GPT-4o-mini at r = 4: P_mix = 1.20
    (0.18, 0.18, 0.351852),   # Together Llama 3.1 8B: P_mix = 0.90
])
def test_break_even_utilisation_by_hand(p_in, p_out, expected):
    assert break_even_utilisation(3.99, 1, 3500, p_in, p_out, 4) == pytest.approx(expected, rel=1e-5)


def test_no_break_even_when_the_api_is_cheaper_than_a_fully_loaded_replica():
    # Groq's 8B at 0.05 / 0.08: P_mix = 4 × 0.05 + 0.08 = 0.28; u* = 3.99e6 / (12.6e6 × 0.28) = 1.131 > 1
    u = break_even_utilisation(3.99, 1, 3500, 0.05, 0.08, 4)
    assert u == pytest.approx(1.130952, rel=1e-5) and u > 1
    assert break_even_utilisation(3.99, 1, 3500, 0.0, 0.0, 4) == math.inf


def test_api_monthly_cost_by_hand():
    # 10 req/s × 3,600 × 730 = 26.28 M requests × (512 × 0.15 + 128 × 0.60) / 1e6 $ = 4,036.608 $
    assert api_monthly_cost(10, 512, 128, 0.15, 0.60) == pytest.approx(4036.608)
    assert api_monthly_cost(0, 512, 128, 0.15, 0.60) == 0


def test_owned_cost_per_gpu_hour_by_hand():
    # DGX H100 270,000 $ over 4 years on 8 GPUs + 10.2 kW × PUE 1.5 × 0.12 $/kWh over 8 GPUs
    capital = 270_000 / 4 / (8 * 8760)
    power = 10.2 * 1.5 * 0.12 / 8
    assert owned_cost_per_gpu_hour(270_000, 4, 10.2, 1.5, 0.12, 8) == pytest.approx(capital + power)
    assert capital + power == pytest.approx(1.192684, rel=1e-6)
    # 5 % cost of capital: the annuity factor 0.05 / (1 − 1.05⁻⁴) = 0.282012 replaces 1/4
    assert owned_cost_per_gpu_hour(270_000, 4, 10.2, 1.5, 0.12, 8, rate=0.05) == pytest.approx(
        270_000 * 0.05 / (1 - 1.05 ** -4) / (8 * 8760) + power)


def test_owned_against_rented_moves_the_break_even_by_the_price_ratio():
    owned = owned_cost_per_gpu_hour(270_000, 4, 10.2, 1.5, 0.12, 8)
    rented = 3.99
    u_own = break_even_utilisation(owned, 1, 3500, 0.15, 0.60, 4)
    u_rent = break_even_utilisation(rented, 1, 3500, 0.15, 0.60, 4)
    assert u_own == pytest.approx(0.078880, rel=1e-4)
    assert u_own / u_rent == pytest.approx(owned / rented)
    assert cost_per_million_output_tokens(owned, 1, 3500, 0.4) < cost_per_million_output_tokens(rented, 1, 3500, 0.4)


@pytest.mark.parametrize("peak, per, spares, expected", [
    (40, 10, 1, 5), (41, 10, 1, 6), (0.3, 0.1, 0, 3), (0, 10, 0, 0), (39.9, 10, 2, 6)])
def test_replicas_for_peak(peak, per, spares, expected):
    assert replicas_for_peak(peak, per, spares) == expected


@pytest.mark.parametrize("call, field", [
    (lambda: cost_per_million_output_tokens(3.99, 1, 3500, 0.0), "utilisation"),
    (lambda: cost_per_million_output_tokens(3.99, 1, 3500, 1.5), "utilisation"),
    (lambda: cost_per_million_output_tokens(3.99, 0, 3500, 0.5), "gpus_per_replica"),
    (lambda: cost_per_million_output_tokens(-1, 1, 3500, 0.5), "gpu_price_per_hour"),
    (lambda: cost_per_million_output_tokens(3.99, 1, 0, 0.5), "output_tokens_per_s"),
    (lambda: cost_per_million_output_tokens(3.99, 1, 3500, 0.5, -5), "fixed_per_month"),
    (lambda: break_even_utilisation(3.99, 1, 3500, -0.1, 0.6, 4), "api_price_in"),
    (lambda: break_even_utilisation(3.99, 1, 3500, 0.1, 0.6, -4), "prompt_tokens_per_output_token"),
    (lambda: api_monthly_cost(-1, 512, 128, 0.15, 0.6), "requests_per_s"),
    (lambda: api_monthly_cost(1, 512, 128, float("nan"), 0.6), "price_in"),
    (lambda: owned_cost_per_gpu_hour(270_000, 0, 10.2, 1.5, 0.12, 8), "life_years"),
    (lambda: owned_cost_per_gpu_hour(270_000, 4, 10.2, 0.5, 0.12, 8), "pue"),
    (lambda: owned_cost_per_gpu_hour(270_000, 4, 10.2, 1.5, 0.12, 0), "gpus_per_server"),
    (lambda: owned_cost_per_gpu_hour(270_000, 4, 10.2, 1.5, 0.12, 8, rate=-0.1), "rate"),
    (lambda: replicas_for_peak(10, 0), "rate_per_replica"),
    (lambda: replicas_for_peak(10, 1, -1), "spares"),
    (lambda: Params(traffic_per_s=0), "traffic_per_s"),
    (lambda: Params(ownership="lease"), "ownership"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(ValidationError) as err:
        call()
    assert err.value.field == field


# ---- the price file ---------------------------------------------------------------------------------

def _doc():
    return json.loads(dump_prices(load_prices()))


def test_the_shipped_price_file_is_valid_dated_and_round_trips():
    book = load_prices()
    assert book.api and book.gpu_rental and book.hardware
    for row in (*book.api, *book.gpu_rental, *book.hardware):
        assert row.source and row.date and row.confidence in CONFIDENCE
    assert parse_price_text(dump_prices(book)) == book
    assert "0.39999" not in dump_prices(book)            # prices stay as written


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["api"][0].update(date="2026-13-01"), "api[0].date"),
    (lambda d: d["api"][1].pop("source"), "api[1].source"),
    (lambda d: d["api"][2].update(output_per_mtok=-1), "api[2].output_per_mtok"),
    (lambda d: d["api"][0].update(confidence="trust me"), "api[0].confidence"),
    (lambda d: d["gpu_rental"][0].update(gpu="h9000"), "gpu_rental[0].gpu"),
    (lambda d: d["gpu_rental"][0].update(term="forever"), "gpu_rental[0].term"),
    (lambda d: d["gpu_rental"][1].update(id=d["gpu_rental"][0]["id"]), "gpu_rental[1].id"),
    (lambda d: d["hardware"][0].update(gpus_per_server=0), "hardware[0].gpus_per_server"),
    (lambda d: d.update(schema_version=99), "schema_version"),
    (lambda d: d.update(kind="scenario"), "kind"),
    (lambda d: d.update(api=[]), "api"),
])
def test_a_broken_price_file_names_the_field(edit, field):
    doc = _doc()
    edit(doc)
    with pytest.raises(ValidationError) as err:
        parse_price_text(json.dumps(doc))
    assert err.value.field == field


def test_a_version_1_price_file_is_migrated_to_the_shared_cited_rows():
    """tests/data/prices_v1.json is the shipped file as version 1 saved it (``observed``, its own
    confidence words): it reads as the same book as the shipped version-2 file."""
    v1 = json.loads((DATA / "prices_v1.json").read_text(encoding="utf-8"))
    assert v1["schema_version"] == 1 and "observed" in v1["api"][0]
    assert {r["confidence"] for r in v1["api"]} == {"price table"}
    book = parse_price_text(json.dumps(v1))
    assert book == load_prices()
    assert {r.confidence for r in book.api} == {"secondary"}
    assert book.api[0].date == v1["api"][0]["observed"] == book.api[0].observed
    v1["api"][0]["confidence"] = "provider page"
    assert parse_price_text(json.dumps(v1)).api[0].confidence == "checked"
    v1["api"][0]["confidence"] = "trust me"          # a word neither version knew is named, not mapped
    with pytest.raises(ValidationError) as err:
        parse_price_text(json.dumps(v1))
    assert err.value.field == "api[0].confidence"


def test_not_json_and_missing_files_explain_themselves(tmp_path):
    with pytest.raises(ValidationError) as err:
        parse_price_text("{ not json")
    assert err.value.field == "file"
    with pytest.raises(ValidationError) as err:
        load_prices(tmp_path / "absent.json")
    assert err.value.field == "file"


def test_price_age_and_staleness():
    assert age_days("2026-11-09", TODAY) == 22
    assert age_days("2023-05", TODAY) == (TODAY - date(2023, 5, 1)).days
    assert not is_stale("2025-12-01", TODAY) and is_stale("2025-11-30", TODAY)
    assert "STALE" in age_words("2023-05", TODAY) and "STALE" not in age_words("2026-09-25", TODAY)


def test_the_default_rental_offer_is_the_median_on_demand_price():
    book = load_prices()
    prices = sorted(r.usd_per_gpu_hour for r in book.rentals_for("h100-sxm") if r.term == "on-demand")
    assert book.rental_row("", "h100-sxm").usd_per_gpu_hour == prices[(len(prices) - 1) // 2]
    with pytest.raises(ValidationError) as err:
        book.rental_row("", "b200")
    assert err.value.field == "gpu_offer"


# ---- the study stands on the steady-state sizing ------------------------------------------------------

def _sizing(rate: float, per: float, gpus: int = 1) -> Sizing:
    return Sizing(rate_per_s=rate, policy="continuous", max_rate_per_replica=per, replicas=math.ceil(rate / per),
                  gpus_per_replica=gpus, gpus=gpus * math.ceil(rate / per), throughput_per_replica_tokens_per_s=0.0,
                  feasible=True, saturation_rate_per_replica=per / 0.8)


def test_tco_follows_the_formulas_from_a_given_sizing():
    p = Params(traffic_per_s=20.0, peak_to_average=2.0, efficiency_pct=50.0, spares=1, fte=0.5,
               usd_per_fte_year=120_000, other_fixed_per_month=1000.0)
    book = load_prices()
    t = tco(Scenario(), p, book, TODAY, _sizing(40.0, 10.0))
    price = book.rental_row("", "h100-sxm").usd_per_gpu_hour
    assert t.rate_per_replica == 5.0 and t.tokens_per_replica == 5.0 * 128
    assert t.replicas == replicas_for_peak(40.0, 5.0, 1) == 9
    assert t.utilisation == pytest.approx(20.0 / 45.0)
    assert t.gpu_monthly == pytest.approx(price * 9 * 730)
    assert t.staff_monthly == pytest.approx(5000.0)
    assert t.self_monthly == pytest.approx(price * 9 * 730 + 6000.0)
    assert t.api_monthly == pytest.approx(api_monthly_cost(20.0, 512, 128, 0.15, 0.60))
    assert t.break_even_u == pytest.approx(break_even_utilisation(price, 1, 640.0, 0.15, 0.60, 4.0))
    assert t.gpu_per_mtok == pytest.approx(cost_per_million_output_tokens(price, 1, 640.0, 20.0 / 45.0))
    assert t.self_per_mtok == pytest.approx(t.self_monthly / (20.0 * 128 * 3600 * 730 / 1e6))
    # a price cut of 40 % raises u* by 1 / 0.6
    cut = tco(Scenario(), replace(p, api_price_change_pct=-40.0), book, TODAY, _sizing(40.0, 10.0))
    assert cut.break_even_u == pytest.approx(t.break_even_u / 0.6)


def test_owned_hardware_in_the_study_uses_the_price_file_server():
    p = Params(ownership="own", life_years=4.0, pue=1.5, usd_per_kwh=0.12, capital_rate_pct=0.0)
    t = tco(Scenario(), p, load_prices(), TODAY, _sizing(40.0, 10.0))
    assert t.gpu_price.usd_per_gpu_hour == pytest.approx(owned_cost_per_gpu_hour(270_000, 4, 10.2, 1.5, 0.12, 8))
    assert t.stale_rows == ("dgx-h100",)                  # observed 2023-05: older than a year
    with pytest.raises(ValidationError) as err:           # no purchase price for an A100 in the file
        tco(replace(Scenario(), gpu="a100-80gb"), p, load_prices(), TODAY, _sizing(40.0, 10.0))
    assert err.value.field == "ownership"


def test_tco_uses_the_steady_state_sizing_of_the_scenario():
    s = replace(Scenario(), serve_batch=32)
    p = Params(traffic_per_s=10.0, peak_to_average=2.0, efficiency_pct=50.0)
    sizing = size_deployment(s, 20.0, p.target, "continuous",
                             __import__("engines.serving.params", fromlist=["workload"]).workload(p, s.serve_context,
                                                                                                 1.0, seed=1), 0.8)
    t = tco(s, p, load_prices(), TODAY)
    assert t.sizing.max_rate_per_replica == pytest.approx(sizing.max_rate_per_replica)
    assert t.replicas == replicas_for_peak(20.0, 0.5 * sizing.max_rate_per_replica, 1)


def test_the_chart_crossing_is_where_self_hosting_stays_cheaper():
    p = Params(traffic_per_s=50.0, api="anthropic/claude-haiku-4.5", fte=0.0, other_fixed_per_month=0.0)
    t = tco(Scenario(), p, load_prices(), TODAY, _sizing(100.0, 10.0))
    c = t.curve
    x = c.cheaper_from
    assert math.isfinite(x)
    after = c.traffic >= x + 1e-9
    assert np.all(c.self_hosted[after] <= c.api[after] + 1e-6)


# ---- operating it -------------------------------------------------------------------------------------

@pytest.mark.parametrize("ratio", [1.0, 1.5, 2.0, 4.0])
def test_diurnal_shape_averages_one_and_peaks_at_the_ratio(ratio):
    s = diurnal_shape(ratio)
    assert s.mean() == pytest.approx(1.0) and s.max() == pytest.approx(ratio, rel=1e-6)


def test_capacity_upgrade_and_retirement_follow_the_formulas():
    p = Params(traffic_per_s=20.0, growth_pct_per_month=10.0, upgrade_days=3.0)
    t = tco(Scenario(), p, load_prices(), TODAY, _sizing(40.0, 10.0))
    months = capacity_plan(t, p)
    assert months[0].replicas == t.replicas
    assert months[12].traffic == pytest.approx(20.0 * 1.1 ** 12)
    assert months[12].replicas == replicas_for_peak(2 * 20.0 * 1.1 ** 12, t.rate_per_replica, 1)
    up = upgrade_cost(t, 3.0)
    assert up.blue_green_usd == pytest.approx(t.gpu_price.usd_per_gpu_hour * t.gpus * 72)
    signals = {s.name: s for s in retirement_signals(t)}
    assert signals["Utilisation below break-even"].firing == (t.utilisation < t.break_even_u_fixed)
    assert signals["No break-even at any load"].firing == (t.break_even_u > 1)


def test_the_outlook_gathers_the_operating_figures_with_a_replicas_month():
    p = Params(traffic_per_s=20.0, growth_pct_per_month=10.0, upgrade_days=3.0, gpu_offer="")
    book = load_prices()
    t = tco(Scenario(), p, book, TODAY, _sizing(40.0, 10.0, gpus=2))
    o = outlook(t, p, book)
    assert o.months == capacity_plan(t, p) and o.upgrade == upgrade_cost(t, 3.0)
    assert o.replica_usd_per_month == pytest.approx(book.rental_row("", "h100-sxm").usd_per_gpu_hour * 2 * 730)
    cheapest = min(book.api, key=lambda a: price_mix(a.input_per_mtok, a.output_per_mtok, t.prompt_per_output))
    assert any(s.name == "A cheaper API exists" and cheapest.label in s.detail for s in o.signals)


def test_self_hosting_wins_from_the_month_its_bill_stays_below_the_apis():
    from engines.selfhost.operate import Month, self_cheaper_from

    def plan(pairs):
        return tuple(Month(i, 1.0, 1, s, a, 0) for i, (s, a) in enumerate(pairs))

    # cheaper in month 1, dearer again in month 2 (a replica added), cheaper for good from month 3
    assert self_cheaper_from(plan([(9, 5), (4, 5), (7, 6), (6, 7), (6, 8)])) == 3
    assert self_cheaper_from(plan([(4, 5), (4, 6)])) == 0
    assert self_cheaper_from(plan([(4, 5), (6, 5)])) is None      # dearer in the plan's last month
    p = Params(traffic_per_s=20.0, growth_pct_per_month=10.0, upgrade_days=3.0, gpu_offer="")
    book = load_prices()
    o = outlook(tco(Scenario(), p, book, TODAY, _sizing(40.0, 10.0, gpus=2)), p, book)
    assert o.self_cheaper_from == self_cheaper_from(o.months)


def test_the_sizing_key_changes_with_the_peak_not_with_its_factors():
    p = Params(traffic_per_s=20.0, peak_to_average=2.0)
    assert peak_rate(p) == 40.0
    assert sizing_key(Scenario(), p) == sizing_key(Scenario(), replace(p, traffic_per_s=40.0, peak_to_average=1.0))
    assert sizing_key(Scenario(), p) != sizing_key(Scenario(), replace(p, peak_to_average=3.0))
    assert sizing_key(Scenario(), p) == sizing_key(Scenario(), replace(p, growth_pct_per_month=20.0))


# ---- what stays private ----------------------------------------------------------------------------

def test_the_privacy_trees_are_valid_and_chain():
    assert privacy_problems() == []
    p = Params(privacy_answers=("no", "onprem", "continue", "yes", "no", "no", "no", "no", "continue"))
    walk = p.walk()
    assert walk.tree.key == "selfhost-reasons"
    assert any(r["answer"] == "continue" for r in walk.record())
    with pytest.raises(ValidationError) as err:
        Params(privacy_answers=("maybe",))
    assert err.value.field == "privacy_answers"
    assert set(load_privacy_trees()) == {"selfhost-flow", "selfhost-rules", "selfhost-reasons"}
