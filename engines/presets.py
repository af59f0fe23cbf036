"""Named scenarios (lecture set-ups) stored as JSON under ``assets/presets/scenarios``.

A preset is a partial scenario: ``{"label", "description", "changes": {field: value}}`` applied on
top of the defaults, so a preset never has to list every field. A bare model key
(``llama3-70b``) is also accepted as a preset name and only switches the model, and ``custom``
keeps the current architecture as a custom one, to be edited field by field.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.assets import asset_path
from engines.errors import ValidationError
from engines.models import PRESETS
from engines.scenario import Scenario

CUSTOM = "custom"   # not a file: keeps the current architecture as a custom one


@dataclass(frozen=True)
class ScenarioPreset:
    key: str
    label: str
    description: str
    changes: dict


def scenario_presets() -> dict[str, ScenarioPreset]:
    import json

    out: dict[str, ScenarioPreset] = {}
    folder = asset_path("presets", "scenarios")
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = ScenarioPreset(path.stem, doc["label"], doc.get("description", ""), dict(doc["changes"]))
    return out


def preset_names() -> list[str]:
    return [*PRESETS, CUSTOM, *scenario_presets()]


def apply_preset(base: Scenario, name: str) -> Scenario:
    """The scenario for preset ``name``: a model key switches the model; ``custom`` makes the current
    architecture a custom one (the editor's fields then edit it); a scenario preset sets its fields."""
    if name in PRESETS:
        return base.with_changes(model=name)
    if name == CUSTOM:
        return base.with_changes(model=CUSTOM)
    presets = scenario_presets()
    if name not in presets:
        raise ValidationError("preset", f"unknown preset {name!r}", ", ".join(preset_names()))
    return Scenario().with_changes(**presets[name].changes)
