"""CRA support period (Art 13(8)), update shelf life (Art 13(9)) and fines (Art 64), pinned on
hand-worked cases: leap days, month ends, a period shorter than five years, turnover on both sides
of each tier's crossover."""
from __future__ import annotations

from datetime import date

import pytest

from engines.core.errors import ValidationError
from engines.law import cra, support


@pytest.mark.parametrize("placed, years, end", [
    (date(2027, 12, 11), 5, date(2032, 12, 11)),        # the floor, from the day the CRA applies
    (date(2027, 12, 11), 8, date(2035, 12, 11)),        # longer expected use, longer period
    (date(2028, 2, 29), 5, date(2033, 2, 28)),          # leap day into a common year: the month's last day
    (date(2028, 2, 29), 4, date(2032, 2, 29)),          # shorter than five years, into a leap year
    (date(2027, 1, 31), 2, date(2029, 1, 31)),          # expected use of two years: the period is two years
    (date(2027, 8, 31), 2.5, date(2030, 2, 28)),        # 30 months from a 31st ends on the last of February
    (date(2027, 5, 31), 1.75, date(2029, 2, 28)),
])
def test_support_period_end(placed, years, end):
    assert cra.support_period_end(placed, years) == end


def test_update_shelf_life_is_ten_years_or_the_rest_of_the_support_period():
    end = date(2040, 1, 1)
    assert cra.update_available_until(date(2028, 3, 1), end) == end                  # period outlasts 10 y
    assert cra.update_available_until(date(2031, 6, 15), date(2032, 12, 11)) == date(2041, 6, 15)
    assert cra.update_available_until(date(2028, 2, 29), date(2030, 1, 1)) == date(2038, 2, 28)


def test_support_plan_sorts_updates_and_names_the_deciding_arm():
    plan = support.support_plan(date(2027, 12, 11), 15, (date(2035, 1, 10), date(2028, 6, 1)))
    assert plan.end == date(2042, 12, 11) and not plan.below_floor
    assert [u.issued for u in plan.updates] == [date(2028, 6, 1), date(2035, 1, 10)]
    assert plan.updates[0].until == date(2042, 12, 11) and plan.updates[0].basis == "rest of the support period"
    assert plan.updates[1].until == date(2045, 1, 10) and plan.updates[1].basis == "ten years after issue"
    assert support.support_plan(date(2027, 12, 11), 3).below_floor


@pytest.mark.parametrize("call, field", [
    (lambda: cra.support_period_end(date(2027, 1, 1), 2.3), "expected_use_years"),
    (lambda: cra.support_period_end(date(2027, 1, 1), 0), "expected_use_years"),
    (lambda: cra.support_period_end("2027-01-01", 5), "placed_on_market"),
    (lambda: cra.update_available_until(date(1999, 1, 1), date(2030, 1, 1)), "update_issued"),
    (lambda: support.support_plan(date(2027, 1, 1), 5, (date(2026, 1, 1),)), "updates[0]"),
    (lambda: cra.max_fine(-1, 1), "turnover_eur"),
    (lambda: cra.max_fine(1e6, 4), "tier"),
    (lambda: cra.max_fine(1e6, True), "tier"),
    (lambda: support.fine(1e6, 2, early_warning_only=True), "early_warning_only"),
    (lambda: support.fine(1e6, 1, enterprise="tiny"), "enterprise"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(ValidationError) as err:
        call()
    assert err.value.field == field


@pytest.mark.parametrize("tier, turnover, fine", [
    (1, 100e6, 15e6), (1, 600e6, 15e6), (1, 1e9, 25e6),        # crossover 15 M / 2.5 % = 600 M
    (2, 400e6, 10e6), (2, 500e6, 10e6), (2, 800e6, 16e6),      # crossover 10 M / 2 % = 500 M
    (3, 300e6, 5e6), (3, 2e9, 20e6),                            # crossover 5 M / 1 % = 500 M
])
def test_max_fine_is_the_higher_of_the_sum_and_the_share(tier, turnover, fine):
    assert cra.max_fine(turnover, tier) == pytest.approx(fine)


def test_exemptions_of_article_64_10():
    assert support.fine(50e6, 1, enterprise="small", early_warning_only=True).max_eur == 0
    assert "64(10)(a)" in support.fine(50e6, 1, enterprise="micro", early_warning_only=True).exempt
    assert "paragraphs 3 to 9" in support.fine(50e6, 1, enterprise="small", early_warning_only=True).note
    assert support.fine(50e6, 1, steward=True).note == ""
    medium = support.fine(50e6, 1, enterprise="medium", early_warning_only=True)
    assert medium.exempt is None and medium.max_eur == 15e6
    assert support.fine(50e6, 1, enterprise="small").max_eur == 15e6        # other Art 14 breaches are fined
    steward = support.fine(2e9, 2, steward=True)
    assert steward.max_eur == 0 and "64(10)(b)" in steward.exempt
    assert support.fine(1e9, 1).crossover_eur == pytest.approx(600e6)


def test_the_fine_curve_shows_every_kink_and_the_given_turnover():
    c = support.fine_curve(100e6)                        # below every crossover: twice the highest, €1.2 bn
    assert c.turnover_eur[0] == 0.0 and c.turnover_eur[-1] == pytest.approx(2 * 15e6 / 0.025)
    assert [t.paragraph for t in c.tiers] == ["Art 64(2)", "Art 64(3)", "Art 64(4)"]
    tier1 = c.tiers[0].max_eur
    assert tier1[0] == 15e6 and tier1[-1] == pytest.approx(0.025 * 1.2e9)   # the fixed sum, then 2.5 % of turnover
    assert support.fine_curve(4e9).turnover_eur[-1] == pytest.approx(5e9)    # a large firm: its turnover + 25 %
    f = support.fine(4e9, 2)
    assert f.share_eur == pytest.approx(0.02 * 4e9) == f.max_eur
    with pytest.raises(ValidationError):
        support.fine_curve(-1.0)


def test_documentation_is_kept_ten_years_or_the_support_period_whichever_is_longer():
    from engines.law.support import documentation_kept_until
    assert documentation_kept_until(date(2028, 3, 1), 5) == date(2038, 3, 1)     # ten years win
    assert documentation_kept_until(date(2028, 3, 1), 15) == date(2043, 3, 1)    # support period wins
    assert documentation_kept_until(date(2028, 2, 29), 10) == date(2038, 2, 28)  # a missing day: month's end
    with pytest.raises(ValueError, match="placed_on_market"):
        documentation_kept_until("2028-03-01", 5)
