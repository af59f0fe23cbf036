"""The arithmetic of self-hosting against a per-token API: GPU-hours to dollars per token, break-even
utilisation and volume, owned hardware as an hourly price, replicas for a peaky load.

All prices are USD; API prices are per million tokens; a month is :data:`HOURS_PER_MONTH` hours
(8,760 / 12). The formulas are the unit-cost identities of data-centre TCO models (Barroso, Hölzle &
Ranganathan, *The Datacenter as a Computer*, 3rd ed., 2018, ch. 6 "Modeling costs": capital amortised
over a life plus power × PUE), written per token:

- API price of one million output tokens with the prompt tokens that come with them:
  P_mix = r·P_in + P_out, r = prompt tokens per output token.
- Self-hosted cost per million output tokens: c = p·g·10⁶ / (3,600·T·u) (+ fixed costs spread over the
  tokens served), p = $/GPU-hour, g = GPUs per replica, T = output tokens/s a replica sustains, u =
  share of that capacity used.
- Break-even utilisation: u* = p·g·10⁶ / (3,600·T·P_mix); above 1 the deployment cannot beat the API
  at any load.
- Owned hardware: capital recovered over the life L at rate i (the annuity factor i / (1 − (1 + i)^−L),
  which is 1/L at i = 0; Brealey, Myers & Allen, *Principles of Corporate Finance*, ch. 2) plus power
  at the server's draw × PUE (The Green Grid, *PUE: a comprehensive examination of the metric*, WP 49,
  2012), per GPU-hour.
"""
from __future__ import annotations

import math

from engines.compute.cost import capital_recovery_factor
from engines.core.errors import require_int, require_number

HOURS_PER_MONTH = 730.0
"""8,760 hours a year ÷ 12: the month every monthly figure here uses."""
HOURS_PER_YEAR = 8760.0
SECONDS_PER_HOUR = 3600.0
MTOK = 1e6


def price_mix(price_in: float, price_out: float, prompt_tokens_per_output_token: float) -> float:
    """P_mix: dollars for a million output tokens plus the r million prompt tokens that come with them."""
    price_in = require_number(price_in, "api_price_in", 0)
    price_out = require_number(price_out, "api_price_out", 0)
    r = require_number(prompt_tokens_per_output_token, "prompt_tokens_per_output_token", 0, 1e6)
    return r * price_in + price_out


def cost_per_million_output_tokens(gpu_price_per_hour: float, gpus_per_replica: int, output_tokens_per_s: float,
                                   utilisation: float, fixed_per_month: float = 0.0) -> float:
    """Dollars per million output tokens one replica serves (its prompts included, as an API bills them).

    The replica is paid for every hour; it produces T·u output tokens a second. ``fixed_per_month``
    (staff, monitoring, storage carried by this replica) is spread over the same month's tokens:
    c = (p·g·H + F) / (3,600·H·T·u / 10⁶).
    """
    p = require_number(gpu_price_per_hour, "gpu_price_per_hour", 0)
    g = require_int(gpus_per_replica, "gpus_per_replica", 1, 4096)
    t = require_number(output_tokens_per_s, "output_tokens_per_s", 0, lo_open=True)
    u = require_number(utilisation, "utilisation", 0, 1, lo_open=True)
    f = require_number(fixed_per_month, "fixed_per_month", 0)
    tokens_m = SECONDS_PER_HOUR * HOURS_PER_MONTH * t * u / MTOK
    return (p * g * HOURS_PER_MONTH + f) / tokens_m


def break_even_utilisation(gpu_price_per_hour: float, gpus_per_replica: int, output_tokens_per_s: float,
                           api_price_in: float, api_price_out: float, prompt_tokens_per_output_token: float) -> float:
    """u* at which a replica's GPU cost per token equals the API's P_mix; above 1 there is no break-even.

    Infinite when the API is free for this mix (P_mix = 0).
    """
    p = require_number(gpu_price_per_hour, "gpu_price_per_hour", 0)
    g = require_int(gpus_per_replica, "gpus_per_replica", 1, 4096)
    t = require_number(output_tokens_per_s, "output_tokens_per_s", 0, lo_open=True)
    mix = price_mix(api_price_in, api_price_out, prompt_tokens_per_output_token)
    if mix == 0:
        return math.inf
    return p * g * MTOK / (SECONDS_PER_HOUR * t * mix)


