"""What the rule engines read from a walk: the line and reasons the outcome card and the decision
record show under an outcome (CRA assessment, PLD liable operators, PLD damage heads)."""
from __future__ import annotations

from dataclasses import dataclass

from engines.law import cra, pld
from engines.law.trees import Walk

CRA_CHAIN = ("cra-scope", "cra-classification", "cra-route", "cra-obligations")
"""The chained CRA trees: the full assessment needs a walk started at the scope tree."""


@dataclass(frozen=True)
class Reading:
    """``head``: one line of the engine's result ("" where no engine reads this node); ``reasons``:
    (article, text) pairs behind it."""
    head: str = ""
    reasons: tuple[tuple[str, str], ...] = ()


def cra_facts(walk: Walk) -> dict:
    """The walk's facts that :func:`engines.law.cra.assess` reads."""
    return {k: v for k, v in walk.facts.items() if k in cra.FACT_KEYS}


def reading(walk: Walk) -> Reading:
    """The rule engine's reading of the facts collected so far, at the node the walk has reached."""
    node, tree, facts = walk.current, walk.tree, walk.facts
    if tree.key in CRA_CHAIN and node.is_outcome and walk.start == "cra-scope":
        a = cra.assess(cra_facts(walk))
        routes = ", ".join(sorted(a.routes)) or "none"
        head = (f"Rule engine: in scope = {'yes' if a.in_scope else 'no'}, role = {a.role}, tier = {a.tier or '–'}, "
                f"routes = {routes}")
        return Reading(head, tuple(tuple(r) for r in a.reasons))
    if node.engine == "pld.liable":
        keys = set(pld.LIABLE_DEFAULTS)
        who = pld.liable({k: v for k, v in facts.items() if k in keys})
        return Reading("Rule engine: liable = " + ", ".join(o for o in pld.OPERATORS if o in who))
    if tree.key == "pld-damage" and node.is_outcome:
        ok = pld.compensable(facts["damage"], bool(facts.get("professional_use", False)))
        return Reading(f"Rule engine: {facts['damage']} compensable = {'yes' if ok else 'no'}")
    return Reading()
