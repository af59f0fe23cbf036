"""Computations for courses F and G (CRA, PLD) and the self-hosting privacy trees: questions drawn as
fact patterns from the same decision trees the panels walk, answered by :class:`engines.law.trees.Walk`;
fines, support periods, reporting clocks and limitation from engines.law."""
from __future__ import annotations

import calendar
import random
import re
from functools import lru_cache
from datetime import date, datetime, timedelta
from typing import Any, Mapping

from engines.law import cra, defect, pld, support
from engines.law.trees import Tree, Walk, load_trees
from engines.practice.model import Mistake, Option, Outcome, Redraw, Step
from engines.practice.registry import computation
from engines.practice.topics.training import _show
from engines.selfhost.privacy import load_privacy_trees

MAX_OPTIONS = 5


def _trees(family: str) -> Mapping[str, Tree]:
    return load_privacy_trees() if family == "selfhost" else load_trees()


def _finish(walk: Walk, rng: random.Random) -> None:
    """Answer at random (among the answers still open) until the walk reaches an outcome of its tree."""
    while not walk.current.is_outcome:
        walk.answer(rng.choice(walk.offered()).id)


def _facts_text(walk: Walk, trees: Mapping[str, Tree], upto: int | None = None) -> str:
    lines = []
    for s in walk.steps[:upto]:
        if s.answer is None:
            continue
        node = trees[s.tree].nodes[s.node]
        lines.append(f"• {node.text.strip()} — {node.answer(s.answer).label}")
    return "\n".join(lines) if lines else "• (no facts: the first question decides)"


def _tree_show(family: str, key: str, moves: tuple[str, ...]) -> dict:
    if family == "selfhost":
        return _show("selfhost", {"serve_batch": 64}, {"privacy_tree": key, "privacy_answers": list(moves)})
    return _show("law", params={"tree": key, "answers": list(moves)})


def _node(trees: Mapping[str, Tree], node_id: str):
    """The node ``node_id`` in whichever tree holds it (a walk may continue into a linked tree)."""
    return next(t.nodes[node_id] for t in trees.values() if node_id in t.nodes)


def _alternative(trees: Mapping[str, Tree], key: str, moves: tuple[str, ...], end: str) -> str | None:
    """An outcome other than ``end`` reached by giving another answer to the latest question that
    has one that matters (then the first open answers): the near miss a learner who misreads that
    fact lands on."""
    for i in range(len(moves) - 1, -1, -1):
        base = Walk(key, trees)
        base.follow(moves[:i])
        for other in [a.id for a in base.offered() if a.id != moves[i]]:
            w = Walk(key, trees)
            w.follow((*moves[:i], other))
            while not w.current.is_outcome:
                w.answer(w.offered()[0].id)
            if w.current.id != end:
                return w.current.id
    return None


@lru_cache(maxsize=4096)
def _near_miss(family: str, key: str, moves: tuple[str, ...], end: str) -> str | None:
    """:func:`_alternative` on the shipped trees, cached: walks repeat across variants (a template
    with a ``given`` fact pattern draws the same walk every time) and replaying them is the cost."""
    return _alternative(_trees(family), key, moves, end)


@computation("tree.outcome")
def tree_outcome(p: Mapping[str, Any]) -> Outcome:
    """Where a walk ends. ``given`` (space-separated answers) fixes the first facts, so a template can
    ask about the one situation a tour claim is about; the rest of the walk is drawn."""
    family, key = p["family"], p["tree"]
    trees = _trees(family)
    rng = random.Random(p["walk"])
    w = Walk(key, trees)
    w.follow(tuple(str(p.get("given", "")).split()))   # the fact pattern a tour claim is about, if any
    _finish(w, rng)
    end = w.current
    moves = w.moves
    if not [s for s in w.steps if s.answer is not None and not s.auto]:
        raise Redraw("no fact to read")
    tree = trees[key]
    home = next(t for t in trees.values() if end.id in t.nodes)     # the tree the walk ended in
    outcomes = [n for n in home.nodes.values() if n.is_outcome]
    alt = _near_miss(family, key, moves, end.id)
    if alt is None or alt == end.id:
        raise Redraw("no near miss")
    others = [n for n in outcomes if n.id not in (end.id, alt)]
    rng.shuffle(others)
    chosen = [end, _node(trees, alt), *others[:MAX_OPTIONS - 2]]
    chosen.sort(key=lambda n: n.id)
    opts = tuple(Option(n.id, n.label, n.article) for n in chosen)
    steps = tuple(Step(trees[s.tree].nodes[s.node].text.strip(), trees[s.tree].nodes[s.node].answer(s.answer).label,
                       "", trees[s.tree].nodes[s.node].article) for s in w.steps if s.answer is not None)
    return Outcome(
        answer=frozenset([end.id]), options=opts,
        steps=steps + (Step("outcome", end.label, "", end.article),),
        mistakes=(Mistake("near_miss", frozenset([alt])),),
        facts={"facts": _facts_text(w, trees), "tree_title": tree.title},
        show_me=_tree_show(family, key, moves),
    )


