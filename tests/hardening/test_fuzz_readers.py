"""Mutation fuzz of every reader: a valid document with one value replaced (by any JSON value), one key
dropped or its text cut or spliced raises only the project's own error types, or reads.

Bounded by ``max_examples`` so the whole file runs in well under a minute."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _readers import OWN_ERRORS, SEEDS, TEXT_READERS, seed

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
    | st.sampled_from(["", "0", "1.2", "1.6", "SPDX-2.3", "CycloneDX", "List", "Pod", "introduced", "USD", "EUR",
                       "H100", "on-demand", "law", "2025-01-01", "-1", "NaN", "*r", "&r"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)
EXAMPLES = {"csaf": 25, "dump": 60}     # CSAF runs the OASIS schema, a dump the API validation: slower
DEFAULT_EXAMPLES = 80


def _paths(doc, prefix=()):
    """Every (path) to a value in ``doc``, the root included."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _mutate(doc, path, op, value):
    doc = json.loads(json.dumps(doc))
    if not path:
        return value if op == "replace" else doc
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    last = path[-1]
    if op == "replace":
        parent[last] = value
    elif op == "drop":
        del parent[last]
    elif op == "wrap":
        parent[last] = [parent[last]]
    return doc


def _reads_or_refuses(reader: str, text: str) -> None:
    try:
        TEXT_READERS[reader](text)
    except OWN_ERRORS:
        pass


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_one_changed_value_reads_or_is_refused_with_our_error(name):
    base = seed(name)
    paths = list(_paths(base))
    reader = SEEDS[name]

    @settings(max_examples=EXAMPLES.get(name, DEFAULT_EXAMPLES), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(paths) - 1), st.sampled_from(["replace", "replace", "drop", "wrap"]), JSON_VALUES)
    def check(i, op, value):
        _reads_or_refuses(reader, json.dumps(_mutate(base, paths[i], op, value)))

    check()


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_cut_or_spliced_text_reads_or_is_refused_with_our_error(name):
    text = json.dumps(seed(name), indent=1)
    reader = SEEDS[name]

    @settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(text)), st.integers(0, 40),
           st.text(alphabet='{}[]":,&*! -\n0123456789aeE.', max_size=20))
    def check(at, cut, insert):
        _reads_or_refuses(reader, text[:at] + insert + text[at + cut:])

    check()


def test_csaf_without_the_schema_extra_reads_or_refuses(monkeypatch):
    """Where the 'advisories' extra is not installed nothing checks the schema first: the reader's
    own checks alone must hold."""
    from engines.law import advisories

    monkeypatch.setattr(advisories, "_csaf_validator", lambda: "not checked (test)")
    base = seed("csaf")
    paths = list(_paths(base))

    @settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(paths) - 1), st.sampled_from(["replace", "replace", "drop", "wrap"]), JSON_VALUES)
    def check(i, op, value):
        _reads_or_refuses("advisory", json.dumps(_mutate(base, paths[i], op, value)))

    check()
