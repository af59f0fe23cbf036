"""engines.trading: hand-worked cases, the two classic pitfalls, validation, and the look-ahead Monte Carlo."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engines.core.errors import ValidationError
from engines.core.scenario import Scenario
from engines.trading import (MC_TOLERANCE_SE, bonferroni_threshold, break_even_cost, cohen_kappa, cumulative_return,
                             days_for_t, deflated_sharpe, effective_skill, expected_max_sharpe, f1, hit_rate,
                             min_backtest_years, moments, net_daily_return, price_stack, probabilistic_sharpe, psi,
                             sharpe_se, sign_portfolio_sharpe, simulate_lookahead, study, t_stat)


# --- hand-worked cases ------------------------------------------------------------------------

def test_t_stat_by_hand():
    # mean 0.1, sd 2, n 400: 0.1 / (2 / 20) = 1
    assert t_stat(0.1, 2.0, 400) == pytest.approx(1.0)
    assert t_stat(-0.3, 1.5, 100) == pytest.approx(-2.0)


def test_sharpe_se_lo_annualised_llt_drift():
    # SR_a 2.97 over 670 days: SR_d = 0.18709, √((1 + SR_d²/2)/670) = 0.038971, × √252 = 0.6186
    assert sharpe_se(2.97, 670) == pytest.approx(0.6186, abs=1e-4)
    assert 2.97 / sharpe_se(2.97, 670) == pytest.approx(4.80, abs=0.01)
    # a zero Sharpe: √q·√(1/T); over one year of days that is exactly 1
    assert sharpe_se(0.0, 252) == pytest.approx(1.0)


def test_pitfall_annual_sharpe_in_the_per_period_formula():
    """Plugging SR_a into √((1 + SR²/2)/T_years) is right only for annual observations: with daily
    data it more than doubles the error of 2.97 over 670 days (1.43 against 0.62)."""
    naive = math.sqrt((1 + 2.97 ** 2 / 2) / (670 / 252))
    assert naive == pytest.approx(1.426, abs=1e-3)
    assert sharpe_se(2.97, 670) < naive / 2
    assert study().pitfall_se == pytest.approx(naive)
    # the same arithmetic IS the right answer when the observations are years
    assert sharpe_se(2.97, 3, periods_per_year=1) == pytest.approx(math.sqrt((1 + 2.97 ** 2 / 2) / 3))


def test_bonferroni_thresholds():
    assert bonferroni_threshold(1) == pytest.approx(1.960, abs=1e-3)
    assert bonferroni_threshold(10) == pytest.approx(2.807, abs=1e-3)
    assert bonferroni_threshold(100) == pytest.approx(3.481, abs=1e-3)
    assert bonferroni_threshold(316) == pytest.approx(3.778, abs=1e-3)
    assert bonferroni_threshold(1, alpha=0.01) == pytest.approx(2.576, abs=1e-3)


def test_days_for_t():
    # (t/SR_d)²: Sharpe 1.22 needs 677 days for t = 2 and 1,524 for t = 3
    assert days_for_t(1.22, 2.0) == pytest.approx(677.2, abs=0.1)
    assert days_for_t(1.22, 3.0) == pytest.approx(1523.8, abs=0.1)
    assert days_for_t(1.0, 2.0, periods_per_year=12) == pytest.approx(48.0)


def test_costs_and_break_even_llt():
    assert net_daily_return(0.0034, 1.9, 0.0010) == pytest.approx(0.0015)
    assert net_daily_return(0.0034, 1.9, 0.0020) == pytest.approx(-0.0004)
    assert break_even_cost(0.0034, 1.9) * 1e4 == pytest.approx(17.89, abs=0.01)
    # compounded with the volatility drag: exp(T(μ − σ²/2)) − 1
    assert cumulative_return(0.001, 0.0, 100) == pytest.approx(math.e ** 0.1 - 1)


def test_study_reproduces_the_reported_cost_figures_roughly():
    """The inferred cost rule (net = gross − τ·c) against the study's reported figures [secondary]:
    ≈700 % at 0 bp, > 300 % at 5 bp, > 100 % and Sharpe 1.29 at 10 bp, a loss at 20 bp."""
    s0, s5, s10, s20 = (study(c) for c in (0, 5, 10, 20))
    assert s0.gross_cumulative == pytest.approx(7.74, abs=0.01)
    assert s5.net_cumulative > 3.0 and s10.net_cumulative > 1.0 and s20.net_cumulative < 0
    assert s10.net_sharpe == pytest.approx(1.29, abs=0.03)
    assert s0.break_even_bp == pytest.approx(17.9, abs=0.05)
    assert s0.sd_daily == pytest.approx(0.01817, abs=1e-5)
    t = {p.label: p.t for p in s0.periods}
    assert t["Jan–May 2024"] == pytest.approx(0.79, abs=0.01) and t["2021 Q4"] == pytest.approx(3.16, abs=0.01)
    assert sum(p.days for p in s0.periods) == 670
    # sliders move the curves: more turnover or cost, lower net Sharpe, same gross path
    a, b = study(5, turnover=1.0), study(5, turnover=3.0)
    assert b.net_sharpe < a.net_sharpe and np.array_equal(a.gross_path, b.gross_path)
    assert b.net_path[-1] < a.net_path[-1]


def test_expected_max_sharpe_unit_variance():
    assert expected_max_sharpe(10) == pytest.approx(1.575, abs=1e-3)
    assert expected_max_sharpe(100) == pytest.approx(2.531, abs=1e-3)
    assert expected_max_sharpe(1000) == pytest.approx(3.255, abs=1e-3)


def test_expected_max_sharpe_against_simulation():
    rng = np.random.default_rng(0)
    maxima = rng.standard_normal((20_000, 100)).max(axis=1)
    # the true mean is 2.508; the Gumbel-based approximation is about 1 % high at N = 100
    assert maxima.mean() == pytest.approx(expected_max_sharpe(100), rel=0.015)


def test_deflated_sharpe_worked_example():
    # SR_a 2.5, V_a 0.5, N 100, T 1250, q 250, skew −3, raw kurtosis 10: SR0_a = 1.789, DSR ≈ 0.900
    assert math.sqrt(0.5) * expected_max_sharpe(100) == pytest.approx(1.789, abs=1e-3)
    assert deflated_sharpe(2.5, 0.5, 100, 1250, 250, skew=-3.0, kurtosis=10.0) == pytest.approx(0.900, abs=1e-3)


def test_pitfall_excess_kurtosis_passed_as_raw():
    """Raw kurtosis of a normal is 3. Passing excess kurtosis (0) is refused: raw kurtosis is at least
    1 + skew² (Pearson), and the error says which one is wanted."""
    with pytest.raises(ValidationError) as e:
        deflated_sharpe(2.5, 0.5, 100, 1250, 250, skew=0.0, kurtosis=0.0)
    assert e.value.field == "kurtosis" and "raw" in str(e.value)
    with pytest.raises(ValidationError):   # excess 7 for skew −3 is below 1 + 9
        deflated_sharpe(2.5, 0.5, 100, 1250, 250, skew=-3.0, kurtosis=7.0)
    # under normality the kurtosis term is (3 − 1)/4 = ½, Lo's own 1 + SR²/2
    s = 2.0 / math.sqrt(252)
    z = (s - 0.0) * math.sqrt(503) / math.sqrt(1 + s * s / 2)
    from statistics import NormalDist
    assert probabilistic_sharpe(2.0, 0.0, 504) == pytest.approx(NormalDist().cdf(z))


def test_min_backtest_length_bblz():
    # 45 configurations and a target Sharpe of 1: about 5 years (BBLZ 2014)
    assert min_backtest_years(45) == pytest.approx(5.0, abs=0.01)


def test_hit_rate_and_sign_portfolio():
    assert hit_rate(0.0) == 0.5
    assert hit_rate(0.02) == pytest.approx(0.50637, abs=1e-5)
    assert hit_rate(0.08) == pytest.approx(0.52549, abs=1e-5)
    assert hit_rate(0.30) == pytest.approx(0.59699, abs=1e-5)
    assert hit_rate(1.0) == 1.0 and hit_rate(-1.0) == 0.0
    assert sign_portfolio_sharpe(0.08, 50) == pytest.approx(7.18, abs=0.01)
    assert sign_portfolio_sharpe(0.02, 50) == pytest.approx(1.79, abs=0.01)


def test_f1_kappa_psi_by_hand():
    assert f1(8, 2, 2) == pytest.approx(0.8)
    assert f1(0, 3, 4) == 0.0
    # p_o = 0.7, marginals (50, 50) both: p_e = 0.5, κ = 0.4
    assert cohen_kappa([[35, 15], [15, 35]]) == pytest.approx(0.4)
    # p_o = 0.8, marginals (50, 50) and (60, 40): p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.6
    assert cohen_kappa([[45, 5], [15, 35]]) == pytest.approx(0.6)
    assert cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4)
    # PSI: (0.4 − 0.5)ln(0.8) + (0.6 − 0.5)ln(1.2) = 0.04055
    assert psi([0.5, 0.5], [0.4, 0.6]) == pytest.approx(0.1 * math.log(1.2) - 0.1 * math.log(0.8))
    assert psi([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]) == 0.0


# --- validation names the field -----------------------------------------------------------------

@pytest.mark.parametrize("call, field", [
    (lambda: t_stat(0.1, 0.0, 10), "sd"),
    (lambda: t_stat(0.1, 1.0, 1), "n"),
    (lambda: sharpe_se(2.0, 0), "n_obs"),
    (lambda: sharpe_se(2.0, 100, periods_per_year=0), "periods_per_year"),
    (lambda: bonferroni_threshold(0), "m_tests"),
    (lambda: bonferroni_threshold(5, alpha=1.2), "alpha"),
    (lambda: days_for_t(0.0, 2.0), "sharpe_annual"),
    (lambda: net_daily_return(0.01, -1.0, 0.001), "turnover"),
    (lambda: break_even_cost(0.01, 0.0), "turnover"),
    (lambda: expected_max_sharpe(1), "n_trials"),
    (lambda: deflated_sharpe(1.0, 0.0, 10, 100), "trials_sharpe_var_annual"),
    (lambda: hit_rate(1.5), "rho"),
    (lambda: f1(-1, 0, 0), "tp"),
    (lambda: cohen_kappa([[1, 2, 3]]), "confusion"),
    (lambda: cohen_kappa([[5, 0], [0, 0]]), "confusion"),
    (lambda: psi([0.5, 0.5], [1.0, 0.0]), "actual_shares"),
    (lambda: psi([0.5, 0.6], [0.5, 0.5]), "expected_shares"),
    (lambda: simulate_lookahead(remedy="pray"), "remedy"),
    (lambda: simulate_lookahead(days_post=1), "days_post"),
    (lambda: study(cost_bp=-1), "cost_bp"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(ValidationError) as e:
        call()
    assert e.value.field == field


# --- the look-ahead simulation ------------------------------------------------------------------

def test_lookahead_closed_form_reference_case():
    pre, post = moments(0.08, 50, 0.01), moments(0.02, 50, 0.01)
    assert pre.sharpe == pytest.approx(7.18, abs=0.01) and post.sharpe == pytest.approx(1.79, abs=0.01)
    run = simulate_lookahead()
    assert run.closed_backtest_sharpe == pytest.approx(5.31, abs=0.01)
    assert run.closed_t_post == pytest.approx(1.78, abs=0.01)


def test_lookahead_is_seeded():
    a, b = simulate_lookahead(seed=7), simulate_lookahead(seed=7)
    assert np.array_equal(a.daily, b.daily)
    assert not np.array_equal(a.daily, simulate_lookahead(seed=8).daily)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lookahead_monte_carlo_matches_closed_form(seed):
    """20,000 days each side of the cutoff: every estimate within MC_TOLERANCE_SE (4) standard errors
    (Lo's SE for Sharpe ratios, the binomial SE for hit rates)."""
    days, n = 20_000, 50
    run = simulate_lookahead(days_pre=days, days_post=days, n_stocks=n, seed=seed)
    for measured, closed in ((run.sharpe_pre, run.closed_pre), (run.sharpe_post, run.closed_post)):
        assert abs(measured - closed.sharpe) < MC_TOLERANCE_SE * sharpe_se(closed.sharpe, days)
    for measured, closed in ((run.hit_pre, run.closed_pre), (run.hit_post, run.closed_post)):
        assert abs(measured - closed.hit) < MC_TOLERANCE_SE * math.sqrt(closed.hit * (1 - closed.hit) / (days * n))
    assert abs(run.sharpe_backtest - run.closed_backtest_sharpe) < MC_TOLERANCE_SE * sharpe_se(
        run.closed_backtest_sharpe, 2 * days)


def test_remedies():
    assert effective_skill(0.08, 0.02, "prompt") == 0.08          # an instruction changes nothing
    assert effective_skill(0.08, 0.02, "point_in_time") == 0.02
    assert effective_skill(0.08, 0.02, "masking", 0.9) == pytest.approx(0.026)
    none, prompt = simulate_lookahead(remedy="none"), simulate_lookahead(remedy="prompt")
    assert np.array_equal(none.daily, prompt.daily)
    after = simulate_lookahead(remedy="after_cutoff")
    assert after.evaluated_from == 500 and after.closed_backtest_sharpe == pytest.approx(1.79, abs=0.01)
    assert np.all(after.cumulative[:500] == 0)
    pit = simulate_lookahead(remedy="point_in_time")
    assert pit.closed_backtest_sharpe == pytest.approx(pit.closed_post.sharpe)


def test_trying_many_prompts_deflates_the_backtest():
    one, many = simulate_lookahead(remedy="after_cutoff", n_prompts=1), simulate_lookahead(remedy="after_cutoff",
                                                                                          n_prompts=1000)
    assert math.isnan(one.deflated) and many.deflated < 0.5
    assert many.min_backtest_years == pytest.approx(expected_max_sharpe(1000) ** 2)


# --- H1 pricing -----------------------------------------------------------------------------------

def test_stack_pricing_api_and_verdicts():
    r = price_stack(Scenario(), 117, 19, 2.0, 0.15, 0.60)
    assert r.api_usd_per_million == pytest.approx(28.95)      # 117 × 0.15 + 19 × 0.60 per 1M, × 10⁶ docs
    verdicts = {v.stage.key: v.verdict for v in r.verdicts}
    assert verdicts["execution"] == "too slow" and verdicts["ingestion"] == "too slow"
    assert verdicts["extraction"] == "fast enough"
    # cost follows the GPU price linearly and batching cuts GPU-seconds per document
    r4 = price_stack(Scenario(), 117, 19, 4.0)
    assert r4.self_hosted_usd_per_million == pytest.approx(2 * r.self_hosted_usd_per_million)
    big = price_stack(Scenario().with_changes(serve_batch=64), 117, 19, 2.0)
    assert big.gpu_seconds_per_doc < r.gpu_seconds_per_doc
    assert r.latency_s > 0.0081 and r.ratio_to_microwave == pytest.approx(r.latency_s / 0.0081)


def test_fast_enough_is_not_suitable():
    """H1's claim: the timing verdict and the stage's fit are separate facts. Portfolio construction's
    clocks pass any sub-day model call, yet the stack rules the model out there; extraction passes both."""
    from engines.trading import STAGES

    r = price_stack(Scenario(), 117, 19, 2.0)
    by_key = {v.stage.key: v for v in r.verdicts}
    assert by_key["portfolio"].verdict == "fast enough" and not by_key["portfolio"].stage.model_fits
    assert by_key["extraction"].verdict == "fast enough" and by_key["extraction"].stage.model_fits
    unsuited = {s.key for s in STAGES if not s.model_fits}
    assert unsuited == {"ingestion", "portfolio", "execution"}
    assert all(s.fit.startswith(("Plumbing", "No", "Ruled out")) for s in STAGES if s.key in unsuited)
