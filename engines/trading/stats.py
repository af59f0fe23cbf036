"""Statistics that separate a real result from a tradable strategy (daily data, q = 252 unless given).

Conventions: q periods per year, T observations, per-period Sharpe SR_d = μ/σ, annual SR_a = √q·SR_d.

- t-statistic of a mean under IID: t = μ/(σ/√T) (Student 1908).
- Standard error of a Sharpe ratio under IID: SE(SR_d) = √((1 + SR_d²/2)/T); Lo, "The Statistics of
  Sharpe Ratios", Financial Analysts Journal 58(4):36–52, 2002, eq. for IID returns. Annualised:
  SE(SR_a) = √q·SE(SR_d). Plugging an *annual* Sharpe into the per-period formula with T in days is the
  classic mistake (it is right only when the observations themselves are annual).
- Bonferroni two-sided threshold: t* = Φ⁻¹(1 − α/(2M)) (Dunn 1961). Harvey, Liu & Zhu (RFS 29(1), 2016)
  argue for t > 3.0 from their own correlation- and publication-adjusted framework, not from Bonferroni.
- Expected maximum of N unit-variance trials and the deflated Sharpe ratio: Bailey & López de Prado,
  "The Deflated Sharpe Ratio", J. Portfolio Management 40(5):94–107, 2014 (SSRN 2460551). The
  denominator uses **raw** kurtosis γ₄ (3 for a normal distribution), not excess kurtosis.
- Minimum backtest length: Bailey, Borwein, López de Prado & Zhu, "Pseudo-Mathematics and Financial
  Charlatanism", Notices AMS 61(5), 2014: MinBTL ≈ (E[max_N]/SR target)² years.
- Hit rate of sign agreement for bivariate normal variables with correlation ρ: ½ + arcsin(ρ)/π
  (Sheppard 1899, the orthant probability).
- Cohen's κ = (p_o − p_e)/(1 − p_e) (Cohen 1960); F1 = 2PR/(P + R); PSI = Σ(a − e)·ln(a/e).
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from engines.core.errors import ValidationError, require, require_int, require_number

EULER_GAMMA = 0.5772156649015329
PERIODS_PER_YEAR = 252
HLZ_HURDLE_T = 3.0
"""Harvey, Liu & Zhu (RFS 2016): a new factor should clear t > 3.0 (their framework, not Bonferroni)."""

_N = NormalDist()


def _q(periods_per_year) -> float:
    return require_number(periods_per_year, "periods_per_year", 0, 1e6, lo_open=True)


def t_stat(mean: float, sd: float, n: int) -> float:
    """t = mean/(sd/√n) for n IID observations of a per-period return with that mean and sd."""
    mean = require_number(mean, "mean")
    sd = require_number(sd, "sd", 0, lo_open=True)
    n = require_int(n, "n", 2)
    return mean / (sd / math.sqrt(n))


def sharpe_se(sharpe_annual: float, n_obs: int, periods_per_year: float = PERIODS_PER_YEAR) -> float:
    """Standard error of an annualised Sharpe ratio from ``n_obs`` IID per-period returns (Lo 2002):
    √q·√((1 + SR_d²/2)/T) with SR_d = SR_a/√q."""
    sr = require_number(sharpe_annual, "sharpe_annual", -1000, 1000)
    n = require_int(n_obs, "n_obs", 2)
    q = _q(periods_per_year)
    sr_d = sr / math.sqrt(q)
    return math.sqrt(q) * math.sqrt((1 + sr_d ** 2 / 2) / n)


def sharpe_t(sharpe_annual: float, n_obs: int, periods_per_year: float = PERIODS_PER_YEAR) -> float:
    """Sharpe over its Lo standard error: how many SEs the annual Sharpe sits from zero."""
    return require_number(sharpe_annual, "sharpe_annual", -1000, 1000) / sharpe_se(sharpe_annual, n_obs,
                                                                                  periods_per_year)


def bonferroni_threshold(m_tests: int, alpha: float = 0.05) -> float:
    """Two-sided Bonferroni critical t for ``m_tests`` tests at family-wise ``alpha``: Φ⁻¹(1 − α/(2M))."""
    m = require_int(m_tests, "m_tests", 1, 10**12)
    a = require_number(alpha, "alpha", 0, 0.5, lo_open=True)
    return _N.inv_cdf(1 - a / (2 * m))


def days_for_t(sharpe_annual: float, t_target: float, periods_per_year: float = PERIODS_PER_YEAR) -> float:
    """Periods needed for an edge of annual Sharpe ``sharpe_annual`` to reach ``t_target`` under IID:
    T* = (t*/SR_d)², SR_d = SR_a/√q."""
    sr = require_number(sharpe_annual, "sharpe_annual", 0, 100, lo_open=True)
    t = require_number(t_target, "t_target", 0, 100, lo_open=True)
    q = _q(periods_per_year)
    return (t / (sr / math.sqrt(q))) ** 2


def net_daily_return(gross: float, turnover: float, cost_round_trip: float) -> float:
    """Net per-period return r − τ·c: turnover τ (fraction of the book traded per period, 1.9 = 190 %)
    times the round-trip cost c (a fraction: 10 bp = 0.001)."""
    gross = require_number(gross, "gross", -1, 1)
    tau = require_number(turnover, "turnover", 0, 10)
    c = require_number(cost_round_trip, "cost_round_trip", 0, 0.1)
    return gross - tau * c


def break_even_cost(gross: float, turnover: float) -> float:
    """Round-trip cost at which the net return is zero: c* = r/τ (a fraction)."""
    gross = require_number(gross, "gross", -1, 1)
    tau = require_number(turnover, "turnover", 0, 10, lo_open=True)
    return gross / tau


def cumulative_return(mean: float, sd: float, n: int) -> float:
    """Compounded return after ``n`` periods of mean ``mean`` and sd ``sd``, with the volatility drag:
    exp(n·(μ − σ²/2)) − 1 (the log-normal approximation)."""
    mean = require_number(mean, "mean", -1, 1)
    sd = require_number(sd, "sd", 0, 1)
    n = require_int(n, "n", 0)
    return math.expm1(n * (mean - sd ** 2 / 2))


def expected_max_sharpe(n_trials: int) -> float:
    """Expected maximum of ``n_trials`` independent N(0, 1) Sharpe estimates (Bailey & López de Prado 2014):
    (1 − γ)·Φ⁻¹(1 − 1/N) + γ·Φ⁻¹(1 − 1/(N·e)); multiply by √V for trials of variance V."""
    n = require_int(n_trials, "n_trials", 2, 10**12)
    return (1 - EULER_GAMMA) * _N.inv_cdf(1 - 1 / n) + EULER_GAMMA * _N.inv_cdf(1 - 1 / (n * math.e))


def probabilistic_sharpe(sharpe_annual: float, benchmark_annual: float, n_obs: int,
                         periods_per_year: float = PERIODS_PER_YEAR, skew: float = 0.0,
                         kurtosis: float = 3.0) -> float:
    """PSR(SR*) = Φ((SR̂ − SR*)·√(T − 1)/√(1 − γ₃·SR̂ + (γ₄ − 1)/4·SR̂²)), Sharpe ratios per period,
    γ₄ the raw kurtosis (Bailey & López de Prado 2012, 2014)."""
    sr = require_number(sharpe_annual, "sharpe_annual", -1000, 1000)
    sr0 = require_number(benchmark_annual, "benchmark_annual", -1000, 1000)
    n = require_int(n_obs, "n_obs", 2)
    q = _q(periods_per_year)
    g3 = require_number(skew, "skew", -100, 100)
    g4 = require_number(kurtosis, "kurtosis", None, 10_000)
    # Pearson: raw kurtosis ≥ 1 + skew². Excess kurtosis (0 for a normal) passed as raw fails this.
    require(g4 >= 1 + g3 ** 2 - 1e-12, "kurtosis",
            f"{g4:g} is below 1 + skew² = {1 + g3 ** 2:g}; raw kurtosis is expected (3 for a normal), "
            "not excess kurtosis", f"≥ {1 + g3 ** 2:g}")
    s, s0 = sr / math.sqrt(q), sr0 / math.sqrt(q)
    var = 1 - g3 * s + (g4 - 1) / 4 * s ** 2
    require(var > 0, "skew", "the PSR denominator is not positive for this Sharpe, skew and kurtosis")
    return _N.cdf((s - s0) * math.sqrt(n - 1) / math.sqrt(var))


def deflated_sharpe(sharpe_annual: float, trials_sharpe_var_annual: float, n_trials: int, n_obs: int,
                    periods_per_year: float = PERIODS_PER_YEAR, skew: float = 0.0, kurtosis: float = 3.0) -> float:
    """DSR = PSR(SR₀) with SR₀ = √V·E[max of N unit trials] (annual units in, converted per period):
    the probability that the best of ``n_trials`` has a true Sharpe above zero-skill selection."""
    v = require_number(trials_sharpe_var_annual, "trials_sharpe_var_annual", 0, 1e4, lo_open=True)
    sr0 = math.sqrt(v) * expected_max_sharpe(n_trials)
    return probabilistic_sharpe(sharpe_annual, sr0, n_obs, periods_per_year, skew, kurtosis)


def min_backtest_years(n_trials: int, target_sharpe_annual: float = 1.0) -> float:
    """Years of data below which the best of ``n_trials`` zero-skill configurations is expected to show
    an annual Sharpe of ``target_sharpe_annual`` (BBLZ 2014): (E[max_N]/target)²."""
    target = require_number(target_sharpe_annual, "target_sharpe_annual", 0, 100, lo_open=True)
    return (expected_max_sharpe(n_trials) / target) ** 2


def hit_rate(rho: float) -> float:
    """P(sign s = sign r) for bivariate normal s, r with correlation ρ: ½ + arcsin(ρ)/π."""
    rho = require_number(rho, "rho", -1, 1)
    return 0.5 + math.asin(rho) / math.pi


def sign_portfolio_sharpe(rho: float, n_stocks: int, periods_per_year: float = PERIODS_PER_YEAR) -> float:
    """Annual Sharpe of a daily equal-weight portfolio holding sign(score) in ``n_stocks`` independent
    stocks whose score correlates ρ with the return: √q·ρ√(2/π)/√((1 − 2ρ²/π)/N). Real stocks are
    correlated, so this is an upper bound (a teaching case)."""
    rho = require_number(rho, "rho", -1, 1)
    n = require_int(n_stocks, "n_stocks", 1)
    q = _q(periods_per_year)
    return math.sqrt(q) * rho * math.sqrt(2 / math.pi) / math.sqrt((1 - 2 * rho ** 2 / math.pi) / n)


def f1(tp: int, fp: int, fn: int) -> float:
    """F1 = 2PR/(P + R) = 2TP/(2TP + FP + FN); 0 when there is no true positive."""
    tp, fp, fn = require_int(tp, "tp", 0), require_int(fp, "fp", 0), require_int(fn, "fn", 0)
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def cohen_kappa(confusion) -> float:
    """Cohen's κ = (p_o − p_e)/(1 − p_e) from a square table of counts (rows: labeler A, columns: B)."""
    try:
        m = np.asarray(confusion, dtype=float)
    except (TypeError, ValueError):
        raise ValidationError("confusion", "expected a square table of counts", "k×k, k ≥ 2") from None
    require(m.ndim == 2 and m.shape[0] == m.shape[1] and m.shape[0] >= 2, "confusion",
            f"expected a square table, got shape {m.shape}", "k×k, k ≥ 2")
    require(bool(np.isfinite(m).all()) and bool((m >= 0).all()), "confusion", "counts must be finite and ≥ 0")
    n = m.sum()
    require(n > 0, "confusion", "the table is empty")
    po = np.trace(m) / n
    pe = float((m.sum(0) * m.sum(1)).sum()) / n ** 2
    require(pe < 1, "confusion", "both labelers used a single label: chance agreement is 1 and κ is undefined")
    return float((po - pe) / (1 - pe))


def psi(expected_shares, actual_shares) -> float:
    """Population stability index Σ(a − e)·ln(a/e) over bins (shares, each set summing to 1)."""
    e, a = (np.asarray(x, dtype=float) for x in (expected_shares, actual_shares))
    for name, x in (("expected_shares", e), ("actual_shares", a)):
        require(x.ndim == 1 and x.size >= 2, name, "expected one share per bin", "≥ 2 bins")
        require(bool(np.isfinite(x).all()) and bool((x > 0).all()), name,
                "every share must be > 0 (ln of a zero share is infinite: merge or smooth empty bins)", "> 0")
        require(abs(x.sum() - 1) < 1e-6, name, f"shares sum to {x.sum():g}", "sum 1")
    require(e.size == a.size, "actual_shares", f"{a.size} bins against {e.size} expected", f"{e.size} bins")
    return float(((a - e) * np.log(a / e)).sum())
