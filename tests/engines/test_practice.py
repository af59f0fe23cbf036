"""Practice exercises, Qt-free: every shipped template drawn 200 times with random seeds.

Each variant must mark its own answer right and each modelled mistake wrong with that mistake's
feedback, agree with the lesson's hand formula where it has one, keep every modelled mistake
further from the answer than the tolerance, show the answer among its worked steps, draw its
parameters inside the panels' own ranges, and carry a *Show me* view that applies cleanly."""
from __future__ import annotations

import html
import json
import random
from functools import lru_cache

import pytest

from engines.core.models import PRESETS
from engines.core.params import spec_of
from engines.core.scenario import Scenario
from engines.practice import draw, lesson_templates, mark, shipped_lessons
from engines.practice.export import variants
from engines.practice.registry import get_check
from engines.practice.schema import parse_file
from explorer.lessons.catalog import lesson_tour, lessons
from explorer.lessons.tour import TourStep
from explorer.view_state import params_class

VARIANTS = 200
LESSONS = shipped_lessons()
TEMPLATES = [t for lesson in LESSONS for t in lesson_templates(lesson)]


def _in_range(value, spec: dict) -> bool:
    if spec.get("choices"):
        return value in spec["choices"]
    lo, hi = spec.get("lo"), spec.get("hi")
    return (lo is None or value >= lo) and (hi is None or value <= hi)


@lru_cache(maxsize=None)
def _applies(doc: str) -> None:
    """Build the Show-me step's view as the tour player would, validating scenario and params."""
    raw = json.loads(doc)
    step = TourStep.from_json_dict({**raw, "caption": "Show me"})
    view = step.view_state()                      # builds and validates the scenario
    cls = params_class(view.panel)
    assert cls is not None, f"{view.panel} is not a panel"
    if view.params.get(view.panel):
        view.panel_params(view.panel, cls)          # constructing the Params validates every field


def test_every_shipped_lesson_has_four_templates():
    catalog_ids = {lesson.id for lesson in lessons()}
    assert len(LESSONS) >= 8 and set(LESSONS) <= catalog_ids
    assert all(len(lesson_templates(lesson)) >= 4 for lesson in LESSONS)
    assert sum(len(lesson_templates(lesson)) for lesson in LESSONS) >= 100


def test_template_claims_are_the_tours_claims():
    """One test for all lessons (tests/conftest.py collects garbage before every test item, about
    0.1 s each here: a parametrized item per lesson or template would cost more than the check)."""
    wrong = []
    for lesson in LESSONS:
        claims = {s.claim for s in lesson_tour(lesson).steps if s.claim}
        wrong += [f"{t.id}: claim {t.claim!r} is not one of {lesson}'s tour claims"
                  for t in lesson_templates(lesson) if t.claim and t.claim not in claims]   # empty: no one claim
    assert not wrong, "\n".join(wrong)


def _allowed_uncovered() -> dict[str, list[str]]:
    from engines.core.assets import asset_path

    doc = json.loads(asset_path("exercises", "uncovered_claims.json").read_text(encoding="utf-8"))
    return doc["claims"]


def test_every_tour_claim_is_covered_or_listed_as_uncovered():
    """Each tour claim is tested by a template, or named in assets/exercises/uncovered_claims.json;
    a listed claim that a template now covers must leave the list, so the list only shrinks."""
    allowed = _allowed_uncovered()
    missing, stale = [], []
    for lesson in lessons():
        claims = {s.claim for s in lesson_tour(lesson.id).steps if s.claim}
        covered = {t.claim for t in lesson_templates(lesson.id)}
        listed = set(allowed.get(lesson.id, ()))
        missing += [f"{lesson.id}: {c}" for c in sorted(claims - covered - listed)]
        stale += [f"{lesson.id}: {c}" for c in sorted(listed & covered)]
        stale += [f"{lesson.id}: {c} (not a tour claim)" for c in sorted(listed - claims)]
    assert not missing, "claims no template covers:\n" + "\n".join(missing)
    assert not stale, "listed as uncovered but covered (or gone):\n" + "\n".join(stale)
    assert set(allowed) <= {lesson.id for lesson in lessons()}


