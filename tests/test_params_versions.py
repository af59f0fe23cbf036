"""Versioned panel parameters: a renamed field still opens from an older saved view or tour."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from engines.core.errors import ValidationError
from engines.core.params import ParamsBase, param
from explorer import view_state as vs
from explorer.files import FileProblem
from explorer.lessons.tour import Tour, TourStep, load_tour, save_tour
from explorer.view_state import ViewState, load_view_state, save_view_state

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class ParamsV1(ParamsBase):
    batch: int = param(8, 1, 64, label="Batch")
    rate: float = param(1.0, 0.0, 10.0, label="Rate")


def migrate_1(d: dict) -> dict:
    """Version 2 renamed ``batch`` to ``batch_size``."""
    d = dict(d)
    if "batch" in d:
        d["batch_size"] = d.pop("batch")
    return d


@dataclass(frozen=True)
class ParamsV2(ParamsBase):
    version = 2
    migrations = (migrate_1,)
    batch_size: int = param(8, 1, 64, label="Batch")
    rate: float = param(1.0, 0.0, 10.0, label="Rate")


@pytest.fixture
def serving_is_v2(monkeypatch):
    """Pretend the serving panel's Params is ParamsV2 (a field renamed since version 1)."""
    monkeypatch.setattr(vs, "params_class", lambda key: ParamsV2 if key == "serving" else None)


def test_a_version_1_dict_loads_into_version_2_and_is_left_alone():
    old = {"batch": 16, "rate": 2.5}
    assert ParamsV2.from_dict(old, 1) == ParamsV2(batch_size=16, rate=2.5)
    assert old == {"batch": 16, "rate": 2.5}
    with pytest.raises(ValidationError, match="batch"):     # read as current, the old name is unknown
        ParamsV2.from_dict(old)


def test_a_newer_or_bad_version_is_refused_naming_the_owner_and_versions():
    with pytest.raises(ValidationError) as exc:
        ParamsV2.upgrade({}, 3, "params.serving")
    assert exc.value.field == "params.serving" and "version 3" in str(exc.value) and "version 2" in str(exc.value)
    for bad in (0, True, "2"):
        with pytest.raises(ValidationError, match="not a version"):
            ParamsV2.upgrade({}, bad)


def test_a_version_without_its_migration_steps_is_a_declaration_error():
    with pytest.raises(TypeError, match="needs 2 migration steps"):
        @dataclass(frozen=True)
        class Broken(ParamsBase):
            version = 3
            migrations = (migrate_1,)


def test_a_view_file_without_versions_is_migrated_on_load(tmp_path, serving_is_v2):
    doc = ViewState().to_json_dict()
    doc.pop("params_versions")
    doc["params"] = {"serving": {"batch": 4}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    view = load_view_state(path)
    assert view.params == {"serving": {"batch_size": 4}} and view.params_versions == {"serving": 2}
    assert view.panel_params("serving", ParamsV2) == ParamsV2(batch_size=4)
    again = json.loads(save_view_state(view, tmp_path / "new.json").read_text())
    assert again["params_versions"] == {"serving": 2}


def test_a_view_read_without_upgrading_keeps_its_version_until_the_panel_reads_it(serving_is_v2):
    doc = ViewState().to_json_dict()
    doc["params"], doc["params_versions"] = {"serving": {"batch": 4}}, {"serving": 1}
    view = ViewState.from_json_dict(doc)      # the restart path: no panel imported yet
    assert view.params_versions == {"serving": 1}
    assert view.panel_params("serving", ParamsV2) == ParamsV2(batch_size=4)


def test_a_view_from_a_newer_app_is_refused_naming_panel_and_versions(tmp_path, serving_is_v2):
    doc = ViewState().to_json_dict()
    doc["params"], doc["params_versions"] = {"serving": {"batch_size": 4}}, {"serving": 5}
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FileProblem) as exc:
        load_view_state(path)
    text = str(exc.value)
    assert "future.json" in text and "params.serving" in text and "version 5" in text and "version 2" in text


def test_a_tour_step_without_a_version_is_migrated_when_shown(tmp_path, serving_is_v2):
    doc = Tour("MY", "Mine", (TourStep(panel="overview", caption="x"),)).to_json_dict()
    doc["steps"] = [{"panel": "serving", "caption": "Old.", "params": {"batch": 32}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    step = load_tour(path).steps[0]
    assert step.params_version == 1
    view = step.view_state()
    assert view.panel_params("serving", ParamsV2) == ParamsV2(batch_size=32)
    saved = json.loads(save_tour(load_tour(path), tmp_path / "again.json").read_text())
    assert saved["steps"][0]["params_version"] == 1       # kept as written until someone re-records it


def test_a_real_saved_view_still_loads():
    """tests/data/view_v1.json: File ▸ Save view of lesson A2 step 2, written before params had versions."""
    from engines.memory.params import Params as MemoryParams

    view = load_view_state(DATA / "view_v1.json")
    assert view.panel == "memory" and view.params_versions["memory"] == MemoryParams.version
    p = view.panel_params("memory", MemoryParams)
    assert p.wrap_blocks == 1 and p.collective == "ring" and p.cpu_gbps == 25.0
    assert view.scenario.model == "llama3-70b" and view.scenario.n_gpus == 64 and view.frame == 30
