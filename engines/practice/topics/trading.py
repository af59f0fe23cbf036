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
FIM = "Frazzini, Israel & Moskowitz 2018"
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
@computation("trading.breakeven_cost")
def cost_line(p: Mapping[str, Any]) -> Outcome:
    """The net daily return along the cost line net = gross − turnover × cost: at the question's round-trip
    cost when it gives one (``cost_bp``), else the cost at which the line reaches zero (break-even)."""
    g, tau = p["gross_bp"] / 1e4, p["turnover_pct"] / 100
    if "cost_bp" in p:
        c = p["cost_bp"] / 1e4
        r = stats.net_daily_return(g, tau, c)
        return Outcome(
            answer=r * 1e4, hand=(g - tau * c) * 1e4,
            steps=(Step("cost per day = turnover × round-trip cost", tau * c * 1e4, "bp", FIM),
                   Step("net = gross − cost", r * 1e4, "bp", FIM)),
            mistakes=(Mistake("no_turnover", (g - c) * 1e4), Mistake("gross", g * 1e4)),
            show_me=_show("trading"),
        )
    r0 = stats.net_daily_return(g, tau, 0.0)
    per_bp = r0 - stats.net_daily_return(g, tau, 1e-4)          # what each bp of cost takes a day
    c = r0 / per_bp
    return Outcome(
        answer=c, hand=g / tau * 1e4,
        steps=(Step("each bp of round-trip cost takes turnover × 1 bp a day", per_bp * 1e4, "bp", FIM),
               Step("break-even cost = gross ÷ turnover", c, "bp", FIM)),
        mistakes=(Mistake("no_turnover", g * 1e4), Mistake("times_turnover", g * tau * 1e4)),
        show_me=_show("trading", params={"cost_bp": float(min(30, round(c)))}),   # the panel stops at 30 bp
    )


net_return = breakeven_cost = cost_line     # the names the two computations had before they were one


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




# ---------------------------------------------------------------- H1 H2 H3 H4: uncovered tour claims
import random  # noqa: E402
from functools import lru_cache  # noqa: E402

import numpy as np  # noqa: E402

from engines.practice.model import Option, Redraw  # noqa: E402
from engines.trading import evaluation as ev, governance, lookahead  # noqa: E402
from engines.trading.study import LLT_MEAN_DAILY, MP_OUT_OF_SAMPLE, MP_POST_PUBLICATION, study  # noqa: E402

_LLT = "Lopez-Lira & Tang, arXiv 2304.07619 v6 (figures transcribed by third parties)"
_SIGMA = 0.01            # the daily stock volatility simulate_lookahead assumes by default


def _other_direction(direction: str) -> tuple[Mistake, ...]:
    """The wrong-direction answer a learner with the claim's misconception gives."""
    wrong = "grows" if direction != "grows" else "shrinks"
    return (Mistake(f"dir_{wrong}", wrong),)


def _direction(before: float, after: float) -> str:
    return "unchanged" if abs(after - before) <= 1e-9 * max(1.0, abs(before)) else ("grows" if after > before else "shrinks")


@computation("trading.bigger_model_latency")
def bigger_model_latency(p: Mapping[str, Any]) -> Outcome:
    """One call's latency over the microwave round trip, for a model and a bigger one (serving roofline)."""
    from engines.core.models import PRESETS
    from engines.core.scenario import Scenario

    small, big = p["pair"].split(">")
    a = stack.price_stack(Scenario().with_changes(model=small))
    b = stack.price_stack(Scenario().with_changes(model=big))
    by_params = a.ratio_to_microwave * PRESETS[big].param_count() / PRESETS[small].param_count()
    return Outcome(
        answer=b.ratio_to_microwave, direction=_direction(a.ratio_to_microwave, b.ratio_to_microwave),
        steps=(Step(f"{a.model_label}: one headline on {a.n_gpus} GPU(s)", a.latency_s * 1000, "ms", "engines.trading.stack"),
               Step(f"{b.model_label}: one headline on {b.n_gpus} GPU(s)", b.latency_s * 1000, "ms", "engines.trading.stack"),
               Step("÷ the 8.1 ms Chicago–New York microwave round trip", b.ratio_to_microwave, "×", stack.STAGES[0].source)),
        mistakes=(Mistake("by_params", by_params), *_other_direction(_direction(a.ratio_to_microwave, b.ratio_to_microwave))),
        facts={"small": a.model_label, "big": b.model_label, "ratio_small": f"{a.ratio_to_microwave:.1f}"},
        show_me=_show("trading", {"model": big}),
    )


