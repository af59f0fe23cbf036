""""Why?" walks: the answer line, conditions with reasons, owner chain, selector matches, events
and the last controller rule, for each kind of object."""
from __future__ import annotations

import pytest

from engines.core.errors import ValidationError
from engines.k8s.scenarios import run_guide
from engines.k8s.why import why


@pytest.fixture(scope="module")
def unschedulable():
    return run_guide("unschedulable").frames[-1]


def test_a_pending_pod_says_why_with_the_schedulers_message(unschedulable):
    f = unschedulable
    name = next(p["name"] for p in f.pods if not p["node"])
    w = why(f, "Pod", name)
    assert w.answer == "Pending: 0/3 nodes are available: 3 Insufficient cpu."
    sections = dict(w.sections)
    assert any(line.startswith("PodScheduled=False (Unschedulable)") for line in sections["Conditions"])
    assert sections["Owner chain"][1] == "ReplicaSet " + name.rsplit("-", 1)[0] + " is owned by Deployment web"
    assert any("FailedScheduling" in e for e in sections["Events"])
    assert "default-scheduler: no node passes the filters" in sections["Last controller rule"][0]
    assert any("selected by Service web" in line for line in sections["Selector matches"])


def test_deployment_replicaset_service_and_node_walks(unschedulable):
    f = unschedulable
    d = dict(why(f, "Deployment", "web").sections)
    assert len(d["ReplicaSets by revision"]) == 2 and "revision 2" in d["ReplicaSets by revision"][1]
    rs = why(f, "ReplicaSet", f.replicasets[0]["name"])
    assert "it never compares their images" in " ".join(dict(rs.sections)["Selector matches"])
    svc = why(f, "Service", "web")
    assert svc.answer.startswith("3 ready endpoint(s) behind ClusterIP 10.")
    node = why(f, "Node", "node-0")
    assert node.answer == "Ready and schedulable" and "pod CIDR 10.244.0.0/24" in " ".join(dict(node.sections)["Capacity"])


def test_an_orphan_a_cordoned_node_and_a_gpu_pending_replica():
    tl = run_guide("relabel")
    f = tl.frames[-1]
    orphan = next(p["name"] for p in f.pods if p["labels"].get("app") == "debug")
    assert "no controller owns it" in dict(why(f, "Pod", orphan).sections)["Owner chain"][0]
    tl = run_guide("self-heal", commands=((5, "cordon node-1"),))
    assert why(tl.frames[8], "Node", "node-1").answer.startswith("Ready but cordoned")
    f = run_guide("autoscale").frames[300]
    pending = next(p["name"] for p in f.pods if not p["node"])
    assert why(f, "Pod", pending).answer == "Pending: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert why(f, "HorizontalPodAutoscaler", "model-server").answer.startswith("20 → 20 replicas")


def test_unknown_objects_are_refused_by_name(unschedulable):
    with pytest.raises(ValidationError, match="name"):
        why(unschedulable, "Pod", "nope")
    with pytest.raises(ValidationError, match="kind"):
        why(unschedulable, "Secret", "x")
