"""Computations for course E (Kubernetes): the same rule functions the simulated controllers use
(engines.k8s.hpa, engines.k8s.rules), each citing the upstream source file it follows."""
from __future__ import annotations

import math
import random
from typing import Any, Mapping

from engines.k8s import rules
from engines.k8s.hpa import DEFAULT_TOLERANCE, hpa_desired_replicas
from engines.practice.model import Mistake, Option, Outcome, Redraw, Step
from engines.practice.registry import computation
from engines.practice.topics.training import _show

HPA = "Kubernetes pkg/controller/podautoscaler/replica_calculator.go (desired = ⌈current × metric / target⌉, 10 % tolerance)"
RS = "Kubernetes pkg/controller/replicaset/replica_set.go manageReplicas (diff = desired − active matching pods)"
QOS = "Kubernetes pkg/apis/core/v1/helper/qos/qos.go GetPodQOS; docs: Pod Quality of Service Classes"
FENCE = "Kubernetes pkg/controller/deployment/util/deployment_util.go ResolveFenceposts"
OOM = "Kubernetes pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust"
APPS = ("web", "api", "worker")


@computation("k8s.hpa_replicas")
def hpa_replicas(p: Mapping[str, Any]) -> Outcome:
    cur, metric, target = p["current"], p["metric"], p["target"]
    ratio = metric / target
    if abs(1 - ratio) <= DEFAULT_TOLERANCE:
        raise Redraw("inside the tolerance")
    n = hpa_desired_replicas(cur, metric, target)
    return Outcome(
        answer=float(n), hand=float(math.ceil(cur * metric / target)),
        steps=(Step("ratio current / target", ratio, "", HPA), Step("outside the ±10 % tolerance, so it acts", abs(1 - ratio) * 100, "% off", HPA),
               Step("desired = ⌈current × ratio⌉", float(n), "replicas", HPA)),
        mistakes=(Mistake("floor", float(math.floor(cur * ratio))), Mistake("no_current", float(math.ceil(ratio)))),
        show_me=_show("k8s", params={"scenario": "autoscale"}),
    )


@computation("k8s.hpa_direction")
def hpa_direction(p: Mapping[str, Any]) -> Outcome:
    cur, target, change = p["current"], p["target"], p["change_pct"]
    metric = target * (1 + change / 100)
    n = hpa_desired_replicas(cur, metric, target)
    direction = "grows" if n > cur else ("shrinks" if n < cur else "unchanged")
    naive = math.ceil(cur * metric / target)
    if naive == n and direction == "unchanged":
        raise Redraw("no lesson in it")
    mistakes = [Mistake("ignore_tolerance", float(naive)) if naive != n else Mistake("ignore_tolerance", float(n + 1)),
                Mistake("dir_" + ("grows" if direction != "grows" else "unchanged"), "x")]
    mistakes[1] = Mistake(mistakes[1].key, mistakes[1].key[4:])
    return Outcome(
        answer=float(n), direction=direction,
        steps=(Step("metric / target", metric / target, "", HPA),
               Step("inside ±10 % the controller leaves the count alone" if abs(change) <= 10 else "outside ±10 %: ⌈current × ratio⌉",
                    float(n), "replicas", HPA)),
        mistakes=tuple(mistakes),
        facts={"metric": f"{metric:g}"},
        show_me=_show("k8s", params={"scenario": "autoscale"}),
    )


def _pods(rng: random.Random, n: int) -> list[dict]:
    pods = []
    for i in range(n):
        app = rng.choice(APPS)
        phase = rng.choice(("Running", "Running", "Running", "Failed"))
        pods.append({"metadata": {"name": f"{app}-{i}", "labels": {"app": app, "tier": rng.choice(("front", "back"))}},
                     "status": {"phase": phase}, "spec": {"containers": [{"name": "c"}]}})
    return pods


def _pod_line(pod: dict) -> str:
    lab = ", ".join(f"{k}={v}" for k, v in pod["metadata"]["labels"].items())
    return f"• {pod['metadata']['name']} [{lab}] {pod['status']['phase']}"


