"""Draw a variant of a template and mark a learner's answer against the engine's value.

A variant whose modelled mistakes would coincide with the answer (within the tolerance) teaches
nothing, so drawing moves on to the next seed instead of dropping the mistake: every variant
carries every mistake its template declares."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engines.core.errors import ValidationError
from engines.practice import registry
from engines.practice.model import DIRECTIONS, KnobResult, Mistake, Outcome, Redraw
from engines.practice.schema import Template, fill

MAX_REDRAWS = 60


@dataclass(frozen=True)
class Variant:
    """One drawn question: its template, seed, parameters, text and computed truth."""

    template: Template
    seed: int
    params: Mapping[str, Any]
    outcome: Outcome
    prompt: str

    @property
    def id(self) -> str:
        return f"{self.template.id}#{self.seed}"

    @property
    def tolerance(self) -> float:
        return self.template.tol(float(self.outcome.answer)) if self.template.kind in ("numeric", "direction") else 0.0

    def answer_text(self) -> str:
        o, t = self.outcome, self.template
        if t.kind == "choice":
            return "; ".join(opt.text for opt in o.options if opt.key in o.answer)
        if t.kind == "knobs":
            return "a view that passes the check (Show me gives one)"
        number = format_number(float(o.answer), t.decimals)
        size = f"{number} {t.unit}".strip()
        return f"{o.direction}, to {size}" if t.kind == "direction" else size


@dataclass(frozen=True)
class Mark:
    correct: bool
    feedback: str
    mistake: str | None = None


def format_number(x: float, decimals: int) -> str:
    """Thousands grouped from five digits on: a four-digit whole number (a year, 2043) stays ungrouped."""
    if decimals == 0 and abs(x) < 9999.5:
        return f"{x:.0f}"
    return f"{x:,.{decimals}f}"


def _distinct(template: Template, outcome: Outcome) -> None:
    """Raise Redraw if a modelled mistake would be marked right (or two options say the same)."""
    def keys(names) -> set[str]:     # wrong-direction feedback is looked up by the direction given
        return {k for k in names if not k.startswith("dir_")}

    missing = sorted(keys(template.mistakes) - keys(m.key for m in outcome.mistakes))
    extra = sorted({m.key for m in outcome.mistakes} - set(template.mistakes))
    if missing or extra:
        raise ValidationError("mistakes", f"{template.id}: template and computation {template.compute} disagree "
                                          f"(missing {missing}, undeclared {extra})")
    if template.kind in ("numeric", "direction"):
        a, tol = float(outcome.answer), template.tol(float(outcome.answer))
        for m in outcome.mistakes:
            if isinstance(m.value, (int, float)) and abs(float(m.value) - a) <= tol:
                raise Redraw(f"mistake {m.key} gives the answer")
            if isinstance(m.value, str) and m.value == outcome.direction:
                raise ValidationError("mistakes", f"{template.id}: mistake {m.key} is the right direction")
    numbers = [m for m in outcome.mistakes if isinstance(m.value, (int, float))]
    for i, m in enumerate(numbers):           # two mistakes with one value: the feedback would be a guess
        if any(abs(float(m.value) - float(n.value)) <= template.tol(float(m.value)) for n in numbers[i + 1:]):
            raise Redraw(f"mistakes {m.key} coincide")
    if template.kind == "choice":
        for m in outcome.mistakes:
            if m.value == outcome.answer:
                raise Redraw(f"mistake {m.key} gives the answer")


def draw(template: Template, seed: int) -> Variant:
    """The variant of ``template`` for ``seed`` (the first seed from ``seed`` that makes a good question)."""
    compute = registry.get(template.compute)
    last = ""
    for k in range(MAX_REDRAWS):
        s = seed + k * 1_000_003
        params = template.draw(s)
        try:
            outcome = compute(params)
            _distinct(template, outcome)
        except Redraw as exc:
            last = str(exc)
            continue
        values = {**{p.name: p.label(params[p.name]) for p in template.params}, **outcome.facts}
        return Variant(template, s, params, outcome, fill(template.prompt, values))
    raise ValidationError("params", f"{template.id}: no good variant in {MAX_REDRAWS} draws from seed {seed} ({last})")


def _mistake_for(variant: Variant, value: Any, close) -> Mistake | None:
    for m in variant.outcome.mistakes:
        if close(m.value, value):
            return m
    return None


def mark(variant: Variant, response: Any, knob_params: Mapping[str, Any] | None = None) -> Mark:
    """Mark ``response``: a number (numeric), a set of option keys (choice), ``(direction, number)``
    (direction) or a :class:`engines.core.scenario.Scenario` (knobs, with the panel's parameters in
    ``knob_params``). Feedback names the modelled mistake the answer matches, if any."""
    t, o = variant.template, variant.outcome
    if t.kind == "numeric":
        x = float(response)
        if abs(x - float(o.answer)) <= variant.tolerance:
            return Mark(True, "Correct.")
        m = _mistake_for(variant, x, lambda mv, v: abs(float(mv) - v) <= t.tol(float(mv)))
        if m:
            return Mark(False, t.mistakes[m.key], m.key)
        return Mark(False, f"Not within {format_number(variant.tolerance, t.decimals)} {t.unit} of the answer; "
                           "work through the solution.")
    if t.kind == "choice":
        picked = frozenset([response] if isinstance(response, str) else response)
        if picked == o.answer:
            return Mark(True, "Correct.")
        m = _mistake_for(variant, picked, lambda mv, v: mv == v)
        if m:
            return Mark(False, t.mistakes[m.key], m.key)
        wrong = [opt for opt in o.options if opt.key in picked - o.answer]
        why = " ".join(f"“{opt.text}” rests on {opt.cite}." for opt in wrong)
        return Mark(False, (t.wrong_option or "Not this one.") + (f" {why}" if why else ""))
    if t.kind == "direction":
        direction, x = response
        if direction not in DIRECTIONS:
            raise ValidationError("direction", f"{direction!r} is not a direction", ", ".join(DIRECTIONS))
        size_ok = abs(float(x) - float(o.answer)) <= variant.tolerance
        if direction == o.direction and size_ok:
            return Mark(True, "Correct.")
        if direction != o.direction:
            key = f"dir_{direction}"
            if key in t.mistakes:
                return Mark(False, t.mistakes[key], key)
            return Mark(False, f"It {o.direction}.")
        m = _mistake_for(variant, float(x), lambda mv, v: isinstance(mv, (int, float)) and abs(float(mv) - v) <= t.tol(float(mv)))
        if m:
            return Mark(False, t.mistakes[m.key], m.key)
        return Mark(False, "Right direction, wrong size; work through the solution.")
    result: KnobResult = registry.get_check(t.check)(response, dict(knob_params or {}), o.target)
    return Mark(result.ok, result.feedback)
