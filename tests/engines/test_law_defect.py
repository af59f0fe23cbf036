"""PLD Art 7 worksheet, Art 11(1) exemptions and the distributor's one-month rule (Art 8(3))."""
from __future__ import annotations

from datetime import date

import pytest

from engines.core.errors import ValidationError
from engines.law import defect
from engines.law.clocks import clocks
from engines.law.params import Params


def test_the_worksheet_lists_all_nine_circumstances_and_exemptions_a_to_g():
    assert [c.letter for c in defect.CIRCUMSTANCES] == list("abcdefghi")
    assert [e.letter for e in defect.EXEMPTIONS] == list("abcdefg")
    d = next(e for e in defect.EXEMPTIONS if e.letter == "d")
    assert "does not by itself exclude a defect" in d.limits                 # 11(1)(d) is narrow
    assert "11(2)" in next(e for e in defect.EXEMPTIONS if e.letter == "c").limits
    assert "Art 18" in next(e for e in defect.EXEMPTIONS if e.letter == "e").limits


def test_weighing_states_the_rules_where_they_matter():
    w = defect.weigh([["f", "toward", "no update for a known flaw"]])
    arts = [a for a, _ in w.lines]
    assert arts[0] == "Art 7(1)-(2)" and "Art 10(2)(b), 10(5)" in arts and "Art 7(3)" not in arts
    w = defect.weigh((("f", "against", "meets the standard"),), later_improvement=True)
    arts = [a for a, _ in w.lines]
    assert "Art 7(2)(f), Art 11(1)(d)" in arts and "Art 7(3)" in arts
    assert [s for _c, s, _n in w.rows] == ["", "", "", "", "", "against", "", "", ""]


@pytest.mark.parametrize("rows, field", [
    ([["z", "toward", ""]], "art7[0]"), ([["a", "maybe", ""]], "art7[0]"),
    ([["a", "toward", ""], ["a", "against", ""]], "art7[1]"), ("a", "art7"),
])
def test_bad_rows_name_the_row(rows, field):
    with pytest.raises(ValidationError) as err:
        defect.normalise(rows)
    assert err.value.field == field


@pytest.mark.parametrize("request_day, due", [
    (date(2029, 7, 1), date(2029, 8, 1)), (date(2029, 1, 31), date(2029, 2, 28)),
    (date(2028, 1, 30), date(2028, 2, 29)), (date(2029, 12, 15), date(2030, 1, 15)),
])
def test_distributor_has_one_month_from_the_request(request_day, due):
    assert defect.distributor_deadline(request_day) == due


def test_distributor_rule_on_the_pld_clock():
    c = clocks(Params(distributor_request=True, request_day="2030-01-31"))
    assert any("28 Feb 2030" in line and "Art 8(3)" in line for line in c.pld.lines)
    assert [m.text for m in c.pld.marks][-1] == "distributor: name by"
    assert not any("Art 8(3)" in line for line in clocks(Params()).pld.lines)
    with pytest.raises(ValidationError):
        defect.distributor_deadline("2030-01-31")


@pytest.mark.parametrize("placed, latent, says", [
    ("2027-03-15", True, "15 Mar 2052 (25 years, latent injury, Art 17(2))"),
    ("2027-03-15", False, "15 Mar 2037 (10 years, Art 17(1))"),
    ("2020-01-01", True, "01 Jan 2030 (10 years, 85/374/EEC Art 11)"),
])
def test_the_expiry_line_names_its_period_and_article(placed, latent, says):
    """The PLD clock's expiry line says which period (and rule) set the date, not only the date."""
    lines = clocks(Params(placed=placed, knowledge="2029-06-01" if placed > "2025" else "2021-01-01",
                          latent_injury=latent)).pld.lines
    assert any(line == f"Rights expire: {says}" for line in lines), lines
