"""The CRA SBOM clause (Annex I Part II(1)) on real files: CycloneDX and SPDX JSON from the corpus,
broken files refused with a clear message, and this app's own SBOM made by cyclonedx-py."""
from __future__ import annotations

from pathlib import Path

import pytest

from engines.core.errors import ValidationError
from engines.law import sbom

CORPUS = Path(__file__).resolve().parents[1] / "data" / "sbom"


def names(components):
    return sorted(c.name for c in components)


def test_cyclonedx_top_level_transitive_versions_licences():
    s = sbom.read(CORPUS / "camera-firmware.cdx.json")
    assert s.format == "CycloneDX 1.6" and s.product == "camera-fw"
    assert names(s.components) == ["busybox", "openssl", "vendor-sdk", "zlib"]
    assert names(s.top_level) == ["busybox", "openssl", "vendor-sdk"]               # zlib is transitive
    lic = {c.name: c.licence for c in s.components}
    assert lic == {"openssl": "Apache-2.0", "busybox": "GPL-2.0-only", "zlib": "zlib License", "vendor-sdk": None}
    c = sbom.check(s, ("openssl", "busybox", "vendor_sdk", "libcurl"))
    assert c.no_version == ("vendor-sdk",) and c.no_licence == ("vendor-sdk",)
    assert c.absent == ("libcurl",) and c.meets_clause is False                   # vendor_sdk ~ vendor-sdk
    assert any("4 components; 3 top-level, 1 transitive" in t for _a, t in c.lines)
    assert sbom.check(s).meets_clause is True


def test_spdx_relationships_both_ways_and_noassertion():
    s = sbom.read(CORPUS / "thermostat-app.spdx.json")
    assert s.format == "SPDX-2.3" and s.product == "thermostat-app"
    assert names(s.components) == ["paho-mqtt", "requests", "urllib3"]
    assert names(s.top_level) == ["paho-mqtt", "requests"]                          # DEPENDS_ON and DEPENDENCY_OF
    lic = {c.name: c.licence for c in s.components}
    assert lic == {"paho-mqtt": "EPL-2.0 OR BSD-3-Clause", "requests": "Apache-2.0", "urllib3": None}


def test_a_file_without_a_graph_cannot_show_top_level():
    s = sbom.read(CORPUS / "flat-no-graph.cdx.json")
    assert s.top_level is None and "no dependency graph" in s.problems[0]
    c = sbom.check(s)
    assert c.meets_clause is None and any("cannot be told apart" in t for _a, t in c.lines)


@pytest.mark.parametrize("name, words", [
    ("broken-truncated.cdx.json", "not valid JSON (line 1"),
    ("broken-unknown-format.json", "neither CycloneDX"),
    ("broken-components.cdx.json", "'components' is not a list"),
    ("broken-xml.cdx.xml", "not valid JSON"),
    ("missing.json", "cannot open"),
])
def test_broken_files_are_refused_with_a_clear_message(name, words):
    with pytest.raises(ValidationError) as err:
        sbom.read(CORPUS / name)
    assert err.value.field == "path" and words in str(err.value) and name in str(err.value)


def test_spdx3_and_bad_spec_versions():
    with pytest.raises(ValidationError, match="SPDX 3"):
        sbom.parse('{"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": []}')
    with pytest.raises(ValidationError, match="specVersion"):
        sbom.parse('{"bomFormat": "CycloneDX", "specVersion": 1.6}')
    with pytest.raises(ValidationError, match="SPDX-3.0"):
        sbom.parse('{"spdxVersion": "SPDX-3.0"}')


@pytest.mark.skipif(not sbom.generator_available(), reason="cyclonedx-bom (the sbom extra) not installed")
def test_this_apps_own_sbom_lists_every_declared_dependency_as_top_level():
    s = sbom.for_environment()
    assert s.format.startswith("CycloneDX") and s.product == sbom.PROJECT
    declared = sbom.declared_dependencies()
    assert {"numpy", "pyqtgraph", "networkx"} <= {sbom.norm(n) for n in declared}
    c = sbom.check(s, declared)
    assert c.absent == () and c.meets_clause is True
    top = {sbom.norm(x.name): x for x in s.top_level}
    assert top["numpy"].version and len(s.components) > len(s.top_level)
