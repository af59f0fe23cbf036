"""A guided tour as data: an ordered list of steps, each a view (scenario, panel, parameters, inner
tabs, frame) with a caption, the source of its claim, and what to point at.

Qt-free, like :mod:`explorer.view_state`: a script can write, check or read a tour. A step stores only
what differs from the defaults (a preset, scenario fields, the panel's parameters), so a shipped
tour stays readable and every step puts the app into the same view whatever came before it. Files
are versioned JSON (``assets/tours/schema.json`` describes them), migrated step by step, saved
atomically; a broken file raises :class:`FileProblem` saying what is wrong, and nothing changes.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engines.core.errors import ValidationError
from engines.core.presets import apply_preset
from engines.core.scenario import FIELD_NAMES, Scenario
from engines.core.versioned import Step, parse_json, upgrade
from explorer.files import FileProblem, atomic_write_text, read_text_limited
from explorer.view_state import ViewState, current_params_version

TOUR_VERSION = 1
MIGRATIONS: dict[int, Step] = {}
"""Tour-file migrations, ``{v: step}`` turning version v into v + 1 (version 1 is current)."""
KIND = "explorer-tour"
MAX_CAPTION = 600          # characters: one to three sentences in large type
MAX_STEPS = 200
MAX_TOUR_BYTES = 2_000_000

_STEP_KEYS = {"claim", "caption", "source", "notes", "preset", "scenario", "panel", "params", "params_version", "tabs",
              "frame", "play", "focus", "highlight"}


@dataclass(frozen=True)
class TourStep:
    """One view of a tour and what to say about it.

    ``preset`` (a scenario or model preset) and ``scenario`` (fields that differ) build the scenario
    from the defaults; ``params`` are the panel's parameters that differ from its defaults;
    ``focus`` names the view (chart) the step is about, which fills the panel in presenter mode;
    ``highlight`` names a view or a parameter's control to mark; ``play`` plays the timeline
    from ``frame``. ``claim`` says which claim of the lesson the step shows. ``params_version`` is the
    version of the panel's ``Params`` the parameters were written for (migrated when the step is shown)."""

    panel: str
    caption: str
    source: str = ""
    claim: str = ""
    notes: str = ""
    preset: str | None = None
    scenario: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    tabs: tuple[str, ...] = ()
    frame: int | None = None
    play: bool = False
    focus: str | None = None
    highlight: str | None = None
    params_version: int | None = None

    def __post_init__(self) -> None:
        if self.params and self.params_version is None:   # written by this app: its current version
            object.__setattr__(self, "params_version", current_params_version(self.panel))

    def build_scenario(self) -> Scenario:
        """The step's scenario: the defaults, then its preset, then its fields."""
        base = apply_preset(Scenario(), self.preset) if self.preset else Scenario()
        if not self.scenario:
            return base
        body = base.to_json_dict()
        values = dict(body["scenario"])
        values.update(self.scenario)
        if "model" in self.scenario and "arch" not in self.scenario:
            values.pop("arch", None)            # the model's own architecture, not the base's
        return Scenario.from_json_dict({**body, "scenario": values})

    def view_state(self) -> ViewState:
        """The full view this step shows (raises ValidationError if its scenario is invalid)."""
        return ViewState(self.build_scenario(), self.panel, {self.panel: dict(self.params)},
                         {self.panel: self.tabs} if self.tabs else {}, self.frame,
                         {self.panel: self.params_version} if self.params_version else {})

    def to_json_dict(self) -> dict:
        out: dict[str, Any] = {"panel": self.panel, "caption": self.caption}
        for key in ("claim", "source", "notes"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.preset:
            out["preset"] = self.preset
        if self.scenario:
            out["scenario"] = dict(self.scenario)
        if self.params:
            out["params"] = dict(self.params)
            out["params_version"] = self.params_version
        if self.tabs:
            out["tabs"] = list(self.tabs)
        if self.frame is not None:
            out["frame"] = self.frame
        if self.play:
            out["play"] = True
        for key in ("focus", "highlight"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_json_dict(cls, doc: Any, where: str = "step") -> "TourStep":
        if not isinstance(doc, Mapping):
            raise ValidationError(where, "must be an object")
        unknown = sorted(set(doc) - _STEP_KEYS)
        if unknown:
            raise ValidationError(f"{where}.{unknown[0]}", "is not a step field", ", ".join(sorted(_STEP_KEYS)))

        def text(key: str, required: bool = False, limit: int = 4000) -> str:
            value = doc.get(key, "")
            if not isinstance(value, str) or (required and not value.strip()):
                raise ValidationError(f"{where}.{key}", "must be " + ("non-empty " if required else "") + "text")
            if len(value) > limit:
                raise ValidationError(f"{where}.{key}", f"is {len(value)} characters long", f"at most {limit}")
            return value

        def name(key: str) -> str | None:
            value = doc.get(key)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValidationError(f"{where}.{key}", "must be a name or absent")
            return value

        scenario, params = doc.get("scenario", {}), doc.get("params", {})
        if not isinstance(scenario, Mapping):
            raise ValidationError(f"{where}.scenario", "must be an object of scenario fields")
        bad = sorted(set(scenario) - FIELD_NAMES)
        if bad:
            raise ValidationError(f"{where}.scenario.{bad[0]}", "is not a scenario field")
        if not isinstance(params, Mapping):
            raise ValidationError(f"{where}.params", "must be an object of the panel's parameters")
        version = doc.get("params_version", 1)    # absent: written before params had versions
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValidationError(f"{where}.params_version", f"{version!r} is not a version", "integer ≥ 1")
        tabs = doc.get("tabs", [])
        if not isinstance(tabs, list) or not all(isinstance(t, str) for t in tabs):
            raise ValidationError(f"{where}.tabs", "must be a list of tab titles")
        frame = doc.get("frame")
        if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int) or frame < 0):
            raise ValidationError(f"{where}.frame", f"{frame!r} is not a frame number", "integer ≥ 0 or absent")
        play = doc.get("play", False)
        if not isinstance(play, bool):
            raise ValidationError(f"{where}.play", "must be true or false")
        panel = name("panel")
        if panel is None:
            raise ValidationError(f"{where}.panel", "missing: every step names its panel")
        return cls(panel=panel, caption=text("caption", True, MAX_CAPTION), source=text("source"),
                   claim=text("claim"), notes=text("notes"), preset=name("preset"), scenario=dict(scenario),
                   params=dict(params), tabs=tuple(tabs), frame=frame, play=play, focus=name("focus"),
                   highlight=name("highlight"), params_version=version if params else None)

    @classmethod
    def from_view(cls, view: ViewState, caption: str, **extra) -> "TourStep":
        """A step that reproduces ``view`` (authoring: "add this view as a step"), storing only what
        differs from the defaults."""
        default = Scenario().to_json_dict()["scenario"]
        current = view.scenario.to_json_dict()["scenario"]
        changes = {k: v for k, v in current.items() if default.get(k) != v}
        if "arch" in changes and current.get("model") != "custom":
            changes.pop("arch")                 # a preset model's architecture follows from its key
        params = dict(view.params.get(view.panel, {}))
        return cls(panel=view.panel, caption=caption, scenario=changes, params=params,
                   tabs=tuple(view.tabs.get(view.panel, ())), frame=view.frame,
                   params_version=view.params_versions.get(view.panel) if params else None, **extra)


