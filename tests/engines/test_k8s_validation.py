"""engines.k8s input validation: bad manifests are refused at apply/patch with a ValidationError
naming the field (as the API server's pkg/apis/*/validation would), never a crash later in
run(); plus the oom_score_adj, crash-loop back-off and percentage rules checked against upstream."""
from __future__ import annotations

import copy

import pytest

from engines.core.errors import ValidationError
from engines.k8s import Cluster, oom_score_adj, qos_class, resolve_fenceposts
from engines.k8s import rules

GI, MI = 2**30, 2**20
COST = "controller.kubernetes.io/pod-deletion-cost"


def node(name="node-0", **spec):
    out = {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}
    if spec:
        out["spec"] = spec
    return out


def deployment(replicas=2, name="web"):
    c = {"name": "web", "image": "web:1", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [c]}}}}


def pod(name="p", **spec):
    return {"kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "m", "image": "x"}], **spec}}


def with_(obj, path, value):
    out = copy.deepcopy(obj)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return out


def cluster(n=1):
    c = Cluster(seed=0)
    for i in range(n):
        c.apply(node(f"node-{i}"))
    return c


def refused(c, fn, field, *args):
    """``fn(*args)`` raises a ValidationError naming ``field``, and the cluster still runs."""
    with pytest.raises(ValidationError) as info:
        fn(*args)
    assert info.value.field == field, str(info.value)
    c.run(30)
    return info.value


TPL = ["spec", "template", "spec"]
CONTAINER = [*TPL, "containers", 0]
C0 = "spec.template.spec.containers[0]"
BAD_DEPLOYMENTS = [   # (path, value, field named in the error)
    (["spec", "minReadySeconds"], "x", "spec.minReadySeconds"),
    (["spec", "minReadySeconds"], -1, "spec.minReadySeconds"),
    (["spec", "revisionHistoryLimit"], "x", "spec.revisionHistoryLimit"),
    (["spec", "revisionHistoryLimit"], -1, "spec.revisionHistoryLimit"),
    (["spec", "paused"], "no", "spec.paused"),
    ([*CONTAINER, "readinessProbe"], {"initialDelaySeconds": "x"}, f"{C0}.readinessProbe.initialDelaySeconds"),
    ([*CONTAINER, "readinessProbe"], {"initialDelaySeconds": -5}, f"{C0}.readinessProbe.initialDelaySeconds"),
    ([*CONTAINER, "image"], ["x"], "spec.template.spec.containers[0].image"),
    ([*CONTAINER, "name"], 5, "spec.template.spec.containers[0].name"),
    ([*CONTAINER, "resources"], {"requests": "x"}, "spec.template.spec.containers[0].resources.requests"),
    ([*CONTAINER, "resources"], {"limits": "x"}, "spec.template.spec.containers[0].resources.limits"),
    ([*TPL, "tolerations"], "x", "spec.template.spec.tolerations"),
    ([*TPL, "tolerations"], [None], "spec.template.spec.tolerations[0]"),
    ([*TPL, "tolerations"], [{"key": "k", "operator": "Exists", "value": "v"}],
     "spec.template.spec.tolerations[0].value"),
    ([*TPL, "overhead"], "x", "spec.template.spec.overhead"),
    ([*TPL, "terminationGracePeriodSeconds"], "x", "spec.template.spec.terminationGracePeriodSeconds"),
    ([*TPL, "nodeName"], 5, "spec.template.spec.nodeName"),
    (["spec", "template", "metadata", "annotations"], {COST: "1e3"},
     f"spec.template.metadata.annotations.{COST}"),
    (["spec", "template", "metadata", "labels"], "x", "spec.template.metadata.labels"),
    (["spec", "template", "metadata", "labels"], {"app": 5}, "spec.template.metadata.labels.app"),
    (["spec", "selector", "matchLabels"], "x", "spec.selector.matchLabels"),
    (["spec", "selector"], {"matchExpressions": "x"}, "spec.selector.matchExpressions"),
    (["spec", "selector"], {"matchExpressions": [None]}, "spec.selector.matchExpressions[0]"),
    (["spec", "selector"], {"matchExpressions": [{"key": "app", "operator": "Foo", "values": ["web"]}]},
     "spec.selector.matchExpressions[0].operator"),
    (["spec", "strategy"], {"rollingUpdate": {"maxSurge": "５%"}}, "spec.strategy.rollingUpdate.maxSurge"),
    (["spec", "strategy"], {"rollingUpdate": {"maxUnavailable": "٣%"}}, "spec.strategy.rollingUpdate.maxUnavailable"),
    (["metadata", "name"], 5, "metadata.name"),
    (["metadata", "name"], "Bad_Name", "metadata.name"),
]


@pytest.mark.parametrize("path,value,field", BAD_DEPLOYMENTS, ids=[f for _, _, f in BAD_DEPLOYMENTS])
def test_bad_deployment_fields_are_refused_at_apply(path, value, field):
    c = cluster()
    refused(c, c.apply, field, with_(deployment(), path, value))
    assert c.list("Deployment") == []


@pytest.mark.parametrize("path,value,field", [
    (["metadata", "annotations"], {COST: "abc"}, f"metadata.annotations.{COST}"),
    (["metadata", "annotations"], {COST: "+5"}, f"metadata.annotations.{COST}"),
    (["metadata", "annotations"], {COST: str(2**31)}, f"metadata.annotations.{COST}"),
    (["metadata", "annotations"], {"a": None}, "metadata.annotations.a"),
    (["metadata", "namespace"], 5, "metadata.namespace"),
    (["spec", "overhead"], "x", "spec.overhead"),
    (["spec", "tolerations"], [None], "spec.tolerations[0]"),
    (["spec", "initContainers"], [{"name": "i", "image": "x", "resources": {"limits": "1"}}],
     "spec.initContainers[0].resources.limits"),
    (["spec", "priorityClassName"], "system-node-critical", None),   # accepted (kept, not dropped)
    (["spec", "priority"], "x", "spec.priority"),
])
def test_bad_pod_fields_are_refused_at_apply(path, value, field):
    c = cluster()
    manifest = with_(pod(), path, value)
    if field is None:
        assert c.apply(manifest)["spec"][path[-1]] == value
        c.run(5)
        return
    refused(c, c.apply, field, manifest)
    assert c.list("Pod") == []


def test_pod_deletion_cost_patch_is_refused_and_scale_down_still_works():
    """The audit's wedge: a cost "abc" patched onto a pod crashed every later run()."""
    c = cluster()
    c.apply(deployment(replicas=2))
    c.run(10)
    name = c.list("Pod")[0]["metadata"]["name"]
    refused(c, c.patch, f"metadata.annotations.{COST}", "Pod", name, {"metadata": {"annotations": {COST: "abc"}}})
    c.patch("Pod", name, {"metadata": {"annotations": {COST: "-100"}}})   # a valid cost is the one deleted
    c.patch("Deployment", "web", {"spec": {"replicas": 1}})
    c.run(30)
    assert [p["metadata"]["name"] for p in c.list("Pod") if rules.is_active(p)] != [name]
    assert len([p for p in c.list("Pod") if rules.is_active(p)]) == 1


def test_patches_with_bad_values_leave_the_deployment_unchanged():
    c = cluster()
    c.apply(deployment())
    c.run(10)
    before = c.get("Deployment", "web")["spec"]
    refused(c, c.patch, "spec.minReadySeconds", "Deployment", "web", {"spec": {"minReadySeconds": "x"}})
    refused(c, c.patch, "spec.template.spec.tolerations", "Deployment", "web",
            {"spec": {"template": {"spec": {"tolerations": "x"}}}})
    assert c.get("Deployment", "web")["spec"] == before


def test_bad_nodes_and_services_are_refused():
    c = cluster()
    refused(c, c.apply, "spec.taints[0].key", node("t", taints=[{"effect": "NoSchedule"}]))
    refused(c, c.apply, "spec.taints", node("t", taints="x"))
    refused(c, c.apply, "spec.taints[0].effect", node("t", taints=[{"key": "k"}]))
    refused(c, c.apply, "spec.unschedulable", node("t", unschedulable="no"))
    bad_capacity = with_(node("t"), ["status", "capacity"], {"memory": "abc"})
    refused(c, c.apply, "status.capacity.memory", bad_capacity)
    svc = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    refused(c, c.apply, "spec.ports", with_(svc, ["spec", "ports"], "x"))
    refused(c, c.apply, "spec.ports[0]", with_(svc, ["spec", "ports"], [None]))
    refused(c, c.apply, "spec.ports[0].port", with_(svc, ["spec", "ports"], [{"port": 0}]))
    refused(c, c.apply, "spec.selector.app", with_(svc, ["spec", "selector"], {"app": 5}))
    refused(c, c.apply, "metadata.name", with_(svc, ["metadata", "name"], "1svc"))   # DNS-1035 label
    c.apply(svc)
    c.apply(deployment(replicas=1))
    c.run(10)
    assert len(c.list("EndpointSlice")) == 1


def test_selector_is_immutable():
    """apps/v1 ValidateDeploymentUpdate / ValidateReplicaSetUpdate: "field is immutable"."""
    c = cluster()
    c.apply(deployment())
    c.run(10)
    before = c.get("Deployment", "web")
    refused(c, c.patch, "spec.selector", "Deployment", "web", {"spec": {"selector": {"matchLabels": {"app": "other"}}}})
    moved = deployment()
    moved["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "a"}}
    moved["spec"]["template"]["metadata"]["labels"] = {"app": "web", "tier": "a"}
    refused(c, c.apply, "spec.selector", moved)
    assert c.get("Deployment", "web")["spec"]["selector"] == before["spec"]["selector"]
    assert c.get("Deployment", "web")["metadata"]["generation"] == before["metadata"]["generation"]
    rs = c.list("ReplicaSet")[0]
    refused(c, c.patch, "spec.selector", "ReplicaSet", rs["metadata"]["name"],
            {"spec": {"selector": {"matchLabels": {"app": "web", "x": "y"}}}})
    c.patch("Deployment", "web", {"spec": {"replicas": 3}})   # other fields still change
    c.run(10)
    assert len([p for p in c.list("Pod") if rules.is_active(p)]) == 3


def test_list_and_rule_functions_reject_malformed_input():
    c = cluster()
    for selector, field in (({"matchLabels": "x"}, "selector.matchLabels"),
                            ({"matchExpressions": [None]}, "selector.matchExpressions[0]"),
                            ({"app": ["x"]}, "selector.app")):
        with pytest.raises(ValidationError) as info:
            c.list("Pod", selector)
        assert info.value.field == field
    for spec, field in (({"containers": [None]}, "pod.spec.containers[0]"),
                        ({"containers": ["a"]}, "pod.spec.containers[0]"),
                        ({"containers": [{"resources": "x"}]}, "pod.spec.containers[0].resources"),
                        ({"containers": [{"resources": {"limits": "1"}}]}, "pod.spec.containers[0].resources.limits"),
                        ({"containers": [{}], "initContainers": [None]}, "pod.spec.initContainers[0]"),
                        ({"containers": [{}], "initContainers": "x"}, "pod.spec.initContainers")):
        with pytest.raises(ValidationError) as info:
            qos_class({"spec": spec})
        assert info.value.field == field


def test_non_ascii_percentages_are_rejected():
    """apimachinery IsValidPercent: ^[0-9]+%$ (ASCII digits only)."""
    for bad in ("５%", "٣%", "+5%", " 5%"):
        with pytest.raises(ValidationError, match="maxSurge"):
            resolve_fenceposts(10, bad, 1)
    assert resolve_fenceposts(10, "50%", "0%") == (5, 0)


def test_oom_score_adj_node_critical_and_per_container():
    """pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust: node-critical pods −997; a Burstable
    container is scored by its own memory request (not overhead, init or sibling containers)."""
    node_mem = 8 * GI
    crit = pod(priorityClassName="system-node-critical")
    crit["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1Gi"}}
    assert oom_score_adj(crit, node_mem) == -997
    assert oom_score_adj(pod(priorityClassName="system-node-critical"), node_mem) == -997   # BestEffort too
    cluster_crit = copy.deepcopy(crit)
    cluster_crit["spec"]["priorityClassName"] = "system-cluster-critical"     # critical, not node-critical
    assert oom_score_adj(cluster_crit, node_mem) == 875
    two = pod()
    two["spec"]["containers"] = [{"name": "a", "image": "x", "resources": {"requests": {"memory": "1Gi"}}},
                                 {"name": "b", "image": "x", "resources": {"requests": {"memory": "2Gi"}}}]
    two["spec"]["initContainers"] = [{"name": "i", "image": "x", "resources": {"requests": {"memory": "4Gi"}}}]
    two["spec"]["overhead"] = {"memory": "1Gi"}
    assert oom_score_adj(two, node_mem) == 875                 # main container a: 1000 − 1000·1/8
    assert oom_score_adj(two, node_mem, "b") == 750
    c = cluster()
    stored = c.apply(crit)                                     # priorityClassName is kept, not dropped
    assert stored["spec"]["priorityClassName"] == "system-node-critical"
    bad = copy.deepcopy(crit)
    bad["spec"]["priority"] = 5                                # Priority admission: must match the class
    refused(c, c.apply, "spec.priority", with_(bad, ["metadata", "name"], "q"))


def test_first_crash_loop_restart_is_immediate():
    """kuberuntime_manager.go doBackOff: before the first restart there is no back-off entry, so it
    restarts at once (the next sync); backOff.Next then waits 10 s, 20 s, 40 s … up to 300 s."""
    c = cluster()
    c.set_image("crash:1", exit_after=1.0, startup_seconds=0.0, ready_after=5.0)
    c.apply({"kind": "Pod", "metadata": {"name": "cl"}, "spec": {"containers": [{"name": "m", "image": "crash:1"}]}})
    starts, exits, prev = [], [], None
    for _ in range(200):
        c.run(1)
        st = c.get("Pod", "cl")["status"].get("containerStatuses") or [{}]
        running = "running" in (st[0].get("state") or {})
        if running and not prev:
            starts.append(c.now)
        if not running and prev:
            exits.append(c.now)
        prev = running
    gaps = [round(s - e) for s, e in zip(starts[1:], exits)]
    assert gaps[:5] == [1, 10, 20, 40, 80]     # 1: the next 1 s tick


def test_malformed_patch_kind_and_seed_are_validation_errors():
    c = cluster()
    c.apply(pod())
    refused(c, c.patch, "patch.metadata", "Pod", "p", {"metadata": True})
    refused(c, c.apply, "kind", {"kind": {"a": 1}, "metadata": {"name": "x"}})
    with pytest.raises(ValidationError) as info:
        Cluster(seed=[1])
    assert info.value.field == "seed"


def test_an_unknown_priority_class_is_refused_like_the_priority_admission_plugin():
    c = Cluster()
    pod = {"kind": "Pod", "metadata": {"name": "p"},
           "spec": {"priorityClassName": "high-priority", "containers": [{"name": "c", "image": "x"}]}}
    with pytest.raises(ValidationError) as info:
        c.apply(pod)
    assert info.value.field.endswith("priorityClassName") and "no PriorityClass with name high-priority" in str(info.value)
    pod["spec"]["priorityClassName"] = "system-cluster-critical"
    c.apply(pod)
    assert c.get("Pod", "p") is not None


@pytest.mark.parametrize("image,behavior,field", [
    ("x", {"exit_after": "soon"}, "exit_after"),
    ("x", {"exit_after": -1}, "exit_after"),
    ("x", {"startup_seconds": float("nan")}, "startup_seconds"),
    ("x", {"ready_after": None}, "ready_after"),
    ("x", {"exit_code": 256}, "exit_code"),
    ("x", {"exit_code": 1.5}, "exit_code"),
    ("x", {"memory_bytes": "1Gi"}, "memory_bytes"),
    ("x", {"cpu_millis": -5}, "cpu_millis"),
    ("x", {"colour": "red"}, "behavior"),
    ("", {}, "image"),
    (None, {}, "image"),
])
def test_set_image_checks_its_arguments_up_front(image, behavior, field):
    """A bad behaviour is refused by set_image, not by a TypeError inside run() later."""
    c = cluster()
    c.apply(pod(name="p"))
    refused(c, lambda: c.set_image(image, **behavior), field)
    c.set_image("x", exit_after=None, memory_bytes=None, exit_code=0, startup_seconds=1)   # valid: accepted


def test_selector_matches_and_eviction_key_refuse_malformed_input():
    """rules.selector_matches and eviction_sort_key raise a ValidationError naming the field."""
    for selector, labels, field in (({"matchExpressions": ["x"]}, {}, "selector.matchExpressions[0]"),
                                    ({"matchExpressions": "x"}, {}, "selector.matchExpressions"),
                                    ({"matchLabels": ["app"]}, {}, "selector.matchLabels"),
                                    ({"matchExpressions": [{"key": ["a"], "operator": "In", "values": ["b"]}]}, {},
                                     "selector.matchExpressions[0].key"),
                                    ({"matchExpressions": [{"key": "a", "operator": "Is", "values": ["b"]}]}, {},
                                     "selector.matchExpressions[0].operator"),
                                    ({"matchExpressions": [{"key": "a", "operator": "In", "values": 5}]}, {},
                                     "selector.matchExpressions[0].values"),
                                    (["app"], {}, "selector"),
                                    ({"app": "web"}, ["app"], "labels")):
        with pytest.raises(ValidationError) as info:
            rules.selector_matches(selector, labels)
        assert info.value.field == field
    assert rules.selector_matches({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}, {"a": "b"})
    assert not rules.selector_matches({"app": "web"}, None)
    for usage in ("x", -1, float("inf")):
        with pytest.raises(ValidationError) as info:
            rules.eviction_sort_key(pod(), usage)
        assert info.value.field == "usage_bytes"
    assert rules.eviction_sort_key(pod(), None)[0] == 0 and rules.eviction_sort_key(pod(), 2**20)[0] == 1


def test_replicas_past_the_simulator_limit_are_refused_with_the_reason():
    """The API allows 2^31−1 replicas; this simulator runs up to 10,000 per workload (10^5 took
    about a minute of CPU per simulated second)."""
    c = cluster()
    for kind in ("Deployment", "ReplicaSet"):
        err = refused(c, c.apply, "spec.replicas", {**deployment(replicas=10_001), "kind": kind})
        assert "this simulator runs up to 10,000" in str(err) and "2^31−1" in str(err)
    c.apply(deployment(replicas=2))
    refused(c, c.patch, "spec.replicas", "Deployment", "web", {"spec": {"replicas": 2**31 - 1}})
    assert c.get("Deployment", "web")["spec"]["replicas"] == 2
    c.apply(deployment(replicas=10_000, name="big"))          # the limit itself is allowed (not run here)


def test_pods_past_the_simulator_limit_fail_to_create_like_quota(monkeypatch):
    """Past cluster.SIM_MAX_PODS a pod create is refused (Forbidden) and the ReplicaSet reports it."""
    import engines.k8s.cluster as cluster_module
    monkeypatch.setattr(cluster_module, "SIM_MAX_PODS", 3)
    c = cluster()
    c.apply(deployment(replicas=5))
    c.run(10)
    assert len(c.list("Pod")) == 3
    failed = [e for e in c.events if e["reason"] == "FailedCreate"]
    assert failed and "this simulator runs at most 3 pods" in failed[0]["message"]
    with pytest.raises(ValidationError, match="simulator"):
        c.apply(pod(name="extra"))


def test_web_deployment_asset_header_counts_its_nodes():
    """assets/k8s/web-deployment.yaml's first-line comment names as many nodes as it defines."""
    import re
    from pathlib import Path

    from engines.k8s import load_manifests
    text = (Path(__file__).resolve().parents[2] / "assets" / "k8s" / "web-deployment.yaml").read_text()
    said = int(re.search(r"(\d+) nodes", text.splitlines()[0]).group(1))
    assert said == sum(1 for m in load_manifests(text) if m.obj["kind"] == "Node")
