"""engines.k8s: the upstream rules (QoS, fenceposts, oom_score_adj, rankings) and the Cluster
driven through each failure mode, asserting the outcome upstream Kubernetes produces."""
from __future__ import annotations

import pytest

from engines.core.errors import ValidationError
from engines.k8s import Cluster, load_manifests, oom_score_adj, qos_class, resolve_fenceposts
from engines.k8s import rules

GI, MI = 2**30, 2**20


def pod(*containers, priority=None):
    spec = {"containers": [{"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(containers)]}
    if priority is not None:
        spec["priority"] = priority
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


# --- QoS (qos.go GetPodQOS) --------------------------------------------------------------------
def test_qos_classes():
    assert qos_class(pod({})) == "BestEffort"
    assert qos_class(pod({"requests": {"cpu": "100m", "memory": "128Mi"},
                          "limits": {"cpu": "100m", "memory": "128Mi"}})) == "Guaranteed"
    # limits only: requests default to limits → Guaranteed (docs caveat)
    assert qos_class(pod({"limits": {"cpu": "1", "memory": "1Gi"}})) == "Guaranteed"
    assert qos_class(pod({"requests": {"memory": "100Mi"}, "limits": {"memory": "200Mi"}})) == "Burstable"
    # every container must be guaranteed
    assert qos_class(pod({"limits": {"cpu": "1", "memory": "1Gi"}}, {})) == "Burstable"
    # only cpu and memory count
    assert qos_class(pod({"requests": {"ephemeral-storage": "1Gi"}})) == "BestEffort"
    assert qos_class(pod({"limits": {"nvidia.com/gpu": 1}})) == "BestEffort"
    # cpu limit only: memory missing → not Guaranteed
    assert qos_class(pod({"limits": {"cpu": "1"}})) == "Burstable"
    # 1000m == 1 as quantities
    assert qos_class(pod({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1024Mi"}})) == "Guaranteed"


# --- fenceposts (deployment_util.go ResolveFenceposts) -------------------------------------------
@pytest.mark.parametrize("replicas,surge,unavail,expected", [
    (10, "25%", "25%", (3, 2)),     # 2.5 → up 3, down 2
    (4, "25%", "25%", (1, 1)),
    (1, "25%", "25%", (1, 0)),      # ceil(0.25)=1, floor(0.25)=0
    (3, "10%", "10%", (1, 0)),
    (3, 0, "10%", (0, 1)),          # both 0 → unavailable forced to 1
    (3, "0%", "0%", (0, 1)),
    (5, 2, 0, (2, 0)),
    (10, "30%", "50%", (3, 5)),
    (0, "25%", "25%", (0, 1)),
])
def test_resolve_fenceposts(replicas, surge, unavail, expected):
    assert resolve_fenceposts(replicas, surge, unavail) == expected


def test_fenceposts_reject_bad_values():
    for bad in ("25", "2.5%", -1, True, None):
        with pytest.raises(ValidationError):
            resolve_fenceposts(4, bad, 1)


# --- oom_score_adj (kubelet/qos/policy.go) --------------------------------------------------------
def test_oom_score_adj():
    node = 8 * GI
    assert oom_score_adj(pod({"limits": {"cpu": "1", "memory": "1Gi"}}), node) == -997
    assert oom_score_adj(pod({}), node) == 1000
    # Burstable: 1000 − 1000·1Gi/8Gi = 875
    assert oom_score_adj(pod({"requests": {"memory": "1Gi"}}), node) == 875
    # integer division: 1000·100Mi/8Gi = 12.2 → 12 → 988
    assert oom_score_adj(pod({"requests": {"memory": "100Mi"}}), node) == 988
    # tiny request → 1000 − 0 = 1000 → mapped to 999 (below BestEffort)
    assert oom_score_adj(pod({"requests": {"cpu": "100m"}}), node) == 999
    # request ≈ whole node → floor 1000 + (−997) = 3
    assert oom_score_adj(pod({"requests": {"memory": "8Gi"}, "limits": {"memory": "16Gi"}}), node) == 3
    with pytest.raises(ValidationError):
        oom_score_adj(pod({}), 0)


# --- rankings ----------------------------------------------------------------------------------------
def _p(name, node="n1", phase="Running", ready_at=None, restarts=0, created=0.0, cost=None):
    meta = {"name": name, "uid": name, "creationTimestamp": created, "annotations": {}}
    if cost is not None:
        meta["annotations"][rules.POD_DELETION_COST] = str(cost)
    conds = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}] if ready_at is not None else []
    return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": phase, "conditions": conds, "containerStatuses": [{"restartCount": restarts}]}}


def test_deletion_ranking_order():
    now = 10_000.0
    unassigned = _p("unassigned", node="")
    pending = _p("pending", phase="Pending")
    not_ready = _p("notready")
    cheap = _p("cheap", ready_at=0.0, cost=-10)
    ready_new = _p("ready-new", ready_at=now - 1)
    ready_old = _p("ready-old", ready_at=0.0)
    pods = [ready_old, ready_new, cheap, not_ready, pending, unassigned]
    order = rules.pods_to_delete(pods, pods, 6, now - 0) if False else None
    ranked = [p["metadata"]["name"] for p in rules.pods_to_delete(pods, [], 5, now)]
    assert ranked == ["unassigned", "pending", "notready", "cheap", "ready-new"]
    assert order is None


def test_deletion_prefers_doubled_up_nodes_then_restarts():
    now = 1000.0
    a, b, c = _p("a", node="n1", ready_at=0.0), _p("b", node="n1", ready_at=0.0), _p("c", node="n2", ready_at=0.0)
    # rank = related pods on the same node: n1 has 2 → delete from n1 first
    assert rules.pods_to_delete([c, a, b], [a, b, c], 1, now)[0]["metadata"]["name"] in ("a", "b")
    x, y = _p("x", ready_at=0.0, restarts=5), _p("y", ready_at=0.0, restarts=0)
    # equal ready time → more restarts first
    assert rules.pods_to_delete([y, x], [], 1, now)[0]["metadata"]["name"] == "x"


def test_eviction_ranking_usage_over_request_then_priority():
    be = pod({})                                              # request 0
    burst = pod({"requests": {"memory": "512Mi"}})
    guar = pod({"limits": {"cpu": "1", "memory": "1Gi"}})
    low = pod({"requests": {"memory": "512Mi"}}, priority=-10)
    ranked = sorted([("guar", guar, 900 * MI), ("burst", burst, 600 * MI), ("be", be, 50 * MI), ("low", low, 400 * MI)],
                    key=lambda t: rules.eviction_sort_key(t[1], t[2]))
    # exceeding requests first (burst 600>512, be 50>0); among them priority equal → larger excess first
    assert [t[0] for t in ranked] == ["burst", "be", "low", "guar"]
    # priority beats QoS inside the exceeding group
    hi_be = pod({}, priority=1000)
    ranked = sorted([("hi_be", hi_be, 10 * MI), ("burst", burst, 600 * MI)], key=lambda t: rules.eviction_sort_key(t[1], t[2]))
    assert ranked[0][0] == "burst"


def test_scores():
    alloc = {"cpu": 4000, "memory": 8 * GI}
    assert rules.least_allocated_score({"cpu": 1000, "memory": 2 * GI}, alloc) == 75
    assert rules.balanced_allocation_score({"cpu": 1000, "memory": 2 * GI}, alloc) == 100
    assert rules.balanced_allocation_score({"cpu": 2000, "memory": 0}, alloc) == 75


# --- Cluster scenarios -------------------------------------------------------------------------------
def node(name, cpu="4", memory="8Gi", **extra):
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": memory, **extra}}}


def deployment(name="web", replicas=4, image="web:1", surge="25%", unavailable="25%", cpu="250m", memory="256Mi",
               deadline=None, probe=False):
    c = {"name": "web", "image": image, "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if probe:
        c["readinessProbe"] = {"initialDelaySeconds": 2, "httpGet": {"path": "/", "port": 80}}
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [c]}}}
    if deadline:
        spec["progressDeadlineSeconds"] = deadline
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def cluster_with(n_nodes=3, seed=0, **kw):
    c = Cluster(seed=seed, **kw)
    for i in range(n_nodes):
        c.apply(node(f"node-{i}"))
    return c


def running(c, **sel):
    return [p for p in c.list("Pod", sel or None) if rules.is_active(p)]


def test_deleted_pod_is_replaced():
    c = cluster_with()
    c.apply(deployment(replicas=3))
    c.run(10)
    victim = running(c, app="web")[0]["metadata"]["name"]
    c.delete("Pod", victim)
    c.run(10)
    pods = running(c, app="web")
    assert len(pods) == 3 and victim not in [p["metadata"]["name"] for p in pods]
    assert all(rules.is_pod_ready(p) for p in pods)
    assert any(e["reason"] == "SuccessfulCreate" and e["object"].startswith("replicaset/") for e in c.events)


def test_relabelled_pod_is_orphaned_replaced_and_dropped_from_service():
    c = cluster_with()
    c.apply(deployment(replicas=3))
    c.apply({"kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    c.run(10)
    name = running(c, app="web")[0]["metadata"]["name"]
    c.patch("Pod", name, {"metadata": {"labels": {"app": "debug"}}})
    c.run(10)
    orphan = c.get("Pod", name)
    assert not orphan["metadata"].get("ownerReferences")            # released
    assert orphan["status"]["phase"] == "Running" and rules.is_pod_ready(orphan)   # keeps running
    assert len(running(c, app="web")) == 3                          # replacement made
    served = [e["targetRef"]["name"] for s in c.list("EndpointSlice") for e in s["endpoints"]]
    assert name not in served and len(served) == 3


def test_hand_edited_image_is_not_reverted_and_hand_scale_is_undone():
    c = cluster_with()
    c.apply(deployment(replicas=2))
    c.run(10)
    name = running(c, app="web")[0]["metadata"]["name"]
    container = c.get("Pod", name)["spec"]["containers"][0]
    # a merge patch replaces the whole list (RFC 7386), so send the full container
    c.patch("Pod", name, {"spec": {"containers": [{**container, "image": "web:hotfix"}]}})
    c.run(20)
    assert c.get("Pod", name)["spec"]["containers"][0]["image"] == "web:hotfix"    # drift survives
    rs = c.list("ReplicaSet")[0]["metadata"]["name"]
    c.patch("ReplicaSet", rs, {"spec": {"replicas": 5}})
    c.run(10)
    assert c.get("ReplicaSet", rs)["spec"]["replicas"] == 2
    assert len(running(c, app="web")) == 2


def test_pod_update_rules():
    c = cluster_with(1)
    c.apply({"kind": "Pod", "metadata": {"name": "solo"}, "spec": {"containers": [{"name": "a", "image": "x"}]}})
    with pytest.raises(ValidationError):
        c.patch("Pod", "solo", {"spec": {"restartPolicy": "Never"}})
    with pytest.raises(ValidationError):
        c.get("Pod", "missing")


@pytest.mark.parametrize("surge,unavailable,replicas", [("25%", "25%", 8), (0, 1, 5), (2, 0, 5), ("50%", "50%", 6)])
def test_rolling_update_bounds_never_violated(surge, unavailable, replicas):
    c = cluster_with(4)
    c.apply(deployment(replicas=replicas, surge=surge, unavailable=unavailable, probe=True))
    c.run(15)
    max_total, min_available = c.deployment_bounds("web")
    c.apply(deployment(replicas=replicas, surge=surge, unavailable=unavailable, image="web:2", probe=True))
    for _ in range(120):
        c.run(1)
        rss = c.list("ReplicaSet")
        assert sum(r["spec"]["replicas"] for r in rss) <= max_total
        available = [p for p in running(c, app="web") if rules.is_pod_available(p, 0, c.now)]
        assert len(available) >= min_available
    d = c.get("Deployment", "web")
    assert d["status"]["updatedReplicas"] == replicas and d["status"]["availableReplicas"] == replicas
    assert all(p["spec"]["containers"][0]["image"] == "web:2" for p in running(c, app="web"))


def test_crash_looping_rollout_stalls_reports_and_is_not_rolled_back():
    c = cluster_with()
    c.apply(deployment(replicas=4, deadline=60))
    c.run(15)
    c.apply(deployment(replicas=4, deadline=60, image="web:crash"))
    c.run(200)
    d = c.get("Deployment", "web")
    prog = rules.condition(d, "Progressing")
    assert prog["status"] == "False" and prog["reason"] == "ProgressDeadlineExceeded"
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "web:crash"    # no rollback
    max_total, min_available = c.deployment_bounds("web")
    pods = running(c, app="web")
    assert len(pods) <= max_total
    assert sum(1 for p in pods if rules.is_pod_ready(p)) >= min_available         # old pods keep serving
    crashing = [p for p in pods if p["spec"]["containers"][0]["image"] == "web:crash"]
    assert crashing and all(p["status"]["containerStatuses"][0]["restartCount"] >= 2 for p in crashing)
    assert any(p["status"]["containerStatuses"][0]["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"
               for p in crashing)


def test_scheduling_failure_pending_with_reason():
    c = cluster_with(2)
    c.apply(deployment(name="big", replicas=1, cpu="6", memory="1Gi"))
    c.run(5)
    (p,) = c.list("Pod")
    assert p["status"]["phase"] == "Pending" and not p["spec"].get("nodeName")
    cond = rules.condition(p, "PodScheduled")
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert any(e["reason"] == "FailedScheduling" for e in c.events)
    c.apply(node("node-big", cpu="8"))                       # a node that fits: scheduled on the next try
    c.run(15)
    assert c.list("Pod")[0]["spec"]["nodeName"] == "node-big"


def test_limits_are_ignored_by_the_scheduler_and_gpus_are_extended_resources():
    c = Cluster(seed=1)
    c.apply(node("gpu-0", **{"nvidia.com/gpu": "8"}))
    c.apply({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "a", "image": "x", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "64", "memory": "1Ti", "nvidia.com/gpu": 8}}}]}})
    c.apply({"kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "b", "image": "x", "resources": {
        "limits": {"nvidia.com/gpu": 1}}}]}})
    c.run(5)
    assert c.get("Pod", "a")["spec"]["nodeName"] == "gpu-0"
    assert "Insufficient nvidia.com/gpu" in rules.condition(c.get("Pod", "b"), "PodScheduled")["message"]


