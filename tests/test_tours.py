"""Tour files and the syllabus catalogue, without Qt: the format, its schema, and the content rules."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.core.errors import ValidationError
from engines.core.scenario import Scenario
from explorer.files import FileProblem
from explorer.lessons import Tour, TourStep, courses, lesson, lesson_tour, lessons, load_tour, save_tour
from explorer.lessons.tour import MAX_CAPTION
from explorer.view_state import ViewState

PANELS = {row[1] for row in __import__("panels").REGISTRY}
ROOT = Path(__file__).resolve().parent.parent
TOURS = ROOT / "assets" / "tours"
SYLLABUS_IDS = [f"{c}{i}" for c, n in zip("ABCDEFGH", (5, 4, 2, 3, 4, 4, 4, 4)) for i in range(1, n + 1)]
MUST_BE_READY = ["A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3", "B4", "E1", "E2", "E3", "E4",
                 "F1", "F2", "F3", "F4", "G1", "G2", "G3", "G4", "C1", "C2", "D1", "D2", "D3", "H4"]


def test_the_catalogue_has_the_syllabus_thirty_lessons_in_eight_courses():
    cs = courses()
    assert [c.id for c in cs] == list("ABCDEFGH")
    assert [x.id for x in lessons()] == SYLLABUS_IDS
    assert all(x.title and 40 <= len(x.summary) <= 220 for x in lessons())   # two lines on the start page
    assert lesson("a2").id == "A2"
    with pytest.raises(ValidationError, match="no lesson 'Z9'"):
        lesson("Z9")


def test_every_lesson_whose_panel_exists_is_ready_and_the_rest_are_coming():
    ready = {x.id for x in lessons() if x.ready}
    assert set(MUST_BE_READY) <= ready
    for x in lessons():
        assert x.ready == (TOURS / f"{x.id}.json").exists(), x.id


def test_a_lesson_whose_panel_is_missing_is_coming(monkeypatch):
    import panels

    monkeypatch.setattr(panels, "REGISTRY", [row for row in panels.REGISTRY if row[1] != "trading"])
    assert not lesson("H1").ready and lesson("E1").ready
    with pytest.raises(ValidationError, match="coming with its panel"):
        lesson_tour("H1")


@pytest.mark.parametrize("lesson_id", MUST_BE_READY)
def test_a_shipped_tour_keeps_the_rules(lesson_id):
    """At least three steps; each says which claim it shows, in at most three sentences, with a source,
    on one of the lesson's panels; the file matches the published schema."""
    import jsonschema

    path = TOURS / f"{lesson_id}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(doc, json.loads((TOURS / "schema.json").read_text(encoding="utf-8")))
    tour = load_tour(path)
    assert tour.lesson == lesson_id and len(tour.steps) >= 3
    claims = set()
    for i, step in enumerate(tour.steps, 1):
        assert step.claim.strip() and step.source.strip(), f"{lesson_id} step {i}: claim and source"
        assert step.panel in PANELS, f"{lesson_id} step {i}: no panel {step.panel}"
        assert len(step.caption) <= MAX_CAPTION
        sentences = [s for s in step.caption.replace("?", ".").replace("!", ".").split(". ") if s.strip()]
        assert len(sentences) <= 4, f"{lesson_id} step {i}: {len(sentences)} sentences"
        step.view_state()                                  # its scenario is valid
        claims.add(step.claim)
    assert len(claims) >= 3                                # the steps show different claims


def test_a_step_is_stored_as_a_diff_and_rebuilds_the_same_view():
    view = ViewState(Scenario().with_changes(model="llama3-70b", strategy="zero1", n_gpus=128), "memory",
                     {"memory": {"fp32_grad_accum": True}}, {"memory": ("Communication per step",)}, 3)
    step = TourStep.from_view(view, "A caption.")
    assert step.scenario == {"model": "llama3-70b", "n_gpus": 128, "strategy": "zero1"}   # no arch: the preset's
    again = TourStep.from_json_dict(json.loads(json.dumps(step.to_json_dict()))).view_state()
    assert again.scenario == view.scenario and again.panel == "memory" and again.frame == 3
    assert again.params == {"memory": {"fp32_grad_accum": True}} and again.tabs == {"memory": ("Communication per step",)}


def test_preset_then_fields_build_the_scenario():
    step = TourStep(panel="memory", caption="x", preset="llama3-70b", scenario={"n_gpus": 16})
    s = step.build_scenario()
    assert s.model == "llama3-70b" and s.arch.layers == 80 and s.n_gpus == 16
    with pytest.raises(ValidationError, match="n_gpus"):
        TourStep(panel="memory", caption="x", scenario={"n_gpus": 0}).view_state()


def _tour(n=3) -> Tour:
    return Tour("MY", "Mine", tuple(TourStep(panel="overview", caption=f"Step {i}.") for i in range(n)))


def test_editing_returns_new_tours_and_keeps_at_least_one_step():
    t = _tour()
    assert [s.caption for s in t.moved(0, 2).steps] == ["Step 1.", "Step 2.", "Step 0."]
    assert [s.caption for s in t.without_step(1).steps] == ["Step 0.", "Step 2."]
    assert t.with_caption(1, "New.").steps[1].caption == "New." and t.steps[1].caption == "Step 1."
    assert len(t.with_step(TourStep(panel="law", caption="x"), 1).steps) == 4
    with pytest.raises(ValidationError, match="at least one step"):
        _tour(1).without_step(0)
    with pytest.raises(ValidationError, match="caption"):
        t.with_caption(0, "   ")
    with pytest.raises(ValidationError, match="caption"):
        t.with_caption(0, "x" * (MAX_CAPTION + 1))


def test_save_and_load_round_trip(tmp_path):
    t = _tour()
    assert load_tour(save_tour(t, tmp_path / "t.json")) == t


@pytest.mark.parametrize("doc, says", [
    ("{", "not valid JSON"),
    ('{"kind": "explorer-tour", "schema_version": 2, "lesson": "X", "title": "T", "steps": []}', "newer"),
    ('{"kind": "explorer-view", "schema_version": 1}', "not a tour"),
    ('{"kind": "explorer-tour", "schema_version": 1, "lesson": "X", "title": "T", "steps": []}', "non-empty list"),
    ('{"kind": "explorer-tour", "schema_version": 1, "lesson": "X", "title": "T", "steps": [{"caption": "c"}]}',
     "steps\\[1\\].panel"),
    ('{"kind": "explorer-tour", "schema_version": 1, "lesson": "X", "title": "T", '
     '"steps": [{"panel": "memory", "caption": "c", "colour": 1}]}', "colour"),
    ('{"kind": "explorer-tour", "schema_version": 1, "lesson": "X", "title": "T", '
     '"steps": [{"panel": "memory", "caption": "c", "scenario": {"gpus": 8}}]}', "scenario.gpus"),
    ('{"kind": "explorer-tour", "schema_version": 1, "lesson": "X", "title": "T", '
     '"steps": [{"panel": "memory", "caption": "c", "frame": -1}]}', "frame"),
])
def test_a_broken_tour_file_says_what_is_wrong_and_changes_nothing(tmp_path, doc, says):
    path = tmp_path / "bad.json"
    path.write_text(doc, encoding="utf-8")
    with pytest.raises(FileProblem, match=f"bad.json: .*{says}"):
        load_tour(path)
    assert path.read_text(encoding="utf-8") == doc
