"""Every reader of a user's file, by name: a path reader and, where there is one, a text parser and a
valid seed document (for the mutation fuzz). Shared by the bad-input tests and the fuzz."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from engines.core.assets import asset_path
from engines.core.errors import ValidationError
from explorer.files import FileProblem

DATA = Path(__file__).parents[1] / "data"
OWN_ERRORS = (ValidationError, FileProblem)
"""The project's own error types: a reader raises nothing else, whatever the file holds."""


def _scenario_path(p):
    from explorer.scenario_model import ScenarioModel

    return ScenarioModel().load(p)


def _scenario_text(text):
    from engines.core.scenario import Scenario

    return Scenario.from_json(text)


def _view_path(p):
    from explorer.view_state import load_view_state

    return load_view_state(p)


def _view_text(text):
    from explorer.view_state import ViewState

    return ViewState.from_json(text)


def _tour_path(p):
    from explorer.lessons.tour import load_tour

    return load_tour(p)


def _tour_text(text):
    from explorer.lessons.tour import Tour

    return Tour.from_json(text)


def _price_path(p):
    from engines.selfhost.prices import load_prices

    return load_prices(p)


def _price_text(text):
    from engines.selfhost.prices import parse_price_text

    return parse_price_text(text)


def _sbom_path(p):
    from engines.law import sbom

    return sbom.read(p)


def _sbom_text(text):
    from engines.law import sbom

    return sbom.parse(text, "fuzz.json")


def _advisory_path(p):
    from engines.law import advisories

    return advisories.read(p)


def _advisory_text(text):
    from engines.law import advisories

    return advisories.parse(text, "fuzz.json")


def _dump_path(p):
    from engines.k8s.dump import read_dump

    return read_dump(p)


def _dump_text(text):
    from engines.k8s.dump import parse_dump

    return parse_dump(text, "fuzz.yaml")


def _evaluations_path(p):
    from engines.qeval.store import load_evaluations

    return load_evaluations(p)


PATH_READERS = {"scenario": _scenario_path, "view": _view_path, "tour": _tour_path, "price": _price_path,
                "sbom": _sbom_path, "advisory": _advisory_path, "dump": _dump_path,
                "evaluations": _evaluations_path}
TEXT_READERS = {"scenario": _scenario_text, "view": _view_text, "tour": _tour_text, "price": _price_text,
                "sbom": _sbom_text, "advisory": _advisory_text, "dump": _dump_text}


def seed(name: str) -> object:
    """A valid document each text reader accepts (the fuzz mutates it)."""
    if name == "scenario":
        return json.loads((DATA / "scenario_v1.json").read_text())
    if name == "view":
        from engines.core.scenario import Scenario
        from explorer.view_state import ViewState

        return json.loads(ViewState(scenario=Scenario(), panel="law", params={"law": {"fine_tier": 2}},
                                    tabs={"law": ("Tools",)}, frame=3).to_json())
    if name == "tour":
        return json.loads(asset_path("tours", "A1.json").read_text())
    if name == "price":
        return json.loads(asset_path("selfhost", "prices.json").read_text())
    if name == "sbom":
        return json.loads((DATA / "sbom" / "camera-firmware.cdx.json").read_text())
    if name == "spdx":
        return json.loads((DATA / "sbom" / "thermostat-app.spdx.json").read_text())
    if name == "osv":
        return json.loads((DATA / "advisories" / "thermostat.osv.json").read_text())
    if name == "csaf":
        return json.loads((DATA / "advisories" / "camera.csaf.json").read_text())
    if name == "dump":
        return yaml.safe_load((DATA / "k8s_dump_shop.yaml").read_text())
    raise KeyError(name)


SEEDS = {"scenario": "scenario", "view": "view", "tour": "tour", "price": "price", "sbom": "sbom",
         "spdx": "sbom", "osv": "advisory", "csaf": "advisory", "dump": "dump"}
"""Seed name → the text reader that reads it."""