def test_memory_limit_oomkills_and_restarts_cpu_limit_throttles():
    c = cluster_with(1)
    c.apply({"kind": "Pod", "metadata": {"name": "m"}, "spec": {"containers": [{"name": "m", "image": "x", "resources": {
        "requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}}}]}})
    c.run(5)
    c.set_usage("m", memory="300Mi", cpu_millis=500)
    c.run(3)
    p = c.get("Pod", "m")
    st = p["status"]["containerStatuses"][0]
    assert st["lastState"]["terminated"]["reason"] == "OOMKilled" and st["lastState"]["terminated"]["exitCode"] == 137
    assert p["spec"]["nodeName"] == "node-0" and p["status"]["phase"] == "Running"   # not evicted
    c2 = cluster_with(1)
    c2.apply({"kind": "Pod", "metadata": {"name": "t"}, "spec": {"containers": [{"name": "t", "image": "x", "resources": {
        "requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}]}})
    c2.run(5)
    c2.set_usage("t", cpu_millis=800)
    c2.run(10)
    m = c2.metrics("t")
    assert m["cpu_millis"] == 200 and m["nr_throttled"] >= 90
    assert c2.get("Pod", "t")["status"]["containerStatuses"][0]["restartCount"] == 0   # throttled, never killed


def test_node_memory_pressure_evicts_by_ranking():
    c = cluster_with(1)
    for name, res in (("guaranteed", {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "100m", "memory": "1Gi"}}),
                      ("burstable", {"requests": {"memory": "512Mi"}}),
                      ("besteffort", {})):
        c.apply({"kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}})
    c.run(5)
    c.set_usage("burstable", memory="1Gi")          # 512Mi over its request
    c.set_usage("besteffort", memory="256Mi")        # 256Mi over its request of 0
    # capacity 8Gi + 100Mi = 8292Mi; pods use 1Gi + 1Gi + 256Mi = 2304Mi; leave 50Mi < 100Mi threshold
    c.fill_node_memory("node-0", "5938Mi")
    c.run(40)
    evicted = [e["object"].split("/")[1] for e in c.events if e["reason"] == "Evicted"]
    assert evicted[0] == "burstable"                 # largest usage − request among those exceeding
    assert c.get("Pod", "burstable")["status"]["reason"] == "Evicted"
    assert c.get("Pod", "burstable")["status"]["phase"] == "Failed"
    assert "guaranteed" not in evicted
    assert rules.condition(c.get("Node", "node-0"), "MemoryPressure")["status"] == "True"


def test_memory_pressure_never_evicts_a_critical_pod():
    """eviction_manager.go evictPod refuses pods at priority ≥ 2,000,000,000 (both system classes) and
    evicts the next pod in the ranking, even one that uses less."""
    c = cluster_with(1)
    for name, cls in (("dns", "system-cluster-critical"), ("proxy", "system-node-critical"), ("app", None)):
        spec = {"containers": [{"name": "c", "image": "x", "resources": {}}]}
        if cls:
            spec["priorityClassName"] = cls
        c.apply({"kind": "Pod", "metadata": {"name": name}, "spec": spec})
    c.run(5)
    c.set_usage("dns", memory="2Gi")                 # critical pods rank first: no request, most usage
    c.set_usage("proxy", memory="1Gi")
    c.set_usage("app", memory="64Mi")
    c.fill_node_memory("node-0", "5150Mi")           # 8292Mi − 3136Mi used − 5150Mi = 6Mi available
    c.run(40)
    evicted = [e["object"].split("/")[1] for e in c.events if e["reason"] == "Evicted"]
    assert evicted and evicted[0] == "app"
    assert "dns" not in evicted and "proxy" not in evicted
    assert [rules.is_critical(c.get("Pod", n)) for n in ("dns", "proxy", "app")] == [True, True, False]


def test_stopped_node_pods_are_replaced_after_toleration():
    c = cluster_with(2)
    c.apply(deployment(replicas=4))
    c.run(10)
    target = running(c, app="web")[0]["spec"]["nodeName"]
    c.stop_node(target)
    c.run(60)
    assert rules.condition(c.get("Node", target), "Ready")["status"] == "Unknown"
    c.run(320)
    live = [p for p in running(c, app="web") if p["spec"]["nodeName"] != target]
    assert len(live) == 4 and all(rules.is_pod_ready(p) for p in live)


def test_quota_stops_slow_start_batches():
    c = cluster_with(2)
    c.apply({"kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"pods": "5"}}})
    c.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}, "spec": {
        "replicas": 10, "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    c.run(1)
    failed = [e for e in c.events if e["reason"] == "FailedCreate"]
    assert len(c.list("Pod")) == 5
    # batches 1, 2, 4: the 4-batch makes 2 and is refused twice; no 8-batch is attempted
    first = next(d for d in c.ctx.decisions if d["action"].startswith("create 10"))
    assert first["action"] == "create 10: 5 created in batches [1, 2, 4], then refused"
    assert failed[0]["message"].startswith('Error creating: pods "rs-" is forbidden')
    assert "exceeded quota: q, requested: pods=1, used: pods=5, limited: pods=5" in failed[0]["message"]
    rs = c.get("ReplicaSet", "rs")
    assert rules.condition(rs, "ReplicaFailure")["status"] == "True"


def test_dropped_events_level_recovers_edge_never():
    outcomes = {}
    for mode in ("level", "edge"):
        c = cluster_with(2, reconcile=mode)
        c.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}, "spec": {
            "replicas": 3, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
        c.run(10)
        c.drop_watch_events(5)
        c.delete("Pod", c.list("Pod")[0]["metadata"]["name"])
        c.run(120)
        outcomes[mode] = len([p for p in c.list("Pod") if rules.is_active(p)])
    assert outcomes == {"level": 3, "edge": 2}


def test_determinism_for_a_seed():
    def trace(seed):
        c = cluster_with(3, seed=seed)
        c.apply(deployment(replicas=5))
        c.run(20)
        return [(p["metadata"]["name"], p["spec"]["nodeName"]) for p in c.list("Pod")]
    first = trace(7)
    assert len(first) == 5 and all(node for _name, node in first)          # every pod placed
    assert trace(7) == first                                               # the same seed: the same run
    assert trace(8) != first                                               # and the seed is what decides it


def test_manifests_report_unsupported_fields_and_validate():
    text = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, uid: abc}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity: {nodeAffinity: {}}
      containers: [{name: web, image: nginx, livenessProbe: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
"""
    docs = load_manifests(text)
    assert [m.title for m in docs] == ["Deployment/web", "Service/web"]
    report = docs[0].unsupported
    assert any("spec.template.spec.affinity" in r for r in report)
    assert any("livenessProbe" in r for r in report)
    assert any("metadata.uid" in r for r in report)
    c = Cluster()
    c.apply(load_manifests(text)[0].obj | {"spec": {**docs[0].obj["spec"]}})
    bad = deployment()
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(ValidationError, match="selector"):
        c.apply(bad)
    zero = deployment(surge=0, unavailable=0)
    with pytest.raises(ValidationError, match="maxSurge"):
        c.apply(zero)
    with pytest.raises(ValidationError):
        load_manifests("kind: [")
    with pytest.raises(ValidationError):
        c.apply({"kind": "StatefulSet", "metadata": {"name": "x"}})
    warn = Cluster()
    warn.apply(load_manifests(text)[0].obj)
    raw = __import__("yaml").safe_load(text.split("---")[0])
    warn.apply(raw)
    assert any("affinity" in w for w in warn.warnings)


def test_deployment_complete_needs_every_desired_pod_available():
    """DeploymentComplete (deployment_util.go): updated == total == available == replicas. With 3 of
    4 available a rollout is still in progress, although maxUnavailable (25 % → 1) would allow it."""
    c = Cluster()
    d = {"metadata": {"name": "web", "generation": 1},
         "spec": {"replicas": 4, "strategy": {"type": "RollingUpdate"}}}
    status = {"updatedReplicas": 4, "replicas": 4, "availableReplicas": 3, "observedGeneration": 1}
    assert not c.deployments.complete(d, status)
    assert c.deployments.complete(d, {**status, "availableReplicas": 4})
    assert not c.deployments.complete(d, {**status, "availableReplicas": 4, "observedGeneration": 0})


@pytest.mark.parametrize("text, value", [("1E", 10**18), ("2E", 2 * 10**18), ("1E3", 1000), ("1e3", 1000),
                                         ("1Ei", 2**60), ("500m", 0.5), ("1.5Gi", 1.5 * 2**30), (".5", 0.5)])
def test_quantity_suffixes_and_exponents(text, value):
    """quantity.go: "E" alone is the exa suffix; "E3"/"e3" are exponents."""
    from engines.k8s.quantity import parse_quantity

    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["1e", "E", "1EE", "1Ki2", "-1"])
def test_quantity_rejects_malformed_text_with_a_clear_error(text):
    from engines.k8s.quantity import parse_quantity

    with pytest.raises(ValidationError):
        parse_quantity(text)


def test_scoring_defaults_fill_unset_requests_but_keep_explicit_zeros():
    """GetNonzeroRequestForResource: 100m / 200Mi only where no request is set."""
    unset = {"spec": {"containers": [{"name": "a"}]}}
    zero = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "0", "memory": "0"}}}]}}
    assert rules.pod_requests(unset, non_zero=True) == {"cpu": 100, "memory": 200 * 2**20}
    assert rules.pod_requests(zero, non_zero=True) == {"cpu": 0, "memory": 0}
    assert rules.pod_requests(zero) == {"cpu": 0, "memory": 0}


def test_related_pods_for_the_deletion_ranking():
    """getIndirectlyRelatedPods: a Deployment's ReplicaSet counts the pods its owner's ReplicaSets
    select; a bare ReplicaSet (no controller) counts none, so rule 5 never decides for it."""
    c = cluster_with()
    c.apply(deployment(replicas=3))
    c.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "bare"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "bare"}},
                      "template": {"metadata": {"labels": {"app": "bare"}},
                                   "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    c.run(10)
    owned = next(rs for rs in c.list("ReplicaSet") if rs["metadata"].get("ownerReferences"))
    related = c.replicasets._related_pods(owned)
    assert sorted(p["metadata"]["name"] for p in related) == \
        sorted(p["metadata"]["name"] for p in running(c, app="web"))
    assert c.replicasets._related_pods(c.get("ReplicaSet", "bare")) == []


def test_scores_follow_current_upstream_inputs():
    """resource_allocation.go: LeastAllocated on non-zero requests, BalancedAllocation on the
    requests as written; a resource the node has none of is left out of both; a pod that requests
    nothing skips BalancedAllocation (kubernetes#129138)."""
    # 1 CPU of 4 requested, memory unset: LeastAllocated counts 200Mi, BalancedAllocation 0
    least, balanced = rules.node_scores(1000, 200 * MI, 4000, 8 * GI, real_cpu=1000, real_memory=0)
    assert least == (75 + (8 * GI - 200 * MI) * 100 // (8 * GI)) // 2
    assert balanced == int((1 - abs(0.25 - 0) / 2) * 100)
    # a node without allocatable memory: scored on cpu alone
    assert rules.node_scores(1000, 200 * MI, 4000, 0) == (75, 100)
    assert rules.node_scores(100, 200 * MI, 4000, 8 * GI, balanced=False)[1] == 0
    assert rules.is_best_effort_request({}) and not rules.is_best_effort_request({"cpu": 1})


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_and_per_node_scores_agree(seed):
    """NodeTable scores every node at once; the per-node loop is the reference."""
    import random

    rnd = random.Random(seed)
    c = Cluster(seed=seed)
    for i in range(6):
        c.apply(node(f"n{i}", cpu=str(rnd.choice([2, 4, 8])), memory=rnd.choice(["4Gi", "8Gi", "16Gi"])))
    for i in range(8):
        requests = rnd.choice([{}, {"cpu": "250m"}, {"cpu": "500m", "memory": "1Gi"}, {"memory": "512Mi"}])
        c.apply({"kind": "Pod", "metadata": {"name": f"p{i}"},
                 "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}})
    c.run(5)
    sched = c.scheduler
    for requests in ({}, {"cpu": "300m"}, {"cpu": "1", "memory": "2Gi"}):
        probe = {"kind": "Pod", "metadata": {"name": "probe", "namespace": "default", "uid": f"probe-{seed}"},
                 "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}}
        req, nz = rules.pod_requests(probe), rules.pod_requests(probe, non_zero=True)
        wanted = sorted((r, v) for r, v in req.items() if v > 0)
        table, _n = sched.node_table().candidates(sched, probe, req, wanted, nz)
        loop = {n["metadata"]["name"]: (a, b) for n, a, b in sched._candidates_loop(probe, req, wanted, nz)}
        assert table and all(loop[n["metadata"]["name"]] == (a, b) for n, a, b in table)


def test_deployment_unavailable_counts_pods_quota_kept_from_being_created():
    """sync.go calculateStatus: unavailableReplicas = Σ rs.spec.replicas − available. The
    ReplicaSet wants 10, quota lets 5 exist: 5 are unavailable, not 0."""
    c = cluster_with(2)
    c.apply({"kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"pods": "5"}}})
    c.apply(deployment(replicas=10))
    c.run(30)
    d = c.get("Deployment", "web")
    assert d["status"]["replicas"] == 5 and d["status"]["availableReplicas"] == 5
    assert d["status"]["unavailableReplicas"] == 5
    assert rules.condition(d, "Available")["status"] == "False"


def test_revision_history_cleanup_goes_by_revision_not_creation_after_a_rollback():
    """sync.go cleanupDeployment sorts old ReplicaSets by revision (ReplicaSetsByRevision). After
    web:1 → web:2 → web:1 (rollback: the first ReplicaSet comes back as revision 3) → web:3 with
    revisionHistoryLimit 1, the web:2 ReplicaSet (revision 2) goes; the older-created web:1 one
    (revision 3) stays."""
    c = cluster_with()

    def apply(image):
        d = deployment(replicas=2, image=image)
        d["spec"]["revisionHistoryLimit"] = 1
        c.apply(d)
        c.run(40)

    for image in ("web:1", "web:2", "web:1", "web:3"):
        apply(image)
    rss = {r["spec"]["template"]["spec"]["containers"][0]["image"]: r for r in c.list("ReplicaSet")}
    assert sorted(rss) == ["web:1", "web:3"]
    assert rss["web:1"]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert rss["web:3"]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "4"


def test_an_adopted_replicaset_with_an_unparsable_revision_is_skipped_not_a_crash():
    """deployment_util.go MaxRevision skips a revision annotation that does not parse (it logs it);
    the Deployment adopts the orphan ReplicaSet its selector matches and rolls out as usual."""
    c = cluster_with()
    c.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet",
             "metadata": {"name": "stray", "labels": {"app": "web"},
                          "annotations": {"deployment.kubernetes.io/revision": "seven"}},
             "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "web", "image": "old:1"}]}}}})
    c.run(5)
    c.apply(deployment(replicas=2))
    c.run(40)
    d = c.get("Deployment", "web")
    assert d["status"].get("availableReplicas") == 2
    rss = {r["metadata"]["name"]: r for r in c.list("ReplicaSet")}
    assert rss["stray"]["metadata"]["ownerReferences"][0]["name"] == "web"        # adopted
    new = next(r for name, r in rss.items() if name != "stray")
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"   # "seven" skipped
    assert rss["stray"]["spec"]["replicas"] == 0


def test_a_frame_exports_its_objects_commands_and_pod_rows():
    from engines.k8s.scenarios import GUIDES, run_guide
    key = next(iter(GUIDES))
    frame = next(f for f in reversed(run_guide(key).frames) if f.pods)
    record = frame.record(key)
    assert record["scenario"] == key and record["t"] == frame.t and record["pods"] is frame.pods
    assert set(record) >= {"nodes", "replicasets", "deployments", "services", "hpas", "decisions", "events", "commands"}
    rows = frame.pod_rows()
    assert [r["pod"] for r in rows] == [p["name"] for p in frame.pods]
    assert all(r["node"] == (p["node"] or "") and r["status"] == p["badge"] for r, p in zip(rows, frame.pods))


def test_a_frame_holds_the_last_frames_objects_where_nothing_changed():
    """A run keeps a frame per second; what stood still is one object, what changed is new."""
    from engines.k8s.scenarios import run_guide
    frames = run_guide("stop-node").frames
    kept = changed = 0
    for before, after in zip(frames, frames[1:]):
        for kind in ("nodes", "pods", "services", "deployments", "replicasets"):
            last = {d["name"]: d for d in getattr(before, kind)}
            for d in getattr(after, kind):
                old = last.get(d["name"])
                if old is not None and old == d:
                    assert old is d, (kind, d["name"], after.t)
                    kept += 1
                elif old is not None:
                    changed += 1
        for kind, objects in after.objects.items():
            if objects == before.objects.get(kind):
                assert objects is before.objects[kind]
    assert kept > changed > 0          # most of a cluster stands still; what moved shows as new
    stopped = [f for f in frames if any(n["ready"] != "True" for n in f.nodes)]
    assert stopped and stopped[0].nodes is not frames[0].nodes          # the stopped node is a new row
