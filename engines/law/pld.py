"""Product Liability Directive (EU) 2024/2853 (OJ L, 18.11.2024): which regime applies, the
limitation and expiry clocks, the cascade of liable operators and the compensable damage heads.

Sources (CELEX 32024L2853):
- Art 2(1) and 21: applies to products placed on the market or put into service after
  9 December 2026; Directive 85/374/EEC keeps governing earlier products.
- Art 16(1): a three-year limitation period from when the injured person became aware, or should
  reasonably have become aware, of the damage, the defect and the identity of the liable operator.
- Art 17(1)-(2): rights expire 10 years after placing on the market / putting into service (for a
  substantially modified product, after it was made available again), 25 years where latent
  personal injury kept the injured person from bringing proceedings. Under Dir 85/374/EEC the
  periods were 3 years (Art 10) and 10 years (Art 11), with no 25-year extension.
- Art 8(1)-(4): the manufacturer and the maker of a defective component; for a manufacturer outside
  the Union the importer, the authorised representative and, only where neither exists, the
  fulfilment service provider; a substantial modifier outside the manufacturer's control (8(2));
  a distributor (and an online platform presenting the product as in DSA Art 6(3)) that fails to
  name an EU operator or its own supplier within one month of the injured person's request.
- Art 6(1): death, personal injury incl. medically recognised damage to psychological health;
  damage to property except the defective product itself and property used exclusively for
  professional purposes; destruction or corruption of data not used for professional purposes.
Educational, not legal advice.
"""
from __future__ import annotations

import calendar
from datetime import date, datetime
from typing import Mapping

from engines.core.errors import ValidationError, require_choice

#: Art 2(1): products placed on the market or put into service *after* this date.
NEW_REGIME_AFTER = date(2026, 12, 9)
REGIMES = ("2024/2853", "85/374/EEC")

DAMAGE_HEADS = ("death", "personal-injury", "psychological-health", "property", "data", "product-itself")
OPERATORS = ("manufacturer", "component-manufacturer", "importer", "authorised-representative",
             "fulfilment-service-provider", "distributor", "online-platform", "modifier")

#: Fact keys of :func:`liable` and their defaults.
LIABLE_DEFAULTS: dict[str, bool] = {
    "manufacturer_in_eu": True,
    "defective_component": False,
    "component_manufacturer_in_eu": False,
    "importer": False,
    "authorised_representative": False,
    "fulfilment_service_provider": False,
    "substantial_modifier": False,
    "modifier_in_eu": True,
    "distributor": False,
    "distributor_named_within_month": True,
    "online_platform": False,
    "platform_presents_as_own": False,
    "platform_named_within_month": True,
}


LAST_YEAR = 9000  # expiry runs 25 years past the input: dates end at year 9999


def _as_date(value: object, name: str) -> date:
    if isinstance(value, datetime):
        value = value.date()
    if not isinstance(value, date):
        raise ValidationError(name, f"expected a date, got {type(value).__name__}", "datetime.date")
    if value.year > LAST_YEAR:
        raise ValidationError(name, f"year {value.year} is out of range", f"a date up to year {LAST_YEAR}")
    return value


def add_years(day: date, years: int) -> date:
    """Same calendar date ``years`` later; 29 February falls back to 28 February
    (Reg. 1182/71 Art 3(2)(c): a missing day ends the period on the month's last day)."""
    year = day.year + years
    return day.replace(year=year, day=min(day.day, calendar.monthrange(year, day.month)[1]))


def regime(placed_on_market: date) -> str:
    """``"2024/2853"`` for products placed on the market or put into service after 9 Dec 2026
    (Art 2(1)); otherwise ``"85/374/EEC"``, which still governs them (Art 21)."""
    placed = _as_date(placed_on_market, "placed_on_market")
    return "2024/2853" if placed > NEW_REGIME_AFTER else "85/374/EEC"


def limitation(placed_on_market: date, knowledge: date, latent_personal_injury: bool = False) -> dict:
    """Limitation (3 years from knowledge, Art 16(1)) and expiry (10 years from placing on the
    market, Art 17(1); 25 years for latent personal injury, Art 17(2)).

    ``claim_deadline`` is the last day to start proceedings: three years from ``knowledge`` (the day
    the injured person knew or should have known damage, defect and liable operator), but never
    after ``expiry``, because expiry extinguishes the right unless proceedings are pending.
    Products under Directive 85/374/EEC (placed on or before 9 Dec 2026) get its Art 10-11 periods:
    3 and 10 years, no 25-year extension. ``expiry_years`` is the expiry period applied (10 or 25),
    so a view can say which rule set the date.
    """
    placed = _as_date(placed_on_market, "placed_on_market")
    known = _as_date(knowledge, "knowledge")
    if not isinstance(latent_personal_injury, bool):
        raise ValidationError("latent_personal_injury", f"expected True or False, got {latent_personal_injury!r}",
                              "True, False")
    if known < placed:
        raise ValidationError("knowledge", "damage cannot be known before the product was placed on the market",
                              f"≥ {placed.isoformat()}")
    new = regime(placed) == "2024/2853"
    years = 25 if (new and latent_personal_injury) else 10
    expiry = add_years(placed, years)
    return {"claim_deadline": min(add_years(known, 3), expiry), "expiry": expiry, "expiry_years": years}