@computation("k8s.rs_diff")
def rs_diff(p: Mapping[str, Any]) -> Outcome:
    rng = random.Random(p["layout"])
    pods = _pods(rng, p["pods"])
    desired = p["desired"]
    selector = {"matchLabels": {"app": "web"}}
    matching = [q for q in pods if rules.selector_matches(selector, q["metadata"]["labels"])]
    active = [q for q in matching if rules.is_active(q)]
    diff = desired - len(active)
    if diff == 0:
        raise Redraw("nothing to do")
    return Outcome(
        answer=float(diff), hand=float(desired - sum(1 for q in pods if q["metadata"]["labels"]["app"] == "web"
                                                     and q["status"]["phase"] != "Failed")),
        steps=(Step("pods whose labels match app=web", float(len(matching)), "pods", RS),
               Step("of those, active (not Failed)", float(len(active)), "pods", RS),
               Step("diff = desired − active: create if positive, delete if negative", float(diff), "pods", RS)),
        mistakes=(Mistake("all_pods", float(desired - len([q for q in pods if rules.is_active(q)]))),
                  Mistake("count_failed", float(desired - len(matching)))),
        facts={"pods_text": "\n".join(_pod_line(q) for q in pods)},
        show_me=_show("k8s", params={"scenario": "self-heal"}),
    )


@computation("k8s.selected")
def selected(p: Mapping[str, Any]) -> Outcome:
    rng = random.Random(p["layout"])
    pods = _pods(rng, p["pods"])
    app, tier = p["app"], p["tier"]
    selector = {"app": app, "tier": tier} if tier != "any" else {"app": app}
    hit = frozenset(q["metadata"]["name"] for q in pods if rules.selector_matches(selector, q["metadata"]["labels"]))
    if not hit or len(hit) == len(pods):
        raise Redraw("trivial")
    app_only = frozenset(q["metadata"]["name"] for q in pods if q["metadata"]["labels"]["app"] == app)
    if app_only == hit:
        app_only = frozenset(q["metadata"]["name"] for q in pods)
    sel = ", ".join(f"{k}={v}" for k, v in selector.items())
    return Outcome(
        answer=hit,
        options=tuple(Option(q["metadata"]["name"], _pod_line(q)[2:], "a Service selects by every label of its selector (Kubernetes docs: Labels and Selectors)")
                      for q in pods),
        steps=tuple(Step(f"{q['metadata']['name']} matches {sel}?", "yes" if q["metadata"]["name"] in hit else "no", "",
                         "metav1.LabelSelectorAsSelector: every key must match") for q in pods),
        mistakes=(Mistake("one_label", app_only),),
        facts={"pods_text": "\n".join(_pod_line(q) for q in pods), "selector": sel},
        show_me=_show("k8s", params={"scenario": "relabel"}),
    )


