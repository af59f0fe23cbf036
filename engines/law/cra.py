"""Cyber Resilience Act, Regulation (EU) 2024/2847 (OJ L, 20.11.2024): scope, role, tier,
conformity routes and the Article 14 reporting clock, implemented as rules from the articles.

Sources (consolidated text CELEX 02024R2847-20241120):
- Art 2(1) scope: a product with digital elements whose intended or reasonably foreseeable use
  includes a direct or indirect logical or physical data connection to a device or network.
- Art 3(1)-(2) and recital 12: a product includes its remote data processing; a service with no
  product placed on the market (SaaS/PaaS/IaaS) is not a product with digital elements.
- Art 3(22) and recitals 15, 18: "making available" is supply "in the course of a commercial
  activity, whether in return for payment or free of charge"; non-monetised FOSS is not.
- Art 2(2)-(4), (6), (7): medical devices (MDR 2017/745), in-vitro diagnostics (IVDR 2017/746),
  motor vehicles (Reg 2019/2144), certified civil aviation (Reg 2018/1139), marine equipment
  (Dir 2014/90/EU), identical spare parts, national security / defence are excluded.
- Art 3(14), 24, recital 19: open-source software stewards have light-touch duties, no CE mark.
- Art 7(1), Annexes III and IV: tiers by core functionality; integration does not propagate.
- Art 32(1)-(5): conformity assessment routes per tier, incl. the FOSS route of 32(5).
- Art 14 and 71(2): 24 h early warning, 72 h notification, final report 14 days after a
  corrective measure (vulnerability) or one month after the notification (incident); Art 14
  applies from 11 September 2026, also to products placed on the market earlier (69(3)).
Educational, not legal advice.
"""
from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Mapping

from engines.core.errors import ValidationError, require_choice

#: Art 71(2): "However, Article 14 shall apply from 11 September 2026".
ART14_APPLIES_FROM = date(2026, 9, 11)
#: Art 71(2): Chapter IV (notified bodies, Arts 35-51) applies from 11 June 2026.
CHAPTER_IV_APPLIES_FROM = date(2026, 6, 11)
#: Art 71(2): "This Regulation shall apply from 11 December 2027."
CRA_APPLIES_FROM = date(2027, 12, 11)
#: Art 69(1): certificates under other harmonisation law stay valid until 11 June 2028.
CERTIFICATES_VALID_UNTIL = date(2028, 6, 11)

#: Dated milestones (Art 69, 71), for timelines and the obligations tree.
MILESTONES: tuple[tuple[date, str, str], ...] = (
    (date(2024, 12, 10), "Entry into force (20 days after OJ publication on 20 Nov 2024)", "Art 71(1)"),
    (CHAPTER_IV_APPLIES_FROM, "Chapter IV (notification of conformity assessment bodies) applies", "Art 71(2)"),
    (ART14_APPLIES_FROM, "Art 14 reporting applies, also to products already on the market", "Art 71(2), 69(3)"),
    (CRA_APPLIES_FROM, "All other provisions apply", "Art 71(2)"),
    (CERTIFICATES_VALID_UNTIL, "End of validity of earlier cybersecurity type-examination certificates", "Art 69(1)"),
)

SECTORS: dict[str, tuple[str, str]] = {
    "medical": ("Art 2(2)(a)", "medical devices under Regulation (EU) 2017/745"),
    "in-vitro": ("Art 2(2)(b)", "in vitro diagnostic medical devices under Regulation (EU) 2017/746"),
    "motor-vehicle": ("Art 2(2)(c)", "motor vehicles and their systems under Regulation (EU) 2019/2144"),
    "aviation": ("Art 2(3)", "products certified under civil-aviation Regulation (EU) 2018/1139"),
    "marine": ("Art 2(4)", "marine equipment within Directive 2014/90/EU"),
    "spare-part": ("Art 2(6)", "spare parts replacing identical components, made to the same specifications"),
    "defence": ("Art 2(7)", "products developed or modified exclusively for national security or defence, "
                            "or designed to process classified information"),
}

