"""engines.core.scenario / presets / overview / models: any field set to garbage is a ValidationError
naming that field (never TypeError/KeyError), and valid scenarios round-trip through JSON."""
from __future__ import annotations

import json
import math
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core.errors import ValidationError
from engines.core.models import PRESETS, ModelArch
from engines.overview import summarize
from engines.core.presets import apply_preset, preset_names
from engines.core.scenario import FIELD_NAMES, Scenario

FAST = settings(max_examples=60, deadline=None)
garbage = st.one_of(st.none(), st.text(max_size=6), st.floats(), st.integers(-10**12, 10**12), st.booleans(),
                    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                    st.binary(max_size=4))
SCALAR_FIELDS = sorted(f.name for f in fields(Scenario) if f.name not in ("arch",))


@FAST
@given(st.sampled_from(SCALAR_FIELDS), garbage)
def test_any_garbage_field_is_a_validation_error_or_a_valid_scenario(name, value):
    try:
        s = Scenario().with_changes(**{name: value})
    except ValidationError as e:
        # the named field is the edited one, or the rule it broke (tp/pp/n_gpus divisibility)
        assert e.field in FIELD_NAMES | {"model"}, e.field
        assert e.field in str(e)
        return
    # accepted: the stored value must be usable as its declared kind
    stored = getattr(s, name)
    default = getattr(Scenario(), name)
    assert type(stored) is type(default) or (isinstance(default, float) and isinstance(stored, int)), (name, stored)
    summarize(s)


@FAST
@given(st.sampled_from(sorted(PRESETS)), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]),
       st.sampled_from([1, 2, 8, 64]))
def test_valid_scenarios_round_trip_json_and_summarise_finitely(model, tp, pp, dp):
    arch = PRESETS[model]
    if arch.heads % tp or pp > arch.layers:
        return
    s = Scenario().with_changes(model=model, tp=tp, pp=pp, n_gpus=tp * pp * dp)
    assert Scenario.from_json(s.to_json()) == s
    ov = summarize(s)
    for row in ov.rows():
        for v in row.values():
            if isinstance(v, float):
                assert math.isfinite(v)


@FAST
@given(st.dictionaries(st.sampled_from(sorted(FIELD_NAMES | {"bogus"})), garbage, max_size=4))
def test_json_bodies_with_wrong_types_fail_cleanly(body):
    doc = {"schema_version": 1, "scenario": body}
    try:
        Scenario.from_json(json.dumps(doc, default=repr))
    except ValidationError:
        return


@FAST
@given(st.dictionaries(st.text(max_size=10), st.one_of(st.integers(-5, 10**6), st.text(max_size=4), st.none(),
                                                       st.floats()), max_size=12))
def test_model_arch_from_garbage_dict(raw):
    try:
        arch = ModelArch.from_dict(raw)
    except ValidationError as e:
        assert e.field and e.field in str(e)
        return
    assert arch.param_count() > 0


@FAST
@given(st.text(max_size=12))
def test_unknown_preset_is_named(name):
    if name in preset_names() or name in PRESETS:
        return
    with pytest.raises(ValidationError) as e:
        apply_preset(Scenario(), name)
    assert e.value.field in ("preset", "model")
