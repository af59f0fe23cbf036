"""What one GPU-hour costs: amortised server and building, electricity and operations; a run's bill;
and how a campus's capital splits.

cost/GPU-h = [server capex / L_s + facility capex per GPU / L_f] / (8,760 × u) + node kW per GPU × PUE × price + opex,
facility capex per GPU = ($ per MW of IT load) × node MW per GPU (Cushman & Wakefield 2025 quote $/MW of
critical IT load). With a cost of capital r, 1/L becomes the capital recovery factor
r(1+r)^L / ((1+r)^L − 1) (standard annuity). Power is paid only for utilised hours.
Campus split: McKinsey (Apr 2025) estimate 60 % chips, 25 % power and cooling, 15 % building;
Cushman & Wakefield split the building's own cost (``assets/compute/market.json``).
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.compute.data import load_table
from engines.compute.power import HOURS_PER_YEAR
from engines.core.errors import require_int, require_number

PARTS = ("server", "facility", "power", "opex")
PART_LABELS = {"server": "Server (amortised)", "facility": "Building (amortised)", "power": "Electricity",
               "opex": "Operations"}


def capital_recovery_factor(rate: float, years: float) -> float:
    """Share of a capital sum paid each year to repay it over ``years`` at ``rate``: 1/L at r = 0."""
    r = require_number(rate, "rate", 0.0, 1.0)
    years = require_number(years, "years", 0.0, 100.0, lo_open=True)
    if r == 0.0:
        return 1.0 / years
    g = (1.0 + r) ** years
    return r * g / (g - 1.0)


@dataclass(frozen=True)
class CostBreakdown:
    """Dollars per utilised GPU-hour, part by part."""

    server: float
    facility: float
    power: float
    opex: float

    @property
    def total(self) -> float:
        return self.server + self.facility + self.power + self.opex

    def parts(self) -> dict[str, float]:
        return {p: getattr(self, p) for p in PARTS}

    def shares(self) -> dict[str, float]:
        t = self.total
        return {p: (v / t if t > 0 else 0.0) for p, v in self.parts().items()}

    def times(self, gpu_hours: float) -> dict[str, float]:
        """Each part × ``gpu_hours`` (a run's bill), with the total."""
        h = require_number(gpu_hours, "gpu_hours", 0.0)
        return {**{p: v * h for p, v in self.parts().items()}, "total": self.total * h}


def cost_per_gpu_hour(server_capex: float, server_life_years: float, facility_capex_per_mw: float,
                      node_kw_per_gpu: float, facility_life_years: float, pue: float, price_per_kwh: float,
                      utilisation: float = 1.0, opex_per_hour: float = 0.0, rate: float = 0.0) -> CostBreakdown:
    """$ per utilised GPU-hour: amortised server and facility capex, electricity and operations."""
    capex = require_number(server_capex, "server_capex", 0.0)
    ls = require_number(server_life_years, "server_life_years", 0.0, 100.0, lo_open=True)
    per_mw = require_number(facility_capex_per_mw, "facility_capex_per_mw", 0.0)
    kw = require_number(node_kw_per_gpu, "node_kw_per_gpu", 0.0, 100.0, lo_open=True)
    lf = require_number(facility_life_years, "facility_life_years", 0.0, 100.0, lo_open=True)
    pue = require_number(pue, "pue", 1.0, 5.0)
    price = require_number(price_per_kwh, "price_per_kwh", 0.0, 10.0)
    u = require_number(utilisation, "utilisation", 0.0, 1.0, lo_open=True)
    opex = require_number(opex_per_hour, "opex_per_hour", 0.0)
    r = require_number(rate, "rate", 0.0, 1.0)
    hours = HOURS_PER_YEAR * u
    server = capex * capital_recovery_factor(r, ls) / hours
    facility = per_mw * kw / 1000.0 * capital_recovery_factor(r, lf) / hours
    return CostBreakdown(server, facility, kw * pue * price, opex)


GROUPS = ("Chips and servers", "Power and cooling", "Land, shell and fit-out")
"""The published split's three groups (McKinsey, Apr 2025: chips 60 %, power and cooling 25 %, building 15 %)."""
POWER_PART = "Critical power and cooling"


@dataclass(frozen=True)
class CampusCapex:
    """A campus's up-front capital for the scenario's cluster, and the published split to compare with."""

    n_gpus: int
    servers: float
    facility: float
    facility_parts: tuple[tuple[str, float, str], ...]     # (label, $, citation) by Cushman & Wakefield's split
    published_split: tuple[tuple[str, float, str], ...]    # (label, share, citation), McKinsey

    @property
    def total(self) -> float:
        return self.servers + self.facility

    @property
    def chips_share(self) -> float:
        return self.servers / self.total if self.total > 0 else 0.0

    def grouped(self) -> tuple[tuple[str, float], ...]:
        """This cluster's capital in the published split's three groups, as shares: servers; the building's
        critical power and cooling (Cushman & Wakefield's largest part); the rest of the building."""
        power = sum(v for label, v, _ in self.facility_parts if label == POWER_PART)
        t = self.total if self.total > 0 else 1.0
        return tuple(zip(GROUPS, (self.servers / t, power / t, (self.facility - power) / t)))


def campus_capex(n_gpus: int, server_capex: float, it_mw: float, facility_capex_per_mw: float) -> CampusCapex:
    """Servers (n_gpus × capex per GPU) against the building (IT MW × $/MW), split as the estimates split it."""
    n = require_int(n_gpus, "n_gpus", 1)
    capex = require_number(server_capex, "server_capex", 0.0)
    mw = require_number(it_mw, "it_mw", 0.0)
    per_mw = require_number(facility_capex_per_mw, "facility_capex_per_mw", 0.0)
    market = load_table("market.json")
    facility = mw * per_mw
    parts = tuple((s.label, facility * s.share, s.citation) for s in market["facility_split"])
    split = tuple((s.label, s.share, s.citation) for s in market["campus_split"])
    return CampusCapex(n, n * capex, facility, parts, split)
