"""Addresses (pod CIDRs, pod IPs, ClusterIPs, EndpointSlices per tick) and the Horizontal Pod
Autoscaler (the upstream rule, the controller, GPUs as the limit)."""
from __future__ import annotations

import ipaddress

import pytest

from engines.core.errors import ValidationError
from engines.k8s import Cluster, hpa_desired_replicas
from engines.k8s.hpa import replicas_from_pods
from engines.k8s.network import HostLocal, client_view
from engines.k8s.scenarios import _base, run_guide


def cluster(replicas: int = 3, seed: int = 1) -> Cluster:
    c = Cluster(seed=seed)
    _base(c, replicas)
    c.run(10)
    return c


def live(c: Cluster) -> list[dict]:
    return [p for p in c.list("Pod") if not p["metadata"].get("deletionTimestamp")]


def slice_ips(c: Cluster, ready_only: bool = True) -> set[str]:
    return {e["addresses"][0] for s in c.list("EndpointSlice") for e in s["endpoints"]
            if e["conditions"]["ready"] or not ready_only}


# --- addresses ---------------------------------------------------------------------------------
def test_nodes_get_consecutive_pod_cidrs_and_pods_addresses_inside_them():
    c = cluster()
    assert [n["spec"]["podCIDR"] for n in c.list("Node")] == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]
    for p in live(c):
        ip = ipaddress.ip_address(p["status"]["podIP"])
        cidr = ipaddress.ip_network(c.get("Node", p["spec"]["nodeName"])["spec"]["podCIDR"])
        assert ip in cidr and int(ip) - int(cidr.network_address) >= 2   # .0 network, .1 gateway