#: Annex III class I (19), class II (4) and Annex IV (3), numbered as in the annexes.
CATEGORIES: dict[str, str] = {
    "III-I-1": "Identity management systems and privileged access management software and hardware, "
               "incl. authentication and access control readers, incl. biometric readers",
    "III-I-2": "Standalone and embedded browsers",
    "III-I-3": "Password managers",
    "III-I-4": "Software that searches for, removes or quarantines malicious software",
    "III-I-5": "Products with digital elements with the function of virtual private network (VPN)",
    "III-I-6": "Network management systems",
    "III-I-7": "Security information and event management (SIEM) systems",
    "III-I-8": "Boot managers",
    "III-I-9": "Public key infrastructure and digital certificate issuance software",
    "III-I-10": "Physical and virtual network interfaces",
    "III-I-11": "Operating systems",
    "III-I-12": "Routers, modems intended for the connection to the internet, and switches",
    "III-I-13": "Microprocessors with security-related functionalities",
    "III-I-14": "Microcontrollers with security-related functionalities",
    "III-I-15": "Application specific integrated circuits (ASIC) and FPGAs with security-related functionalities",
    "III-I-16": "Smart home general purpose virtual assistants",
    "III-I-17": "Smart home products with security functionalities (door locks, security cameras, "
                "baby monitoring systems, alarm systems)",
    "III-I-18": "Internet connected toys with social interactive or location tracking features",
    "III-I-19": "Personal wearable products with a health monitoring purpose outside MDR/IVDR, "
                "and personal wearables intended for children",
    "III-II-1": "Hypervisors and container runtime systems that support virtualised execution",
    "III-II-2": "Firewalls, intrusion detection and prevention systems",
    "III-II-3": "Tamper-resistant microprocessors",
    "III-II-4": "Tamper-resistant microcontrollers",
    "IV-1": "Hardware devices with security boxes",
    "IV-2": "Smart meter gateways (Dir (EU) 2019/944 Art 2(23)) and other devices for advanced "
            "security purposes, incl. secure cryptoprocessing",
    "IV-3": "Smartcards or similar devices, including secure elements",
}

TIERS = ("default", "important-I", "important-II", "critical")
ROLES = ("manufacturer", "steward", "none")
ALL_ROUTES = frozenset({"A", "B+C", "H", "EUCC"})

#: Fact keys of :func:`assess` and their defaults (as in the issue).
FACT_DEFAULTS: dict[str, object] = {
    "commercial": True,
    "open_source": False,
    "steward": False,
    "data_connection": True,
    "saas_only": False,
    "excluded_sector": None,
    "category": None,
    "harmonised_standards": False,
    "public_technical_documentation": False,
}
FACT_KEYS = frozenset(FACT_DEFAULTS)
_BOOL_KEYS = tuple(k for k, v in FACT_DEFAULTS.items() if isinstance(v, bool))


@dataclass(frozen=True)
class Assessment:
    """Outcome of :func:`assess`: scope, role, tier, admissible routes and the reasons, each
    reason an ``(article, text)`` pair in the order the rules were applied."""

    in_scope: bool
    role: str
    tier: str | None
    routes: frozenset[str] = field(default_factory=frozenset)
    reasons: list[tuple[str, str]] = field(default_factory=list)


def tier_of(category: str | None) -> str:
    """Tier of an annex entry (Art 7(1)-(2), 8(1), Annexes III-IV); ``None`` means default."""
    if category is None:
        return "default"
    require_choice(category, "category", tuple(CATEGORIES))
    if category.startswith("IV-"):
        return "critical"
    return "important-II" if category.startswith("III-II-") else "important-I"


def validate_facts(facts: Mapping[str, object]) -> dict[str, object]:
    """Merge ``facts`` over the defaults; unknown keys or values raise ValidationError."""
    if not isinstance(facts, Mapping):
        raise ValidationError("facts", f"expected a dict, got {type(facts).__name__}", ", ".join(sorted(FACT_KEYS)))
    unknown = sorted(set(facts) - FACT_KEYS, key=str)
    if unknown:
        raise ValidationError(str(unknown[0]), "is not a CRA fact", ", ".join(sorted(FACT_KEYS)))
    merged = {**FACT_DEFAULTS, **facts}
    for key in _BOOL_KEYS:
        if not isinstance(merged[key], bool):
            raise ValidationError(key, f"expected True or False, got {merged[key]!r}", "True, False")
    if merged["excluded_sector"] is not None:
        require_choice(merged["excluded_sector"], "excluded_sector", (None, *SECTORS))
    if merged["category"] is not None:
        require_choice(merged["category"], "category", (None, *CATEGORIES))
    return merged


