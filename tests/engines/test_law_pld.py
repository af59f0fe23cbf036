"""PLD rules (Dir. (EU) 2024/2853) against the article text: regime (Art 2), limitation and
expiry (Art 16-17), liability cascade (Art 8) and damage heads (Art 6)."""
from datetime import date, datetime

import pytest

from engines.core.errors import ValidationError
from engines.law import pld


def test_regime_after_9_december_2026_art_2_1():
    assert pld.regime(date(2026, 12, 9)) == "85/374/EEC"      # "after" 9 Dec 2026
    assert pld.regime(date(2026, 12, 10)) == "2024/2853"
    assert pld.regime(date(1999, 5, 1)) == "85/374/EEC"
    assert pld.regime(datetime(2030, 1, 1, 12)) == "2024/2853"


def test_limitation_three_years_from_knowledge_ten_year_expiry():
    r = pld.limitation(date(2027, 3, 15), date(2029, 6, 1))
    assert r == {"claim_deadline": date(2032, 6, 1), "expiry": date(2037, 3, 15), "expiry_years": 10}


def test_expiry_cuts_the_limitation_period_art_17_1():
    r = pld.limitation(date(2027, 3, 15), date(2036, 1, 10))
    assert r["expiry"] == date(2037, 3, 15)
    assert r["claim_deadline"] == date(2037, 3, 15)          # not 2039: the right is extinguished


def test_latent_personal_injury_25_years_art_17_2():
    r = pld.limitation(date(2027, 3, 15), date(2045, 1, 1), latent_personal_injury=True)
    assert r == {"claim_deadline": date(2048, 1, 1), "expiry": date(2052, 3, 15), "expiry_years": 25}


def test_old_regime_has_no_25_year_rule():
    r = pld.limitation(date(2020, 1, 1), date(2021, 1, 1), latent_personal_injury=True)
    assert r["expiry"] == date(2030, 1, 1) and r["expiry_years"] == 10      # Dir 85/374/EEC Art 11


def test_leap_day():
    assert pld.limitation(date(2028, 2, 29), date(2028, 2, 29))["claim_deadline"] == date(2031, 2, 28)


def test_limitation_bad_input():
    with pytest.raises(ValidationError) as err:
        pld.limitation(date(2028, 1, 1), date(2027, 1, 1))
    assert err.value.field == "knowledge"
    with pytest.raises(ValidationError):
        pld.limitation("2028-01-01", date(2029, 1, 1))
    with pytest.raises(ValidationError):
        pld.limitation(date(2028, 1, 1), date(2029, 1, 1), latent_personal_injury="yes")


# ---- Art 8 cascade -------------------------------------------------------------------------

def test_eu_manufacturer_alone():
    assert pld.liable({}) == {"manufacturer"}


def test_component_maker_liable_with_host_art_8_1_b():
    assert pld.liable({"defective_component": True}) == {"manufacturer", "component-manufacturer"}


def test_non_eu_manufacturer_importer_and_representative_art_8_1_c():
    f = {"manufacturer_in_eu": False, "importer": True, "authorised_representative": True,
         "fulfilment_service_provider": True}
    # the fulfilment service provider only where there is neither importer nor representative
    assert pld.liable(f) == {"manufacturer", "importer", "authorised-representative"}


def test_fulfilment_service_provider_when_no_importer_or_representative():
    f = {"manufacturer_in_eu": False, "fulfilment_service_provider": True}
    assert pld.liable(f) == {"manufacturer", "fulfilment-service-provider"}


def test_importer_irrelevant_for_eu_manufacturer():
    assert pld.liable({"importer": True}) == {"manufacturer"}


def test_distributor_one_month_rule_art_8_3():
    base = {"manufacturer_in_eu": False, "distributor": True}
    assert pld.liable({**base, "distributor_named_within_month": True}) == {"manufacturer"}
    assert pld.liable({**base, "distributor_named_within_month": False}) == {"manufacturer", "distributor"}
    # an identifiable EU operator (importer) shields the distributor
    assert pld.liable({**base, "importer": True, "distributor_named_within_month": False}) == \
        {"manufacturer", "importer"}


def test_online_platform_like_a_distributor_art_8_4():
    base = {"manufacturer_in_eu": False, "online_platform": True, "platform_named_within_month": False}
    assert pld.liable(base) == {"manufacturer"}                        # not presented as its own
    assert pld.liable({**base, "platform_presents_as_own": True}) == {"manufacturer", "online-platform"}


def test_substantial_modifier_is_a_manufacturer_art_8_2():
    assert pld.liable({"substantial_modifier": True}) == {"manufacturer", "modifier"}
    # an EU modifier is an identifiable Art 8(1) operator, so the distributor is not reached
    f = {"manufacturer_in_eu": False, "substantial_modifier": True, "distributor": True,
         "distributor_named_within_month": False}
    assert "distributor" not in pld.liable(f)
    assert "distributor" in pld.liable({**f, "modifier_in_eu": False})


def test_liable_bad_input():
    with pytest.raises(ValidationError) as err:
        pld.liable({"retailer": True})
    assert err.value.field == "retailer"
    with pytest.raises(ValidationError):
        pld.liable({"importer": "yes"})


# ---- Art 6 damage heads -----------------------------------------------------------------------

@pytest.mark.parametrize("head", ["death", "personal-injury", "psychological-health"])
def test_damage_to_the_person_always_compensable(head):
    assert pld.compensable(head) and pld.compensable(head, professional_use=True)


def test_property_except_exclusively_professional_art_6_1_b():
    assert pld.compensable("property") is True
    assert pld.compensable("property", professional_use=True) is False


def test_data_not_used_professionally_art_6_1_c():
    assert pld.compensable("data") is True
    assert pld.compensable("data", professional_use=True) is False


def test_product_itself_excluded_art_6_1_b_i():
    assert pld.compensable("product-itself") is False
    assert pld.compensable("product-itself", professional_use=False) is False


def test_damage_bad_input():
    with pytest.raises(ValidationError) as err:
        pld.compensable("reputation")
    assert err.value.field == "damage"


def test_a_component_made_outside_the_eu_brings_in_its_importer_art_8_1_c():
    """8(1)(c) covers "a manufacturer of the defective product or component" outside the Union."""
    f = {"defective_component": True, "component_manufacturer_in_eu": False, "importer": True}
    assert pld.liable(f) == {"manufacturer", "component-manufacturer", "importer"}
    assert pld.liable({**f, "component_manufacturer_in_eu": True}) == {"manufacturer", "component-manufacturer"}
    assert pld.liable({**f, "importer": False, "fulfilment_service_provider": True}) == \
        {"manufacturer", "component-manufacturer", "fulfilment-service-provider"}


def test_mixed_type_unknown_keys_and_far_dates_raise_the_validation_error():
    with pytest.raises(ValidationError):
        pld.liable({1: True, "x": True})
    with pytest.raises(ValidationError, match="placed_on_market"):
        pld.limitation(date(9990, 1, 1), date(9998, 1, 1), True)


def test_causation_needs_an_established_defect_and_typical_damage_or_complexity():
    from engines.law.pld import causation_presumed
    assert causation_presumed(True, True) == "10(3)"
    assert causation_presumed(True, False) == ""             # defect alone does not carry causation
    assert causation_presumed(False, True) == ""             # typical damage without a defect neither
    assert causation_presumed(False, False, True) == "10(4)"
    assert causation_presumed(True, False, True) == "10(4)"
    with pytest.raises(ValueError, match="typical_damage"):
        causation_presumed(True, "yes")