def test_parameters_stay_inside_the_panels_ranges():
    outside = []
    for template in TEMPLATES:
        for p in template.params:
            if not p.field:
                continue
            owner, name = p.field.split(".", 1)
            for value in p.values():
                if owner == "scenario" and name == "model":
                    if value not in PRESETS:
                        outside.append(f"{template.id}: {p.name} = {value!r} is not a model preset")
                    continue
                spec = Scenario.spec(name) if owner == "scenario" else spec_of(params_class(owner), name)
                if not _in_range(value, spec):
                    outside.append(f"{template.id}: {p.name} = {value!r} outside {p.field} "
                                   f"{spec.get('lo')}…{spec.get('hi')} {spec.get('choices') or ''}")
    assert not outside, "\n".join(outside)


@pytest.mark.parametrize("lesson", LESSONS)
def test_two_hundred_variants(lesson):
    """Per lesson, not per template: each test item costs a garbage collection (tests/conftest.py);
    every assertion names the variant (template#seed) it failed on."""
    for template in lesson_templates(lesson):
        _two_hundred_variants(template)


def _two_hundred_variants(template):
    rng = random.Random(f"practice:{template.id}")
    declared = {k for k in template.mistakes if not k.startswith("dir_")}
    for _ in range(VARIANTS):
        v = draw(template, rng.randrange(2**31))
        o = v.outcome
        _applies(json.dumps(o.show_me, sort_keys=True))
        if template.kind == "knobs":
            start = TourStep.from_json_dict({**o.start, "caption": "start"}).build_scenario()
            solution = TourStep.from_json_dict({**o.show_me, "caption": "solution"}).build_scenario()
            check = get_check(template.check)
            assert check(solution, {}, o.target).ok, v.id
            assert not check(start, {}, o.target).ok, v.id
            assert mark(v, solution).correct and not mark(v, start).correct
            continue
        assert {m.key for m in o.mistakes if not m.key.startswith("dir_")} == declared, v.id
        if template.kind == "choice":
            keys = {opt.key for opt in o.options}
            assert o.answer <= keys and len(keys) == len(o.options) >= 2, v.id
            assert all(opt.cite for opt in o.options), f"{v.id}: every option cites its rule"
            assert mark(v, o.answer).correct
            for m in o.mistakes:
                assert m.value != o.answer and m.value <= keys, v.id
                got = mark(v, m.value)
                assert not got.correct and got.mistake == m.key, v.id
            continue
        answer, tol = float(o.answer), v.tolerance
        assert tol > 0 and answer == answer, v.id
        if o.hand is not None:
            assert abs(o.hand - answer) <= max(1e-9, 1e-6 * abs(answer)), f"{v.id}: engine {answer} against hand {o.hand}"
        numbers = [s.value for s in o.steps if isinstance(s.value, (int, float))]
        assert any(abs(float(x) - answer) <= tol for x in numbers), f"{v.id}: no step shows the answer {answer}"
        for m in o.mistakes:
            if isinstance(m.value, str):
                assert m.key == f"dir_{m.value}" and m.value != o.direction, v.id
                continue
            assert abs(float(m.value) - answer) > tol, f"{v.id}: mistake {m.key} = {m.value} within {tol} of {answer}"
        if template.kind == "numeric":
            assert mark(v, answer + 0.9 * tol).correct, v.id
            assert not mark(v, answer + 1.1 * tol + 1e-9).correct, v.id
            for m in o.mistakes:
                got = mark(v, m.value)
                assert not got.correct and got.mistake == m.key, f"{v.id}: {m.key}"
        else:
            assert o.direction in ("grows", "shrinks", "unchanged")
            assert mark(v, (o.direction, answer)).correct, v.id
            wrong = next(d for d in ("grows", "shrinks", "unchanged") if d != o.direction)
            assert not mark(v, (wrong, answer)).correct
            for m in o.mistakes:
                if not isinstance(m.value, str):
                    got = mark(v, (o.direction, m.value))
                    assert not got.correct and got.mistake == m.key, v.id


