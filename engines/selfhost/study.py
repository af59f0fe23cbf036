"""The honest total cost of a self-hosted deployment against an API, for the shared scenario.

Throughput per replica comes from the serving engine's steady-state sizing
(:func:`engines.serving.steady.size_deployment`: the highest steady rate meeting the latency target,
at most the headroom share of saturation), scaled by η because the engine's step times are roofline
bounds. Every dollar figure is one of the formulas of :mod:`engines.selfhost.cost`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import numpy as np

from engines.core.errors import ValidationError
from engines.selfhost.cost import (HOURS_PER_MONTH, MTOK, SECONDS_PER_HOUR, api_monthly_cost, break_even_utilisation,
                                   break_even_volume, cost_per_million_output_tokens, owned_cost_per_gpu_hour,
                                   price_mix, replicas_for_peak, staff_monthly)
from engines.selfhost.params import Params
from engines.selfhost.prices import ApiPrice, PriceBook, is_stale
from engines.serving.params import workload as serving_workload
from engines.serving.steady import Sizing, size_deployment

INCLUDED_IN_API = (
    "idle capacity (you pay per token, not per hour)",
    "redundancy and failover",
    "model and engine upgrades with their evaluation",
    "security patching",
    "on-call staff",
    "utilisation pooled across many customers",
)
"""What a per-token price already pays for, shown beside every comparison."""

CURVE_POINTS = 160


@dataclass(frozen=True)
class GpuPrice:
    """The $/GPU-hour the comparison uses and where it came from."""

    usd_per_gpu_hour: float
    how: str                  # "rent", "commit" or "own"
    row_id: str               # the price-file row behind it
    observed: str
    words: str


@dataclass(frozen=True)
class Curve:
    """Monthly cost against average traffic: self-hosting steps at each replica, the API a line."""

    traffic: np.ndarray
    self_hosted: np.ndarray
    api: np.ndarray
    today: float
    cheaper_from: float       # lowest traffic from which self-hosting stays cheaper; inf if never in range


@dataclass(frozen=True)
class Tco:
    """Everything the cost view shows, for one scenario, traffic and price choice."""

    feasible: bool
    reason: str
    sizing: Sizing
    efficiency: float
    rate_per_replica: float            # η × the engine's steady rate per replica (req/s)
    tokens_per_replica: float          # T: output tokens/s one replica sustains at that rate
    gpus_per_replica: int
    replicas: int
    gpus: int
    utilisation: float                 # u: average traffic ÷ fleet capacity
    gpu_price: GpuPrice | None
    api: ApiPrice
    api_price_in: float                # after the what-if change
    api_price_out: float
    prompt_per_output: float           # r
    price_mix: float                   # P_mix
    gpu_monthly: float
    staff_monthly: float
    other_monthly: float
    self_monthly: float
    api_monthly: float
    output_mtok_per_month: float
    self_per_mtok: float               # all costs ÷ output tokens served
    gpu_per_mtok: float                # GPU only (formula 4)
    break_even_u: float                # GPU only (u*)
    break_even_u_fixed: float          # with the fixed costs, for this fleet (u*_F)
    break_even_mtok: float             # V*
    capacity_mtok: float               # V_max of this fleet
    curve: Curve | None
    stale_rows: tuple[str, ...]

    @property
    def fixed_monthly(self) -> float:
        return self.staff_monthly + self.other_monthly

    @property
    def never(self) -> bool:
        """No utilisation, however high, makes the GPUs alone cheaper than the API."""
        return self.break_even_u > 1

    def verdict(self) -> str:
        if not self.feasible:
            return self.reason
        if self.never:
            return (f"Cannot break even at any utilisation: even fully loaded, a replica's GPUs cost "
                    f"{self.break_even_u:.2f}× what the API charges for the same tokens.")
        cheaper = self.self_monthly < self.api_monthly
        who = "Self-hosting is cheaper" if cheaper else "The API is cheaper"
        return (f"{who} at today's traffic: ${self.self_monthly:,.0f} against ${self.api_monthly:,.0f} a month. "
                f"Break-even utilisation {self.break_even_u:.0%} (GPUs only), {self.break_even_u_fixed:.0%} with "
                f"people and fixed costs; today's is {self.utilisation:.0%}.")


def gpu_price(params: Params, book: PriceBook, gpu: str) -> GpuPrice:
    """Rent (the chosen offer), commit (the offer less the discount) or own (the server's capital and power)."""
    if params.ownership == "own":
        hw = book.hardware_for(gpu)
        if hw is None:
            raise ValidationError("ownership", f"the price file has no purchase price for {gpu}",
                                  "rent or commit, or add a hardware row")
        p = owned_cost_per_gpu_hour(hw.capex_usd_per_server, params.life_years, hw.server_kw, params.pue,
                                    params.usd_per_kwh, hw.gpus_per_server, params.capital_rate_pct / 100)
        words = (f"owned: {hw.item} at ${hw.capex_usd_per_server:,.0f} over {params.life_years:g} years, "
                 f"{hw.server_kw:g} kW × PUE {params.pue:g} at ${params.usd_per_kwh:.2f}/kWh")
        return GpuPrice(p, "own", hw.id, hw.date, words)
    row = book.rental_row(params.gpu_offer, gpu)
    if params.ownership == "commit":
        d = params.commit_discount_pct / 100
        return GpuPrice(row.usd_per_gpu_hour * (1 - d), "commit", row.id, row.date,
                        f"{row.label} less a {d:.0%} commitment discount")
    return GpuPrice(row.usd_per_gpu_hour, "rent", row.id, row.date, f"{row.label} ({row.term})")


def fleet_monthly(traffic: float, peak_to_average: float, rate_per_replica: float, spares: int, price: float,
                  gpus_per_replica: int, fixed: float) -> float:
    """Self-hosted monthly cost at ``traffic`` req/s on average: replicas for its peak, always on, plus fixed."""
    replicas = replicas_for_peak(traffic * peak_to_average, rate_per_replica, spares)
    return price * gpus_per_replica * replicas * HOURS_PER_MONTH + fixed


def cost_curve(params: Params, rate_per_replica: float, price: float, gpus_per_replica: int, fixed: float,
               price_in: float, price_out: float, prompt: float, output: float) -> Curve:
    """Self-hosting against the API over 0…3× today's traffic, and where self-hosting starts to stay cheaper.

    The crossing is found per replica count: with R replicas the cost is flat while the API's bill
    grows linearly, so within each step self-hosting wins from C(R) / (API $ per req/s) on."""
    today = params.traffic_per_s
    top = max(3 * today, 1.0)
    x = np.linspace(0.0, top, CURVE_POINTS)
    x = np.unique(np.concatenate([x, [today]]))
    per_rps = api_monthly_cost(1.0, prompt, output, price_in, price_out)
    selfc = np.array([fleet_monthly(v, params.peak_to_average, rate_per_replica, params.spares, price,
                                    gpus_per_replica, fixed) for v in x])
    api = x * per_rps
    cheaper_from = math.inf
    if per_rps > 0:
        step = rate_per_replica / params.peak_to_average    # average traffic one more replica adds
        k = params.spares
        last_win = None
        for serving in range(0, int(top / step) + 2):
            lo, hi = (serving - 1) * step if serving else 0.0, serving * step
            cost = price * gpus_per_replica * (serving + k) * HOURS_PER_MONTH + fixed
            start = max(lo, cost / per_rps)
            if start > hi:                      # the API is cheaper somewhere in this step
                last_win = None
            elif last_win is None or start > lo:   # cheaper only from inside the step: a new start
                last_win = start
        if last_win is not None:
            cheaper_from = last_win
    return Curve(x, selfc, api, today, cheaper_from)


def peak_rate(params: Params) -> float:
    """The busiest hour's requests per second: average traffic × peak-to-average."""
    return params.traffic_per_s * params.peak_to_average


def sizing_key(scenario, params: Params) -> tuple:
    """Everything the serving engine's sizing in :func:`tco` depends on: equal keys, the same sizing
    (so a panel may hand the previous one back instead of sizing again)."""
    return (scenario, peak_rate(params), params.prompt_tokens, params.output_tokens, params.ttft_target_s,
            params.tpot_target_ms, params.max_utilisation_pct)


def sizing_inputs(scenario, params: Params) -> tuple:
    """The plain frozen arguments of :func:`tco_sizing` for ``scenario`` at ``params``: a knob that does not
    change the sizing (a price, the staff) leaves them equal, so a cached sizing is used again."""
    wl = serving_workload(params, scenario.serve_context, 1.0, seed=1)
    return scenario, peak_rate(params), params.target, wl, params.max_utilisation_pct / 100


def tco_sizing(scenario, peak_rate_per_s: float, target, workload, max_utilisation: float,
               progress: Callable[[float, str], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> Sizing:
    """The serving engine's sizing :func:`tco` rests on (the slow part, seconds): a job of its own, so a
    panel can cache it and compute the rest (under a millisecond) from it."""
    return size_deployment(scenario, peak_rate_per_s, target, "continuous", workload, max_utilisation, cancelled)


def tco(scenario, params: Params, book: PriceBook, today: date, sizing: Sizing | None = None,
        cancelled: Callable[[], bool] | None = None) -> Tco:
    """The comparison for ``scenario`` at ``params`` on the day ``today`` (price ages); ``sizing`` (from
    :func:`tco_sizing` of :func:`sizing_inputs`) may be given when already computed."""
    wl = serving_workload(params, scenario.serve_context, 1.0, seed=1)
    peak = peak_rate(params)
    if sizing is None:
        sizing = tco_sizing(*sizing_inputs(scenario, params), cancelled=cancelled)
    eta = params.efficiency_pct / 100
    api = book.api_row(params.api)
    f = params.api_price_factor
    p_in, p_out = api.input_per_mtok * f, api.output_per_mtok * f
    n_in, n_out = float(wl.prompt_mean), float(wl.output_mean)
    r = n_in / n_out
    mix = price_mix(p_in, p_out, r)
    lam = params.traffic_per_s
    api_month = api_monthly_cost(lam, n_in, n_out, p_in, p_out)
    staff = staff_monthly(params.fte, params.usd_per_fte_year)
    other = params.other_fixed_per_month
    fixed = staff + other
    mtok = lam * n_out * SECONDS_PER_HOUR * HOURS_PER_MONTH / MTOK
    g = sizing.gpus_per_replica
    nan = float("nan")
    price = gpu_price(params, book, scenario.gpu)
    stale = tuple(rid for rid, obs in ((api.id, api.date), (price.row_id, price.observed)) if is_stale(obs, today))
    if not sizing.feasible or sizing.max_rate_per_replica <= 0:
        return Tco(False, "No steady rate meets the latency target on this replica: loosen the target or change "
                          "the scenario.", sizing, eta, 0.0, 0.0, g, 0, 0, 0.0, price, api, p_in, p_out, r, mix,
                   0.0, staff, other, nan, api_month, mtok, nan, nan, nan, nan, nan, 0.0, None, stale)
    rate = eta * sizing.max_rate_per_replica
    t = rate * n_out
    replicas = replicas_for_peak(peak, rate, params.spares)
    u = lam / (replicas * rate)
    p = price.usd_per_gpu_hour
    gpu_month = p * g * replicas * HOURS_PER_MONTH
    self_month = gpu_month + fixed
    capacity = replicas * t * SECONDS_PER_HOUR * HOURS_PER_MONTH / MTOK
    u_star = break_even_utilisation(p, g, t, p_in, p_out, r)
    u_star_f = math.inf if mix == 0 else self_month / (capacity * mix)
    curve = cost_curve(params, rate, p, g, fixed, p_in, p_out, n_in, n_out)
    return Tco(True, "", sizing, eta, rate, t, g, replicas, replicas * g, u, price, api, p_in, p_out, r, mix,
               gpu_month, staff, other, self_month, api_month, mtok, self_month / mtok,
               cost_per_million_output_tokens(p, g, t, u), u_star, u_star_f, break_even_volume(self_month, mix),
               capacity, curve, stale)


def api_alternatives(book: PriceBook, prompt_per_output: float, factor: float = 1.0) -> list[tuple[ApiPrice, float]]:
    """Every API in the price file with its P_mix at this traffic's mix, cheapest first."""
    rows = [(a, price_mix(a.input_per_mtok * factor, a.output_per_mtok * factor, prompt_per_output)) for a in book.api]
    return sorted(rows, key=lambda t: t[1])


__all__ = ["INCLUDED_IN_API", "GpuPrice", "Curve", "Tco", "gpu_price", "fleet_monthly", "cost_curve", "tco",
           "api_alternatives"]