@computation("trading.sign_trade_sharpe")
def sign_trade_sharpe(p: Mapping[str, Any]) -> Outcome:
    """Trading the model's good/bad answer: long the good, short the bad, equal weight, one day."""
    rho, n = p["rho"], p["n_stocks"]
    s = stats.sign_portfolio_sharpe(rho, n)
    m = lookahead.moments(rho, n, _SIGMA)
    return Outcome(
        answer=s, hand=math.sqrt(Q) * rho * math.sqrt(2 / math.pi) / math.sqrt((1 - 2 * rho ** 2 / math.pi) / n),
        steps=(Step("hit rate of the answer's sign: ½ + arcsin(ρ)/π", 100 * stats.hit_rate(rho), "%", "Sheppard 1899"),
               Step("daily mean of one sign bet ÷ σ: ρ√(2/π)", m.mean / _SIGMA, "", "bivariate normal"),
               Step(f"annual Sharpe of the {n}-stock long-short book", s, "", "engines.trading.stats.sign_portfolio_sharpe")),
        mistakes=(Mistake("one_stock", stats.sign_portfolio_sharpe(rho, 1)), Mistake("daily", s / math.sqrt(Q))),
        show_me=_show("trading", params={"n_stocks": n, "a_pre": rho, "a_post": rho}),
    )


