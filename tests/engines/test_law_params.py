"""The law panel's Params: defaults, JSON round trip, refused walks and dates; the clocks and the
engine reading computed from them (Qt-free)."""
import json
from dataclasses import asdict
from datetime import datetime

import pytest

from engines.core.errors import ValidationError
from engines.law import Params
from engines.law.clocks import clocks
from engines.law.outcome import reading
from engines.law.trees import CONTINUE, Walk, load_examples


def test_defaults_are_the_opening_view():
    p = Params()
    assert p.tree == "cra-scope" and p.answers == () and p.event == "vulnerability" and p.fix_available
    assert not p.notified and not p.latent_injury and p.example == next(iter(load_examples()))
    assert p.walk().current.id == "q_saas"


def test_json_round_trip_gives_the_same_params():
    p = Params(answers=("no", "yes"), event="incident", notified=True, aware="2026-11-01T08:15")
    back = Params(**json.loads(json.dumps(asdict(p))))
    assert back == p and isinstance(back.answers, tuple)
    assert Params.from_dict(p.to_dict()) == p


@pytest.mark.parametrize("key", list(load_examples()))
def test_an_example_walk_is_its_moves(key):
    w = Walk("cra-scope")
    w.replay(load_examples()[key]["answers"])
    p = Params(answers=w.moves)
    again = p.walk()
    assert again.steps == w.steps and again.current.id == w.current.id


@pytest.mark.parametrize("bad, field", [
    ({"answers": ("maybe",)}, "answers"),                   # not an answer of q_saas
    ({"answers": ("yes", "no")}, "answers"),                # q_saas yes is an outcome: no further answer
    ({"answers": (CONTINUE,)}, "answers"),                  # continue at a question
    ({"answers": "no"}, "answers"),
    ({"answers": [1]}, "answers"),
    ({"tree": "nope"}, "tree"),
    ({"event": "breach"}, "event"),
    ({"aware": "2026-13-01T00:00"}, "aware"),
    ({"fix_at": "2026-10-09T17:30+02:00"}, "fix_at"),       # local time only
    ({"placed": "15/03/2027"}, "placed"),
    ({"knowledge": 2029}, "knowledge"),
    ({"latent_injury": "false"}, "latent_injury"),
])
def test_bad_fields_are_refused_by_name(bad, field):
    with pytest.raises(ValidationError) as err:
        Params(**bad)
    assert err.value.field == field


def test_continue_moves_into_the_linked_tree():
    w = Walk("cra-classification")
    w.answer("IV-2")
    p = Params(tree="cra-classification", answers=("IV-2", CONTINUE))
    assert p.walk().current.id == "o_route_critical"


def test_clocks_from_params():
    c = clocks(Params(fix_at="2026-10-09T08:00"))
    assert c.cra_error is None and c.cra.applies
    assert c.cra.final_report.astimezone().replace(tzinfo=None) == datetime(2026, 10, 23, 8, 0)
    assert any("23 Oct 2026 08:00" in line for line in c.cra.lines)
    assert [m.text for m in c.cra.marks][-1] == "final report"
    c = clocks(Params(event="incident", notified=True, notified_at="2026-08-01T09:00"))
    assert c.cra is None and "notified" in c.cra_error and c.pld is not None
    c = clocks(Params(aware="0001-01-01T00:00"))
    assert c.cra is None and "aware" in c.cra_error
    c = clocks(Params(knowledge="2020-01-01"))
    assert c.pld is None and "knowledge" in c.pld_error
    c = clocks(Params(placed="2027-03-15", knowledge="2045-01-01", latent_injury=True))
    assert c.pld.regime == "2024/2853" and c.pld.expiry.year == 2052 and c.pld.claim_deadline.year == 2048


def test_reading_of_an_example_outcome():
    w = Walk("cra-scope")
    w.replay(load_examples()["hypervisor"]["answers"])
    r = reading(w)
    assert "tier = important-II" in r.head and r.reasons
    assert reading(Walk("cra-scope")).head == ""
