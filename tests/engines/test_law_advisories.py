"""Advisories the user downloaded (OSV, CSAF 2.0) matched against an SBOM: the OSV range rule worked
by hand, CSAF product status by product id, broken files refused with a clear message, and the
corpus checked against the official JSON schemas."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from engines.core.errors import ValidationError
from engines.law import advisories as adv, sbom

DATA = Path(__file__).resolve().parents[1] / "data"
ADV = DATA / "advisories"
#: the official CSAF 2.0 schema comes with the csaf package (the test and advisories extras)
HAS_CSAF = importlib.util.find_spec("csaf") is not None
needs_csaf = pytest.mark.skipif(not HAS_CSAF, reason="the csaf package (pip install '.[advisories]') ships the schema")


def _by(matches):
    return {(m.component, m.advisory): m for m in matches}


def test_osv_ranges_and_versions_against_an_spdx_sbom():
    s = sbom.read(DATA / "sbom" / "thermostat-app.spdx.json")
    a = adv.read(ADV / "thermostat.osv.json")
    assert a.format == "OSV" and [x.id for x in a.items] == ["x_TEST-2026-0001", "x_TEST-2026-0002", "x_TEST-2026-0003"]
    m = _by(adv.match(s, a))
    assert (m["urllib3", "x_TEST-2026-0001"].status, m["urllib3", "x_TEST-2026-0001"].why) == \
        ("affected", "introduced in 2.0.0, fixed in 2.5.0")                    # 2.0.0 ≤ 2.2.3 < 2.5.0
    assert m["requests", "x_TEST-2026-0002"].status == "not affected"          # 2.32.3 is not listed
    # Paho_MQTT matches paho-mqtt (PEP 503); 2.1.0 > last_affected 1.6.1, and the GIT range is not used
    assert m["paho-mqtt", "x_TEST-2026-0003"].status == "not affected"
    assert "last affected version 1.6.1" in m["paho-mqtt", "x_TEST-2026-0003"].why
    api = _by(adv.match(s, adv.read(ADV / "api-answer.osv.json")))
    assert api["urllib3", "x_TEST-2026-0004"].status == "fixed"               # 2.2.3 is the fixed version


@pytest.mark.parametrize("version, events, status", [
    ("1.0", [("introduced", "0"), ("fixed", "1.0")], "fixed"),
    ("0.9.9", [("introduced", "0"), ("fixed", "1.0")], "affected"),
    ("1.5", [("introduced", "1.0"), ("last_affected", "1.5")], "affected"),
    ("1.5.1", [("introduced", "1.0"), ("last_affected", "1.5")], "not affected"),
    ("0.5", [("introduced", "1.0"), ("fixed", "2.0")], "not affected"),
    ("2.5", [("fixed", "2.0"), ("introduced", "1.0"), ("introduced", "3.0"), ("fixed", "4.0")], "fixed"),
    ("3.1", [("fixed", "2.0"), ("introduced", "1.0"), ("introduced", "3.0"), ("fixed", "4.0")], "affected"),
    ("2.0rc1", [("introduced", "1.0"), ("fixed", "2.0")], "affected"),         # PEP 440: rc before release
    ("3.0", [("introduced", "1.0"), ("limit", "3.0")], "not affected"),
    ("not-a-version", [("introduced", "0")], "not evaluated"),
])
def test_osv_range_rule_worked_by_hand(version, events, status):
    assert adv.osv_range_status(version, "ECOSYSTEM", events)[0] == status


def test_csaf_product_status_against_a_cyclonedx_sbom():
    c = sbom.read(DATA / "sbom" / "camera-firmware.cdx.json")
    a = adv.read(ADV / "camera.csaf.json")
    assert a.format == "CSAF 2.0"
    assert ("checked against the OASIS CSAF 2.0 JSON schema" in a.notes) == HAS_CSAF
    m = _by(adv.match(c, a))
    assert m["openssl", "TEST-2026-0010"].status == "affected"                 # 3.0.13 known_affected
    assert m["busybox", "TEST-2026-0011"].status == "not affected"             # via the purl's name@version
    assert ("zlib", "TEST-2026-0010") not in m


@pytest.mark.parametrize("name, says", [
    pytest.param("broken-no-publisher.csaf.json", "not a valid CSAF 2.0 document: at document: 'publisher' is a "
                 "required", marks=needs_csaf),
    ("broken-range-type.osv.json", "affected[0].ranges[0].type: 'RANGE' is not one of GIT, SEMVER, ECOSYSTEM"),
    ("broken-csaf-2.1.json", "CSAF '2.1' is not read here"),
    ("../sbom/camera-firmware.cdx.json", "neither OSV"),
    ("../sbom/broken-truncated.cdx.json", "not valid JSON"),
    ("missing.json", "cannot open it"),
])
def test_broken_advisories_say_what_is_wrong(name, says):
    with pytest.raises(ValidationError) as err:
        adv.read(ADV / name)
    assert err.value.field == "path" and says in str(err.value)


@needs_csaf
def test_corpus_passes_the_official_csaf_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import metadata
    from referencing import Registry, Resource
    base = Path(str(metadata.distribution("csaf").locate_file("csaf/csaf/v20/schema")))
    refs = [(f"https://www.first.org/cvss/cvss-v{v}.json",
             Resource.from_contents(json.loads((base / "referenced" / f"cvss-v{v}.json").read_text())))
            for v in ("2.0", "3.0", "3.1")]
    v = jsonschema.Draft202012Validator(json.loads((base / "csaf.json").read_text()),
                                        registry=Registry().with_resources(refs))
    assert not list(v.iter_errors(json.loads((ADV / "camera.csaf.json").read_text())))
    assert list(v.iter_errors(json.loads((ADV / "broken-no-publisher.csaf.json").read_text())))


def _osv_records(name):
    doc = json.loads((ADV / name).read_text())
    return doc["vulns"] if isinstance(doc, dict) and "vulns" in doc else doc if isinstance(doc, list) else [doc]


def test_corpus_passes_the_osv_schema_rules():
    """Runs everywhere: the OSV schema's rules for the fields read (engines.law.advisories.osv_problems)."""
    for name in ("thermostat.osv.json", "api-answer.osv.json"):
        for rec in _osv_records(name):
            assert adv.osv_problems(rec) == [], name
    assert adv.osv_problems(_osv_records("broken-range-type.osv.json")[0]) == [
        "affected[0].ranges[0].type: 'RANGE' is not one of GIT, SEMVER, ECOSYSTEM"]