@computation("tree.next_question")
def tree_next_question(p: Mapping[str, Any]) -> Outcome:
    family, key = p["family"], p["tree"]
    trees = _trees(family)
    rng = random.Random(p["walk"])
    w = Walk(key, trees)
    _finish(w, rng)
    given = [i for i, s in enumerate(w.steps) if s.answer is not None and not s.auto]
    if len(given) < 2:
        raise Redraw("path too short")
    cut = rng.choice(given[1:])          # stop after some answers: which question is asked next?
    moves = tuple(s.answer for s in w.steps[:cut] if not s.auto)
    w2 = Walk(key, trees)
    w2.follow(moves)
    nxt = w2.current
    if nxt.is_outcome:
        raise Redraw("ended")
    tree = trees[key]
    asked = {s.node for s in w2.steps}
    questions = [n for n in tree.nodes.values() if not n.is_outcome and n.id != nxt.id and n.id not in asked]
    skipped = [n for n in questions if n.id not in asked]
    later = [trees[s.tree].nodes[s.node] for s in w.steps[cut + 1:]
             if s.answer is not None and s.tree == key and s.node not in asked]
    near = later[0] if later else (skipped[0] if skipped else None)
    if near is None or near.id == nxt.id:
        raise Redraw("no distractor")
    rest = [n for n in questions if n.id != near.id]
    rng.shuffle(rest)
    chosen = sorted([nxt, near, *rest[:MAX_OPTIONS - 2]], key=lambda n: n.id)
    return Outcome(
        answer=frozenset([nxt.id]), options=tuple(Option(n.id, n.text.strip(), n.article) for n in chosen),
        steps=tuple(Step(trees[s.tree].nodes[s.node].text.strip(), trees[s.tree].nodes[s.node].answer(s.answer).label, "",
                         trees[s.tree].nodes[s.node].article) for s in w2.steps if s.answer is not None)
        + (Step("next question", nxt.label, "", nxt.article),),
        mistakes=(Mistake("skipped_ahead", frozenset([near.id])),),
        facts={"facts": _facts_text(w2, trees), "tree_title": tree.title},
        show_me=_tree_show(family, key, moves),
    )


# ---------------------------------------------------------------- fines, periods, clocks
@computation("law.max_fine")
def max_fine(p: Mapping[str, Any]) -> Outcome:
    turnover_m, tier = p["turnover_m"], p["tier"]
    fixed, share, para, _ = support.FINE_TIERS[tier]
    f = support.max_fine(turnover_m * 1e6, tier)
    if abs(fixed - share * turnover_m * 1e6) < 0.05 * fixed:
        raise Redraw("both arms equal")
    return Outcome(
        answer=f / 1e6, hand=max(fixed, share * turnover_m * 1e6) / 1e6,
        steps=(Step("fixed sum", fixed / 1e6, "M€", para), Step(f"{share:.1%} of worldwide turnover", share * turnover_m, "M€", para),
               Step("maximum: the higher of the two", f / 1e6, "M€", para)),
        mistakes=(Mistake("lower_arm", min(fixed, share * turnover_m * 1e6) / 1e6),
                  Mistake("other_tier", support.max_fine(turnover_m * 1e6, 1 if tier != 1 else 2) / 1e6)),
        facts={"article": para},
        show_me=_show("law", params={"turnover_m_eur": float(turnover_m), "fine_tier": tier}),
    )


@computation("law.support_end_year")
def support_end_year(p: Mapping[str, Any]) -> Outcome:
    year, use = p["placed_year"], p["use_years"]
    placed = date(year, 3, 1)
    end = support.support_period_end(placed, use)
    return Outcome(
        answer=float(end.year), hand=float(year + use),
        steps=(Step("placed on the market", placed.isoformat(), "", "the question"),
               Step("support period: the expected use time (at least five years unless use is shorter)", float(use), "years", "CRA Art 13(8)"),
               Step("support ends", end.isoformat(), "", "CRA Art 13(8)"),
               Step("year the support period ends", float(end.year), "", "CRA Art 13(8)")),
        mistakes=(Mistake("five_floor", float(year + 5)) if use != 5 else Mistake("five_floor", float(year + 10)),
                  Mistake("ten_years", float(year + 10)) if use != 10 else Mistake("ten_years", float(year + 5))),
        show_me=_show("law", params={"expected_use_years": float(use)}),
    )


