"""Saved views and scenario files: versioned, migrated step by step, refused with a reason."""
import json

import pytest

from engines.core.errors import ValidationError
from engines.core.scenario import Scenario
from engines.serving.params import Params as ServingParams
from engines.core.versioned import upgrade
from explorer.files import FileProblem
from explorer.view_state import VIEW_STATE_VERSION, ViewState, load_view_state, save_view_state

DATA = __import__("pathlib").Path(__file__).parent / "data"


def test_a_version_1_scenario_file_opens_unchanged():
    text = (DATA / "scenario_v1.json").read_text()
    s = Scenario.from_json(text)
    assert s.model == "llama3-70b" and s.serve_batch == 32
    assert json.loads(s.to_json()) == json.loads(text)


def test_a_view_round_trips_through_its_file(tmp_path):
    view = ViewState(Scenario().with_changes(serve_batch=16), "serving",
                     {"serving": ServingParams(traffic_per_s=250.0).to_dict()}, {"serving": ("Measured decode",)}, 42)
    path = save_view_state(view, tmp_path / "v.json")
    assert load_view_state(path) == view
    assert json.loads(path.read_text())["schema_version"] == VIEW_STATE_VERSION


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.update(schema_version=99), "schema_version"),
    (lambda d: d.pop("schema_version"), "schema_version"),
    (lambda d: d.update(kind="something else"), "kind"),
    (lambda d: d.update(frame=-3), "frame"),
    (lambda d: d.update(params=["x"]), "params"),
    (lambda d: d.update(tabs={"serving": "one"}), "tabs"),
    (lambda d: d["scenario"]["scenario"].update(serve_batch=0), "serve_batch"),
])
def test_a_broken_view_says_what_is_wrong(tmp_path, edit, field):
    doc = ViewState().to_json_dict()
    edit(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FileProblem) as exc:
        load_view_state(path)
    assert field in str(exc.value) and "bad.json" in str(exc.value)


def test_not_json_and_not_a_file_are_explained(tmp_path):
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(FileProblem, match="not valid JSON"):
        load_view_state(tmp_path / "x.json")
    with pytest.raises(FileProblem, match="cannot open"):
        load_view_state(tmp_path / "missing.json")


def test_migrations_run_one_step_at_a_time_and_leave_the_input_alone():
    steps = {1: lambda d: {**d, "schema_version": 2, "b": d["a"] * 2}, 2: lambda d: {**d, "schema_version": 3}}
    old = {"schema_version": 1, "a": 4}
    assert upgrade(old, 3, steps, "test") == {"schema_version": 3, "a": 4, "b": 8}
    assert old == {"schema_version": 1, "a": 4}
    with pytest.raises(ValidationError, match="no migration"):
        upgrade({"schema_version": 1}, 3, {2: steps[2]}, "test")


def test_params_refuse_bad_values_and_unknown_fields():
    p = ServingParams()
    assert ServingParams(**p.to_dict()) == p
    with pytest.raises(ValidationError) as exc:
        ServingParams(max_utilisation_pct=120)
    assert exc.value.field == "max_utilisation_pct" and "98" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        ServingParams.from_dict({"warp_speed": 9})
    assert exc.value.field == "warp_speed"
    with pytest.raises(ValidationError):
        ServingParams(prompt_tokens=12.5)