def test_a_node_that_brings_its_pod_cidr_keeps_it():
    c = Cluster()
    c.apply({"kind": "Node", "metadata": {"name": "a"}, "spec": {"podCIDR": "10.244.7.0/24"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})
    c.apply({"kind": "Node", "metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})
    assert c.get("Node", "a")["spec"]["podCIDR"] == "10.244.7.0/24"
    assert c.get("Node", "b")["spec"]["podCIDR"] == "10.244.0.0/24"
    with pytest.raises(ValidationError, match="spec.podCIDR"):
        c.apply({"kind": "Node", "metadata": {"name": "x"}, "spec": {"podCIDR": "10.244.7.0/33"},
                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})


def test_host_local_hands_out_the_next_address_not_the_one_just_freed():
    ipam = HostLocal(ipaddress.ip_network("10.244.3.0/29"))
    got = [ipam.get() for _ in range(3)]
    assert got == ["10.244.3.2", "10.244.3.3", "10.244.3.4"]
    ipam.release("10.244.3.3")
    assert ipam.get() == "10.244.3.5"
    assert ipam.get() == "10.244.3.6"
    assert ipam.get() == "10.244.3.3"            # wraps round to the first free one
    assert ipam.get() == ""                      # exhausted: the sandbox gets no address


def test_deleting_a_pod_changes_the_address_and_the_slice_follows():
    c = cluster()
    victim = live(c)[0]
    old_ip = victim["status"]["podIP"]
    assert old_ip in slice_ips(c)
    c.kubectl(f"delete pod {victim['metadata']['name']}")
    c.run(1)
    terminating = [e for s in c.list("EndpointSlice") for e in s["endpoints"] if e["addresses"][0] == old_ip]
    assert terminating and terminating[0]["conditions"] == {"ready": False, "serving": True, "terminating": True}
    c.run(10)
    ips = {p["status"]["podIP"] for p in live(c)}
    assert old_ip not in ips and len(ips) == 3
    assert slice_ips(c) == ips and old_ip not in slice_ips(c, ready_only=False)


def test_rescheduling_on_another_node_gives_an_address_from_that_nodes_cidr():
    c = cluster(4)
    node = live(c)[0]["spec"]["nodeName"]
    c.kubectl(f"drain {node}")
    c.run(12)
    for p in live(c):
        cidr = ipaddress.ip_network(c.get("Node", p["spec"]["nodeName"])["spec"]["podCIDR"])
        assert p["spec"]["nodeName"] != node and ipaddress.ip_address(p["status"]["podIP"]) in cidr
    assert slice_ips(c) == {p["status"]["podIP"] for p in live(c)}


def test_the_cluster_ip_is_random_in_the_service_range_stable_and_released():
    c = cluster()
    ip = c.get("Service", "web")["spec"]["clusterIP"]
    assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/12") and ip != "10.96.0.1"
    c.kubectl(f"delete pod {live(c)[0]['metadata']['name']}")
    c.run(15)
    assert c.get("Service", "web")["spec"]["clusterIP"] == ip                 # pods churn, the Service does not
    assert cluster().get("Service", "web")["spec"]["clusterIP"] == ip        # same seed, same address
    assert cluster(seed=2).get("Service", "web")["spec"]["clusterIP"] != ip
    c.kubectl("delete svc web")
    assert ip not in c.service_ips.in_use


def test_frames_show_addresses_per_tick_and_the_client_view():
    tl = run_guide("self-heal")
    before, after = tl.frames[11], tl.frames[20]
    svc_before, svc_after = before.services[0], after.services[0]
    assert svc_before["cluster_ip"] == svc_after["cluster_ip"]
    gone = set(e["ip"] for e in svc_before["endpoints"]) - set(e["ip"] for e in svc_after["endpoints"])
    assert len(gone) == 1 and all(p["ip"] for p in after.pods)
    pinned = gone.pop()
    text = " ".join(client_view(after, "web", pinned))
    assert svc_after["cluster_ip"] in text and "<b>works</b>" in text and "times out" in text
    assert "No Service" in client_view(after, "nope")[0]


# --- the HPA rule ------------------------------------------------------------------------------
@pytest.mark.parametrize("current, metric, target, expected", [
    (4, 200, 100, 8),          # 200 % of target: double
    (4, 50, 100, 2),           # half: halve
    (4, 105, 100, 4),          # within the 10 % tolerance: unchanged
    (4, 90, 100, 4),           # the tolerance is inclusive on both sides
    (4, 111, 100, 5),          # ceil(4 × 1.11) = ceil(4.44)
    (3, 50, 30, 5),            # ceil(3 × 1.667)
    (1, 0, 100, 0),            # no load at all: the rule says 0; min/max clamp comes later
    (0, 500, 100, 0),          # a target scaled to 0: autoscaling disabled
])
def test_hpa_desired_replicas_by_the_upstream_rule(current, metric, target, expected):
    assert hpa_desired_replicas(current, metric, target) == expected


def test_hpa_rule_tolerance_and_validation():
    assert hpa_desired_replicas(10, 115, 100, tolerance=0.2) == 10
    assert hpa_desired_replicas(10, 115, 100, tolerance=0.1) == 12
    for bad in (dict(current_replicas=-1, current_metric=1, target_metric=1),
                dict(current_replicas=1, current_metric=1, target_metric=0),
                dict(current_replicas=1, current_metric=-1, target_metric=1),
                dict(current_replicas=1, current_metric=1, target_metric=1, tolerance=2)):
        with pytest.raises(ValidationError):
            hpa_desired_replicas(**bad)


def _pod(name: str, phase: str, cpu: str = "1") -> dict:
    return {"metadata": {"name": name}, "status": {"phase": phase},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def test_replica_calculator_cases():
    """Upstream replica_calculator_test.go: 300/500/700m of 1-CPU requests at a 30 % target → 5;
    the same with the first pod Pending → 4 (the Pending pod counts as 0 when scaling up)."""
    pods = [_pod("a", "Running"), _pod("b", "Running"), _pod("c", "Running")]
    req = {"a": 1000, "b": 1000, "c": 1000}
    n, ratio, _ = replicas_from_pods(3, {"a": 300, "b": 500, "c": 700}, pods, 30, requests=req)
    assert n == 5 and ratio * 30 == pytest.approx(50)
    pods[0] = _pod("a", "Pending")
    n, ratio, how = replicas_from_pods(3, {"b": 500, "c": 700}, pods, 30, requests=req)
    assert n == 4 and ratio * 30 == pytest.approx(60) and "Pending" in how
    # Pending replicas that would double the count are counted at 0 and hold it where it is
    pods = [_pod(f"p{i}", "Running" if i < 2 else "Pending") for i in range(4)]
    n, _, how = replicas_from_pods(4, {"p0": 20.0, "p1": 20.0}, pods, 10)
    assert n == 4 and "keep 4" in how
    with pytest.raises(ValidationError):
        replicas_from_pods(2, {}, [_pod("x", "Pending")], 10)


# --- the HPA controller ------------------------------------------------------------------------
def gpu_cluster(gpus: int = 4, max_replicas: int = 8, window: int | None = None) -> Cluster:
    c = Cluster(seed=0)
    c.apply({"kind": "Node", "metadata": {"name": "gpu-0"},
             "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": str(gpus)}}})
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ms"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "ms"}},
        "template": {"metadata": {"labels": {"app": "ms"}}, "spec": {"containers": [{
            "name": "s", "image": "vllm:1", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}})
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ms"}, "minReplicas": 1,
            "maxReplicas": max_replicas, "metrics": [{"type": "Pods", "pods": {
                "metric": {"name": "requests_per_second"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]}
    if window is not None:
        spec["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": window}}
    c.apply({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "ms"}, "spec": spec})
    return c


def hpa(c: Cluster) -> dict:
    return c.get("HorizontalPodAutoscaler", "ms")["status"]


def reasons(c: Cluster) -> set[str]:
    return {x["reason"] for x in hpa(c)["conditions"]}


def test_the_hpa_scales_up_and_new_replicas_wait_for_gpus():
    c = gpu_cluster(gpus=4, max_replicas=8)
    c.set_traffic("ms", [(0, 20.0)])            # 2 replicas' worth at 10 req/s each
    c.run(40)
    assert c.get("Deployment", "ms")["spec"]["replicas"] == 2
    c.set_traffic("ms", [(0, 60.0)])            # 6 replicas' worth, GPUs for 4
    c.run(120)
    pods = [p for p in c.list("Pod") if p["metadata"]["labels"]["app"] == "ms"]
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    assert c.get("Deployment", "ms")["spec"]["replicas"] >= 5 and len(pods) - len(pending) == 4 and pending
    cond = [x for x in pending[0]["status"]["conditions"] if x["type"] == "PodScheduled"][0]
    assert cond["message"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_max_replicas_clamps():
    c = gpu_cluster(gpus=8, max_replicas=3)
    c.set_traffic("ms", [(0, 100.0)])
    c.run(120)
    assert c.get("Deployment", "ms")["spec"]["replicas"] == 3 and "TooManyReplicas" in reasons(c)


def test_scale_down_is_held_by_the_stabilisation_window():
    c = gpu_cluster(gpus=8, max_replicas=8, window=120)
    c.set_traffic("ms", [(0, 40.0)])
    c.run(90)
    assert c.get("Deployment", "ms")["spec"]["replicas"] == 4
    c.set_traffic("ms", [(0, 10.0)])
    c.run(100)                                   # inside the window: the highest recent recommendation wins
    assert c.get("Deployment", "ms")["spec"]["replicas"] == 4 and "ScaleDownStabilized" in reasons(c)
    c.run(60)                                    # the 4-replica recommendations have aged out
    assert c.get("Deployment", "ms")["spec"]["replicas"] == 1


def test_hpa_spec_is_validated():
    c = gpu_cluster()
    base = c.get("HorizontalPodAutoscaler", "ms")
    for spec, field in (({"minReplicas": 5, "maxReplicas": 2}, "spec.maxReplicas"),
                        ({"metrics": []}, "spec.metrics"),
                        ({"scaleTargetRef": {"kind": "Service", "name": "x"}}, "spec.scaleTargetRef")):
        with pytest.raises(ValidationError, match=field):
            c.apply({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x"},
                     "spec": {**base["spec"], **spec}})
    with pytest.raises(ValidationError, match="traffic"):
        c.set_traffic("ms", [(10, 1), (5, 2)])


def test_autoscale_scenario_is_linked_to_the_serving_engine():
    from engines.core.scenario import Scenario
    from engines.k8s.scenarios import autoscale_plan
    from engines.serving import default_workload, saturation_rate, step_cost
    s = Scenario()
    plan = autoscale_plan(s)
    assert plan.capacity_rps == pytest.approx(saturation_rate(step_cost(s, plan.server.gpus_needed),
                                                              default_workload(s), s.serve_batch))
    assert plan.target_rps == pytest.approx(0.8 * plan.capacity_rps, abs=0.01)
    tl = run_guide("autoscale", s)
    peak = max(tl.frames, key=lambda f: f.hpas[0]["pending"])
    assert peak.hpas[0]["pending"] > 0 and peak.hpas[0]["running"] == plan.server.fit
    late = tl.frames[-1].hpas[0]
    assert late["current"] < plan.server.fit and any(
        "ScaleDownStabilized" in [x["reason"] for x in f.hpas[0]["conditions"]] for f in tl.frames[340:600])
