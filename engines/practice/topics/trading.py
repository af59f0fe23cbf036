"""Computations for course H (language models in trading): engines.trading.stats."""
from __future__ import annotations

import math
from typing import Any, Mapping

from engines.practice.model import Mistake, Outcome, Step
from engines.practice.registry import computation
from engines.practice.topics.training import _show
from engines.trading import stats

LO = "Lo 2002 (Financial Analysts Journal 58(4)): the standard error of a Sharpe ratio"
BLP = "Bailey & López de Prado 2014 (J. Portfolio Management), the deflated Sharpe ratio"
Q = stats.PERIODS_PER_YEAR


@computation("trading.sharpe_t")
def sharpe_t(p: Mapping[str, Any]) -> Outcome:
    sr, years = p["sharpe"], p["years"]
    n = int(years * Q)
    t = stats.sharpe_t(sr, n)
    return Outcome(
        answer=t, hand=sr / math.sqrt(Q) * math.sqrt(n) / math.sqrt(1 + (sr / math.sqrt(Q)) ** 2 / 2),
        steps=(Step("daily Sharpe SR/√252", sr / math.sqrt(Q), "", LO), Step("observations", float(n), "days", "the question"),
               Step("t = SR / SE", t, "", LO)),
        mistakes=(Mistake("annual_as_daily", sr * math.sqrt(n)), Mistake("no_root", sr / math.sqrt(Q) * n)),
        show_me=_show("trading"),
    )


@computation("trading.days_for_t")
def days_for_t(p: Mapping[str, Any]) -> Outcome:
    sr, t = p["sharpe"], p["t_target"]
    d = stats.days_for_t(sr, t)
    return Outcome(
        answer=d / Q, hand=(t / sr) ** 2,
        steps=(Step("T* = (t* / SR_daily)²", d, "days", LO), Step("in years (252 trading days)", d / Q, "years", LO)),
        mistakes=(Mistake("no_square", t / sr), Mistake("calendar", d / 365)),
        show_me=_show("trading"),
    )


@computation("trading.bonferroni")
def bonferroni(p: Mapping[str, Any]) -> Outcome:
    m = p["tests"]
    t = stats.bonferroni_threshold(m)
    return Outcome(
        answer=t,
        steps=(Step("family-wise α split over the tests, two-sided", 0.05 / (2 * m), "", "Bonferroni; Harvey, Liu & Zhu 2016"),
               Step("critical t = Φ⁻¹(1 − α/(2M))", t, "", "Harvey, Liu & Zhu 2016 (RFS)")),
        mistakes=(Mistake("single_test", 1.96), Mistake("one_sided", stats.bonferroni_threshold(m, 0.1))),
        show_me=_show("trading"),
    )


@computation("trading.expected_max")
def expected_max(p: Mapping[str, Any]) -> Outcome:
    n, v = p["trials"], p["var"]
    e = math.sqrt(v) * stats.expected_max_sharpe(n)
    return Outcome(
        answer=e,
        steps=(Step("E[max of N unit normals]", stats.expected_max_sharpe(n), "", BLP), Step("× √V", e, "", BLP)),
        mistakes=(Mistake("zero", 0.0), Mistake("no_sqrt", v * stats.expected_max_sharpe(n))),
        show_me=_show("trading"),
    )


@computation("trading.net_return")
def net_return(p: Mapping[str, Any]) -> Outcome:
    g, tau, c = p["gross_bp"] / 1e4, p["turnover_pct"] / 100, p["cost_bp"] / 1e4
    r = stats.net_daily_return(g, tau, c)
    return Outcome(
        answer=r * 1e4, hand=(g - tau * c) * 1e4,
        steps=(Step("cost per day = turnover × round-trip cost", tau * c * 1e4, "bp", "Frazzini, Israel & Moskowitz 2018"),
               Step("net = gross − cost", r * 1e4, "bp", "Frazzini, Israel & Moskowitz 2018")),
        mistakes=(Mistake("no_turnover", (g - c) * 1e4), Mistake("gross", g * 1e4)),
        show_me=_show("trading"),
    )


@computation("trading.f1")
def f1(p: Mapping[str, Any]) -> Outcome:
    tp, fp, fn = p["tp"], p["fp"], p["fn"]
    v = stats.f1(tp, fp, fn)
    prec, rec = tp / (tp + fp), tp / (tp + fn)
    return Outcome(
        answer=v, hand=2 * prec * rec / (prec + rec),
        steps=(Step("precision TP/(TP+FP)", prec, "", "van Rijsbergen 1979"), Step("recall TP/(TP+FN)", rec, "", "van Rijsbergen 1979"),
               Step("F1 = 2PR/(P+R)", v, "", "van Rijsbergen 1979")),
        mistakes=(Mistake("mean", (prec + rec) / 2), Mistake("accuracy_like", tp / (tp + fp + fn))),
        show_me=_show("trading"),
    )


