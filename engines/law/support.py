"""CRA support period, update shelf life and administrative fines, as rules from the articles of
Regulation (EU) 2024/2847 (OJ L, 20.11.2024; CELEX 32024R2847). Educational, not legal advice.

- Art 13(8), third subparagraph: the support period is at least five years; where the product is
  expected to be in use for less than five years, it corresponds to the expected use time. The
  second subparagraph asks that it reflect the expected use time, so a longer expected use gives a
  longer period. The period runs from placing on the market (Art 13(8), first subparagraph).
- Art 13(9): each security update made available during the support period stays available for
  at least ten years after its issue, or for the remainder of the support period, whichever is
  longer.
- Art 64(2)-(4): maximum administrative fines, the higher of a fixed sum and a share of the total
  worldwide annual turnover of the preceding financial year (the share applies to undertakings).
- Art 64(10): no fines (a) on micro or small enterprises for missing the 24-hour early-warning
  deadline of Art 14(2)(a) or 14(4)(a), (b) on open-source software stewards for any infringement.
  As published (OJ L, 2024/2847), 64(10) opens "By way of derogation from paragraphs 3 to 9", while
  a breach of Art 14 is fined under paragraph 2; the app applies point (a) as written and says so
  (:data:`ART_64_10_NOTE`).

Periods in years or months end on the same date of the last month, or on that month's last day
when it has no such date (Reg. (EEC, Euratom) No 1182/71 Art 3(2)(c)).
"""
from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date

from engines.core.errors import ValidationError, require_bool, require_choice, require_number

FLOOR_YEARS = 5            # Art 13(8), third subparagraph
UPDATE_SHELF_YEARS = 10    # Art 13(9)
MAX_EXPECTED_USE_YEARS = 50.0
FIRST_YEAR, LAST_YEAR = 2000, 9000

#: Art 64(2)-(4): tier → (fixed sum in EUR, share of worldwide annual turnover, paragraph, what).
FINE_TIERS: dict[int, tuple[float, float, str, str]] = {
    1: (15_000_000.0, 0.025, "Art 64(2)", "Annex I essential requirements and the obligations of Arts 13 and 14"),
    2: (10_000_000.0, 0.02, "Art 64(3)", "other obligations: Arts 18-23, 28, 30(1)-(4), 31(1)-(4), 32(1)-(3), "
                                         "33(5), 39, 41, 47, 49 and 53"),
    3: (5_000_000.0, 0.01, "Art 64(4)", "incorrect, incomplete or misleading information to notified bodies "
                                        "or market surveillance authorities in reply to a request"),
}
ENTERPRISES = ("micro", "small", "medium", "large")
ART_64_10_NOTE = ("As published, Art 64(10) derogates from paragraphs 3 to 9, yet a missed Art 14 deadline is "
                  "a paragraph-2 breach: point (a) is applied here as its words say; a court may read it otherwise.")


def add_months(day: date, months: int) -> date:
    """The same date ``months`` later, or that month's last day (Reg. 1182/71 Art 3(2)(c))."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1]))


def _day(value: object, name: str) -> date:
    if not isinstance(value, date) or hasattr(value, "hour"):
        raise ValidationError(name, f"expected a date, got {type(value).__name__}", "datetime.date")
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValidationError(name, f"year {value.year} is out of range", f"a date from {FIRST_YEAR} to {LAST_YEAR}")
    return value


def expected_use_months(expected_use_years: float) -> int:
    """The expected use time in whole months (a support end date is a calendar date)."""
    years = require_number(expected_use_years, "expected_use_years", 1 / 12, MAX_EXPECTED_USE_YEARS)
    months = round(years * 12)
    if abs(years * 12 - months) > 1e-6:
        raise ValidationError("expected_use_years", f"{years} years is not a whole number of months",
                              "a multiple of 1/12 year")
    return months


def support_period_end(placed_on_market: date, expected_use_years: float) -> date:
    """End of the support period (Art 13(8)): the expected use time from placing on the market, but
    never less than five years unless the product is expected to be in use for less than five."""
    placed = _day(placed_on_market, "placed_on_market")
    months = expected_use_months(expected_use_years)
    # at least 5 years; shorter only when the expected use itself is shorter; longer use, longer period
    return add_months(placed, months)


def update_available_until(update_issued: date, support_end: date) -> date:
    """How long a security update must stay available (Art 13(9)): ten years after its issue or the
    rest of the support period, whichever is longer."""
    issued, end = _day(update_issued, "update_issued"), _day(support_end, "support_end")
    return max(add_months(issued, 12 * UPDATE_SHELF_YEARS), end)


DOCUMENTATION_YEARS = 10   # Art 13(13)


def documentation_kept_until(placed_on_market: date, expected_use_years: float) -> date:
    """How long the technical documentation and the EU declaration of conformity must be kept
    (Art 13(13)): ten years after placing on the market or the support period, whichever is longer.
    It is the file a defendant can be ordered to disclose in a PLD claim (PLD Art 9)."""
    placed = _day(placed_on_market, "placed_on_market")
    return max(add_months(placed, 12 * DOCUMENTATION_YEARS), support_period_end(placed, expected_use_years))


@dataclass(frozen=True)
class UpdateShelf:
    issued: date
    until: date
    basis: str          # which arm of Art 13(9) decides


@dataclass(frozen=True)
class SupportPlan:
    """The support period and each update's shelf life, with the lines that explain them."""
    placed: date
    expected_use_months: int
    end: date
    below_floor: bool            # expected use under five years: the period equals it
    updates: tuple[UpdateShelf, ...]
    lines: tuple[str, ...]