def _rho_for_hit(h: float) -> float:
    """The correlation whose sign hit rate is ``h`` (bisection on stats.hit_rate, which rises with ρ)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if stats.hit_rate(mid) < h else (lo, mid)
    return (lo + hi) / 2


@computation("trading.initial_vs_drift")
def initial_vs_drift(p: Mapping[str, Any]) -> Outcome:
    """What the headline hit rate is worth when only the next-day drift can be traded."""
    n = p["n_stocks"]
    r0, r1 = _rho_for_hit(p["hit_initial"] / 100), _rho_for_hit(p["hit_drift"] / 100)
    s0, s1 = stats.sign_portfolio_sharpe(r0, n), stats.sign_portfolio_sharpe(r1, n)
    return Outcome(
        answer=s1, direction=_direction(s0, s1),
        steps=(Step(f"correlation behind a {p['hit_initial']} % hit rate", r0, "", "Sheppard 1899, inverted"),
               Step("Sharpe if that reaction could be traded", s0, "", "engines.trading.stats"),
               Step(f"correlation behind the tradable {p['hit_drift']} %", r1, "", "Sheppard 1899, inverted"),
               Step(f"Sharpe of the {n}-stock next-day book", s1, "", "engines.trading.stats")),
        mistakes=(Mistake("initial", s0), *_other_direction(_direction(s0, s1))),
        show_me=_show("trading"),
    )


@computation("trading.drift_cumulative")
def drift_cumulative(p: Mapping[str, Any]) -> Outcome:
    """Compounded return of a daily drift with its volatility drag, before costs (the H2 study view)."""
    m, sr, days = p["mean_bp"] / 1e4, p["sharpe"], p["days"]
    s = study(cost_bp=0.0, mean_daily=m, sharpe=sr, days=days)
    sd = s.sd_daily
    return Outcome(
        answer=100 * s.gross_cumulative, hand=100 * math.expm1(days * (m - sd ** 2 / 2)),
        steps=(Step("daily volatility σ = mean ÷ (Sharpe/√252)", 100 * sd, "%", _LLT),
               Step("drag σ²/2 a day", 1e4 * sd ** 2 / 2, "bp", "geometric vs arithmetic mean"),
               Step("exp(T(μ − σ²/2)) − 1", 100 * s.gross_cumulative, "%", "engines.trading.study")),
        mistakes=(Mistake("simple_sum", 100 * m * days), Mistake("no_drag", 100 * math.expm1(days * m))),
        show_me=_show("trading", params={"cost_bp": 0.0}),
    )


@computation("trading.period_t")
def period_t(p: Mapping[str, Any]) -> Outcome:
    """The evidence (t) of a later period of the study against an earlier one: t follows the Sharpe and the days."""
    periods = study().periods
    a, b = (periods[int(i)] for i in p["pair"].split(">"))
    direction = _direction(a.t, b.t)
    return Outcome(
        answer=b.t, direction=direction,
        steps=(Step(f"{a.label}: Sharpe {a.sharpe} over {a.days} days, t", a.t, "", LO),
               Step(f"{b.label}: Sharpe {b.sharpe} over {b.days} days, t", b.t, "", LO)),
        mistakes=(Mistake("annual_as_daily", b.sharpe * math.sqrt(b.days)), *_other_direction(direction)),
        facts={"a": a.label, "b": b.label, "sa": f"{a.sharpe}", "sb": f"{b.sharpe}", "da": str(a.days), "db": str(b.days),
               "ta": f"{a.t:.2f}"},
        show_me=_show("trading"),
    )


@computation("trading.post_publication")
def post_publication(p: Mapping[str, Any]) -> Outcome:
    """Net Sharpe once the drift loses McLean & Pontiff's post-publication share."""
    c, tau = p["cost_bp"], p["turnover_pct"] / 100
    s = study(cost_bp=c, turnover=tau)
    oos = study(cost_bp=c, turnover=tau, mean_daily=LLT_MEAN_DAILY * (1 - MP_OUT_OF_SAMPLE))
    q = math.sqrt(Q)
    return Outcome(
        answer=s.post_publication_net_sharpe,
        hand=(LLT_MEAN_DAILY * (1 - MP_POST_PUBLICATION) - tau * c / 1e4) / s.sd_daily * q,
        steps=(Step("gross drift after publication: mean × (1 − 58 %)", 100 * s.post_publication_mean, "% a day", "McLean & Pontiff 2016"),
               Step("cost a day: turnover × round trip", tau * c / 100, "% a day", FIM),
               Step("net Sharpe after publication", s.post_publication_net_sharpe, "", "engines.trading.study")),
        mistakes=(Mistake("out_of_sample", oos.net_sharpe), Mistake("no_costs", s.post_publication_mean / s.sd_daily * q)),
        show_me=_show("trading", params={"cost_bp": float(c), "turnover_pct": float(p["turnover_pct"])}),
    )


@computation("trading.memory_sharpe")
def memory_sharpe(p: Mapping[str, Any]) -> Outcome:
    """The pre-cutoff Sharpe a memorising model shows, against its real skill (closed form)."""
    n = p["n_stocks"]
    pre, post = lookahead.moments(p["a_pre"], n, _SIGMA), lookahead.moments(p["a_post"], n, _SIGMA)
    return Outcome(
        answer=pre.sharpe, hand=stats.sign_portfolio_sharpe(p["a_pre"], n),
        steps=(Step("correlation before the cutoff (what it read, remembered)", p["a_pre"], "", "the question"),
               Step("sign-portfolio Sharpe before the cutoff", pre.sharpe, "", "engines.trading.lookahead"),
               Step("its real skill: Sharpe after the cutoff", post.sharpe, "", "engines.trading.lookahead")),
        mistakes=(Mistake("skill_only", post.sharpe), Mistake("one_stock", lookahead.moments(p["a_pre"], 1, _SIGMA).sharpe)),
        show_me=_show("trading", params={"a_pre": p["a_pre"], "a_post": p["a_post"], "n_stocks": n}),
    )


def _backtest(a_pre: float, a_post: float, days_pre: int, days_post: int, n: int) -> tuple[float, float, float]:
    """Closed-form (pre, post, whole-backtest) Sharpe of the sign portfolio across a training cutoff."""
    pre, post = lookahead.moments(a_pre, n, _SIGMA), lookahead.moments(a_post, n, _SIGMA)
    return pre.sharpe, post.sharpe, lookahead.mixture_sharpe(pre, post, days_pre, days_post)