@computation("law.vuln_final_days")
def vuln_final_days(p: Mapping[str, Any]) -> Outcome:
    fix_days = p["fix_days"]
    aware = datetime(2027, 3, 1, 9, 0)
    d = cra.reporting_deadlines("vulnerability", aware, aware + timedelta(days=fix_days))
    days = (d["final_report"] - aware) / timedelta(days=1)
    return Outcome(
        answer=days, hand=float(fix_days + 14),
        steps=(Step("early warning", 24.0, "h after awareness", "CRA Art 14(2)(a)"),
               Step("notification", 72.0, "h after awareness", "CRA Art 14(2)(b)"),
               Step("final report: 14 days after the fix is available", days, "days after awareness", "CRA Art 14(2)(c)")),
        mistakes=(Mistake("from_awareness", 14.0), Mistake("one_month", float(fix_days + 30))),
        show_me=_show("law", params={"event": "vulnerability", "aware": "2027-03-01T09:00", "fix_available": True,
                                     "fix_at": (aware + timedelta(days=fix_days)).strftime("%Y-%m-%dT%H:%M")}),
    )


@computation("law.pld_claim_year")
def pld_claim_year(p: Mapping[str, Any]) -> Outcome:
    placed = date(p["placed_year"], 3, 15)
    known = date(p["placed_year"] + p["years_to_knowledge"], 6, 1)
    lim = pld.limitation(placed, known, False)
    cap = lim["expiry"]
    return Outcome(
        answer=float(lim["claim_deadline"].year), hand=float(min(known.year + 3, placed.year + 10)),
        steps=(Step("three years from knowledge", float(known.year + 3), "", "PLD Art 16(1)"),
               Step("rights expire ten years after placing on the market", cap.isoformat(), "", "PLD Art 17(1)"),
               Step("last year to start proceedings: the earlier", float(lim["claim_deadline"].year), "", "PLD Art 16(1), 17(1)")),
        mistakes=(Mistake("ignore_expiry", float(known.year + 3)) if known.year + 3 > cap.year
                  else Mistake("ignore_expiry", float(cap.year)),
                  Mistake("ten_from_knowledge", float(known.year + 10))),
        facts={"placed": placed.isoformat(), "known": known.isoformat()},
        show_me=_show("law", params={"placed": placed.isoformat(), "knowledge": known.isoformat()}),
    )


@computation("law.update_until_year")
def update_until_year(p: Mapping[str, Any]) -> Outcome:
    placed = date(p["placed_year"], 3, 1)
    issued = date(p["placed_year"] + p["issued_after"], 6, 1)
    end = support.support_period_end(placed, p["use_years"])
    until = support.update_available_until(issued, end)
    return Outcome(
        answer=float(until.year), hand=float(max(issued.year + 10, end.year)),
        steps=(Step("support period ends", end.isoformat(), "", "CRA Art 13(8)"),
               Step("ten years after the update's issue", float(issued.year + 10), "", "CRA Art 13(9)"),
               Step("available until the later of the two", until.isoformat(), "", "CRA Art 13(9)"),
               Step("year", float(until.year), "", "CRA Art 13(9)")),
        mistakes=(Mistake("support_end", float(end.year)), Mistake("ten_from_placing", float(placed.year + 10))),
        facts={"issued": issued.isoformat()},
        show_me=_show("law", params={"expected_use_years": float(p["use_years"])}),
    )


@computation("law.incident_final_days")
def incident_final_days(p: Mapping[str, Any]) -> Outcome:
    aware = datetime(2027, p["month"], 10, 9, 0)
    notified = aware + timedelta(hours=p["notified_h"])
    d = cra.reporting_deadlines("incident", aware, None, notified)
    days = (d["final_report"] - aware) / timedelta(days=1)
    from_aware = (cra.add_months(aware, 1) - aware) / timedelta(days=1)
    return Outcome(
        answer=days,
        steps=(Step("notification submitted", p["notified_h"], "h after awareness", "CRA Art 14(4)(b)"),
               Step("final report: one month after the notification", days, "days after awareness", "CRA Art 14(4)(c)")),
        mistakes=(Mistake("from_awareness", from_aware), Mistake("fourteen_days", p["notified_h"] / 24 + 14)),
        facts={"aware": aware.strftime("%d %B %Y %H:%M")},
        show_me=_show("law", params={"event": "incident", "aware": aware.strftime("%Y-%m-%dT%H:%M"), "notified": True,
                                     "notified_at": notified.strftime("%Y-%m-%dT%H:%M")}),
    )


# ---------------------------------------------------------------- F1 F2 F3 F4: uncovered tour claims
from engines.law import annex, annex_vii, reporting  # noqa: E402  (kept beside the computations that use it)

_CRA = "Reg (EU) 2024/2847 (CRA)"
#: the point a learner most often confuses each point with (same theme, the other list or a neighbour)
_NEAR_POINT = {
    "I.2.a": "II.1", "I.2.b": "I.2.c", "I.2.c": "II.7", "I.2.d": "I.2.e", "I.2.e": "I.2.f", "I.2.f": "I.2.e",
    "I.2.g": "I.2.m", "I.2.h": "I.2.i", "I.2.i": "I.2.h", "I.2.j": "I.2.k", "I.2.k": "I.2.j", "I.2.l": "I.2.d",
    "I.2.m": "I.2.g",
    "II.1": "I.2.a", "II.2": "II.8", "II.3": "I.1", "II.4": "II.8", "II.5": "II.6", "II.6": "II.5",
    "II.7": "I.2.c", "II.8": "II.4",
    "1": "2(a)", "2(a)": "2(c)", "2(b)": "8", "2(c)": "2(a)", "3": "5", "4": "1", "5": "6", "6": "5", "7": "6",
    "8": "2(b)",
}


