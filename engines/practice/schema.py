"""Exercise templates: versioned data under ``assets/exercises/<lesson>.json`` (see its schema.json).

A template declares its kind, prompt (``{name}`` placeholders only: no format specs, no
expressions), the computation it names, its parameters with their ranges (each tied, where it is a
knob, to the scenario field or panel parameter whose range it must stay inside), the unit and
tolerance, and the feedback for each modelled mistake. Parameters are drawn with a seed."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field as dc_field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from engines.core.assets import asset_path
from engines.core.errors import ValidationError, require
from engines.core.reading import read_json
from engines.practice.model import KINDS

SCHEMA_VERSION = 1
MIGRATIONS: dict = {}
"""Template-file migrations ``{v: step}`` (version 1 is current)."""
KIND = "explorer-exercises"
MAX_FILE_BYTES = 1_000_000
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TEMPLATE_KEYS = {"id", "kind", "claim", "prompt", "compute", "params", "unit", "tolerance", "mistakes",
                  "source", "check", "decimals", "wrong_option"}
_SPEC_KEYS = {"choices", "lo", "hi", "step", "field", "labels"}


@dataclass(frozen=True)
class ParamSpec:
    """A drawn parameter: ``choices`` or an arithmetic range ``lo, lo + step, …, hi``; ``field``
    names the knob it stands for (``scenario.n_gpus``, ``pipeline.v``) or is empty."""

    name: str
    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None
    step: float = 1
    field: str = ""
    labels: Mapping[str, str] = dc_field(default_factory=dict)

    def _count(self) -> int:
        return int(round((self.hi - self.lo) / self.step)) + 1

    def _at(self, k: int) -> Any:
        if all(float(x).is_integer() for x in (self.lo, self.hi, self.step)):
            return int(self.lo + k * self.step)
        decimals = max(0, -int(f"{self.step:e}".split("e")[1]))
        return round(self.lo + k * self.step, decimals + 2)

    def values(self) -> tuple:
        """Every value the parameter can take (for range checks)."""
        return self.choices if self.choices else tuple(self._at(k) for k in range(self._count()))

    def draw(self, rng: random.Random) -> Any:
        return rng.choice(self.choices) if self.choices else self._at(rng.randrange(self._count()))

    def label(self, value: Any) -> str:
        return str(self.labels.get(str(value), value))


@dataclass(frozen=True)
class Template:
    id: str
    lesson: str
    kind: str
    prompt: str
    compute: str
    params: tuple[ParamSpec, ...]
    claim: str = ""
    unit: str = ""
    tolerance: Mapping[str, float] = dc_field(default_factory=dict)
    mistakes: Mapping[str, str] = dc_field(default_factory=dict)
    source: str = ""
    check: str = ""
    decimals: int = 2
    wrong_option: str = ""

    def tol(self, answer: float) -> float:
        """The accepted distance from ``answer``: the larger of the absolute and relative tolerances."""
        return max(float(self.tolerance.get("abs", 0.0)), float(self.tolerance.get("rel", 0.0)) * abs(answer))

    def spec(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise ValidationError("params", f"{self.id} has no parameter {name!r}")

    def draw(self, seed: int) -> dict[str, Any]:
        rng = random.Random(f"{self.id}:{seed}")
        return {p.name: p.draw(rng) for p in self.params}


def _spec(name: str, raw: Any, where: str) -> ParamSpec:
    require(isinstance(raw, Mapping), where, "must be an object")
    bad = sorted(set(raw) - _SPEC_KEYS)
    require(not bad, f"{where}.{bad[0] if bad else ''}", "is not a parameter key", ", ".join(sorted(_SPEC_KEYS)))
    if "choices" in raw:
        ch = raw["choices"]
        require(isinstance(ch, list) and len(ch) >= 1, f"{where}.choices", "must be a non-empty list")
        return ParamSpec(name, tuple(ch), field=str(raw.get("field", "")), labels=dict(raw.get("labels", {})))
    lo, hi, step = raw.get("lo"), raw.get("hi"), raw.get("step", 1)
    for key, v in (("lo", lo), ("hi", hi), ("step", step)):
        require(isinstance(v, (int, float)) and not isinstance(v, bool), f"{where}.{key}", "must be a number")
    require(hi >= lo and step > 0, where, f"empty range {lo}…{hi} step {step}", "lo ≤ hi, step > 0")
    return ParamSpec(name, (), lo, hi, step, str(raw.get("field", "")), dict(raw.get("labels", {})))


def parse_template(raw: Any, lesson: str, where: str) -> Template:
    require(isinstance(raw, Mapping), where, "must be an object")
    bad = sorted(set(raw) - _TEMPLATE_KEYS)
    require(not bad, f"{where}.{bad[0] if bad else ''}", "is not a template key", ", ".join(sorted(_TEMPLATE_KEYS)))
    for key in ("id", "kind", "prompt", "compute"):
        require(isinstance(raw.get(key), str) and raw[key].strip(), f"{where}.{key}", "must be non-empty text")
    require(raw["kind"] in KINDS, f"{where}.kind", f"{raw['kind']!r} is not a kind", ", ".join(KINDS))
    params = raw.get("params", {})
    require(isinstance(params, Mapping), f"{where}.params", "must be an object")
    specs = tuple(_spec(k, v, f"{where}.params.{k}") for k, v in params.items())
    tol = raw.get("tolerance", {})
    require(isinstance(tol, Mapping) and set(tol) <= {"abs", "rel"}
            and all(isinstance(v, (int, float)) and v >= 0 for v in tol.values()),
            f"{where}.tolerance", "must be {abs, rel} non-negative numbers")
    if raw["kind"] in ("numeric", "direction"):
        require(bool(tol) and any(v > 0 for v in tol.values()), f"{where}.tolerance", "a numeric answer needs one")
    if raw["kind"] == "knobs":
        require(isinstance(raw.get("check"), str) and raw["check"], f"{where}.check", "a knobs template names its check")
    mistakes = raw.get("mistakes", {})
    require(isinstance(mistakes, Mapping) and all(isinstance(v, str) for v in mistakes.values()),
            f"{where}.mistakes", "must map mistake keys to feedback text")
    return Template(id=raw["id"], lesson=lesson, kind=raw["kind"], prompt=raw["prompt"], compute=raw["compute"],
                    params=specs, claim=str(raw.get("claim", "")), unit=str(raw.get("unit", "")),
                    tolerance=dict(tol), mistakes=dict(mistakes), source=str(raw.get("source", "")),
                    check=str(raw.get("check", "")), decimals=int(raw.get("decimals", 2)),
                    wrong_option=str(raw.get("wrong_option", "")))


def parse_file(doc: Any, where: str = "exercises") -> tuple[Template, ...]:
    from engines.core.versioned import upgrade

    doc = upgrade(doc, SCHEMA_VERSION, MIGRATIONS, "exercises")
    require(doc.get("kind") == KIND, f"{where}.kind", f"{doc.get('kind')!r} is not an exercise file", KIND)
    lesson = doc.get("lesson")
    require(isinstance(lesson, str) and lesson, f"{where}.lesson", "must name the lesson")
    raw = doc.get("templates")
    require(isinstance(raw, list) and raw, f"{where}.templates", "must be a non-empty list")
    out = tuple(parse_template(t, lesson, f"{where}.templates[{i}]") for i, t in enumerate(raw))
    ids = [t.id for t in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    require(not dup, f"{where}.templates", f"duplicate template id {dup[0] if dup else ''}")
    return out


def load_file(path: str | Path) -> tuple[Template, ...]:
    """Templates from one file (size-limited, depth-limited read); problems name the file."""
    doc = read_json(path, MAX_FILE_BYTES, "exercises")
    return parse_file(doc, Path(path).name)


@lru_cache(maxsize=None)
def lesson_templates(lesson: str) -> tuple[Template, ...]:
    """The shipped templates of ``lesson`` (empty when it has none yet)."""
    path = asset_path("exercises", f"{lesson}.json")
    return load_file(path) if path.exists() else ()


def shipped_lessons() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in asset_path("exercises").glob("[A-Z][0-9].json")))


def fill(prompt: str, values: Mapping[str, Any]) -> str:
    """``prompt`` with each ``{name}`` replaced by ``values[name]`` (an unknown name is an error)."""
    def sub(m: re.Match) -> str:
        if m.group(1) not in values:
            raise ValidationError("prompt", f"placeholder {{{m.group(1)}}} has no value", ", ".join(sorted(values)))
        return str(values[m.group(1)])
    return PLACEHOLDER.sub(sub, prompt)
