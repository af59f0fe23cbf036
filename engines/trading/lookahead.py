"""Look-ahead bias simulated (lesson H3): a "model" that knows the answers before its training cutoff.

Design (our own teaching model): N independent stocks, daily returns r = σ·z with z ~ N(0, 1). The
model's score is s = a·z + √(1 − a²)·ε, so corr(s, r) = a: a = a_pre before the cutoff (memorised
outcomes) and a = a_post after it (genuine skill, possibly 0). The strategy holds sign(s) in every
stock, equal-weighted, each day. Closed forms (bivariate normal, Sheppard's orthant probability):
hit rate ½ + arcsin(a)/π; daily mean σ·a·√(2/π); daily variance σ²(1 − 2a²/π)/N.

Remedies and the evidence behind each:
- an instruction to ignore later knowledge changes nothing: Lopez-Lira, Tang & Zhu, "The Memorization
  Problem", arXiv 2504.14765 (abstract), and Sarkar & Vafa, SSRN 4754678 (abstract), find recall
  survives such instructions;
- entity masking that succeeds on a share m of texts: a_pre ← (1 − m)·a_pre + m·a_post. Engelberg,
  Manela, Mullins & Vulicevic, "Entity Neutering", SSRN 5182756, report about 90 % of neutered
  articles no longer identifiable; LTZ find naive masking fails, so m must be measured by a
  re-identification test;
- a point-in-time model (trained only on text before each date; He, Lv, Manela & Wu, "Chronologically
  Consistent Large Language Models", arXiv 2502.21206): a_pre ← a_post;
- evaluating only after the cutoff (Lopez-Lira & Tang's own design): the pre-cutoff days are dropped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engines.core.errors import Cancelled, require, require_choice, require_int, require_number
from engines.trading.stats import (PERIODS_PER_YEAR, deflated_sharpe, expected_max_sharpe, hit_rate,
                                   min_backtest_years, sharpe_se)

REMEDIES = {
    "none": "No remedy",
    "prompt": "Prompt: ignore anything after the date",
    "masking": "Entity masking (verified share)",
    "point_in_time": "Point-in-time model",
    "after_cutoff": "Evaluate only after the cutoff",
}
REMEDY_SOURCES = {
    "none": "",
    "prompt": "No effect: recall survives such instructions (Lopez-Lira, Tang & Zhu, arXiv 2504.14765; "
              "Sarkar & Vafa, SSRN 4754678)",
    "masking": "Engelberg, Manela, Mullins & Vulicevic, SSRN 5182756: ~90 % of neutered articles unidentifiable; "
               "naive masking fails (Lopez-Lira, Tang & Zhu), so the share must be verified",
    "point_in_time": "He, Lv, Manela & Wu, arXiv 2502.21206 (ChronoBERT/ChronoGPT)",
    "after_cutoff": "Lopez-Lira & Tang's own design: sample starts after the Sept 2021 cutoff",
}
MC_TOLERANCE_SE = 4.0
"""The Monte Carlo agrees with the closed form when every estimate is within 4 of its standard errors."""


def effective_skill(a_pre: float, a_post: float, remedy: str, mask_share: float = 0.9) -> float:
    """The pre-cutoff correlation a remedy leaves (the post-cutoff one never changes)."""
    a_pre = require_number(a_pre, "a_pre", -0.99, 0.99)
    a_post = require_number(a_post, "a_post", -0.99, 0.99)
    require_choice(remedy, "remedy", tuple(REMEDIES))
    m = require_number(mask_share, "mask_share", 0, 1)
    if remedy == "masking":
        return (1 - m) * a_pre + m * a_post
    if remedy == "point_in_time":
        return a_post
    return a_pre       # "none", "prompt" (changes nothing) and "after_cutoff" (drops these days instead)


@dataclass(frozen=True)
class Moments:
    """Closed-form daily mean, sd, annual Sharpe and hit rate of the sign portfolio at correlation a."""
    a: float
    mean: float
    sd: float
    sharpe: float
    hit: float


def moments(a: float, n_stocks: int, sigma: float, periods_per_year: float = PERIODS_PER_YEAR) -> Moments:
    a = require_number(a, "a", -0.99, 0.99)
    n = require_int(n_stocks, "n_stocks", 1)
    sigma = require_number(sigma, "sigma", 0, 1, lo_open=True)
    mean = sigma * a * math.sqrt(2 / math.pi)
    sd = sigma * math.sqrt((1 - 2 * a * a / math.pi) / n)
    return Moments(a, mean, sd, math.sqrt(periods_per_year) * mean / sd, hit_rate(a))


def mixture_sharpe(pre: Moments, post: Moments, days_pre: int, days_post: int,
                   periods_per_year: float = PERIODS_PER_YEAR) -> float:
    """Annual Sharpe of a backtest that straddles the cutoff: a two-regime mixture of daily returns."""
    w1 = days_pre / (days_pre + days_post)
    w2 = 1 - w1
    mean = w1 * pre.mean + w2 * post.mean
    var = w1 * (pre.sd ** 2 + pre.mean ** 2) + w2 * (post.sd ** 2 + post.mean ** 2) - mean ** 2
    return math.sqrt(periods_per_year) * mean / math.sqrt(var)


@dataclass(frozen=True)
class LookaheadRun:
    seed: int
    remedy: str
    a_pre_effective: float
    a_post: float
    days_pre: int
    days_post: int
    n_stocks: int
    daily: np.ndarray            # portfolio return per day
    hits: np.ndarray             # share of stocks whose sign was right, per day
    rolling_hit: np.ndarray      # 20-day mean of hits
    cumulative: np.ndarray       # cumulative simple sum of daily returns (P&L per unit book)
    evaluated_from: int          # first day the backtest counts (0, or the cutoff)
    sharpe_pre: float
    sharpe_post: float
    sharpe_backtest: float       # over the evaluated days
    t_post: float                # post-cutoff Sharpe over its Lo SE
    hit_pre: float
    hit_post: float
    closed_pre: Moments
    closed_post: Moments
    closed_backtest_sharpe: float
    closed_t_post: float
    n_prompts: int
    trials_var: float
    expected_max_noise_sharpe: float
    deflated: float              # DSR of the backtest Sharpe as the best of n_prompts
    min_backtest_years: float    # for a Sharpe of 1 from n_prompts trials

    def rows(self) -> list[dict]:
        return [{"day": i, "return": float(r), "hit": float(h), "cumulative": float(c)}
                for i, (r, h, c) in enumerate(zip(self.daily, self.hits, self.cumulative))]


def _sharpe(x: np.ndarray, q: float) -> float:
    sd = float(x.std(ddof=1))
    return math.sqrt(q) * float(x.mean()) / sd if sd > 0 else 0.0


def simulate_lookahead(days_pre: int = 500, days_post: int = 250, n_stocks: int = 50, sigma: float = 0.01,
                       a_pre: float = 0.08, a_post: float = 0.02, remedy: str = "none", mask_share: float = 0.9,
                       n_prompts: int = 1, trials_var: float = 0.5, seed: int = 1,
                       periods_per_year: float = PERIODS_PER_YEAR, progress=None, cancelled=None) -> LookaheadRun:
    """One seeded backtest straddling the cutoff, with the closed forms it should match."""
    days_pre = require_int(days_pre, "days_pre", 0, 200_000)
    days_post = require_int(days_post, "days_post", 2, 200_000)
    n_stocks = require_int(n_stocks, "n_stocks", 1, 5_000)
    require(days_pre * n_stocks + days_post * n_stocks <= 50_000_000, "n_stocks",
            "days × stocks is too large to simulate", "days × stocks ≤ 5·10⁷")
    seed = require_int(seed, "seed", 0, 2**31 - 1)
    n_prompts = require_int(n_prompts, "n_prompts", 1, 10**6)
    trials_var = require_number(trials_var, "trials_var", 0, 100, lo_open=True)
    a_eff = effective_skill(a_pre, a_post, remedy, mask_share)
    a_post = float(a_post)
    q = periods_per_year
    rng = np.random.default_rng(seed)
    n_days = days_pre + days_post
    daily = np.empty(n_days)
    hits = np.empty(n_days)
    a = np.where(np.arange(n_days) < days_pre, a_eff, a_post)
    chunk = max(1, 2_000_000 // n_stocks)
    for start in range(0, n_days, chunk):
        if cancelled is not None and cancelled():
            raise Cancelled()
        stop = min(n_days, start + chunk)
        z = rng.standard_normal((stop - start, n_stocks))
        eps = rng.standard_normal((stop - start, n_stocks))
        ac = a[start:stop, None]
        s = ac * z + np.sqrt(1 - ac ** 2) * eps
        sign = np.sign(s)
        daily[start:stop] = (sign * sigma * z).mean(axis=1)
        hits[start:stop] = (sign == np.sign(z)).mean(axis=1)
        if progress is not None:
            progress(stop / n_days, f"day {stop:,} of {n_days:,}")
    evaluated_from = days_pre if remedy == "after_cutoff" else 0
    window = min(20, n_days)
    kernel = np.ones(window) / window
    rolling = np.convolve(hits, kernel, mode="full")[:n_days]
    rolling[:window - 1] = np.cumsum(hits[:window - 1]) / np.arange(1, window)
    cum = np.cumsum(np.where(np.arange(n_days) >= evaluated_from, daily, 0.0))
    pre, post = daily[:days_pre], daily[days_pre:]
    evaluated = daily[evaluated_from:]
    sr_post = _sharpe(post, q)
    sr_bt = _sharpe(evaluated, q)
    cp, cq = moments(a_eff, n_stocks, sigma, q), moments(a_post, n_stocks, sigma, q)
    closed_bt = cq.sharpe if evaluated_from or days_pre == 0 else mixture_sharpe(cp, cq, days_pre, days_post, q)
    n_eval = n_days - evaluated_from
    return LookaheadRun(
        seed=seed, remedy=remedy, a_pre_effective=a_eff, a_post=a_post, days_pre=days_pre, days_post=days_post,
        n_stocks=n_stocks, daily=daily, hits=hits, rolling_hit=rolling, cumulative=cum,
        evaluated_from=evaluated_from,
        sharpe_pre=_sharpe(pre, q) if days_pre >= 2 else float("nan"), sharpe_post=sr_post, sharpe_backtest=sr_bt,
        t_post=sr_post / sharpe_se(sr_post, days_post, q),
        hit_pre=float(hits[:days_pre].mean()) if days_pre else float("nan"), hit_post=float(hits[days_pre:].mean()),
        closed_pre=cp, closed_post=cq, closed_backtest_sharpe=closed_bt,
        closed_t_post=cq.sharpe / sharpe_se(cq.sharpe, days_post, q),
        n_prompts=n_prompts, trials_var=trials_var,
        expected_max_noise_sharpe=math.sqrt(trials_var) * expected_max_sharpe(max(2, n_prompts)) if n_prompts > 1
        else 0.0,
        deflated=deflated_sharpe(sr_bt, trials_var, max(2, n_prompts), max(2, n_eval), q)
        if n_prompts > 1 else float("nan"),
        min_backtest_years=min_backtest_years(n_prompts) if n_prompts > 1 else 0.0)
