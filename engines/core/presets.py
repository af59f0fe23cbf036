"""Named scenarios (lecture set-ups) stored as JSON under ``assets/presets/scenarios``.

A preset is a partial scenario: ``{"label", "description", "changes": {field: value}}`` applied on
top of the defaults, so a preset never has to list every field. A bare model key
(``llama3-70b``) is also accepted as a preset name and only switches the model, and ``custom``
keeps the current architecture as a custom one, to be edited field by field.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.assets import asset_path
from engines.core.errors import ValidationError
from engines.core.models import PRESETS
from engines.core.scenario import Scenario

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


def switch_model(base: Scenario, name: str) -> tuple[Scenario, str | None]:
    """``base`` with preset model ``name``, keeping its parallel layout where the new shape allows it,
    and a note saying what had to change (None when nothing did).

    Tensor parallelism splits whole attention heads across its ranks (Megatron-LM, Shoeybi et al.
    2019, §3), so TP must divide the head count; a pipeline needs at least one layer per stage. A
    degree that does not fit drops to its largest divisor that does, so the GPU count stays a
    multiple of TP × PP: TP 8 with SmolLM2-135M's 9 heads becomes TP 1, not a refusal. Sequence
    parallelism (Korthikanti et al. 2022) shards along TP, so it turns off when TP drops to 1."""
    if name not in PRESETS:
        raise ValidationError("model", f"unknown preset {name!r}", ", ".join([*PRESETS, CUSTOM]))
    arch = PRESETS[name]
    tp = max(d for d in _divisors(base.tp) if arch.heads % d == 0)
    pp = max(d for d in _divisors(base.pp) if d <= arch.layers)
    sp = base.sequence_parallel and tp > 1
    notes = []
    if tp != base.tp:
        notes.append(f"TP {base.tp} → {tp} ({arch.label} has {arch.heads} attention heads; TP splits whole heads)")
    if pp != base.pp:
        notes.append(f"PP {base.pp} → {pp} ({arch.label} has {arch.layers} layers, at least one per stage)")
    if sp != base.sequence_parallel:
        notes.append("sequence parallelism off (it needs TP > 1)")
    new = base.with_changes(model=name, tp=tp, pp=pp, sequence_parallel=sp)
    return new, ("; ".join(notes) if notes else None)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def apply_preset(base: Scenario, name: str) -> Scenario:
    """The scenario for preset ``name``: a model key switches the model (see :func:`switch_model`);
    ``custom`` makes the current architecture a custom one (the editor's fields then edit it); a
    scenario preset sets its fields."""
    if name in PRESETS:
        return switch_model(base, name)[0]
    if name == CUSTOM:
        return base.with_changes(model=CUSTOM)
    presets = scenario_presets()
    if name not in presets:
        raise ValidationError("preset", f"unknown preset {name!r}", ", ".join(preset_names()))
    return Scenario().with_changes(**presets[name].changes)