def test_the_same_seed_draws_the_same_variant_and_another_seed_varies():
    t = lesson_templates("A2")[0]
    assert draw(t, 7).prompt == draw(t, 7).prompt
    assert len({draw(t, s).prompt for s in range(30)}) > 5


def test_a_broken_template_file_explains_itself():
    good = {"kind": "explorer-exercises", "schema_version": 1, "lesson": "A1", "templates": [
        {"id": "x", "kind": "numeric", "prompt": "p", "compute": "pipeline.bubble", "params": {}, "tolerance": {"abs": 1}}]}
    assert parse_file(good)[0].id == "x"
    for change, field in ((("kind", "slides"), "kind"), (("schema_version", 99), "schema_version")):
        with pytest.raises(ValueError, match=field):
            parse_file({**good, change[0]: change[1]})
    bad = json.loads(json.dumps(good))
    bad["templates"][0]["kind"] = "essay"
    with pytest.raises(ValueError, match="kind"):
        parse_file(bad)
    bad = json.loads(json.dumps(good))
    bad["templates"][0]["tolerance"] = {}
    with pytest.raises(ValueError, match="tolerance"):
        parse_file(bad)


def test_prompts_fill_names_only():
    from engines.practice.schema import fill

    assert fill("{a} and {b}", {"a": 1, "b": "two"}) == "1 and two"
    assert fill("{x.__class__}", {"x": 1}) == "{x.__class__}"      # not a placeholder: left as text
    with pytest.raises(ValueError, match="placeholder"):
        fill("{missing}", {"x": 1})


def test_moodle_xml_parses_back_with_answers_and_tolerances(tmp_path):
    """Check the export against Moodle's documented question format (docs.moodle.org/en/Moodle_XML_format)."""
    import xml.etree.ElementTree as ET

    from explorer.practice_export import export_exercises

    path, n = export_exercises("A2", tmp_path / "A2.xml", count=5, seed=3)
    root = ET.parse(path).getroot()
    assert root.tag == "quiz"
    questions = list(root)
    assert questions[0].get("type") == "category"
    assert questions[0].find("category/text").text.endswith("A2 Sharding the copies: ZeRO and FSDP")
    by_id = {v.id: v for v in variants(lesson_templates("A2"), 5, 3)}
    body = questions[1:]
    assert len(body) == n == sum(1 for v in by_id.values() if v.template.kind != "knobs")
    kinds = {q.get("type") for q in body}
    assert kinds == {"numerical", "multichoice"}
    for q in body:
        v = by_id[q.find("name/text").text]
        answers = q.findall("answer")
        if q.get("type") == "numerical":
            right = [a for a in answers if float(a.get("fraction")) == 100]
            assert len(right) == 1
            assert float(right[0].find("text").text) == pytest.approx(float(v.outcome.answer), rel=1e-12)
            assert float(right[0].find("tolerance").text) == pytest.approx(v.tolerance, rel=1e-12)
            wrong = [float(a.find("text").text) for a in answers if float(a.get("fraction")) == 0]
            assert sorted(wrong) == pytest.approx(sorted(float(m.value) for m in v.outcome.mistakes))
            assert all(abs(w - float(v.outcome.answer)) > v.tolerance for w in wrong)
            assert q.find("units/unit/unit_name").text == v.template.unit
        else:
            assert q.find("single").text in ("true", "false")
            fractions = [float(a.get("fraction")) for a in answers]
            assert sum(f for f in fractions if f > 0) == pytest.approx(100, abs=0.01)
            right = {html.unescape(a.find("text").text) for a in answers if float(a.get("fraction")) > 0}
            want = {f"{opt.text} ({opt.cite})" for opt in v.outcome.options if opt.key in v.outcome.answer}
            assert right == want
        assert "<li>" in q.find("generalfeedback/text").text      # the worked solution travels with it