def support_plan(placed_on_market: date, expected_use_years: float, updates: tuple[date, ...] = ()) -> SupportPlan:
    """:func:`support_period_end` and :func:`update_available_until` for each update, sorted by issue."""
    end = support_period_end(placed_on_market, expected_use_years)
    months = expected_use_months(expected_use_years)
    shelves = []
    for i, issued in enumerate(sorted(updates)):
        issued = _day(issued, f"updates[{i}]")
        if issued < placed_on_market:
            raise ValidationError(f"updates[{i}]", "an update cannot be issued before the product is placed "
                                                   "on the market", f"≥ {placed_on_market.isoformat()}")
        until = update_available_until(issued, end)
        ten = add_months(issued, 12 * UPDATE_SHELF_YEARS)
        shelves.append(UpdateShelf(issued, until, "ten years after issue" if ten >= end
                                   else "rest of the support period"))
    short = months < 12 * FLOOR_YEARS
    use = f"{months // 12} y {months % 12} m" if months % 12 else f"{months // 12} years"
    lines = (f"Support period ends {end:%d %b %Y}: expected use {use} from placing on the market "
             + ("(shorter than five years, so the period equals the expected use) (Art 13(8))" if short else
                "(at least the five-year floor, and reflecting the expected use) (Art 13(8))"),
             "Each security update stays available ten years after issue or to the support end, "
             "whichever is later (Art 13(9))")
    return SupportPlan(placed_on_market, months, end, short, tuple(shelves), lines)


def max_fine(turnover_eur: float, tier: int) -> float:
    """Maximum administrative fine (Art 64(2)-(4)): the higher of the tier's fixed sum and its share of
    the worldwide annual turnover of the preceding financial year. Tier 1: Annex I and Arts 13-14;
    tier 2: the other listed obligations; tier 3: incorrect, incomplete or misleading information."""
    turnover = require_number(turnover_eur, "turnover_eur", 0.0, 1e13)
    if isinstance(tier, bool) or tier not in FINE_TIERS:
        raise ValidationError("tier", f"expected 1, 2 or 3, got {tier!r}", "1, 2, 3")
    return _higher_arm(tier, turnover)


def _higher_arm(tier: int, turnover: float) -> float:
    fixed, share, _para, _what = FINE_TIERS[tier]
    return max(fixed, share * turnover)


@dataclass(frozen=True)
class Fine:
    tier: int
    fixed_eur: float
    share: float
    turnover_eur: float
    max_eur: float              # 0 when exempt
    crossover_eur: float        # turnover above which the share decides
    exempt: str | None          # the Art 64(10) point, when no fine may be imposed
    basis: str
    what: str
    note: str = ""              # a caveat on how the exemption reads

    @property
    def share_eur(self) -> float:
        """The turnover arm of Art 64: the tier's share of the turnover."""
        return self.share * self.turnover_eur


def fine(turnover_eur: float, tier: int, *, enterprise: str = "large", early_warning_only: bool = False,
         steward: bool = False) -> Fine:
    """:func:`max_fine` with the Art 64(10) exemptions: a micro or small enterprise whose only breach is
    a missed 24-hour early warning (a tier-1 breach of Art 14), and an open-source software steward."""
    top = max_fine(turnover_eur, tier)
    require_choice(enterprise, "enterprise", ENTERPRISES)
    require_bool(early_warning_only, "early_warning_only")
    require_bool(steward, "steward")
    if early_warning_only and tier != 1:
        raise ValidationError("early_warning_only", "a missed Art 14 early warning is a tier-1 breach "
                              "(Art 64(2))", "tier 1")
    fixed, share, para, what = FINE_TIERS[tier]
    exempt = None
    if steward:
        exempt = "Art 64(10)(b): no fine on an open-source software steward"
    elif early_warning_only and enterprise in ("micro", "small"):
        exempt = "Art 64(10)(a): no fine on a micro or small enterprise for a missed 24-hour early warning"
    note = ART_64_10_NOTE if exempt and exempt.startswith("Art 64(10)(a)") else ""
    return Fine(tier, fixed, share, float(turnover_eur), 0.0 if exempt else top, fixed / share, exempt, para, what,
                note)


@dataclass(frozen=True)
class TierLine:
    tier: int
    paragraph: str
    max_eur: tuple[float, ...]        # :func:`max_fine` at each turnover of the curve


@dataclass(frozen=True)
class FineCurve:
    """Each tier's maximum fine against turnover (Art 64(2)-(4)), over a range that shows every tier's
    kink (twice the highest crossover) and the given turnover (with a quarter to spare)."""

    turnover_eur: tuple[float, ...]
    tiers: tuple[TierLine, ...]


def fine_curve(turnover_eur: float, points: int = 201) -> FineCurve:
    turnover = require_number(turnover_eur, "turnover_eur", 0.0, 1e13)
    crossover = max(fixed / share for fixed, share, _p, _w in FINE_TIERS.values())
    top = max(2.0 * crossover, 1.25 * turnover)
    xs = tuple(top * i / (points - 1) for i in range(points))
    return FineCurve(xs, tuple(TierLine(tier, para, tuple(_higher_arm(tier, x) for x in xs))   # xs checked above
                               for tier, (_f, _s, para, _w) in FINE_TIERS.items()))
