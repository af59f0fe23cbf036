"""The law panel's working tools, computed from its :class:`~engines.law.params.Params`: the support
period and update shelf life (Art 13(8)-(9)), the maximum fine (Art 64), one incident on four
reporting clocks (CRA, NIS2, GDPR, DORA) and the Annex I checklist. Each tool either gives its result
or the error (field and reason) that stops it, so one bad input never blanks the others."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.law import annex, reporting, support
from engines.law.clocks import Mark, _aware
from engines.law.params import REGIME_FIELDS, Params, parse_day

REGIME_OF = dict(zip(REGIME_FIELDS, reporting.REGIMES))


@dataclass(frozen=True)
class FourClocks:
    deadlines: tuple[reporting.Deadline, ...]
    regimes: tuple[str, ...]
    marks: tuple[Mark, ...]
    waiting: tuple[str, ...]          # reports that have no date yet, and why


def support_of(p: Params) -> support.SupportPlan:
    placed = parse_day(p.cra_placed, "cra_placed")
    updates = tuple(parse_day(t, f"updates[{i}]") for i, t in enumerate(p.updates))
    return support.support_plan(placed, p.expected_use_years, updates)


def support_marks(plan: support.SupportPlan) -> tuple[Mark, ...]:
    marks = [Mark(plan.placed, "placed on the market", "event"), Mark(plan.end, "support period ends", "deadline")]
    for i, u in enumerate(plan.updates, 1):
        marks += [Mark(u.issued, f"update {i} issued", "event"), Mark(u.until, f"update {i} available until", "rule")]
    return tuple(marks)


def fine_of(p: Params) -> support.Fine:
    return support.fine(p.turnover_m_eur * 1e6, p.fine_tier, enterprise=p.enterprise,
                        early_warning_only=p.early_warning_only and p.fine_tier == 1, steward=p.steward)


def four_clocks(p: Params) -> FourClocks:
    regimes = tuple(REGIME_OF[f] for f in REGIME_FIELDS if getattr(p, f))
    if not regimes:
        raise ValidationError("clock_cra", "switch on at least one regime", "CRA, NIS2, GDPR, DORA")
    aware = _aware(p.aware, "aware")
    cra_fix = p.fix_available and p.event == "vulnerability" and "cra" in regimes   # only 14(2)(c) counts from a fix
    fix = _aware(p.fix_at, "fix_available") if cra_fix else None
    classified = _aware(p.classified_at, "classified") if "dora" in regimes else None
    ds = reporting.all_deadlines(regimes, aware, classified=classified, fix_available=fix, kind=p.event)
    waiting = []
    if "cra" in regimes and p.event == "vulnerability" and fix is None:
        waiting.append("CRA final report: 14 days after a fix or mitigation is available (Art 14(2)(c)); "
                       "no fix time given")
    marks = [Mark(aware, "aware", "event")]
    if classified is not None:
        marks.append(Mark(classified, "classified major (DORA)", "event"))
    if fix is not None:
        marks.append(Mark(fix, "fix available", "event"))
    marks += [Mark(d.due, d.name, "deadline") for d in ds]
    return FourClocks(tuple(ds), regimes, tuple(marks), tuple(waiting))


@dataclass(frozen=True)
class Tools:
    support: support.SupportPlan | None
    support_error: str | None
    fine: support.Fine | None
    fine_error: str | None
    fine_curve: support.FineCurve | None          # every tier against turnover, for the chart
    clocks: FourClocks | None
    clocks_error: str | None
    checklist: annex.Checklist


def tools(p: Params) -> Tools:
    """Every tool of the panel, each with its result or the error that stops it."""
    out: dict = {}
    for key, fn in (("support", support_of), ("fine", fine_of), ("clocks", four_clocks)):
        try:
            out[key], out[key + "_error"] = fn(p), None
        except ValidationError as exc:
            out[key], out[key + "_error"] = None, str(exc)
    curve = support.fine_curve(out["fine"].turnover_eur) if out["fine"] is not None else None
    return Tools(**out, fine_curve=curve, checklist=annex.checklist(p.annex_i))
