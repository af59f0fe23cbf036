"""Wrong types, deep nesting, giant numbers and YAML aliases: each reader raises the project's own
error type with a message naming the file and the field, never a raw TypeError/RecursionError."""
from __future__ import annotations

import json

import pytest

from _readers import OWN_ERRORS, TEXT_READERS, seed
from engines.core.errors import ValidationError


def _refused(reader: str, doc_or_text, *words: str) -> str:
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    with pytest.raises(OWN_ERRORS) as err:
        TEXT_READERS[reader](text)
    for w in words:
        assert w in str(err.value), str(err.value)
    return str(err.value)


# ---- SBOM: CycloneDX and SPDX fields of the wrong type ---------------------------------------------
def _cdx(**change):
    doc = seed("sbom")
    for path, value in change.items():
        *head, last = path.split("__")
        target = doc
        for k in head:
            target = target[int(k)] if k.isdigit() else target[k]
        target[int(last) if last.isdigit() else last] = value
    return doc


@pytest.mark.parametrize("path, value, words", [
    ("components__0__licenses", 7, ("fuzz.json", "components[0].licenses")),
    ("components__0__bom-ref", {"x": 1}, ("components[0].bom-ref",)),
    ("metadata__component__bom-ref", ["a"], ("metadata.component.bom-ref",)),
    ("dependencies__0__ref", {"a": 1}, ("dependencies[0].ref",)),
    ("dependencies__0__dependsOn", 5, ("dependencies[0].dependsOn",)),
    ("dependencies__0__dependsOn", "abc", ("dependencies[0].dependsOn",)),    # not three references a, b, c
])
def test_cyclonedx_wrong_types_name_the_field(path, value, words):
    _refused("sbom", _cdx(**{path: value}), *words)


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.8", "1.99"])
def test_cyclonedx_outside_the_documented_versions_is_refused(version):
    _refused("sbom", _cdx(specVersion=version), f"specVersion {version}", "1.2 to 1.7")


@pytest.mark.parametrize("key, value, words", [
    ("documentDescribes", "SPDXRef-x", ("documentDescribes",)),
    ("documentDescribes", [{"a": 1}], ("documentDescribes",)),
    ("relationships", {"a": 1}, ("relationships",)),
    ("relationships", [{"spdxElementId": {"a": 1}, "relationshipType": "DESCRIBES"}], ("relationships[0].spdxElementId",)),
])
def test_spdx_wrong_types_name_the_field(key, value, words):
    doc = seed("spdx")
    doc[key] = value
    _refused("sbom", doc, "fuzz.json", *words)


# ---- OSV ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, words", [
    (lambda r: r.update(affected={"a": 1}), ("affected",)),
    (lambda r: r["affected"][0].update(versions="1.0"), ("versions",)),
    (lambda r: r["affected"][0].update(versions=[1, 2]), ("versions",)),
    (lambda r: r["affected"][0]["ranges"][0].update(events={"introduced": "0"}), ("events",)),
    (lambda r: r.update(details=["x"]), ("details",)),
    (lambda r: r.update(summary=None, details=5), ("details",)),
    (lambda r: r.update(aliases="CVE-1"), ("aliases",)),
])
def test_osv_wrong_types_name_the_field(change, words):
    doc = seed("osv")
    rec = doc[0] if isinstance(doc, list) else doc
    rec.setdefault("affected", [{"package": {"name": "x", "ecosystem": "PyPI"},
                                 "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}]}])
    rec["affected"][0].setdefault("ranges", [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}])
    change(rec)
    _refused("advisory", doc, "fuzz.json", *words)


# ---- dumps and kubectl patch -------------------------------------------------------------------------
def test_a_dump_with_a_text_spec_names_the_object_and_field():
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": "x"},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": "x"},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": "x", "status": "y"}]}
    msg = _refused("dump", dump, "items[")
    assert "spec" in msg


def test_a_recursive_alias_in_a_dump_is_refused():
    _refused("dump", "apiVersion: v1\nkind: List\nitems:\n- &r {kind: Pod, metadata: {name: p}, spec: {x: *r}}\n",
             "expands to more than")


def test_a_billion_laughs_dump_is_refused_without_expanding():
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 9)}]" for i in range(1, 9)]
    text = "kind: List\n" + "\n".join(lines) + "\nitems: [*a8]\n"
    _refused("dump", text, "expands to more than")


def test_a_dump_just_under_ten_manifests_of_values_is_not_refused_for_size():
    """The dump's own node cap is real: above one manifest's cap, below ten, the size check passes."""
    from engines.core.reading import check_tree
    from engines.k8s.dump import MAX_DUMP_NODES
    from engines.k8s.manifests import MAX_EXPANDED_NODES

    doc = {"items": [{"k": list(range(999))} for _ in range(200)]}          # about 200,000 values
    assert check_tree(doc, "dump", MAX_DUMP_NODES) is doc
    with pytest.raises(ValidationError):
        check_tree(doc, "dump", MAX_EXPANDED_NODES)


def test_kubectl_patch_with_a_recursive_alias_is_refused():
    from engines.k8s import Cluster
    from engines.k8s.scenarios import _base

    c = Cluster(seed=1)
    _base(c, 2)
    c.run(5)
    r = c.kubectl("kubectl patch deployment web --type merge -p '{spec: &r {x: *r}}'")
    assert not r.accepted and "unable to parse" in r.message and "expands to more than" in r.message


# ---- every JSON/YAML reader: deep nesting and 5,000-digit numbers ------------------------------------
@pytest.mark.parametrize("name", sorted(TEXT_READERS))
@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "[" * 200 + "]" * 200,
                                  '{"schema_version": ' + "9" * 5000 + "}", "[" + "9" * 5000 + "]"],
                         ids=["deep-100000", "deep-200", "digits-in-object", "digits-in-list"])
def test_deep_nesting_and_giant_numbers_are_refused_by_every_reader(name, text):
    _refused(name, text)


def test_yaml_deep_nesting_and_giant_integers_are_refused():
    for text in ("a: " + "[" * 5000 + "]" * 5000, "a: " + "9" * 5000):
        _refused("dump", text, "dump")


@pytest.mark.parametrize("commands", ["[" * 100_000 + "]" * 100_000, "[[" + "9" * 5000 + ', "cordon n"]]'])
def test_kubectl_commands_in_a_view_with_deep_nesting_or_giant_numbers_name_the_field(commands):
    from engines.k8s.params import Params

    with pytest.raises(ValidationError) as err:
        Params(commands=commands).command_list
    assert err.value.field == "commands"


def test_a_dump_or_price_file_error_names_the_file_and_the_field(tmp_path):
    from engines.k8s.dump import read_dump
    from engines.selfhost.prices import load_prices

    dump = tmp_path / "cluster.yaml"
    dump.write_text("kind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}, spec: x}\n")
    with pytest.raises(ValidationError) as err:
        read_dump(dump)
    assert str(err.value).startswith("items[0] (Node/n1)") and "cluster.yaml: " in str(err.value)
    assert "\n" not in str(err.value)
    doc = seed("price")
    doc["gpu_rental"][0]["gpu"] = {}
    prices = tmp_path / "my-prices.json"
    prices.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as err:
        load_prices(prices)
    assert err.value.field == "gpu_rental[0].gpu" and "my-prices.json: " in str(err.value)
