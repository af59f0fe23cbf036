"""CRA rules (Reg. (EU) 2024/2847) against the article text: scope, exclusions, open source and
stewards, tiers (Art 7(1), Annexes III-IV), routes (Art 32) and the Art 14 clock."""
from datetime import date, datetime, timedelta, timezone

import pytest

from engines.core.errors import ValidationError
from engines.law import cra

ALL = {"A", "B+C", "H", "EUCC"}


def test_default_product_any_route_art_32_1():
    a = cra.assess({})
    assert (a.in_scope, a.role, a.tier) == (True, "manufacturer", "default")
    assert a.routes == ALL
    assert ("Art 32(1)" in [r[0] for r in a.reasons])


@pytest.mark.parametrize("n", range(1, 20))
def test_every_annex_iii_class_i_entry_is_important_i(n):
    assert cra.assess({"category": f"III-I-{n}"}).tier == "important-I"


@pytest.mark.parametrize("n", range(1, 5))
def test_every_annex_iii_class_ii_entry_is_important_ii(n):
    a = cra.assess({"category": f"III-II-{n}"})
    assert a.tier == "important-II"
    assert a.routes == {"B+C", "H", "EUCC"}      # 32(3): never module A
    assert "A" not in a.routes


@pytest.mark.parametrize("n", range(1, 4))
def test_every_annex_iv_entry_is_critical(n):
    a = cra.assess({"category": f"IV-{n}"})
    assert a.tier == "critical"
    assert a.routes == {"B+C", "H", "EUCC"}      # 32(4): Art 8(1) scheme, else 32(3) procedures


def test_annex_numbering_matches_annexes():
    # Annex III: 19 class I points, 4 class II points; Annex IV: 3 points.
    keys = cra.CATEGORIES
    assert sum(k.startswith("III-I-") for k in keys) == 19
    assert sum(k.startswith("III-II-") for k in keys) == 4
    assert sum(k.startswith("IV-") for k in keys) == 3
    assert "Password managers" in keys["III-I-3"]
    assert "Operating systems" in keys["III-I-11"]
    assert keys["III-I-12"].startswith("Routers")
    assert keys["III-II-1"].startswith("Hypervisors")
    assert keys["IV-2"].startswith("Smart meter gateways")


def test_class_i_module_a_only_with_harmonised_standards_in_full_art_32_2():
    assert cra.assess({"category": "III-I-3"}).routes == {"B+C", "H"}
    assert cra.assess({"category": "III-I-3", "harmonised_standards": True}).routes == ALL
    # standards do not open module A to class II or critical products (32(3), 32(4))
    assert "A" not in cra.assess({"category": "III-II-2", "harmonised_standards": True}).routes
    assert "A" not in cra.assess({"category": "IV-3", "harmonised_standards": True}).routes


@pytest.mark.parametrize("category", ["III-I-11", "III-II-1"])
def test_foss_with_public_documentation_may_use_module_a_art_32_5(category):
    foss = {"category": category, "open_source": True}
    assert "A" not in cra.assess(foss).routes
    a = cra.assess({**foss, "public_technical_documentation": True})
    assert a.routes == ALL
    assert any(art == "Art 32(5)" for art, _ in a.reasons)


def test_32_5_needs_open_source_and_does_not_reach_annex_iv():
    assert "A" not in cra.assess({"category": "III-II-1", "public_technical_documentation": True}).routes
    crit = cra.assess({"category": "IV-1", "open_source": True, "public_technical_documentation": True})
    assert "A" not in crit.routes


@pytest.mark.parametrize("sector, article", [
    ("medical", "Art 2(2)(a)"), ("in-vitro", "Art 2(2)(b)"), ("motor-vehicle", "Art 2(2)(c)"),
    ("aviation", "Art 2(3)"), ("marine", "Art 2(4)"), ("spare-part", "Art 2(6)"), ("defence", "Art 2(7)")])
def test_each_sector_exclusion_art_2(sector, article):
    a = cra.assess({"excluded_sector": sector, "category": "III-I-12"})
    assert (a.in_scope, a.role, a.tier, a.routes) == (False, "none", None, frozenset())
    assert a.reasons[-1][0] == article


def test_saas_is_out_by_definition_not_by_art_2():
    a = cra.assess({"saas_only": True})
    assert not a.in_scope and a.tier is None
    assert a.reasons[-1][0].startswith("Art 3(1)")