def _annex_table(which: str) -> dict[str, tuple[str, str, str]]:
    """point id → (label, what it asks in our words, where it sits), from the law engine's own tables."""
    if which == "I":
        return {it.id: (it.short, it.asks, it.point) for it in annex.ITEMS}
    return {pt.id: (pt.short, pt.what, pt.point) for pt in annex_vii.POINTS}


@computation("law.annex_point")
def annex_point(p: Mapping[str, Any]) -> Outcome:
    """Which point of Annex I or VII asks for a requirement (the panel's checklist tables), against the
    point it is most often confused with and three others."""
    table = _annex_table(p["annex"])
    item, near = p["item"], _NEAR_POINT[p["item"]]
    rng = random.Random(f"{p['annex']}:{item}:{p['walk']}")
    others = [k for k in table if k not in (item, near)]
    rng.shuffle(others)
    chosen = [k for k in table if k in {item, near, *others[:MAX_OPTIONS - 2]}]      # Annex order
    label, asks, where = table[item]
    return Outcome(
        answer=frozenset([item]), options=tuple(Option(k, table[k][0], table[k][2]) for k in chosen),
        steps=(Step("what the requirement asks", asks, "", where), Step("the point", f"{where}: {label}", "", where)),
        mistakes=(Mistake("near", frozenset([near])),),
        facts={"asks": asks},
        show_me=_show("law", params={"annex_quotes": True}),
    )


@computation("law.annex_i_open")
def annex_i_open(p: Mapping[str, Any]) -> Outcome:
    """How many Part I(2) properties a checklist still leaves open, counted by the panel's checklist."""
    rng = random.Random(p["walk"])
    part_i2 = [it.id for it in annex.ITEMS if it.id.startswith("I.2.")]
    done = sorted(rng.sample(part_i2, p["answered"]))
    answers = tuple((k, rng.choice(("met", "not-met")), "n", "TD") for k in done)
    rows = annex.checklist(answers).rows
    open_i2 = sum(1 for r in rows if r.item.id.startswith("I.2.") and not r.status)
    open_all = sum(1 for r in rows if not r.status)
    letters = ", ".join(f"({k[-1]})" for k in done)
    return Outcome(
        answer=float(open_i2), hand=float(13 - p["answered"]),
        steps=(Step("properties in Part I point 2, (a) to (m)", float(len(part_i2)), "", f"{_CRA} Annex I Part I(2)"),
               Step("answered on the checklist", float(len(done)), "", "the question"),
               Step("still open", float(open_i2), "", f"{_CRA} Annex I Part I(2)")),
        mistakes=(Mistake("whole_annex", float(open_all)), Mistake("with_point_1", float(open_i2 + 1))),
        facts={"letters": letters},
        show_me=_show("law", params={"annex_i": [list(a) for a in answers]}),
    )


def _articles(text: str) -> str:
    """The article references in a recipient line, without the act's name (the prompt names the act)."""
    return "; ".join(re.findall(r"\((Art[^)]*\)?[^)]*)\)", text)) or text


@computation("law.report_recipient")
def report_recipient(p: Mapping[str, Any]) -> Outcome:
    """Who receives a regime's reports (engines.law.reporting), against the CRA/NIS2 confusion."""
    regime = p["regime"]
    other = "nis2" if regime == "cra" else "cra"
    act, _, full = reporting.REGIME_INFO[regime]
    return Outcome(
        answer=frozenset([regime]),
        options=tuple(Option(r, reporting.RECIPIENT[r], _articles(reporting.REGIME_INFO[r][2])) for r in reporting.REGIMES),
        steps=(Step("regime", act, "", act), Step("recipient", full, "", act)),
        mistakes=(Mistake("other_regime", frozenset([other])),),
        facts={"act": act},
        show_me=_show("law", params={"event": "incident"}),
    )


@computation("law.untimed_duties")
def untimed_duties(p: Mapping[str, Any]) -> Outcome:
    """The duties a regime sets beside its timed reports, with no fixed hour (engines.law.reporting)."""
    regime = p["regime"]
    keys = {f"{r}{i}": (r, text, art) for r in reporting.REGIMES for i, (text, art) in enumerate(reporting.NO_FIXED_HOUR[r])}
    right = frozenset(k for k, v in keys.items() if v[0] == regime)
    nxt = reporting.REGIMES[(reporting.REGIMES.index(regime) + 1) % len(reporting.REGIMES)]
    act = reporting.REGIME_INFO[regime][0]
    return Outcome(
        answer=right,
        options=tuple(Option(k, text, art) for k, (r, text, art) in keys.items()),   # the act is the question
        steps=tuple(Step(f"{act}: owed without a fixed hour", text, "", art) for k, (r, text, art) in keys.items() if r == regime),
        mistakes=(Mistake("other_regime", frozenset(k for k, v in keys.items() if v[0] == nxt)),),
        facts={"act": act},
        show_me=_show("law", params={"event": "incident"}),
    )