@computation("trading.mixed_backtest")
def mixed_backtest(p: Mapping[str, Any]) -> Outcome:
    """The Sharpe a backtest reports when it straddles the cutoff: neither the memory nor the skill."""
    dp, dq, n = p["days_pre"], p["days_post"], p["n_stocks"]
    s_pre, s_post, whole = _backtest(p["a_pre"], p["a_post"], dp, dq, n)
    return Outcome(
        answer=whole,
        steps=(Step(f"Sharpe over the {dp} days before the cutoff", s_pre, "", "engines.trading.lookahead"),
               Step(f"Sharpe over the {dq} days after it", s_post, "", "engines.trading.lookahead"),
               Step("Sharpe of the whole backtest (two-regime mixture of daily returns)", whole, "", "engines.trading.lookahead")),
        mistakes=(Mistake("pre_only", s_pre), Mistake("post_only", s_post)),
        show_me=_show("trading", params={"a_pre": p["a_pre"], "a_post": p["a_post"], "days_pre": dp, "days_post": dq, "n_stocks": n}),
    )


@computation("trading.remedy_backtest")
def remedy_backtest(p: Mapping[str, Any]) -> Outcome:
    """What a look-ahead remedy does to a backtest across the cutoff (lookahead.effective_skill)."""
    remedy, share = p["remedy"], p.get("mask_share", 0.9)
    dp, dq, n, a_pre, a_post = p["days_pre"], p["days_post"], p["n_stocks"], p["a_pre"], p["a_post"]
    eff = lookahead.effective_skill(a_pre, a_post, remedy, share)
    _, _, before = _backtest(a_pre, a_post, dp, dq, n)
    _, _, after = _backtest(eff, a_post, dp, dq, n)
    _, _, clean = _backtest(a_post, a_post, dp, dq, n)
    direction = _direction(before, after)
    mistakes = {"prompt": (Mistake("as_if_removed", clean),),
                "masking": (Mistake("as_if_removed", clean), Mistake("no_effect", before)),
                "point_in_time": (Mistake("no_effect", before),)}[remedy]
    return Outcome(
        answer=after, direction=direction,
        steps=(Step("whole-backtest Sharpe without a remedy", before, "", "engines.trading.lookahead"),
               Step("correlation the remedy leaves before the cutoff", eff, "", lookahead.REMEDY_SOURCES[remedy]),
               Step("whole-backtest Sharpe with the remedy", after, "", "engines.trading.lookahead")),
        mistakes=mistakes + ((Mistake("dir_shrinks", "shrinks"),) if direction == "unchanged"
                             else (Mistake("dir_unchanged", "unchanged"),)),
        facts={"before": f"{before:.2f}", "share": f"{100 * share:.0f}"},
        show_me=_show("trading", params={"remedy": remedy, "mask_share": share, "a_pre": a_pre, "a_post": a_post,
                                         "days_pre": dp, "days_post": dq, "n_stocks": n}),
    )


@computation("trading.docs_per_gpu_hour")
def docs_per_gpu_hour(p: Mapping[str, Any]) -> Outcome:
    """Batched extraction throughput per GPU-hour (serving roofline), the 'at scale' of the claim."""
    from engines.core.scenario import Scenario

    sc = Scenario().with_changes(model=p["model"], serve_batch=p["batch"])
    s = stack.price_stack(sc)
    return Outcome(
        answer=s.docs_per_gpu_hour / 1000,
        steps=(Step(f"one batch of {s.batch} headlines on {s.n_gpus} GPU(s)", s.batch_seconds, "s", "engines.trading.stack"),
               Step("GPU-seconds per headline = batch time × GPUs ÷ batch", s.gpu_seconds_per_doc, "s", "engines.trading.stack"),
               Step("headlines per GPU-hour", s.docs_per_gpu_hour / 1000, "thousand", "engines.trading.stack")),
        mistakes=(Mistake("one_at_a_time", 3600 / (s.latency_s * s.n_gpus) / 1000),
                  Mistake("per_replica", s.docs_per_gpu_hour * s.n_gpus / 1000)),
        facts={"model_label": s.model_label, "n_gpus": str(s.n_gpus)},
        show_me=_show("trading", {"model": p["model"], "serve_batch": p["batch"]}),
    )


