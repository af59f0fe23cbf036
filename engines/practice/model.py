"""What a named computation hands back for one drawn variant: the answer, the worked steps, the
modelled mistakes and the view that shows it. Frozen, so marking and exports cannot disagree."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from engines.core.errors import ValidationError

KINDS = ("numeric", "choice", "direction", "knobs")
DIRECTIONS = ("grows", "shrinks", "unchanged")

Value = Union[float, str, frozenset]


class Redraw(ValidationError):
    """Raised by a computation when the drawn parameters make a poor question (a mistake that
    coincides with the answer, an invalid layout): the drawer tries the next seed."""

    def __init__(self, why: str) -> None:
        super().__init__("params", why)


@dataclass(frozen=True)
class Step:
    """One line of a worked solution: what was computed, its value from the engine, and the source."""

    text: str
    value: float | str
    unit: str = ""
    source: str = ""


@dataclass(frozen=True)
class Mistake:
    """A common mistake as an alternative computation: ``value`` is what that mistake produces."""

    key: str
    value: Value


@dataclass(frozen=True)
class Option:
    """A choice answer with the article, rule or paper that decides it."""

    key: str
    text: str
    cite: str = ""


@dataclass(frozen=True)
class Outcome:
    """One variant's computed truth.

    ``answer``: a number (numeric, direction: the new size), option key(s) (choice: a frozenset)
    or, for knobs, the name of the check the learner's state must pass. ``hand`` is an independent
    textbook formula's value where the lesson has one. ``show_me`` is a tour-step diff (panel,
    preset, scenario, params) that opens the panel at the variant's state; ``start`` is where a
    knobs exercise begins. ``facts`` fill the prompt's placeholders beside the drawn parameters."""

    answer: Value
    steps: tuple[Step, ...]
    show_me: Mapping[str, Any]
    mistakes: tuple[Mistake, ...] = ()
    options: tuple[Option, ...] = ()
    direction: str | None = None
    hand: float | None = None
    facts: Mapping[str, str] = field(default_factory=dict)
    start: Mapping[str, Any] | None = None
    target: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KnobResult:
    """A knobs check's verdict on a learner's view state."""

    ok: bool
    feedback: str