@computation("law.first_report")
def first_report(p: Mapping[str, Any]) -> Outcome:
    """Which regime's first report falls due first after one incident (engines.law.reporting): DORA's
    4 h run from classification as major, capped at 24 h after awareness."""
    aware = datetime(2027, 3, 10, p["aware_hour"], 0)
    classified = aware + timedelta(hours=p["classified_after_h"])
    first = {r: reporting.deadlines(r, aware, classified=classified)[0] for r in reporting.REGIMES}
    soonest = min(d.due for d in first.values())
    right = frozenset(r for r, d in first.items() if d.due == soonest)
    wrong = right - {"dora"} if "dora" in right and len(right) > 1 else (
        frozenset(["cra", "nis2"]) if right == {"dora"} else frozenset(["dora"]))
    fmt = "%d %b %H:%M"
    return Outcome(
        answer=right,
        options=tuple(Option(r, d.name, d.basis) for r, d in first.items()),
        steps=tuple(Step(d.name, d.due.strftime(fmt), "", d.basis) for d in first.values())
        + (Step("first due", ", ".join(first[r].name for r in reporting.REGIMES if r in right), "", "engines.law.reporting"),),
        mistakes=(Mistake("misread_dora", wrong),),
        facts={"aware": aware.strftime(fmt), "classified": classified.strftime(fmt)},
        show_me=_show("law", params={"event": "incident", "aware": aware.strftime("%Y-%m-%dT%H:%M"),
                                     "classified_at": classified.strftime("%Y-%m-%dT%H:%M")}),
    )


@computation("law.awareness_moment")
def awareness_moment(p: Mapping[str, Any]) -> Outcome:
    """What the awareness moment decides: whether Art 14 applies at all, and when the early warning is due."""
    mail = datetime(2026, 9, p["mail_day"], p["mail_hour"], 0)
    confirm = mail + timedelta(hours=p["confirm_after_h"])
    fmt = "%d %b %Y %H:%M"
    by_mail = cra.reporting_deadlines("vulnerability", mail)
    by_confirm = cra.reporting_deadlines("vulnerability", confirm)
    opts = (Option("mail", f"Owed: early warning due {by_mail['early_warning'].strftime(fmt)}", "CRA Art 14(2)(a)"),
            Option("confirm", f"Owed: early warning due {by_confirm['early_warning'].strftime(fmt)}", "CRA Art 14(2)(a)"),
            Option("none", "Not owed: awareness came before Art 14 applies", "CRA Art 71(2)"))
    right = "mail" if by_mail["applies"] else "none"
    wrong = "confirm" if by_confirm["applies"] else "none"
    if wrong == right:
        raise Redraw("both moments give the same answer")
    return Outcome(
        answer=frozenset([right]), options=opts,
        steps=(Step("awareness: the mail", mail.strftime(fmt), "", "the question"),
               Step("Art 14 applies from 11 September 2026", "yes" if by_mail["applies"] else "no", "", "CRA Art 71(2)"),
               Step("early warning: 24 h after awareness", by_mail["early_warning"].strftime(fmt), "", "CRA Art 14(2)(a)")),
        mistakes=(Mistake("later_moment", frozenset([wrong])),),
        facts={"mail": mail.strftime(fmt), "confirm": confirm.strftime(fmt)},
        show_me=_show("law", params={"event": "vulnerability", "aware": mail.strftime("%Y-%m-%dT%H:%M")}),
    )


@computation("law.user_information")
def user_information(p: Mapping[str, Any]) -> Outcome:
    """What reaches the user: Annex II (with the product, Art 13(18)) and the Art 14(8) notice, against the
    Annex VII file and the Art 14 reports, which go to authorities (engines.law.annex_vii, reporting)."""
    rng = random.Random(p["walk"])
    always = [row for row in annex_vii.ANNEX_II if row[0] != "Annex II(9)"]     # (9) only if the SBOM is shared
    user = [(pt, short, "CRA " + pt) for pt, short, _ in rng.sample(always, p["n_user"])]
    users_notice = reporting.NO_FIXED_HOUR["cra"][0]
    if rng.random() < 0.5:
        user.append(("14(8)", users_notice[0][0].upper() + users_notice[0][1:], "CRA " + users_notice[1]))
    file_pts = rng.sample(annex_vii.POINTS, 2)
    authority = [(f"VII {pt.id}", pt.short, f"CRA {pt.point}") for pt in file_pts]
    report = reporting.deadlines("cra", datetime(2027, 3, 1, 9, 0), kind="vulnerability")[0]
    authority.append(("report", f"{report.name}, naming the {report.content[0].lower()}{report.content[1:]}", f"CRA {report.basis.split('CRA ')[-1]} to {report.recipient}"))
    options = sorted(user + authority, key=lambda o: o[0])
    right = frozenset(k for k, _, _ in user)
    return Outcome(
        answer=right, options=tuple(Option(k, text, cite) for k, text, cite in options),
        steps=tuple(Step("reaches the user", text, "", cite) for k, text, cite in user)
        + tuple(Step("goes to authorities (on request or as a report)", text, "", cite) for k, text, cite in authority),
        mistakes=(Mistake("file_to_user", right | {authority[0][0]}),),
        show_me=_show("law", params={"tree": "cra-obligations", "answers": ["after"]}),
    )