def test_no_data_connection_is_out_art_2_1():
    a = cra.assess({"data_connection": False})
    assert not a.in_scope and a.reasons[-1][0] == "Art 2(1)"


def test_non_monetised_open_source_is_out_recital_18():
    a = cra.assess({"commercial": False, "open_source": True})
    assert (a.in_scope, a.role, a.tier) == (False, "none", None)


def test_monetised_open_source_is_a_manufacturer_art_3_22():
    a = cra.assess({"commercial": True, "open_source": True, "category": "III-I-3"})
    assert (a.in_scope, a.role) == (True, "manufacturer")


def test_steward_light_touch_no_conformity_assessment_art_24():
    a = cra.assess({"commercial": False, "open_source": True, "steward": True, "category": "III-I-11"})
    assert (a.in_scope, a.role, a.tier) == (True, "steward", "important-I")
    assert a.routes == frozenset()              # recital 19: no CE marking by stewards
    assert any("Art 24" in art for art, _ in a.reasons)


def test_sector_exclusion_beats_steward_and_commercial():
    assert cra.assess({"steward": True, "excluded_sector": "medical"}).in_scope is False


def test_integration_rule_art_7_1_uses_own_core_functionality():
    # A smart TV integrating a browser (III-I-2) is judged on its own core functionality: none listed.
    assert cra.assess({"category": None}).tier == "default"


@pytest.mark.parametrize("facts, field", [
    ({"colour": "red"}, "colour"), ({"category": "III-I-20"}, "category"), ({"category": "IV-4"}, "category"),
    ({"excluded_sector": "rail"}, "excluded_sector"), ({"commercial": "yes"}, "commercial"),
    ({"open_source": 1}, "open_source")])
def test_unknown_keys_and_values_raise_validation_error(facts, field):
    with pytest.raises(ValidationError) as err:
        cra.assess(facts)
    assert err.value.field == field


def test_facts_must_be_a_mapping():
    with pytest.raises(ValidationError):
        cra.assess(["category"])


# ---- Art 14 -------------------------------------------------------------------------------

def test_vulnerability_clock_art_14_2():
    aware = datetime(2026, 10, 2, 17, 30)
    fix = datetime(2026, 10, 9, 8, 0)
    d = cra.reporting_deadlines("vulnerability", aware, fix_available=fix)
    assert d["applies"] is True
    assert d["early_warning"] == datetime(2026, 10, 3, 17, 30)        # 24 h, 14(2)(a)
    assert d["notification"] == datetime(2026, 10, 5, 17, 30)         # 72 h, 14(2)(b)
    assert d["final_report"] == datetime(2026, 10, 23, 8, 0)          # fix + 14 days, 14(2)(c)


def test_vulnerability_final_report_waits_for_a_fix():
    d = cra.reporting_deadlines("vulnerability", datetime(2027, 1, 1, 9))
    assert d["final_report"] is None
    # a notification time does not start the vulnerability final-report clock
    d = cra.reporting_deadlines("vulnerability", datetime(2027, 1, 1, 9), notified=datetime(2027, 1, 2))
    assert d["final_report"] is None


def test_incident_final_report_one_month_after_notification_art_14_4_c():
    aware = datetime(2027, 3, 1, 6, 0)
    notified = datetime(2027, 3, 3, 12, 0)
    d = cra.reporting_deadlines("incident", aware, fix_available=datetime(2027, 3, 2), notified=notified)
    assert d["early_warning"] == aware + timedelta(hours=24)
    assert d["notification"] == aware + timedelta(hours=72)
    assert d["final_report"] == datetime(2027, 4, 3, 12, 0)           # not from the fix
    assert cra.reporting_deadlines("incident", aware)["final_report"] is None


def test_one_month_clamps_to_month_end():
    d = cra.reporting_deadlines("incident", datetime(2027, 1, 30), notified=datetime(2027, 1, 31, 10))
    assert d["final_report"] == datetime(2027, 2, 28, 10)
    d = cra.reporting_deadlines("incident", datetime(2027, 12, 15), notified=datetime(2027, 12, 16))
    assert d["final_report"] == datetime(2028, 1, 16)


def test_art_14_applies_from_11_september_2026_art_71_2():
    assert cra.reporting_deadlines("vulnerability", datetime(2026, 9, 10, 23, 59))["applies"] is False
    assert cra.reporting_deadlines("vulnerability", datetime(2026, 9, 11, 0, 0))["applies"] is True
    before = cra.reporting_deadlines("incident", datetime(2025, 6, 1, 12))
    assert before["applies"] is False and before["early_warning"] == datetime(2025, 6, 2, 12)