@computation("trading.kappa")
def kappa(p: Mapping[str, Any]) -> Outcome:
    a, b, c, d = p["a"], p["b"], p["c"], p["d"]
    k = stats.cohen_kappa([[a, b], [c, d]])
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / n ** 2
    return Outcome(
        answer=k, hand=(po - pe) / (1 - pe),
        steps=(Step("observed agreement p_o", po, "", "Cohen 1960"), Step("chance agreement p_e", pe, "", "Cohen 1960"),
               Step("κ = (p_o − p_e)/(1 − p_e)", k, "", "Cohen 1960")),
        mistakes=(Mistake("raw_agreement", po), Mistake("no_denominator", po - pe)),
        show_me=_show("trading"),
    )


@computation("trading.hit_rate")
def hit_rate(p: Mapping[str, Any]) -> Outcome:
    rho = p["rho"]
    h = stats.hit_rate(rho)
    return Outcome(
        answer=100 * h, hand=100 * (0.5 + math.asin(rho) / math.pi),
        steps=(Step("P(same sign) = ½ + arcsin(ρ)/π", 100 * h, "%", "Sheppard 1899; bivariate normal orthant probability"),),
        mistakes=(Mistake("half_plus_rho", 100 * (0.5 + rho / 2)), Mistake("rho", 100 * rho)),
        show_me=_show("trading"),
    )


# ---------------------------------------------------------------- H1: where a model fits
from engines.trading import stack  # noqa: E402  (kept beside the computations that use it)


@computation("trading.api_per_million_docs")
def api_per_million_docs(p: Mapping[str, Any]) -> Outcome:
    from engines.core.scenario import Scenario

    prompt, out, pin, pout = p["prompt"], p["output"], p["price_in"], p["price_out"]
    priced = stack.price_stack(Scenario(), prompt, out, 2.0, pin, pout)
    return Outcome(
        answer=priced.api_usd_per_million, hand=prompt * pin + out * pout,
        steps=(Step("per document: (prompt × P_in + output × P_out) / 10⁶", priced.api_usd_per_doc, "$", "engines.trading.stack"),
               Step("per million documents", priced.api_usd_per_million, "$", "engines.trading.stack")),
        mistakes=(Mistake("output_only", out * pout), Mistake("per_doc", priced.api_usd_per_doc)),
        show_me=_show("trading"),
    )


@computation("trading.microwave_ratio")
def microwave_ratio(p: Mapping[str, Any]) -> Outcome:
    latency = p["latency_ms"] / 1000
    v = stack.verdict(latency, stack.STAGES[0])
    ratio = latency / stack.BCS_MICROWAVE_RTT_S
    return Outcome(
        answer=ratio, hand=p["latency_ms"] / 8.1,
        steps=(Step("Chicago–New York microwave round trip", stack.BCS_MICROWAVE_RTT_S * 1000, "ms", stack.STAGES[0].source),
               Step("one model call ÷ that round trip", ratio, "×", "engines.trading.stack"),
               Step("verdict for data ingestion", v.verdict, "", stack.STAGES[0].source)),
        mistakes=(Mistake("microseconds", v.ratio_to_fastest), Mistake("seconds", p["latency_ms"] / 8.1 / 1000)),
        show_me=_show("trading"),
    )


@computation("trading.stage_verdict")
def stage_verdict(p: Mapping[str, Any]) -> Outcome:
    from engines.practice.model import Option

    stage = next(s for s in stack.STAGES if s.key == p["stage"])
    v = stack.verdict(p["latency_s"], stage)
    words = ("too slow", "slow end only", "fast enough")
    rule = {"too slow": "the call outlasts the stage's slowest clock", "slow end only": "it outlasts the fastest clock only",
            "fast enough": "it fits within the fastest clock"}
    near = {"too slow": "slow end only", "slow end only": "fast enough", "fast enough": "slow end only"}[v.verdict]
    return Outcome(
        answer=frozenset([v.verdict]), options=tuple(Option(w, w, rule[w]) for w in words),
        steps=(Step("stage's fastest clock", stage.fastest_s, "s", stage.source), Step("stage's slowest clock", stage.slowest_s, "s", stage.source),
               Step("verdict", v.verdict, "", "engines.trading.stack")),
        mistakes=(Mistake("near", frozenset([near])),),
        facts={"stage_label": stage.label, "fastest": f"{stage.fastest_s:g}", "slowest": f"{stage.slowest_s:g}"},
        show_me=_show("trading"),
    )


@computation("trading.breakeven_cost")
def breakeven_cost(p: Mapping[str, Any]) -> Outcome:
    """The round-trip cost at which the net return reaches zero: net falls by τ for each unit of cost."""
    g, tau = p["gross_bp"] / 1e4, p["turnover_pct"] / 100
    r0 = stats.net_daily_return(g, tau, 0.0)
    per_bp = r0 - stats.net_daily_return(g, tau, 1e-4)          # what each bp of cost takes a day
    c = r0 / per_bp
    return Outcome(
        answer=c, hand=g / tau * 1e4,
        steps=(Step("each bp of round-trip cost takes turnover × 1 bp a day", per_bp * 1e4, "bp", "Frazzini, Israel & Moskowitz 2018"),
               Step("break-even cost = gross ÷ turnover", c, "bp", "Frazzini, Israel & Moskowitz 2018")),
        mistakes=(Mistake("no_turnover", g * 1e4), Mistake("times_turnover", g * tau * 1e4)),
        show_me=_show("trading", params={"cost_bp": float(min(30, round(c)))}),   # the panel stops at 30 bp
    )