# ---------------------------------------------------------------- issue 40: lessons G2-G4 (tour claims)
PLD8 = "PLD Art 8 (engines.law.pld.liable)"
OPERATOR_TEXT = {"manufacturer": "the manufacturer", "component-manufacturer": "the maker of the defective component",
                 "importer": "the importer", "authorised-representative": "the authorised representative",
                 "fulfilment-service-provider": "the fulfilment service provider", "distributor": "the distributor",
                 "online-platform": "the online platform", "modifier": "whoever substantially modified it"}
ARTICLE_OF = {"manufacturer": "Art 8(1)(a)", "component-manufacturer": "Art 8(1)(b)", "importer": "Art 8(1)(c)(i)",
              "authorised-representative": "Art 8(1)(c)(ii)", "fulfilment-service-provider": "Art 8(1)(c)(iii)",
              "distributor": "Art 8(3)", "online-platform": "Art 8(4)", "modifier": "Art 8(2)"}
_YES_NO = {True: "yes", False: "no"}


def _liable_case(case: str, rng: random.Random) -> dict[str, bool]:
    """Facts for one of the Art 8 situations a tour claim is about; the rest drawn."""
    f = {"manufacturer_in_eu": False, "importer": rng.random() < 0.4, "authorised_representative": rng.random() < 0.3,
         "fulfilment_service_provider": rng.random() < 0.6, "distributor": rng.random() < 0.5,
         "distributor_named_within_month": rng.random() < 0.5}
    if case == "platform":
        f.update(importer=False, authorised_representative=False, fulfilment_service_provider=rng.random() < 0.3,
                 online_platform=True, platform_presents_as_own=rng.random() < 0.7,
                 platform_named_within_month=rng.random() < 0.4)
    elif case == "modifier":
        f.update(manufacturer_in_eu=rng.random() < 0.5, substantial_modifier=True, modifier_in_eu=rng.random() < 0.6)
    return f


def _day_text(day: date) -> str:
    return f"{day.day} {day:%B %Y}"


def _liable_lines(f: Mapping[str, bool]) -> str:
    g = {**pld.LIABLE_DEFAULTS, **f}
    lines = [f"• The manufacturer is established {'in' if g['manufacturer_in_eu'] else 'outside'} the EU."]
    for key, text in (("importer", "importer in the EU"), ("authorised_representative", "authorised representative in the EU"),
                      ("fulfilment_service_provider", "fulfilment service provider (one that stored, packed and shipped it)")):
        lines.append(f"• There is {('an ' if text[0] in 'aeiou' else 'a ') if g[key] else 'no '}{text}.")
    if g["substantial_modifier"]:
        lines.append(f"• A firm {'in' if g['modifier_in_eu'] else 'outside'} the EU substantially modified it "
                     "outside the manufacturer's control and sold it on.")
    if g["distributor"]:
        lines.append("• A shop sold it; asked to name who supplied it, it "
                     + ("answered within a month." if g["distributor_named_within_month"] else "stayed silent for over a month."))
    if g["online_platform"]:
        lines.append("• It was bought on an online marketplace that "
                     + ("presented it as if it sold it itself" if g["platform_presents_as_own"] else "clearly showed the third-party seller")
                     + ("; asked, it named the seller within a month." if g["platform_named_within_month"] else "; asked, it named nobody."))
    return "\n".join(lines)


def _liable_moves(f: Mapping[str, bool]) -> list[str]:
    """The pld-liable tree walk for these facts, so Show me opens the panel's own walk."""
    g = {**pld.LIABLE_DEFAULTS, **f}
    moves = ["no", _YES_NO[g["manufacturer_in_eu"]]]
    if not g["manufacturer_in_eu"]:
        moves += [_YES_NO[g["importer"]], _YES_NO[g["authorised_representative"]], _YES_NO[g["fulfilment_service_provider"]]]
    moves.append("no" if not g["substantial_modifier"] else ("yes-eu" if g["modifier_in_eu"] else "yes-non-eu"))
    moves.append("none" if not g["distributor"] else ("named" if g["distributor_named_within_month"] else "silent"))
    moves.append("no" if not (g["online_platform"] and g["platform_presents_as_own"])
                 else ("named" if g["platform_named_within_month"] else "silent"))
    return moves