def test_timezone_aware_moments_work():
    tz = timezone(timedelta(hours=2))
    d = cra.reporting_deadlines("vulnerability", datetime(2026, 12, 1, 10, tzinfo=tz))
    assert d["notification"] == datetime(2026, 12, 4, 10, tzinfo=tz)


@pytest.mark.parametrize("kwargs, field", [
    ({"event": "breach", "aware": datetime(2027, 1, 1)}, "event"),
    ({"event": "incident", "aware": date(2027, 1, 1)}, "aware"),
    ({"event": "incident", "aware": datetime(2027, 1, 2), "notified": datetime(2027, 1, 1)}, "notified"),
    ({"event": "vulnerability", "aware": datetime(2027, 1, 1), "fix_available": "tomorrow"}, "fix_available"),
    ({"event": "vulnerability", "aware": datetime(2027, 1, 1),
      "fix_available": datetime(2027, 1, 2, tzinfo=timezone.utc)}, "fix_available")])
def test_reporting_bad_input(kwargs, field):
    with pytest.raises(ValidationError) as err:
        cra.reporting_deadlines(**kwargs)
    assert err.value.field == field


def test_milestones_are_the_dated_timeline():
    dates = [m[0] for m in cra.MILESTONES]
    assert date(2026, 6, 11) in dates and date(2026, 9, 11) in dates and date(2027, 12, 11) in dates
    assert dates == sorted(dates)


def test_hours_are_elapsed_hours_across_a_summer_time_change():
    """Reg. 1182/71 Art 3(2)(a): a period in hours is elapsed time. Brussels leaves summer time at
    03:00 on 25 Oct 2026: 24 hours after noon on the 24th is 11:00 on the 25th, local time."""
    from zoneinfo import ZoneInfo

    brussels = ZoneInfo("Europe/Brussels")
    aware = datetime(2026, 10, 24, 12, 0, tzinfo=brussels)
    d = cra.reporting_deadlines("vulnerability", aware)
    utc = ZoneInfo("UTC")                 # (Python subtracts same-zone datetimes as wall-clock times)
    assert d["early_warning"].astimezone(utc) - aware.astimezone(utc) == timedelta(hours=24)
    assert d["early_warning"].replace(tzinfo=None) == datetime(2026, 10, 25, 11, 0)
    assert d["notification"].replace(tzinfo=None) == datetime(2026, 10, 27, 11, 0)
    assert d["early_warning"].utcoffset() == timedelta(hours=1)         # shown in the zone given
    spring = datetime(2027, 3, 27, 12, 0, tzinfo=brussels)              # summer time starts 28 Mar
    assert cra.reporting_deadlines("incident", spring)["early_warning"].replace(tzinfo=None) == \
        datetime(2027, 3, 28, 13, 0)


def test_mixed_type_unknown_keys_and_far_dates_raise_the_validation_error():
    with pytest.raises(ValidationError):
        cra.assess({1: True, "x": 2})
    with pytest.raises(ValidationError, match="aware"):
        cra.reporting_deadlines("vulnerability", datetime(9999, 12, 31))
    with pytest.raises(ValidationError, match="notified"):
        cra.reporting_deadlines("incident", datetime(2027, 1, 1), notified=datetime(9999, 12, 15))


def test_steward_role_needs_open_source_art_3_14():
    """Art 3(14): a steward supports free and open-source software; without it the fact is set aside."""
    a = cra.assess({"steward": True})
    assert (a.in_scope, a.role) == (True, "manufacturer")
    assert any(art == "Art 3(14)" for art, _ in a.reasons)
    assert cra.assess({"steward": True, "commercial": False}).role == "none"
    assert cra.assess({"steward": True, "commercial": False, "open_source": True}).role == "steward"


def test_reporting_clock_rejects_years_before_the_range():
    tz = timezone(timedelta(hours=5))
    with pytest.raises(ValidationError) as err:
        cra.reporting_deadlines("vulnerability", datetime(1, 1, 1, tzinfo=tz))
    assert err.value.field == "aware" and str(cra.FIRST_YEAR) in str(err.value)
    with pytest.raises(ValidationError) as err:
        cra.reporting_deadlines("vulnerability", datetime(2027, 1, 1), fix_available=datetime(1, 1, 1))
    assert err.value.field == "fix_available"