def _routes(tier: str, f: Mapping[str, object], reasons: list[tuple[str, str]]) -> frozenset[str]:
    """Art 32: admissible conformity assessment procedures for a manufacturer."""
    if tier in ("important-I", "important-II") and f["open_source"] and f["public_technical_documentation"]:
        reasons.append(("Art 32(5)", "FOSS in Annex III with its technical documentation public at placing on "
                                     "the market may use any Art 32(1) procedure, including module A."))
        return ALL_ROUTES
    if tier == "default":
        reasons.append(("Art 32(1)", "Default product: internal control (module A), EU-type examination with "
                                     "internal production control (B+C), full quality assurance (H) or an EU "
                                     "cybersecurity certification scheme."))
        return ALL_ROUTES
    if tier == "important-I":
        if f["harmonised_standards"]:
            reasons.append(("Art 32(2)", "Class I with harmonised standards, common specifications or an EU scheme "
                                         "at assurance level 'substantial' applied in full: every Art 32(1) "
                                         "procedure, module A included."))
            return ALL_ROUTES
        reasons.append(("Art 32(2)", "Class I without harmonised standards (or common specifications or an EU "
                                     "scheme) applied in full: only B+C or H, with a notified body."))
        return frozenset({"B+C", "H"})
    if tier == "important-II":
        reasons.append(("Art 32(3)", "Class II: B+C, H, or an EU cybersecurity certification scheme at least "
                                     "'substantial'; never module A."))
        return frozenset({"B+C", "H", "EUCC"})
    reasons.append(("Art 32(4)", "Critical: the European certification scheme required by an Art 8(1) delegated "
                                 "act; where Art 8(1) conditions are not met, the Art 32(3) procedures "
                                 "(B+C, H, or a scheme at least 'substantial')."))
    return frozenset({"B+C", "H", "EUCC"})


def _tier_with_reason(category: str | None, reasons: list[tuple[str, str]]) -> str:
    """Art 7(1) and 8(1): the tier follows the product's own core functionality."""
    tier = tier_of(category)
    if category is None:
        reasons.append(("Art 7(1), Annexes III-IV", "Core functionality not listed in Annex III or IV: default "
                        "product (integrating a listed component does not in itself make the host important)."))
    elif tier == "critical":
        reasons.append(("Art 8(1), Annex IV", f"Core functionality '{CATEGORIES[category]}' ({category}): critical."))
    else:
        reasons.append(("Art 7(1), Annex III", f"Core functionality '{CATEGORIES[category]}' ({category}): {tier}."))
    return tier


def assess(facts: dict) -> Assessment:
    """Apply CRA scope, role, tier and route rules to ``facts`` (keys in :data:`FACT_DEFAULTS`).

    Order: not a product (Art 3(1)-(2), rec. 12) → no data connection (Art 2(1)) → sector
    exclusion (Art 2(2)-(7)) → steward (Art 3(14), 24; only for open source, else ignored with a
    note) → not commercial (Art 3(22), rec. 15, 18)
    → manufacturer; then tier (Art 7(1), Annexes III-IV) and routes (Art 32).
    """
    f = validate_facts(facts)
    reasons: list[tuple[str, str]] = []

    def out(article: str, text: str) -> Assessment:
        reasons.append((article, text))
        return Assessment(False, "none", None, frozenset(), reasons)

    if f["saas_only"]:
        return out("Art 3(1)-(2), recital 12", "A service with no product placed on the market (SaaS) is not a "
                   "product with digital elements; a backend is in scope only as the remote data processing of "
                   "a product (NIS2 may apply to the service).")
    if not f["data_connection"]:
        return out("Art 2(1)", "No direct or indirect logical or physical data connection to a device or network "
                   "in intended or reasonably foreseeable use.")
    if f["excluded_sector"] is not None:
        article, what = SECTORS[f["excluded_sector"]]
        return out(article, f"Excluded: {what}.")
    reasons.append(("Art 2(1)", "A product with digital elements with a data connection."))

    if f["steward"] and not f["open_source"]:
        # like a 32(5) fact without FOSS, a fact whose condition fails is set aside, with the reason
        reasons.append(("Art 3(14)", "Not an open-source software steward: a steward supports free and "
                        "open-source software, and this product is not (open_source is false). The steward "
                        "fact is ignored."))
    elif f["steward"]:
        tier = _tier_with_reason(f["category"], reasons)
        reasons.append(("Art 3(14), Art 24", "Open-source software steward: a cybersecurity policy, cooperation "
                        "with market surveillance authorities, Art 14 reporting as far as involved; no conformity "
                        "assessment or CE marking (recital 19) and no fines (Art 64(10)(b))."))
        return Assessment(True, "steward", tier, frozenset(), reasons)
    if not f["commercial"]:
        return out("Art 3(22), recital 18", "Not made available in the course of a commercial activity "
                   "(e.g. non-monetised open source): not 'making available on the market'.")
    reasons.append(("Art 3(22), Art 13", "Made available in the course of a commercial activity (paid or free): "
                    "manufacturer with the Art 13-14 obligations."))
    tier = _tier_with_reason(f["category"], reasons)
    routes = _routes(tier, f, reasons)
    return Assessment(True, "manufacturer", tier, routes, reasons)