@computation("law.pld_liable")
def pld_liable(p: Mapping[str, Any]) -> Outcome:
    """G3: who an injured person can sue under the Art 8 cascade, for a drawn fact pattern of one case
    (``non-eu``, ``platform``, ``modifier``). The mistake: everyone involved is liable."""
    f = _liable_case(p["case"], random.Random(p["facts"]))
    who = frozenset(pld.liable(f))
    g = {**pld.LIABLE_DEFAULTS, **f}
    involved = frozenset(["manufacturer"] + [k for k, fact in (
        ("importer", "importer"), ("authorised-representative", "authorised_representative"),
        ("fulfilment-service-provider", "fulfilment_service_provider"), ("distributor", "distributor"),
        ("modifier", "substantial_modifier")) if g[fact]] + (["online-platform"] if g["online_platform"] else []))
    if involved == who:
        raise Redraw("everyone involved is liable")
    return Outcome(
        answer=who,
        options=tuple(Option(k, OPERATOR_TEXT[k], ARTICLE_OF[k]) for k in sorted(involved | who)),
        steps=tuple(Step(f"{OPERATOR_TEXT[k]} ({ARTICLE_OF[k]})", "liable" if k in who else "not liable", "", PLD8)
                    for k in sorted(involved | who)),
        mistakes=(Mistake("everyone_involved", involved),),
        facts={"facts": _liable_lines(f)},
        show_me=_show("law", params={"tree": "pld-liable", "answers": _liable_moves(f)}),
    )


@computation("law.distributor_days")
def distributor_days(p: Mapping[str, Any]) -> Outcome:
    """G3: a distributor's one month to name its supplier, counted as a calendar month (Reg 1182/71)."""
    year, month, day = p["year"], p["month"], p["day"]
    if day > calendar.monthrange(year, month)[1]:
        raise Redraw("no such day")
    asked = date(year, month, day)
    due = defect.distributor_deadline(asked)
    days = (due - asked).days
    return Outcome(
        answer=float(days),
        steps=(Step("request received", asked.isoformat(), "", "PLD Art 8(3)"),
               Step("one month later, the same day number; a month without it ends on its last day", due.isoformat(), "",
                    "Reg (EEC, Euratom) No 1182/71 Art 3(2)(c)"),
               Step("days the distributor has", float(days), "days", "PLD Art 8(3)")),
        mistakes=(Mistake("thirty_days", 30.0),),
        facts={"asked": _day_text(asked)},
        show_me=_show("law", params={"distributor_request": True, "request_day": asked.isoformat()}),
    )


ART7_RULES = (("Art 10(2)(b), 10(5)", "presume", "The court presumes the defect (breach of a mandatory safety requirement)"),
              ("Art 7(2)(f), Art 11(1)(d)", "compliance", "Meeting the requirements does not by itself rule out a defect"),
              ("Art 7(3)", "improvement", "A later, better version does not by itself show this one was defective"),
              ("Art 11(2)", "control", "The 'defect arose later' defence is not available (software and updates stay in the maker's control)"))
ART7_NONE = ("none", "None of these rules is triggered")


def _art7_keys(rows: list[tuple[str, str, str]], later: bool) -> frozenset:
    arts = {a for a, _ in defect.weigh(rows, later).lines}
    keys = frozenset(k for a, k, _ in ART7_RULES if a in arts)
    return keys or frozenset([ART7_NONE[0]])


@computation("law.art7_rules")
def art7_rules(p: Mapping[str, Any]) -> Outcome:
    """G2: which rules a defect worksheet's circumstances bring in (engines.law.defect.weigh), for
    drawn stances on (c) learning after release, (e) leaving control, (f) cybersecurity requirements
    and (g) recalls. The mistake misreads (e): when the product left the manufacturer's control."""
    rng = random.Random(p["facts"])
    stances = {x: rng.choice(defect.STANCES) for x in "cefg"}
    later = rng.random() < 0.4
    rows = [(x, s, "") for x, s in stances.items()]
    answer = _art7_keys(rows, later)
    e_other = "neutral" if stances["e"] == "toward" else "toward"
    misread = _art7_keys([(x, e_other if x == "e" else s, "") for x, s in stances.items()], later)
    if misread == answer:
        raise Redraw("(e) does not matter here")
    facts = "\n".join(f"• ({x}) {defect.BY_LETTER[x].short}: {defect.STANCE_TEXT[s]}" for x, s in stances.items())
    facts += "\n• A newer version with better safety came out later." if later else ""
    return Outcome(
        answer=answer,
        options=tuple(Option(k, t, a) for a, k, t in ART7_RULES) + (Option(*ART7_NONE, "PLD Art 7(1)-(2)"),),
        steps=tuple(Step(a, t, "", "engines.law.defect.weigh") for a, t in defect.weigh(rows, later).lines),
        mistakes=(Mistake("control_moment", misread),),
        facts={"facts": facts},
        show_me=_show("law", params={"art7": [list(r) for r in rows]}),
    )