@computation("trading.ece")
def ece(p: Mapping[str, Any]) -> Outcome:
    """Expected calibration error of three confidence groups (evaluation.reliability, Guo et al. 2017)."""
    groups = [(p[f"conf{i}"], p[f"n{i}"], p[f"acc{i}"]) for i in (1, 2, 3)]
    conf = np.concatenate([np.full(n, c) for c, n, _ in groups])
    ok = np.concatenate([np.arange(n) < round(a * n) for _, n, a in groups])
    r = ev.reliability(conf, ok, 10)
    total = sum(n for _, n, _ in groups)
    gaps = [abs(a - c) for c, _, a in groups]
    return Outcome(
        answer=r.ece, hand=sum(n / total * abs(a - c) for c, n, a in groups),
        steps=tuple(Step(f"bin at {c:.0%}: {n} headlines, right {a:.0%}, gap", abs(a - c), "", "Guo et al. 2017")
                    for c, n, a in groups) + (Step("ECE = Σ (n_b/N)·|acc_b − conf_b|", r.ece, "", "Guo et al. 2017"),),
        mistakes=(Mistake("unweighted", sum(gaps) / 3), Mistake("overall", abs(float(ok.mean()) - float(conf.mean())))),
        show_me=_show("trading", params={"ext_bins": 10}),
    )


@computation("trading.psi_drift")
def psi_drift(p: Mapping[str, Any]) -> Outcome:
    """Population stability index of the predicted-class mix, baseline against live (no returns needed)."""
    rng = random.Random(p["walk"])
    base = [rng.randrange(40, 160) for _ in range(5)]
    live = [max(0, round(b * math.exp(rng.gauss(0, p["shift"])))) for b in base]
    e, a = ev.smoothed_shares(base), ev.smoothed_shares(live)
    v = ev.psi_counts(base, live)
    return Outcome(
        answer=v, hand=float(((a - e) * np.log(a / e)).sum()),
        steps=(Step("baseline shares (half a count added)", ", ".join(f"{x:.3f}" for x in e), "", "engines.trading.evaluation"),
               Step("live shares", ", ".join(f"{x:.3f}" for x in a), "", "engines.trading.evaluation"),
               Step("PSI = Σ (a − e)·ln(a/e)", v, "", "du Pisanie et al., arXiv 2303.01227"),
               Step("band (rule of thumb)", ev.psi_band(v), "", ev.PSI_BANDS_NOTE)),
        mistakes=(Mistake("abs_diff", float(np.abs(a - e).sum())), Mistake("one_sided_kl", float((a * np.log(a / e)).sum()))),
        facts={"base": ", ".join(map(str, base)), "live": ", ".join(map(str, live))},
        show_me=_show("trading"),
    )


#: the regime a learner most often credits with another's duty
_NEAR_REGIME = {"EU AI Act": "MiFID II", "MiFID II": "RTS 6", "RTS 6": "MiFID II", "SR 11-7 (US)": "PRA SS1/23 (UK)",
                "PRA SS1/23 (UK)": "SR 11-7 (US)"}


@computation("trading.governance_regime")
def governance_regime(p: Mapping[str, Any]) -> Outcome:
    """Which regime sets a duty (the governance table of the H4 view)."""
    duty = governance.GOVERNANCE[p["duty"]]
    regimes = list(dict.fromkeys(d.regime for d in governance.GOVERNANCE))
    cite = {r: next(d.source for d in governance.GOVERNANCE if d.regime == r) for r in regimes}
    return Outcome(
        answer=frozenset([duty.regime]), options=tuple(Option(r, r, cite[r]) for r in regimes),
        steps=(Step("the duty", duty.duty, "", duty.source), Step("regime", duty.regime, "", f"{duty.source} ({duty.status})")),
        mistakes=(Mistake("near", frozenset([_NEAR_REGIME[duty.regime]])),),
        facts={"duty": duty.duty},
        show_me=_show("trading"),
    )