def _good():
    return {"schema_version": "1.6.0", "id": "x_TEST-1", "modified": "2026-11-02T10:00:00Z", "aliases": ["A-1"],
            "affected": [{"package": {"ecosystem": "PyPI", "name": "urllib3"}, "versions": ["1.0"],
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0"}]}]}]}


def _set(path, value):
    rec = _good()
    *parents, last = path
    target = rec
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return rec


DELETE = object()
RANGE = ("affected", 0, "ranges", 0)


@pytest.mark.parametrize("path, value, says", [
    (("id",), DELETE, "id: required"),
    (("modified",), "yesterday", "modified: required, an RFC 3339 time"),
    (("modified",), "2026-11-02T10:00:00", "modified: required, an RFC 3339 time"),      # no offset
    (("schema_version",), "2.0.0", "schema_version: '2.0.0' is not OSV schema 1.x"),
    (("aliases",), "A-1", "aliases: must be a list of text"),
    (("summary",), 3, "summary: must be text"),
    (("affected",), {}, "affected: must be a list"),
    (("affected", 0, "package"), DELETE, "affected[0].package: required here"),
    (("affected", 0, "package", "ecosystem"), DELETE, "affected[0].package.ecosystem: required"),
    (("affected", 0, "package", "name"), "", "affected[0].package.name: required"),
    (("affected", 0, "versions"), [1.0], "affected[0].versions: must be a list of text"),
    ((*RANGE, "type"), "RANGE", "affected[0].ranges[0].type: 'RANGE' is not one of GIT, SEMVER, ECOSYSTEM"),
    ((*RANGE, "type"), "GIT", "affected[0].ranges[0].repo: required for a GIT range"),
    ((*RANGE, "events"), [], "affected[0].ranges[0].events: required, a non-empty list"),
    ((*RANGE, "events"), [{"fixed": "2.0"}], "affected[0].ranges[0].events: no 'introduced' event"),
    ((*RANGE, "events"), [{"introduced": "0", "fixed": "1"}], "affected[0].ranges[0].events[0]: must be one key"),
    ((*RANGE, "events"), [{"introduced": "0"}, {"patched": "1"}], "affected[0].ranges[0].events[1]: 'patched'"),
    ((*RANGE, "events"), [{"introduced": 0}], "affected[0].ranges[0].events[0].introduced: must be text"),
    ((*RANGE, "events"), [{"introduced": "0"}, {"fixed": "2"}, {"last_affected": "1"}],
     "affected[0].ranges[0].events: 'fixed' and 'last_affected' in one range"),
])
def test_a_broken_osv_record_is_refused_naming_the_field(path, value, says):
    assert adv.osv_problems(_good()) == []
    rec = _set(path, value)
    assert any(p.startswith(says) for p in adv.osv_problems(rec)), adv.osv_problems(rec)
    if "modified" in rec:                       # without it the file is not recognised as OSV at all
        with pytest.raises(ValidationError) as err:
            adv.parse(json.dumps(rec), "rec.json")
        assert err.value.field == "path" and says in str(err.value)
