"""Advisories the user downloaded (OSV, CSAF 2.0) matched against an SBOM: the OSV range rule worked
by hand, CSAF product status by product id, broken files refused with a clear message, and the
corpus checked against the official JSON schemas."""
from __future__ import annotations

import importlib.util
import json
import os
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
    ("broken-range-type.osv.json", "has type 'RANGE'; OSV allows GIT, SEMVER, ECOSYSTEM"),
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


def test_corpus_passes_the_official_osv_schema():
    jsonschema = pytest.importorskip("jsonschema")
    path = Path(os.environ.get("OSV_SCHEMA", Path(__file__).resolve().parents[3] / "shared" / "schemas" /
                               "osv_schema.json"))
    if not path.is_file():
        pytest.skip("no copy of the OSV schema (ossf/osv-schema validation/schema.json) at OSV_SCHEMA")
    v = jsonschema.Draft202012Validator(json.loads(path.read_text()))
    for name in ("thermostat.osv.json", "api-answer.osv.json"):
        doc = json.loads((ADV / name).read_text())
        for rec in doc["vulns"] if isinstance(doc, dict) else doc:
            assert not list(v.iter_errors(rec)), name
    assert list(v.iter_errors(json.loads((ADV / "broken-range-type.osv.json").read_text())))