def _liable_facts(facts: Mapping[str, object]) -> dict[str, bool]:
    if not isinstance(facts, Mapping):
        raise ValidationError("facts", f"expected a dict, got {type(facts).__name__}", ", ".join(LIABLE_DEFAULTS))
    unknown = sorted(set(facts) - set(LIABLE_DEFAULTS), key=str)
    if unknown:
        raise ValidationError(str(unknown[0]), "is not a liability fact", ", ".join(LIABLE_DEFAULTS))
    merged = {**LIABLE_DEFAULTS, **facts}
    for key, value in merged.items():
        if not isinstance(value, bool):
            raise ValidationError(key, f"expected True or False, got {value!r}", "True, False")
    return merged


def liable(facts: dict) -> set[str]:
    """Operators an injured person can hold liable under Art 8 (all jointly and severally, Art 12).

    Facts (all optional booleans, defaults in :data:`LIABLE_DEFAULTS`):
    - ``manufacturer_in_eu`` (True): the manufacturer is established in the Union.
    - ``defective_component`` (False): the defect lies in a component integrated under the
      manufacturer's control; its maker is then liable too (8(1)(b)).
    - ``component_manufacturer_in_eu`` (False): that component maker is established in the Union.
    - ``importer``, ``authorised_representative``, ``fulfilment_service_provider`` (False): such an
      operator exists in the Union. They answer only for a manufacturer of the product or of the
      defective component established outside the Union; the fulfilment service provider only where
      there is neither importer nor representative (8(1)(c)).
    - ``substantial_modifier`` (False): someone substantially modified the product outside the
      manufacturer's control and made it available; it is a manufacturer (8(2)).
    - ``modifier_in_eu`` (True): that modifier is established in the Union.
    - ``distributor`` (False) and ``distributor_named_within_month`` (True): a distributor exists,
      and it named an EU operator or its own supplier within one month of the injured person's
      request. It is liable only when no Art 8(1) operator in the Union can be identified and it
      failed to name one in time (8(3)).
    - ``online_platform``, ``platform_presents_as_own`` (False), ``platform_named_within_month``
      (True): an online platform letting consumers conclude distance contracts, that presents the
      product as in DSA Art 6(3), is liable like a distributor (8(4)).
    The manufacturer is always liable (8(1)(a)), wherever it is established.
    """
    f = _liable_facts(facts)
    who = {"manufacturer"}
    eu_operator = f["manufacturer_in_eu"]
    if f["defective_component"]:
        who.add("component-manufacturer")
        eu_operator = eu_operator or f["component_manufacturer_in_eu"]
    # 8(1)(c): "a manufacturer of the defective product or component" established outside the Union
    outside = not f["manufacturer_in_eu"] or (f["defective_component"] and not f["component_manufacturer_in_eu"])
    if outside:
        if f["importer"]:
            who.add("importer")
        if f["authorised_representative"]:
            who.add("authorised-representative")
        if f["fulfilment_service_provider"] and not (f["importer"] or f["authorised_representative"]):
            who.add("fulfilment-service-provider")
        eu_operator = eu_operator or bool(who & {"importer", "authorised-representative",
                                                  "fulfilment-service-provider"})
    if f["substantial_modifier"]:
        who.add("modifier")
        eu_operator = eu_operator or f["modifier_in_eu"]
    if not eu_operator:
        if f["distributor"] and not f["distributor_named_within_month"]:
            who.add("distributor")
        if f["online_platform"] and f["platform_presents_as_own"] and not f["platform_named_within_month"]:
            who.add("online-platform")
    return who


CAUSATION_RULES = ("10(3)", "10(4)", "")


def causation_presumed(defect_established: bool, typical_damage: bool, complexity_likely: bool = False) -> str:
    """Which rule presumes the causal link (Art 10), or ``""`` when the claimant must prove it (10(1)).

    - ``"10(3)"``: the defect is established (proven, or presumed under 10(2)) and the damage is of a
      kind typically consistent with that defect.
    - ``"10(4)"``: otherwise, where technical or scientific complexity makes the proof excessively
      difficult and the claimant shows the causal link is likely (``complexity_likely``).
    Both are rebuttable (10(5))."""
    for name, value in (("defect_established", defect_established), ("typical_damage", typical_damage),
                        ("complexity_likely", complexity_likely)):
        if not isinstance(value, bool):
            raise ValidationError(name, f"expected True or False, got {value!r}", "True, False")
    if defect_established and typical_damage:
        return "10(3)"
    return "10(4)" if complexity_likely else ""


def compensable(damage: str, professional_use: bool = False) -> bool:
    """Whether a head of damage is compensable under Art 6(1).

    ``professional_use`` means property used *exclusively* for professional purposes (6(1)(b)(iii))
    or data used for professional purposes (6(1)(c)); it does not affect damage to the person.
    The defective product itself is never compensable (6(1)(b)(i)).
    """
    require_choice(damage, "damage", DAMAGE_HEADS)
    if not isinstance(professional_use, bool):
        raise ValidationError("professional_use", f"expected True or False, got {professional_use!r}", "True, False")
    if damage in ("death", "personal-injury", "psychological-health"):
        return True
    if damage == "product-itself":
        return False
    return not professional_use