def api_monthly_cost(requests_per_s: float, prompt_tokens: float, output_tokens: float, price_in: float,
                     price_out: float) -> float:
    """The API bill for a month of traffic: requests × (n_in·P_in + n_out·P_out) / 10⁶."""
    lam = require_number(requests_per_s, "requests_per_s", 0)
    n_in = require_number(prompt_tokens, "prompt_tokens", 0)
    n_out = require_number(output_tokens, "output_tokens", 0)
    p_in = require_number(price_in, "price_in", 0)
    p_out = require_number(price_out, "price_out", 0)
    requests = lam * SECONDS_PER_HOUR * HOURS_PER_MONTH
    return requests * (n_in * p_in + n_out * p_out) / MTOK


def annuity_factor(rate: float, life_years: float) -> float:
    """Share of a capital sum to recover each year over ``life_years`` at ``rate`` (1/L when the rate is 0)."""
    life = require_number(life_years, "life_years", 0, 50, lo_open=True)
    return capital_recovery_factor(rate, life)


def owned_cost_per_gpu_hour(capex: float, life_years: float, node_kw: float, pue: float, price_per_kwh: float,
                            gpus_per_server: int, rate: float = 0.0) -> float:
    """Hourly price of one owned GPU: a server's capital recovered over its life plus its power, per GPU.

    p_own = capex·a(i, L) / (n·8,760) + kW·PUE·$/kWh / n, with a the annuity factor (1/L at i = 0).
    ``capex`` and ``node_kw`` are for the whole server of ``gpus_per_server`` GPUs; the power at a
    nameplate maximum is an upper bound on the draw.
    """
    capex = require_number(capex, "capex", 0)
    kw = require_number(node_kw, "node_kw", 0, 1000)
    pue = require_number(pue, "pue", 1, 5)
    kwh = require_number(price_per_kwh, "price_per_kwh", 0, 10)
    n = require_int(gpus_per_server, "gpus_per_server", 1, 1024)
    yearly = capex * annuity_factor(rate, life_years)
    return yearly / (n * HOURS_PER_YEAR) + kw * pue * kwh / n


def replicas_for_peak(peak_rate: float, rate_per_replica: float, spares: int = 1) -> int:
    """R = ⌈λ_peak / λ_replica⌉ + k: enough replicas for the busiest hour, plus spares for failures and
    rolling restarts (a load that fills whole replicas exactly needs no extra one)."""
    peak = require_number(peak_rate, "peak_rate", 0)
    per = require_number(rate_per_replica, "rate_per_replica", 0, lo_open=True)
    k = require_int(spares, "spares", 0, 1000)
    need = peak / per
    whole = round(need)
    serving = whole if abs(need - whole) <= 1e-9 * max(1.0, need) else math.ceil(need)
    return int(serving) + k


def break_even_volume(monthly_cost: float, mix: float) -> float:
    """V*: million output tokens a month at which the API bill equals ``monthly_cost`` (inf if P_mix = 0)."""
    c = require_number(monthly_cost, "monthly_cost", 0)
    m = require_number(mix, "price_mix", 0)
    return math.inf if m == 0 else c / m


def commit_pays_off(discount: float, needed_fraction: float) -> bool:
    """A commitment at ``discount`` beats on-demand when the capacity is needed more than 1 − d of the hours."""
    d = require_number(discount, "discount", 0, 1)
    f = require_number(needed_fraction, "needed_fraction", 0, 1)
    return f > 1 - d


def surge_cost(gpu_price_per_hour: float, gpus: int, days: float) -> float:
    """Extra GPUs held through an upgrade: p × GPUs × 24 × days (blue/green keeps both fleets up)."""
    p = require_number(gpu_price_per_hour, "gpu_price_per_hour", 0)
    g = require_int(gpus, "gpus", 0, 10**7)
    d = require_number(days, "days", 0, 366)
    return p * g * 24.0 * d


def staff_monthly(fte: float, loaded_per_year: float) -> float:
    """People as a monthly cost: FTE × loaded yearly cost ÷ 12 (an explicit assumption, not a benchmark)."""
    fte = require_number(fte, "fte", 0, 1000)
    wage = require_number(loaded_per_year, "loaded_usd_per_fte_year", 0, 1e8)
    return fte * wage / 12.0


__all__ = ["HOURS_PER_MONTH", "HOURS_PER_YEAR", "price_mix", "cost_per_million_output_tokens",
           "break_even_utilisation", "api_monthly_cost", "annuity_factor", "owned_cost_per_gpu_hour",
           "replicas_for_peak", "break_even_volume", "commit_pays_off", "surge_cost", "staff_monthly"]
