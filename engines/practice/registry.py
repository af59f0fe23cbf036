"""Named computations a template may call, and named checks for set-the-knobs exercises.

A template names its computation; nothing in a template is evaluated. Each computation takes the
drawn parameters (a mapping) and returns an :class:`engines.practice.model.Outcome` built from the
topic engine's own functions, so the marked answer is the number the panel shows."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

from engines.core.errors import ValidationError
from engines.practice.model import KnobResult, Outcome

Computation = Callable[[Mapping[str, Any]], Outcome]
Check = Callable[[Any, Mapping[str, Any], Mapping[str, Any]], KnobResult]

COMPUTATIONS: dict[str, Computation] = {}
CHECKS: dict[str, Check] = {}
TOPIC_MODULES = ("training", "serving", "compute", "law", "k8s", "trading")


def computation(name: str) -> Callable[[Computation], Computation]:
    """Register ``fn`` under ``name`` (``topic.what``)."""
    def wrap(fn: Computation) -> Computation:
        if name in COMPUTATIONS:
            raise ValueError(f"computation {name!r} registered twice")
        COMPUTATIONS[name] = fn
        return fn
    return wrap


def check(name: str) -> Callable[[Check], Check]:
    """Register a knobs check ``fn(scenario, panel_params, target) -> KnobResult`` under ``name``."""
    def wrap(fn: Check) -> Check:
        CHECKS[name] = fn
        return fn
    return wrap


_loaded: list[bool] = []


def _load() -> None:
    """Import the topic modules once (their decorators fill the tables)."""
    if not _loaded:
        for mod in TOPIC_MODULES:
            importlib.import_module(f"engines.practice.topics.{mod}")
        _loaded.append(True)


def get(name: str) -> Computation:
    """The computation ``name``; a ValidationError lists the known ones."""
    _load()
    if name not in COMPUTATIONS:
        raise ValidationError("compute", f"unknown computation {name!r}", ", ".join(sorted(COMPUTATIONS)))
    return COMPUTATIONS[name]


def get_check(name: str) -> Check:
    _load()
    if name not in CHECKS:
        raise ValidationError("check", f"unknown knobs check {name!r}", ", ".join(sorted(CHECKS)))
    return CHECKS[name]
