"""Replaying a cluster dump: a real-looking multi-namespace kubectl get -o yaml (and its JSON),
objects adopted again by the loops, addresses kept, unknown kinds skipped, broken files refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engines.core.errors import ValidationError
from engines.k8s import Cluster
from engines.k8s.dump import parse_dump, read_dump
from engines.k8s.scenarios import play_guide

DUMP = Path(__file__).resolve().parents[1] / "data" / "k8s_dump_shop.yaml"


@pytest.fixture(scope="module")
def loaded() -> Cluster:
    c = Cluster.from_dump(DUMP)
    c.run(30)
    return c


def test_the_dump_loads_every_namespace(loaded):
    d = loaded.dump
    assert d.counts == {"Node": 3, "Service": 4, "Deployment": 3, "ReplicaSet": 3, "Pod": 11}
    assert d.namespaces == ("default", "kube-system", "shop")
    assert "3 pod(s) belong to a DaemonSet" in d.report
    assert "PriorityClass shop-high is not in the dump: 4 object(s) keep their priority value" in d.report
    assert [n["spec"]["podCIDR"] for n in loaded.list("Node")] == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]


def test_controllers_adopt_the_dumped_objects_instead_of_recreating_them(loaded):
    raw = yaml.safe_load(DUMP.read_text())["items"]
    dumped_pods = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in raw if i["kind"] == "Pod"}
    assert {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in loaded.list("Pod")} == dumped_pods
    rss = loaded.list("ReplicaSet")
    assert len(rss) == 3 and all(r["metadata"]["ownerReferences"][0]["kind"] == "Deployment" for r in rss)
    assert all(r["status"]["availableReplicas"] == r["spec"]["replicas"] for r in rss)
    frontend = [p for p in loaded.list("Pod", namespace="shop") if p["metadata"]["labels"]["app"] == "frontend"]
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for p in frontend)


def test_addresses_survive_the_replay(loaded):
    raw = yaml.safe_load(DUMP.read_text())["items"]
    ips = {i["metadata"]["name"]: i["status"]["podIP"] for i in raw if i["kind"] == "Pod"}
    assert {p["metadata"]["name"]: p["status"]["podIP"] for p in loaded.list("Pod")} == ips
    assert loaded.get("Service", "kube-dns", "kube-system")["spec"]["clusterIP"] == "10.96.0.10"
    slices = {s["metadata"]["labels"]["kubernetes.io/service-name"]: sorted(e["addresses"][0] for e in s["endpoints"])
              for s in loaded.list("EndpointSlice")}
    assert len(slices["kube-dns"]) == 2 and len(slices["frontend"]) == 3


def test_act_on_the_replayed_cluster(loaded):
    c = Cluster.from_dump(DUMP)
    c.run(20)
    assert c.kubectl("scale deploy/frontend --replicas=5 -n shop").accepted
    assert not c.kubectl("scale deploy/frontend --replicas=5").accepted      # wrong namespace: NotFound
    r = c.kubectl("drain worker-2")
    assert not r.accepted and "default/debug-shell" in r.message and "kube-system/kube-proxy" in r.message
    c.run(20)
    assert len([p for p in c.list("Pod", namespace="shop") if p["metadata"]["labels"]["app"] == "frontend"]) == 5


def test_json_and_yaml_dumps_give_the_same_cluster(tmp_path):
    as_json = tmp_path / "dump.json"
    as_json.write_text(json.dumps(yaml.safe_load(DUMP.read_text()), indent=2))
    assert read_dump(as_json).objects == read_dump(DUMP).objects


def test_unknown_kinds_are_listed_and_skipped():
    doc = yaml.safe_load(DUMP.read_text())
    doc["items"] += [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop"}},
                     {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"}},
                     {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "mq", "namespace": "shop"}},
                     {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                      "metadata": {"name": "frontend-abcde", "namespace": "shop"}}]
    d = parse_dump(json.dumps(doc))
    assert ("ConfigMap", 1, "not simulated") in d.skipped and ("StatefulSet", 2, "not simulated") in d.skipped
    assert any(k == "EndpointSlice" and "rebuilt" in why for k, _n, why in d.skipped)
    assert "Skipped 2 StatefulSet: not simulated" in d.report and d.counts["Pod"] == 11


@pytest.mark.parametrize("text, field, words", [
    ("items: [\n  - kind: Pod\n   bad", "dump", "not valid YAML at line"),
    ('{"kind": "List", "items": [', "dump", "not valid JSON (line 1"),
    ("- just\n- a list\n", "documents[0]", "not a Kubernetes object or List"),
    ("kind: List\nitems: 3\n", "documents[0].items", "must be a list"),
    ("kind: List\nitems: []\n", "dump", "no objects found"),
    ("kind: List\nitems:\n- {kind: ConfigMap, metadata: {name: x}}\n", "dump", "none of its objects"),
    ("kind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: web, namespace: shop}\n"
     "  spec: {replicas: -2}\n", "items[0] (Deployment/shop/web).spec.replicas", "out of range"),
    ("kind: List\nitems:\n- {kind: Service, metadata: {name: a}}\n- {kind: Service, metadata: {name: a}}\n",
     "items[1] (Service/a)", "appears twice"),
])
def test_broken_dumps_are_explained(text, field, words):
    with pytest.raises(ValidationError) as err:
        parse_dump(text)
    assert err.value.field == field and words in str(err.value)


def test_missing_and_binary_files_are_explained(tmp_path):
    with pytest.raises(ValidationError, match="cannot read"):
        Cluster.from_dump(tmp_path / "nope.yaml")
    blob = tmp_path / "blob.yaml"
    blob.write_bytes(b"\xff\xfe\x00kind")
    with pytest.raises(ValidationError, match="UTF-8"):
        read_dump(blob)


def test_a_dump_plays_as_a_timeline_with_commands():
    from engines.k8s.scenarios import dump_guide
    tl = play_guide(dump_guide(read_dump(DUMP)), commands=((10, "delete pod debug-shell"),))
    assert tl.key == "dump" and len(tl.frames) >= 70
    assert tl.frames[11].commands[0].accepted
    assert not [p for p in tl.frames[-1].pods if p["name"] == "debug-shell"]     # a bare pod: gone for good