@dataclass(frozen=True)
class Tour:
    """A lesson's steps, in order."""

    lesson: str
    title: str
    steps: tuple[TourStep, ...]
    summary: str = ""

    def to_json_dict(self) -> dict:
        return {"kind": KIND, "schema_version": TOUR_VERSION, "lesson": self.lesson, "title": self.title,
                "summary": self.summary, "steps": [s.to_json_dict() for s in self.steps]}

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_json_dict(cls, doc: Any) -> "Tour":
        doc = upgrade(doc, TOUR_VERSION, MIGRATIONS, "tour")
        if doc.get("kind") != KIND:
            raise ValidationError("kind", f"{doc.get('kind')!r} is not a tour", KIND)
        unknown = sorted(set(doc) - {"kind", "schema_version", "lesson", "title", "summary", "steps"})
        if unknown:
            raise ValidationError(unknown[0], "is not a tour field", "kind, schema_version, lesson, title, summary, steps")
        for key in ("lesson", "title"):
            if not isinstance(doc.get(key), str) or not doc[key].strip():
                raise ValidationError(key, "must be non-empty text")
        summary = doc.get("summary", "")
        if not isinstance(summary, str):
            raise ValidationError("summary", "must be text")
        steps = doc.get("steps")
        if not isinstance(steps, list) or not steps:
            raise ValidationError("steps", "must be a non-empty list", f"1…{MAX_STEPS} steps")
        if len(steps) > MAX_STEPS:
            raise ValidationError("steps", f"{len(steps)} steps", f"1…{MAX_STEPS} steps")
        return cls(doc["lesson"], doc["title"],
                   tuple(TourStep.from_json_dict(s, f"steps[{i + 1}]") for i, s in enumerate(steps)), summary)

    @classmethod
    def from_json(cls, text: str) -> "Tour":
        return cls.from_json_dict(parse_json(text))

    # --- editing: each returns a new tour -------------------------------------------------
    def with_step(self, step: TourStep, at: int | None = None) -> "Tour":
        steps = list(self.steps)
        steps.insert(len(steps) if at is None else max(0, min(at, len(steps))), step)
        return replace(self, steps=tuple(steps))

    def without_step(self, index: int) -> "Tour":
        self._check_index(index)
        if len(self.steps) == 1:
            raise ValidationError("steps", "a tour keeps at least one step")
        return replace(self, steps=self.steps[:index] + self.steps[index + 1:])

    def moved(self, index: int, to: int) -> "Tour":
        self._check_index(index)
        steps = list(self.steps)
        steps.insert(max(0, min(to, len(steps) - 1)), steps.pop(index))
        return replace(self, steps=tuple(steps))

    def with_caption(self, index: int, caption: str) -> "Tour":
        self._check_index(index)
        step = TourStep.from_json_dict({**self.steps[index].to_json_dict(), "caption": caption},
                                       f"steps[{index + 1}]")
        return replace(self, steps=self.steps[:index] + (step,) + self.steps[index + 1:])

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.steps):
            raise ValidationError("step", f"{index + 1} is not a step of this tour", f"1…{len(self.steps)}")


def save_tour(tour: Tour, path: str | Path) -> Path:
    """Write ``tour`` atomically: an interrupted save leaves the old file whole."""
    atomic_write_text(path, tour.to_json() + "\n")
    return Path(path)


def load_tour(path: str | Path) -> Tour:
    """Read a tour file; any problem is a :class:`FileProblem` naming the file and the reason."""
    text = read_text_limited(path, MAX_TOUR_BYTES)
    try:
        return Tour.from_json(text)
    except ValidationError as exc:
        raise FileProblem(f"{Path(path).name}: {exc}") from None
