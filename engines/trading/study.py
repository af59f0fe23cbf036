"""Lopez-Lira & Tang's headline study, its figures by version, and the statistics that read it (lesson H2).

Source: Lopez-Lira, A. & Tang, Y., "Can ChatGPT Forecast Stock Price Movements? Return Predictability
and Large Language Models", arXiv 2304.07619 (v1 15 Apr 2023 … v6), SSRN 4412788. The abstracts of
the versions were read; the table figures below were NOT read in the paper's PDF here: they come from
third-party transcriptions (a student replication that retypes Table 1 of the final version, GitHub
``thomashillenbrand/p05_lopez-lira_tang_2023``, and independent research notes quoting arXiv v6), and
every figure carries that status on screen. The cost model net = gross − turnover × round-trip cost is
our inference (it reproduces the reported cost figures within a few percent), not the paper's text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engines.core.errors import require_int, require_number
from engines.trading.stats import (HLZ_HURDLE_T, PERIODS_PER_YEAR, bonferroni_threshold, break_even_cost,
                                   cumulative_return, days_for_t, net_daily_return, sharpe_se, sharpe_t)

SECONDARY = "secondary"
"""Taken from a third-party transcription of the paper; not checked against the PDF here."""
CHECKED = "checked (abstract)"
SOURCE_T1 = "LLT v6 Table 1, overnight news, equal-weighted, before costs"


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: str
    where: str          # version and table/section
    status: str
    qualifier: str = ""  # the authors' own limit on this number, in our words


FIGURES: tuple[Figure, ...] = (
    Figure("initial", "Initial reaction: hit rate / mean", "93.28 % / 3.06 % a day", SOURCE_T1,
           SECONDARY + "; ≈90 % in the v6 abstract",
           "The move before anyone could trade on the headline: the authors call it non-tradable."),
    Figure("drift", "Next-day drift: hit rate / mean / Sharpe", "58.06 % / 0.34 % a day / 2.97", SOURCE_T1, SECONDARY,
           "The tradable part; before costs and equal-weighted."),
    Figure("legs", "Drift Sharpe, long only / short only", "0.78 / 2.01", SOURCE_T1, SECONDARY,
           "The short leg (bad news) carries the drift; the v6 abstract says the drift is strongest for "
           "small stocks and negative news."),
    Figure("costs", "Cumulative return at 0 / 5 / 10 / 20 bp", "≈700 % / >300 % / >100 % / loss",
           "LLT v6, transaction-cost section", SECONDARY + " (×4)",
           "Only traders with very low costs, such as market makers, could exploit it (the authors' conclusion)."),
    Figure("turnover", "Daily turnover / Sharpe at 10 bp", "≈190 % / 1.29", "LLT v6, transaction-cost section",
           SECONDARY + " (×4)"),
    Figure("decay", "Sharpe by period", "6.54 (2021 Q4), 3.68 (2022), 2.33 (2023), 1.22 (Jan–May 2024)",
           "LLT v6, time-variation section", SECONDARY + " (×4)",
           "The v5 abstract predicts that wide use of language models makes markets more efficient."),
    Figure("limits", "Where the predictability comes from", "limits to arbitrage, not a free inefficiency",
           "LLT May 2023 abstract (v2)", CHECKED),
    Figure("sample", "Sample (v6)", "Oct 2021 – May 2024, after the GPT models' Sept 2021 training cutoff",
           "LLT v6, data section", SECONDARY + "; post-cutoff headlines per the v6 abstract",
           "Chosen to start after the models' cutoff: the test is only valid out of the model's memory."),
    Figure("sample_v1", "Sample (2023 versions)", "Oct 2021 – Dec 2022", "LLT v1–v4 (2023)", SECONDARY,
           "The press's \"500 %\" comes from this shorter, zero-cost run."),
    Figure("days", "Trading days / firm-days", "670 / 105,742", SOURCE_T1, SECONDARY),
)

# Overnight long-short drift, v6 Table 1 as transcribed [secondary]
LLT_MEAN_DAILY = 0.0034
LLT_SHARPE = 2.97
LLT_DAYS = 670
LLT_TURNOVER = 1.9
LLT_REPORTED_COSTS = ((0.0, "≈700 %"), (5.0, "> 300 %"), (10.0, "> 100 %, Sharpe 1.29"), (20.0, "loses money"))
LLT_REPORTED_NET_SHARPE = ((0.0, 2.97), (10.0, 1.29))   # (round-trip bp, Sharpe) at ≈190 %/day [secondary ×4]
# Sharpe by period and its trading days (NYSE calendar: 64 + 251 + 250 + 105 = 670) [secondary ×4]
LLT_PERIODS = (("2021 Q4", 6.54, 64), ("2022", 3.68, 251), ("2023", 2.33, 250), ("Jan–May 2024", 1.22, 105))

# McLean & Pontiff, J. Finance 71(1):5–32, 2016, abstract: 97 predictors earn 26 % less out of sample
# and 58 % less after publication.
MP_OUT_OF_SAMPLE = 0.26
MP_POST_PUBLICATION = 0.58


@dataclass(frozen=True)
class PeriodStat:
    label: str
    sharpe: float
    days: int
    se: float
    t: float


@dataclass(frozen=True)
class Study:
    mean_daily: float
    sd_daily: float
    sharpe: float
    days: int
    turnover: float
    cost_bp: float
    net_mean_daily: float
    net_sharpe: float
    break_even_bp: float
    gross_cumulative: float
    net_cumulative: float
    sharpe_se: float
    pitfall_se: float                # the annual Sharpe in the per-period formula with T in years (wrong for daily data)
    sharpe_t: float
    t_iid: float
    days_for_t2: float
    days_for_t3: float
    m_tests: int
    bonferroni_t: float
    hlz_t: float
    periods: tuple[PeriodStat, ...]
    clears_bonferroni: bool
    clears_hlz: bool
    post_publication_mean: float     # gross mean × (1 − 58 %)
    post_publication_net_sharpe: float
    day_axis: np.ndarray             # 0 … days
    gross_path: np.ndarray           # cumulative return with volatility drag, per day
    net_path: np.ndarray
    cost_axis_bp: np.ndarray         # 0 … 30 bp
    net_sharpe_by_cost: np.ndarray
    cumulative_by_cost: np.ndarray

    def rows(self) -> list[dict]:
        keep = ("mean_daily", "sd_daily", "sharpe", "days", "turnover", "cost_bp", "net_mean_daily", "net_sharpe",
                "break_even_bp", "gross_cumulative", "net_cumulative", "sharpe_se", "pitfall_se", "sharpe_t", "t_iid",
                "days_for_t2", "days_for_t3", "m_tests", "bonferroni_t", "hlz_t", "post_publication_mean",
                "post_publication_net_sharpe")
        return [{"quantity": k, "value": getattr(self, k)} for k in keep]


def study(cost_bp: float = 10.0, turnover: float = LLT_TURNOVER, m_tests: int = 1, mean_daily: float = LLT_MEAN_DAILY,
          sharpe: float = LLT_SHARPE, days: int = LLT_DAYS, periods_per_year: float = PERIODS_PER_YEAR) -> Study:
    """Everything the H2 view draws for a daily strategy of gross mean ``mean_daily`` and annual Sharpe
    ``sharpe`` over ``days`` days, traded at ``turnover`` × book per day and ``cost_bp`` round trip."""
    cost_bp = require_number(cost_bp, "cost_bp", 0, 100)
    turnover = require_number(turnover, "turnover", 0, 10)
    mean = require_number(mean_daily, "mean_daily", 0, 0.1, lo_open=True)
    sr = require_number(sharpe, "sharpe", 0, 50, lo_open=True)
    days = require_int(days, "days", 2, 100_000)
    q = periods_per_year
    sd = mean / (sr / math.sqrt(q))
    net = net_daily_return(mean, turnover, cost_bp / 1e4)
    net_sr = net / sd * math.sqrt(q)
    day_axis = np.arange(days + 1)
    costs = np.linspace(0.0, 30.0, 61)
    net_by_cost = mean - turnover * costs / 1e4
    periods = tuple(PeriodStat(lbl, s, n, sharpe_se(s, n, q), sharpe_t(s, n, q)) for lbl, s, n in LLT_PERIODS)
    post = mean * (1 - MP_POST_PUBLICATION)
    return Study(
        mean_daily=mean, sd_daily=sd, sharpe=sr, days=days, turnover=turnover, cost_bp=cost_bp,
        net_mean_daily=net, net_sharpe=net_sr,
        break_even_bp=break_even_cost(mean, turnover) * 1e4 if turnover > 0 else math.inf,
        gross_cumulative=cumulative_return(mean, sd, days), net_cumulative=cumulative_return(net, sd, days),
        sharpe_se=sharpe_se(sr, days, q), pitfall_se=math.sqrt((1 + sr ** 2 / 2) / (days / q)), sharpe_t=sharpe_t(sr, days, q), t_iid=sr * math.sqrt(days / q),
        days_for_t2=days_for_t(sr, 2.0, q), days_for_t3=days_for_t(sr, 3.0, q),
        m_tests=require_int(m_tests, "m_tests", 1, 10**6), bonferroni_t=bonferroni_threshold(m_tests),
        hlz_t=HLZ_HURDLE_T, periods=periods, clears_bonferroni=sharpe_t(sr, days, q) > bonferroni_threshold(m_tests),
        clears_hlz=sharpe_t(sr, days, q) > HLZ_HURDLE_T, post_publication_mean=post,
        post_publication_net_sharpe=(post - turnover * cost_bp / 1e4) / sd * math.sqrt(q),
        day_axis=day_axis, gross_path=np.expm1(day_axis * (mean - sd ** 2 / 2)),
        net_path=np.expm1(day_axis * (net - sd ** 2 / 2)), cost_axis_bp=costs,
        net_sharpe_by_cost=net_by_cost / sd * math.sqrt(q),
        cumulative_by_cost=np.expm1(days * (net_by_cost - sd ** 2 / 2)))