def _duration(seconds: float) -> str:
    """A duration in the unit a reader expects (ms, s, h, days)."""
    for unit, size in (("days", 86_400.0), ("h", 3_600.0), ("s", 1.0)):
        if seconds >= size:
            return f"{seconds / size:g} {unit}"
    return f"{seconds * 1000:g} ms"


@computation("trading.suitable_stages")
def suitable_stages(p: Mapping[str, Any]) -> Outcome:
    """Stages a call can serve by both clock and fit (engines.trading.stack), against the clock alone."""
    lat = p["latency_s"]
    verdicts = [stack.verdict(lat, s) for s in stack.STAGES]
    in_time = frozenset(v.stage.key for v in verdicts if v.verdict != "too slow")
    right = frozenset(v.stage.key for v in verdicts if v.verdict != "too slow" and v.stage.model_fits)
    if not right or right == in_time:
        raise Redraw("clock and fit agree")
    return Outcome(
        answer=right, options=tuple(Option(s.key, s.label, s.source) for s in stack.STAGES),
        steps=tuple(Step(f"{v.stage.label}: clock {v.verdict}; fit", v.stage.fit, "", v.stage.source) for v in verdicts),
        mistakes=(Mistake("clock_only", in_time),),
        facts={"latency": _duration(lat)},
        show_me=_show("trading"),
    )


#: the audit record's fingerprints (engines.trading.extraction.audit_record), as options
_FINGERPRINTS = {"guideline": "guideline_sha256: classes and labelers' guidelines",
                 "dataset": "dataset.sha256: the headlines file",
                 "input": "records[].input_sha256: each headline's text",
                 "params": "params: the run's settings",
                 "model": "model.sha256: the weights file"}
_CHANGES = {"guideline": "labeler A's written guideline is reworded",
            "text": "one headline's text is corrected",
            "label": "one headline's gold label is corrected",
            "params": "the run uses more training steps"}


@lru_cache(maxsize=1)
def _headlines_doc() -> str:
    from engines.core.assets import asset_path

    return asset_path("trading", "headlines.json").read_text(encoding="utf-8")


def _fingerprints(doc: dict, item: int, steps: int) -> dict[str, str]:
    """The record's fingerprints of one headlines document, computed as the extraction engine does."""
    import hashlib
    import json
    from dataclasses import asdict

    from engines.trading import extraction

    text = json.dumps(doc, indent=1, ensure_ascii=False)
    hs = extraction.parse_headlines(text)
    return {"guideline": extraction.guideline_sha256(hs),
            "dataset": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "input": hashlib.sha256(hs.items[item].text.encode()).hexdigest(),
            "params": repr(asdict(extraction.ExtractionParams(ext_epochs=steps))),
            "model": "unchanged: the same weights file"}


@computation("trading.audit_change")
def audit_change(p: Mapping[str, Any]) -> Outcome:
    """Which fingerprints of the audit record move when one thing about the run changes."""
    import json

    change, item = p["change"], p["item"]
    doc = json.loads(_headlines_doc())
    before = _fingerprints(doc, item, 300)
    steps = 300
    if change == "guideline":
        doc["labelers"]["label_a"] = doc["labelers"]["label_a"] + " Treat a forecast as results."
    elif change == "text":
        doc["items"][item]["text"] = doc["items"][item]["text"] + " (corrected)"
    elif change == "label":
        old = doc["items"][item]["label_a"]
        doc["items"][item]["label_a"] = next(c for c in doc["classes"] if c != old)
    else:
        steps = 600
    after = _fingerprints(doc, item, steps)
    moved = frozenset(k for k in _FINGERPRINTS if before[k] != after[k])
    wrong = frozenset(["dataset"]) if moved != {"dataset"} else frozenset(["dataset", "input"])
    return Outcome(
        answer=moved, options=tuple(Option(k, text, "engines.trading.extraction.audit_record") for k, text in _FINGERPRINTS.items()),
        steps=tuple(Step(_FINGERPRINTS[k], "changes" if k in moved else "stays", "", "engines.trading.extraction") for k in _FINGERPRINTS),
        mistakes=(Mistake("file_only", wrong),),
        facts={"change": _CHANGES[change]},
        show_me=_show("trading"),
    )