def test_worksheet_puts_the_key_after_the_questions(tmp_path):
    from explorer.practice_export import export_exercises

    path, n = export_exercises("A3", tmp_path / "A3.html", count=2)
    text = path.read_text(encoding="utf-8")
    key = text.index("Answer key")
    assert text.count("<h3>Question") == 2 * n          # each question once, then once in the key
    assert "page-break-before:always" in text[:key + 200]
    assert all(text.index(f"<h3>Question {i}</h3>") < key for i in range(1, n + 1))
    with pytest.raises(ValueError, match="format"):
        export_exercises("A3", tmp_path / "A3.docx")
    with pytest.raises(ValueError, match="no exercises"):
        export_exercises("Z9", tmp_path / "Z9.xml")


def test_shipped_files_match_the_published_schema():
    import jsonschema

    from engines.core.assets import asset_path

    schema = json.loads(asset_path("exercises", "schema.json").read_text(encoding="utf-8"))
    for lesson in LESSONS:
        jsonschema.validate(json.loads(asset_path("exercises", f"{lesson}.json").read_text(encoding="utf-8")), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"kind": "explorer-exercises", "schema_version": 1, "lesson": "A1",
                             "templates": [{"id": "x", "kind": "essay", "prompt": "p", "compute": "a.b", "params": {}}]},
                            schema)


def test_command_line_export_takes_out_last_or_second(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    from explorer.cli import main

    assert main(["--export-exercises", "A3", "--variants", "2", str(tmp_path / "a.xml")]) == 0
    assert main(["--export-exercises", "A3", str(tmp_path / "b.html"), "--variants", "1"]) == 0
    assert ET.parse(tmp_path / "a.xml").getroot().tag == "quiz" and (tmp_path / "b.html").stat().st_size > 0
    assert "wrote" in capsys.readouterr().out
    assert main(["--export-exercises", "A3"]) == 2                       # no OUT: explained, nothing written
    with pytest.raises(SystemExit):
        main([str(tmp_path / "stray.xml")])                              # OUT without the option is refused


def test_direction_questions_export_as_sentences_for_every_direction():
    """A direction question becomes a multiple choice whose options read as sentences, the right one
    first: "It grows, to 3.2 GB", "It stays unchanged, at 3.2 GB" (never "It unchanged, to")."""
    import xml.etree.ElementTree as ET

    from engines.practice.export import moodle_xml

    seen = set()
    for lesson in LESSONS:
        items = [v for v in variants(lesson_templates(lesson), 3, 5) if v.template.kind == "direction"]
        if not items:
            continue
        root = ET.fromstring(moodle_xml(lesson, lesson, items))
        for q, v in zip(root.findall("question[@type='multichoice']"), items):
            texts = [html.unescape(a.find("text").text) for a in q.findall("answer")]
            right = [html.unescape(a.find("text").text) for a in q.findall("answer") if float(a.get("fraction")) > 0]
            lead = "It stays unchanged, at " if v.outcome.direction == "unchanged" else f"It {v.outcome.direction}, to "
            assert len(right) == 1 and right[0].startswith(lead), (v.id, right)
            assert not any(t.startswith("It unchanged") for t in texts), (v.id, texts)
            seen.add(v.outcome.direction)
    assert seen == {"grows", "shrinks", "unchanged"}


def test_numbers_read_as_written_years_stay_whole():
    from engines.practice.exercise import format_number

    assert format_number(2043, 0) == "2043"              # a year, not "2,043"
    assert format_number(16384, 0) == "16,384"
    assert format_number(1234.5, 1) == "1,234.5"