# ---- Article 14 reporting clock -----------------------------------------------------------

EVENTS = ("vulnerability", "incident")


def add_months(moment: datetime, months: int) -> datetime:
    """Same day-of-month ``months`` later, clamped to the month's last day (the rule of
    Reg. (EEC, Euratom) No 1182/71 Art 3(2)(c) for periods expressed in months)."""
    month_index = moment.month - 1 + months
    year, month = moment.year + month_index // 12, month_index % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


LAST_YEAR = 9000  # deadlines run up to a month past the input: datetime ends at year 9999
FIRST_YEAR = 2000  # the CRA dates from 2024; converting year 1 across a UTC offset leaves datetime's range


def _moment(value: object, name: str) -> datetime:
    if not isinstance(value, datetime):
        raise ValidationError(name, f"expected a datetime, got {type(value).__name__}", "datetime.datetime")
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValidationError(name, f"year {value.year} is out of range",
                              f"a datetime from year {FIRST_YEAR} to {LAST_YEAR}")
    return value


def _after_hours(moment: datetime, hours: int) -> datetime:
    """``hours`` of elapsed time after ``moment``: aware datetimes add in UTC (Python adds wall-clock
    time within one zone, which is an hour off across a summer-time change); naive ones as given."""
    if moment.tzinfo is None:
        return moment + timedelta(hours=hours)
    return (moment.astimezone(timezone.utc) + timedelta(hours=hours)).astimezone(moment.tzinfo)


def reporting_deadlines(event: str, aware: datetime, fix_available: datetime | None = None,
                        notified: datetime | None = None) -> dict:
    """Art 14 CRA deadlines for an actively exploited vulnerability (14(2)) or a severe incident (14(4)).

    - ``early_warning``: within 24 hours of awareness (14(2)(a), 14(4)(a));
    - ``notification``: within 72 hours of awareness (14(2)(b), 14(4)(b));
    - ``final_report``: vulnerability, no later than 14 days after a corrective or mitigating measure
      is available (14(2)(c)); incident, within one month after the (b) notification was submitted
      (14(4)(c)). ``None`` until that moment is given.
    - ``applies``: Art 14 applies from 11 September 2026 (Art 71(2)), also to products placed on the
      market before 11 December 2027 (Art 69(3)). Dates are computed either way so the clock can show
      what would be owed.

    Hours are elapsed hours (Reg. 1182/71 Art 3(2)(a)): counted in UTC, so 24 hours across a
    summer-time change are 24 real hours, shown in the time zone given. Days and months are
    calendar periods on the local date. The end-of-day and working-day rules of Reg. 1182/71 can
    only make a deadline later, never earlier.
    """
    require_choice(event, "event", EVENTS)
    aware = _moment(aware, "aware")
    naive = aware.tzinfo is None
    for name, value in (("fix_available", fix_available), ("notified", notified)):
        if value is not None and (_moment(value, name).tzinfo is None) != naive:
            raise ValidationError(name, "mixes time-zone-aware and naive datetimes", "same kind as aware")
    if notified is not None and notified < aware:
        raise ValidationError("notified", "a notification cannot precede awareness", f"≥ {aware.isoformat()}")
    if event == "vulnerability":
        final = fix_available + timedelta(days=14) if fix_available is not None else None
    else:
        final = add_months(notified, 1) if notified is not None else None
    return {
        "applies": aware.date() >= ART14_APPLIES_FROM,
        "early_warning": _after_hours(aware, 24),
        "notification": _after_hours(aware, 72),
        "final_report": final,
    }


# ---- support period, updates and fines (engines.law.support) ------------------------------
from engines.law import support as _support  # noqa: E402  (support needs nothing from this module)

support_period_end = _support.support_period_end
update_available_until = _support.update_available_until
max_fine = _support.max_fine