CAUSATION = (("10(3)", "Presumed: the defect is established and the damage is typical of it (Art 10(3))"),
             ("10(4)", "Presumed: too complex to prove, and the claimant shows it is likely (Art 10(4))"),
             ("", "Not presumed: the claimant must prove the causal link (Art 10(1))"))
HOW_DEFECT = {"proven": ("proven by the claimant", True), "breach": ("presumed: it breaches a mandatory safety requirement", True),
              "malfunction": ("presumed: an obvious malfunction in ordinary use", True), "open": ("not established", False)}


@computation("law.causation")
def causation(p: Mapping[str, Any]) -> Outcome:
    """G4: whether the causal link is presumed (engines.law.pld.causation_presumed). The mistake
    reads one decisive fact the other way (the nearest wrong reading)."""
    rng = random.Random(p["facts"])
    how = rng.choice(tuple(HOW_DEFECT))
    typical, complex_ = rng.random() < 0.5, rng.random() < 0.35
    established = HOW_DEFECT[how][1]
    rule = pld.causation_presumed(established, typical, complex_)
    near = next((r for r in (pld.causation_presumed(established, not typical, complex_),
                             pld.causation_presumed(not established, typical, complex_),
                             pld.causation_presumed(established, typical, not complex_)) if r != rule), None)
    if near is None:
        raise Redraw("no near miss")
    facts = (f"• The defect is {HOW_DEFECT[how][0]}.\n"
             f"• The damage is {'' if typical else 'not '}of a kind typically caused by such a defect.\n"
             f"• The technology is {'so complex that proving the link is excessively hard; the claimant shows it is likely' if complex_ else 'not especially hard to examine'}.")
    return Outcome(
        answer=frozenset([rule or "prove"]),
        options=tuple(Option(k or "prove", t, f"PLD Art {k or '10(1)'}") for k, t in CAUSATION),
        steps=(Step("defect established (proven or presumed under 10(2))", "yes" if established else "no", "", "PLD Art 10(2)"),
               Step("damage typical of that defect", "yes" if typical else "no", "", "PLD Art 10(3)"),
               Step("excessive difficulty from complexity, link shown likely", "yes" if complex_ else "no", "", "PLD Art 10(4)"),
               Step("causal link", dict(CAUSATION)[rule], "", f"PLD Art {rule or '10(1)'}")),
        mistakes=(Mistake("near_miss", frozenset([near or "prove"])),),
        facts={"facts": facts},
        show_me=_show("law", params={"tree": "pld-defect", "answers": ["yes"] if how == "breach" else
                                     (["no", "no", "yes"] if how == "malfunction" else ["no", "no", "no", "yes" if complex_ else "no"])}),
    )


@computation("law.pld_days_left")
def pld_days_left(p: Mapping[str, Any]) -> Outcome:
    """G4: learning of the damage late, the ten-year expiry ends the three-year limitation early."""
    placed = date(p["placed_year"], 3, 15)
    known = date(p["placed_year"] + p["years_to_knowledge"], p["month"], 1)
    lim = pld.limitation(placed, known, False)
    full = pld.add_years(known, 3)
    if full <= lim["expiry"]:
        raise Redraw("expiry does not bind")
    days = (lim["claim_deadline"] - known).days
    return Outcome(
        answer=float(days), hand=float((pld.add_years(placed, 10) - known).days),
        steps=(Step("three years from knowledge would end", full.isoformat(), "", "PLD Art 16(1)"),
               Step("but the right expires ten years after placing on the market", lim["expiry"].isoformat(), "", "PLD Art 17(1)"),
               Step("days left to start proceedings", float(days), "days", "PLD Art 16(1), 17(1)")),
        mistakes=(Mistake("ignore_expiry", float((full - known).days)),),
        facts={"placed": _day_text(placed), "known": _day_text(known)},
        show_me=_show("law", params={"placed": placed.isoformat(), "knowledge": known.isoformat()}),
    )


@computation("law.documentation_until")
def documentation_until(p: Mapping[str, Any]) -> Outcome:
    """G4: the file a defendant must be able to produce is kept ten years or the support period,
    whichever is longer (CRA Art 13(13), engines.law.support.documentation_kept_until)."""
    placed = date(p["placed_year"], 6, 1)
    use = p["use_years"]
    until = support.documentation_kept_until(placed, use)
    end = support.support_period_end(placed, use)
    ten = date(p["placed_year"] + support.DOCUMENTATION_YEARS, 6, 1)
    return Outcome(
        answer=float(until.year), hand=float(max(ten.year, end.year)),
        steps=(Step("support period ends", end.isoformat(), "", "CRA Art 13(8)"),
               Step("ten years after placing on the market", ten.isoformat(), "", "CRA Art 13(13)"),
               Step("documentation kept until the later of the two", until.isoformat(), "", "CRA Art 13(13)"),
               Step("year", float(until.year), "", "CRA Art 13(13)")),
        mistakes=(Mistake("shorter_arm", float(min(ten.year, end.year))),),
        facts={"placed": _day_text(placed)},
        show_me=_show("law", params={"expected_use_years": float(use)}),
    )