def _rolling(p: Mapping[str, Any], most: bool) -> Outcome:
    """A rolling update's bound on the pod count: at most replicas + surge (``most``) or at least
    replicas − unavailable. Both fenceposts come from one ResolveFenceposts call, so the two
    questions cannot disagree about them; each bound's mistake is the other rounding or bound."""
    r, surge, unav = p["replicas"], p["max_surge"], p["max_unavailable"]
    s, u = rules.resolve_fenceposts(r, surge, unav)
    unav_step = Step("maxUnavailable as pods: percentages round down", float(u), "pods", FENCE)
    if most:
        answer, hand = r + s, r + -(-int(surge[:-1]) * r // 100)
        steps = (Step("maxSurge as pods: percentages round up", float(s), "pods", FENCE), unav_step,
                 Step("at most replicas + surge pods at once", float(answer), "pods", FENCE))
        mistakes = (Mistake("round_down", float(r + rules.scaled_int_or_percent(surge, r, False, "maxSurge"))),
                    Mistake("minus_unavailable", float(r - u)))
    else:
        answer, hand = r - u, r - (int(unav[:-1]) * r // 100 or (0 if s else 1))
        steps = (unav_step, Step("at least replicas − unavailable stay available", float(answer), "pods", FENCE))
        mistakes = (Mistake("round_up", float(r - rules.scaled_int_or_percent(unav, r, True, "maxUnavailable"))),
                    Mistake("plus_surge", float(r + s)))
    return Outcome(answer=float(answer), hand=float(hand), steps=steps, mistakes=mistakes,
                   show_me=_show("k8s", params={"scenario": "rolling"}))


@computation("k8s.rolling_max")
def rolling_max(p: Mapping[str, Any]) -> Outcome:
    return _rolling(p, most=True)


@computation("k8s.rolling_min")
def rolling_min(p: Mapping[str, Any]) -> Outcome:
    return _rolling(p, most=False)


def _pod(cpu_req: str | None, cpu_lim: str | None, mem_req: str | None, mem_lim: str | None) -> dict:
    req = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    res = {**({"requests": req} if req else {}), **({"limits": lim} if lim else {})}
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app", "image": "app", "resources": res}]}}


@computation("k8s.qos")
def qos(p: Mapping[str, Any]) -> Outcome:
    pod = _pod(p["cpu_request"] or None, p["cpu_limit"] or None, p["mem_request"] or None, p["mem_limit"] or None)
    cls = rules.qos_class(pod)
    res = pod["spec"]["containers"][0]["resources"]
    keys = {"Guaranteed": "guaranteed", "Burstable": "burstable", "BestEffort": "besteffort"}
    wrong = "guaranteed" if cls != "Guaranteed" else "burstable"
    return Outcome(
        answer=frozenset([keys[cls]]),
        options=(Option("guaranteed", "Guaranteed", "every container has cpu and memory limits equal to its requests"),
                 Option("burstable", "Burstable", "some request or limit, but not Guaranteed"),
                 Option("besteffort", "BestEffort", "no cpu or memory request or limit at all")),
        steps=(Step("requests (defaulted from limits where only limits are set)", str(res.get("requests", {})), "", QOS),
               Step("limits", str(res.get("limits", {})), "", QOS), Step("QoS class", cls, "", QOS)),
        mistakes=(Mistake("near_miss", frozenset([wrong])),),
        facts={"resources": str(res) if res else "none"},
        show_me=_show("k8s", params={"scenario": "limits"}),
    )


@computation("k8s.pods_fit")
def pods_fit(p: Mapping[str, Any]) -> Outcome:
    alloc_m, used_m, req = p["alloc_cpu_m"], p["used_cpu_m"], p["request"]
    pod = _pod(req, p["limit"], None, None)
    r = rules.pod_requests(pod)["cpu"]
    n = (alloc_m - used_m) // r
    lim_m = rules.pod_limits(pod)["cpu"]
    if n < 1 or (alloc_m - used_m) // lim_m == n:
        raise Redraw("no contrast with the limit")
    return Outcome(
        answer=float(n), hand=float((alloc_m - used_m) // r),
        steps=(Step("free for requests: allocatable − already requested", float(alloc_m - used_m), "millicores",
                    "Kubernetes scheduler NodeResourcesFit (pkg/scheduler/framework/plugins/noderesources/fit.go)"),
               Step("each pod requests", float(r), "millicores", "pkg/api/v1/resource/helpers.go PodRequests"),
               Step("pods that fit: ⌊free / request⌋ (limits play no part)", float(n), "pods", "NodeResourcesFit")),
        mistakes=(Mistake("used_limit", float((alloc_m - used_m) // lim_m)), Mistake("ignored_used", float(alloc_m // r))),
        show_me=_show("k8s", params={"scenario": "unschedulable"}),
    )


@computation("k8s.oom_score")
def oom_score(p: Mapping[str, Any]) -> Outcome:
    req_gi, node_gi = p["mem_request_gi"], p["node_gi"]
    pod = _pod("250m", None, f"{req_gi}Gi", f"{2 * req_gi}Gi")
    cap = node_gi * 2**30
    adj = rules.oom_score_adj(pod, cap)
    return Outcome(
        answer=float(adj), hand=float(max(3, 1000 - (1000 * req_gi * 2**30) // cap)),
        steps=(Step("QoS class", rules.qos_class(pod), "", QOS),
               Step("Burstable: 1000 − 1000 × memory request / node capacity", float(adj), "", OOM)),
        mistakes=(Mistake("ratio_only", float((1000 * req_gi) // node_gi)), Mistake("guaranteed", -997.0)),
        show_me=_show("k8s", params={"scenario": "memory-pressure"}),
    )
