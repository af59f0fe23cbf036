"""Computations for course E (Kubernetes): the same rule functions the simulated controllers use
(engines.k8s.hpa, engines.k8s.rules), each citing the upstream source file it follows."""
from __future__ import annotations

import dataclasses
import json
import math
import random
from functools import lru_cache
from typing import Any, Mapping

from engines.core.scenario import Scenario
from engines.k8s import rules
from engines.k8s.base import Context
from engines.k8s.hpa import DEFAULT_TOLERANCE, hpa_desired_replicas
from engines.k8s.kubelet import (BACKOFF_INITIAL, BACKOFF_MAX, DEFAULT_TOLERATION_SECONDS, GRACE_PERIOD,
                                 MONITOR_PERIOD)
from engines.k8s.scenarios import GUIDES, Commands, Timeline, model_server_plan, play_guide, run_guide
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


# ---------------------------------------------------------------- issue 40: lessons E1-E4 (tour claims)
# Each question plays a guided scenario of engines.k8s.scenarios (the panel's own simulation, seed 0)
# with kubectl commands or a moved scripted action, and reads the answer off its frames; Show me opens
# the same scenario with the same commands. Runs are cached: variants repeat their inputs.
EDGE = "client-go tools/cache (ListAndWatch, resync); engines.k8s EdgeTriggeredReplicaSetController (strawman)"
NODE = "Kubernetes docs: Nodes › Node controller (node-monitor-grace-period); Taint-based evictions"
OWNERS = "Kubernetes docs: Workloads › Pods, ReplicaSet, Deployment (ownerReferences; replica_set.go manageReplicas)"
LIMITS = "Kubernetes docs: Resource Management for Pods and Containers (CPU throttled by CFS quota, memory OOM-killed)"
BACKOFF = "Kubernetes docs: Pod Lifecycle › Container restarts (back-off 10 s, doubling, 300 s cap)"
EVICT = "Kubernetes docs: Node-pressure Eviction (memory.available<100Mi; pod selection order)"
ROLLOUT = "Kubernetes docs: Deployment › Failed Deployment (progressDeadlineSeconds is reported only)"
GPUS = "Kubernetes docs: Schedule GPUs (nvidia.com/gpu: whole devices, never overcommitted); engines.serving replica_memory"
RESYNC = next(f.default for f in dataclasses.fields(Context) if f.name == "resync_seconds")


@lru_cache(maxsize=512)
def _timeline(key: str, commands: Commands = (), scenario: Scenario | None = None) -> Timeline:
    """The guided scenario as the panel plays it (seed 0), with ``commands``."""
    return run_guide(key, scenario, commands=commands)


@lru_cache(maxsize=256)
def _moved(key: str, at: int, duration: int, reconcile: str = "") -> Timeline:
    """The guided scenario ``key`` with its one scripted action moved to second ``at``."""
    (_, text, action), = GUIDES[key].steps
    return play_guide(dataclasses.replace(GUIDES[key], steps=[(at, text, action)], duration=duration,
                                          reconcile=reconcile or GUIDES[key].reconcile, twin=False))


@lru_cache(maxsize=256)
def _used(key: str, at: int, duration: int, usage: tuple[tuple[str, str | None, int | None], ...]) -> Timeline:
    """The guided scenario ``key`` where, at second ``at``, pods start using (pod, memory, cpu millis)."""
    def act(c) -> None:
        for pod, memory, cpu in usage:
            c.set_usage(pod, memory=memory, cpu_millis=cpu)
    steps = [(at, "the pods' usage changes", act)] + [s for s in GUIDES[key].steps if key != "limits"]
    return play_guide(dataclasses.replace(GUIDES[key], steps=steps, duration=duration))


def _alive(frame, prefix: str = "") -> list[str]:
    """Names of the frame's active pods (not deleted, not Failed), sorted."""
    return sorted(p["name"] for p in frame.pods if p["active"] and p["name"].startswith(prefix))


def _k8s_show(key: str, commands: Commands = (), frame: int | None = None, **params: Any) -> dict:
    out = _show("k8s", params={"scenario": key, **({"commands": json.dumps([list(c) for c in commands])} if commands else {}),
                               **params})
    return {**out, "frame": frame} if frame is not None else out


def _with(key: str, commands: Commands, at: int, make, k: int = 1) -> Commands:
    """``commands`` plus, at second ``at``, ``make(pod)`` for ``k`` pods alive then (the cached run
    so far names them, as a learner would read them off the panel)."""
    names = _alive(_timeline(key, commands).frames[at], "web")
    if len(names) < k:
        raise Redraw("not enough pods to act on")
    return commands + tuple((at, make(n)) for n in names[:k])


@computation("k8s.edge_lost")
def edge_lost(p: Mapping[str, Any]) -> Outcome:
    """E1: a ReplicaSet that acts only on watch messages; the ones lost while pods were deleted
    are never repaired, a deletion seen later is."""
    key, n, lost, seen_at = "dropped-events", p["replicas"], p["lost"], p["seen_at"]
    cmds: Commands = ((2, f"scale rs/web --replicas={n}"),) if n != 3 else ()
    if lost > 1:          # the guide deletes one pod at t = 10 while messages are dropped for 5 s
        cmds = _with(key, cmds, 11, lambda name: f"delete pod {name}", lost - 1)
    cmds = _with(key, cmds, seen_at, lambda name: f"delete pod {name}")
    end = _timeline(key, cmds).frames[-1]
    running = len(_alive(end))
    return Outcome(
        answer=float(running), hand=float(n - lost),
        steps=(Step("replicas the ReplicaSet asks for", float(n), "pods", EDGE),
               Step("pods deleted while the watch dropped every message", float(lost), "pods", EDGE),
               Step(f"pod deleted at t = {seen_at} s: the message arrives, one replacement", 1.0, "pods", EDGE),
               Step(f"pods running at t = {end.t:g} s: nothing ever re-reads the count", float(running), "pods", EDGE)),
        mistakes=(Mistake("level", float(n)), Mistake("all_lost", float(n - lost - 1))),
        show_me=_k8s_show(key, cmds, int(end.t)),
    )


@computation("k8s.level_wait")
def level_wait(p: Mapping[str, Any]) -> Outcome:
    """E1: the level-triggered ReplicaSet also misses the lost message; it repairs at its next
    full re-read of the state, not when the pod went."""
    at = p["lost_at"]
    tl = _moved("dropped-events", at, at + 2 * int(RESYNC) + 10, "level")
    want = len(_alive(tl.frames[at - 1]))
    back = next(f.t for f in tl.frames[at:] if len(_alive(f)) >= want)
    return Outcome(
        answer=float(back), hand=float((at // RESYNC + 1) * RESYNC),
        steps=(Step("a pod is deleted while the watch drops its message", float(at), "s", EDGE),
               Step("the controller re-reads every object each resync period (this simulator)", float(RESYNC), "s", EDGE),
               Step("the count is whole again at the next re-read", float(back), "s", EDGE),
               Step("time short of a pod", float(back - at), "s", EDGE)),
        mistakes=(Mistake("instant", float(at + 1)), Mistake("period_from_loss", float(at + RESYNC))),
        show_me=_k8s_show("dropped-events", frame=29),
    )


@computation("k8s.node_silence")
def node_silence(p: Mapping[str, Any]) -> Outcome:
    """E1: a powered-off node says nothing; the controller declares it NotReady only when the
    silence has lasted the grace period, and meanwhile the Service still routes to its pods."""
    off = p["off_at"]
    tl = _moved("stop-node", off, off + int(GRACE_PERIOD + 3 * MONITOR_PERIOD))
    name = next(n["name"] for n in tl.frames[-1].nodes if n["ready"] != "True")
    first = next(f for f in tl.frames[off:] if next(n for n in f.nodes if n["name"] == name)["ready"] != "True")
    before = tl.frames[int(first.t) - 1]
    routed = sum(1 for s in before.services for e in s["endpoints"] if e["node"] == name and e["ready"])
    return Outcome(
        answer=float(first.t),
        steps=(Step(f"{name} loses power", float(off), "s", NODE),
               Step("the node controller's grace period for a silent node", GRACE_PERIOD, "s", NODE),
               Step("… checked every monitor period, so the verdict lands a few seconds later", MONITOR_PERIOD, "s", NODE),
               Step("endpoints on the silent node still Ready just before", float(routed), "endpoints", NODE),
               Step(f"first second the API shows {name} not Ready", float(first.t), "s", NODE)),
        mistakes=(Mistake("instant", float(off + 1)), Mistake("toleration", float(off + DEFAULT_TOLERATION_SECONDS))),
        facts={"node": name},
        show_me=_k8s_show("stop-node", frame=50),
    )


def _bare_pods(n: int) -> str:
    docs = [json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"solo-{i + 1}", "labels": {"app": "solo"}},
                        "spec": {"containers": [{"name": "app", "image": "solo:1"}]}}) for i in range(n)]
    return "apply -f -\n" + "\n---\n".join(docs)


@computation("k8s.bare_pods")
def bare_pods(p: Mapping[str, Any]) -> Outcome:
    """E2: deleted pods come back only where a ReplicaSet counts them."""
    key, bare, gone, owned = "self-heal", p["bare"], p["bare_deleted"], p["owned_deleted"]
    if gone > bare:
        raise Redraw("more deleted than exist")
    cmds: Commands = ((2, _bare_pods(bare)),) + tuple((20, f"delete pod solo-{i + 1}") for i in range(gone))
    if owned:
        cmds = _with(key, cmds, 20, lambda name: f"delete pod {name}", owned)
    end = _timeline(key, cmds).frames[-1]
    web, solo = len(_alive(end, "web")), len(_alive(end, "solo"))
    d = end.deployments[0]["replicas"]
    return Outcome(
        answer=float(web + solo), hand=float(d + bare - gone),
        steps=(Step("pods the Deployment's ReplicaSet keeps (it replaced every deleted one)", float(web), "pods", OWNERS),
               Step("bare pods left: no owner, so nothing recreates them", float(solo), "pods", OWNERS),
               Step(f"pods running at t = {end.t:g} s", float(web + solo), "pods", OWNERS)),
        mistakes=(Mistake("all_replaced", float(d + bare)), Mistake("none_replaced", float(d + bare - gone - owned - 1))),
        show_me=_k8s_show(key, cmds, int(end.t)),
    )


@computation("k8s.rs_scaled_by_hand")
def rs_scaled_by_hand(p: Mapping[str, Any]) -> Outcome:
    """E2: the Deployment owns its ReplicaSet's count, so a hand scale of the ReplicaSet is undone."""
    key, want, hand_n = "self-heal", p["replicas"], p["rs_replicas"]
    if want == hand_n:
        raise Redraw("no change")
    cmds: Commands = ((2, f"scale deploy/web --replicas={want}"),) if want != 4 else ()
    rs = _timeline(key, cmds).frames[20].replicasets[0]["name"]
    cmds += ((20, f"scale rs/{rs} --replicas={hand_n}"),)
    tl = _timeline(key, cmds)
    peak = max(len(_alive(f, "web")) for f in tl.frames[21:])
    end = len(_alive(tl.frames[-1], "web"))
    return Outcome(
        answer=float(end), hand=float(want),
        steps=(Step("the ReplicaSet's count after your scale (it reconciles pods to it)", float(hand_n), "pods", OWNERS),
               Step("pods at the extreme right after", float(peak if hand_n > want else min(len(_alive(f, "web")) for f in tl.frames[21:])),
                    "pods", OWNERS),
               Step("the Deployment sets its ReplicaSet back to the Deployment's replicas", float(end), "pods", OWNERS)),
        mistakes=(Mistake("rs_wins", float(hand_n)),),
        facts={"rs": rs},
        show_me=_k8s_show(key, cmds, int(tl.frames[-1].t)),
    )


@computation("k8s.relabelled")
def relabelled(p: Mapping[str, Any]) -> Outcome:
    """E2: relabelled pods leave both the ReplicaSet (replaced) and the Service (not routed to),
    and keep running as orphans."""
    key, want, k = "relabel", p["replicas"], p["relabelled"]
    cmds: Commands = ((2, f"scale deploy/web --replicas={want}"),) if want != 3 else ()
    if k > 1:           # the guide relabels one pod at t = 12
        names = [n for n in _alive(_timeline(key, cmds).frames[14], "web")
                 if next(q for q in _timeline(key, cmds).frames[14].pods if q["name"] == n)["labels"].get("app") == "web"]
        cmds += tuple((14, f"label pod {n} app=debug --overwrite") for n in names[:k - 1])
    end = _timeline(key, cmds).frames[-1]
    svc = next(s for s in end.services if s["name"] == "web")
    orphans = sum(1 for q in end.pods if q["active"] and q["labels"].get("app") == "debug")
    return Outcome(
        answer=float(len(svc["ready"])), hand=float(want),
        steps=(Step("pods relabelled app=debug: released by the ReplicaSet, still running", float(orphans), "pods", OWNERS),
               Step("pods running in all", float(len(_alive(end))), "pods", OWNERS),
               Step("Ready endpoints of Service web (it selects app=web only)", float(len(svc["ready"])), "endpoints", OWNERS)),
        mistakes=(Mistake("follows_owner", float(want + k)), Mistake("not_replaced", float(want - k))),
        show_me=_k8s_show(key, cmds, int(end.t)),
    )


@lru_cache(maxsize=64)
def _gpu_run(model: str, gpu: str, per_node: int, n_gpus: int):
    sc = Scenario().with_changes(model=model, gpu=gpu, gpus_per_node=per_node, n_gpus=n_gpus, tp=1, pp=1)
    plan = model_server_plan(sc)
    end = _timeline("model-server", (), sc).frames[-1]
    return plan, sum(1 for q in end.pods if q["active"] and q["node"])


@computation("k8s.gpu_replicas")
def gpu_replicas(p: Mapping[str, Any]) -> Outcome:
    """E3, E4: each replica reserves whole GPUs on one node; ``ask`` picks the modelled mistake
    (``desired``: every asked replica runs; ``pooled``: GPUs pool across nodes)."""
    plan, running = _gpu_run(p["model"], p["gpu"], p["gpus_per_node"], p["n_gpus"])
    pooled = min(plan.replicas, plan.n_nodes * plan.gpus_per_node // plan.gpus_needed)
    mistake = Mistake("desired", float(plan.replicas)) if p["ask"] == "desired" else Mistake("pooled", float(pooled))
    return Outcome(
        answer=float(running), hand=float(min(plan.fit, plan.replicas)),
        steps=(Step("GPU memory one replica needs (engines.serving)", plan.gpu_memory_bytes / 2**30, "GiB", GPUS),
               Step("whole GPUs each replica requests", float(plan.gpus_needed), "GPUs", GPUS),
               Step("replicas one node holds: ⌊GPUs per node / request⌋", float(plan.gpus_per_node // plan.gpus_needed), "", GPUS),
               Step(f"replicas scheduled on {plan.n_nodes} node(s) (the rest stay Pending)", float(running), "replicas", GPUS)),
        mistakes=(mistake,),
        facts={"gpu_mem": f"{plan.gpu_memory_bytes / 2**30:.1f} GiB", "gpus_needed": str(plan.gpus_needed),
               "n_nodes": str(plan.n_nodes), "asked": str(plan.replicas)},
        show_me={**_k8s_show("model-server", frame=30), "preset": p["model"],
                 "scenario": {"gpu": p["gpu"], "gpus_per_node": p["gpus_per_node"], "n_gpus": p["n_gpus"], "tp": 1, "pp": 1}},
    )


def _fate(pod: dict) -> str:
    if pod["restarts"] > 0:
        return "killed"
    return "throttled" if (pod["cpu"] or {}).get("throttled", 0) > 0 else "free"


FATES = (("throttled", "It keeps running, slowed down: it gets only its limit's share of each CFS period"),
         ("killed", "The kernel kills it (OOMKilled) and the kubelet restarts it, again and again"),
         ("free", "It keeps running at full speed: nothing is over a limit"))


@computation("k8s.over_limit")
def over_limit(p: Mapping[str, Any]) -> Outcome:
    """E3: over its CPU limit a container is throttled, over its memory limit it is killed."""
    cpu, mem = p["cpu_m"], p["memory_mi"]
    tl = _used("limits", 8, 60, (("busy", f"{mem}Mi", cpu),))
    pod = next(q for q in tl.frames[-1].pods if q["name"] == "busy")
    fate = _fate(pod)
    lim_cpu, lim_mem = pod["limits"]["cpu"], pod["limits"]["memory"]
    swapped = "killed" if cpu > lim_cpu else ("throttled" if mem * 2**20 > lim_mem else "free")
    if swapped == fate:
        raise Redraw("the swapped rule agrees")
    return Outcome(
        answer=frozenset([fate]), options=tuple(Option(k, t, LIMITS) for k, t in FATES),
        steps=(Step("CPU wanted against its limit", f"{cpu}m against {lim_cpu}m", "", LIMITS),
               Step("memory used against its limit", f"{mem}Mi against {lim_mem // 2**20}Mi", "", LIMITS),
               Step("CFS periods throttled by t = 60 s", float((pod["cpu"] or {}).get("throttled", 0)), "", LIMITS),
               Step("restarts by t = 60 s", float(pod["restarts"]), "", LIMITS)),
        mistakes=(Mistake("swapped", frozenset([swapped])),),
        show_me=_k8s_show("limits", frame=20, pod="busy"),
    )


@computation("k8s.backoff_restart")
def backoff_restart(p: Mapping[str, Any]) -> Outcome:
    """E3: a container that keeps breaking its memory limit is restarted after waits that double."""
    at, k = p["leak_at"], p["restart"]
    tl = _used("limits", at, at + int(BACKOFF_MAX) // 2 + 10, (("leaky", "300Mi", None),))
    counts = [(f.t, next(q for q in f.pods if q["name"] == "leaky")["restarts"]) for f in tl.frames]
    times = [next(t for t, n in counts if n >= i) for i in range(1, k + 1)]
    return Outcome(
        answer=float(times[-1]),
        steps=tuple(Step(f"restart {i + 1}" + (f", after a wait of {t - times[i - 1]:g} s" if i else ""), float(t), "s", BACKOFF)
                    for i, t in enumerate(times)),
        mistakes=(Mistake("no_growth", float(times[0] + (k - 1) * BACKOFF_INITIAL)),),
        show_me=_k8s_show("limits", frame=40, pod="leaky"),
    )


@computation("k8s.first_evicted")
def first_evicted(p: Mapping[str, Any]) -> Outcome:
    """E3: when the node runs short, the kubelet ranks pods: over their request first, then
    priority, then by how far over; QoS class is not consulted."""
    burst, best = p["burstable_mi"], p["besteffort_mi"]
    tl = _used("memory-pressure", 2, 30, (("burstable", f"{burst}Mi", None), ("besteffort", f"{best}Mi", None)))
    gone = [q["name"] for f in tl.frames for q in f.pods if q["badge"] == "Evicted"]
    if not gone:
        raise Redraw("nothing evicted")
    first = gone[0]
    before = {q["name"]: q for q in tl.frames[9].pods}
    biggest = max(before, key=lambda n: (before[n]["usage"] or 0, n))
    if biggest == first:
        raise Redraw("the biggest is also first")
    return Outcome(
        answer=frozenset([first]),
        options=tuple(Option(n, f"{n} (request {(q['requests'].get('memory') or 0) // 2**20}Mi, using {(q['usage'] or 0) // 2**20}Mi)", EVICT)
                      for n, q in sorted(before.items())),
        steps=tuple(Step(f"{n}: usage − request", float(((q["usage"] or 0) - (q["requests"].get("memory") or 0)) / 2**20), "MiB", EVICT)
                    for n, q in sorted(before.items())) + (Step("evicted first", first, "", EVICT),),
        mistakes=(Mistake("biggest", frozenset([biggest])),),
        show_me=_k8s_show("memory-pressure", frame=12),
    )


@lru_cache(maxsize=64)
def _broken(replicas: int, deadline: int) -> tuple[Commands, Timeline]:
    """self-heal's Deployment scaled to ``replicas``, given a progress deadline, then set to a
    crashing image at t = 20 s (the kubectl answer is 'accepted')."""
    cmds: Commands = ((2, f"scale deploy/web --replicas={replicas}"),
                      (3, "patch deploy/web -p " + json.dumps(json.dumps({"spec": {"progressDeadlineSeconds": deadline}}))),
                      (20, "set image deploy/web web=web:crash"))
    return cmds, _timeline("self-heal", cmds)


def _ready(frame) -> int:
    return sum(1 for q in frame.pods if q["active"] and q["ready"])


@computation("k8s.accepted_rollout")
def accepted_rollout(p: Mapping[str, Any]) -> Outcome:
    """E4: the API server accepts the broken image at once; the loops then stall the rollout."""
    n = p["replicas"]
    cmds, tl = _broken(n, 600)
    end = tl.frames[-1]
    said = next(r for f in tl.frames for r in f.commands if "set image" in r.command)
    s, u = rules.resolve_fenceposts(n, "25%", "25%")
    new = sum(1 for q in end.pods if q["active"] and q["ready"] and q["image"] == "web:crash")
    return Outcome(
        answer=float(_ready(end)), hand=float(n - u),
        steps=(Step("kubectl's answer", "accepted" if said.accepted else "rejected", "", "kubectl set image"),
               Step("new pods Ready (the image crashes)", float(new), "pods", ROLLOUT),
               Step("old pods the rollout may take down: maxUnavailable 25 % rounds down", float(u), "pods", FENCE),
               Step(f"pods serving at t = {end.t:g} s", float(_ready(end)), "pods", ROLLOUT)),
        mistakes=(Mistake("worked", float(n)), Mistake("all_down", 0.0)),
        show_me=_k8s_show("self-heal", cmds, int(end.t)),
    )


@computation("k8s.deadline_missed")
def deadline_missed(p: Mapping[str, Any]) -> Outcome:
    """E4: after progressDeadlineSeconds the Deployment reports ProgressDeadlineExceeded and does
    nothing else: no rollback."""
    n, d = p["replicas"], p["deadline"]
    cmds, tl = _broken(n, d)
    before, after = tl.frames[20 + d - 5], tl.frames[-1]
    a, b = _ready(before), _ready(after)
    direction = "grows" if b > a else ("shrinks" if b < a else "unchanged")
    return Outcome(
        answer=float(b), direction=direction,
        steps=(Step("pods serving 5 s before the deadline", float(a), "pods", ROLLOUT),
               Step("Deployment condition at the end", after.deployments[0]["progressing"], "", ROLLOUT),
               Step(f"pods serving at t = {after.t:g} s", float(b), "pods", ROLLOUT)),
        mistakes=(Mistake("rolled_back", float(n)), Mistake("dir_grows", "grows")),
        show_me=_k8s_show("self-heal", cmds, int(after.t)),
    )


LAYERS = (("deployment", "the Deployment"), ("replicaset", "its ReplicaSet"), ("pod", "its pods"), ("node", "the nodes"))
STUCK = {"crashloop": "a new image that crashes", "unschedulable": "a new CPU request no node can hold",
         "quota": "a replica count above the namespace's pod quota"}


@computation("k8s.debug_layer")
def debug_layer(p: Mapping[str, Any]) -> Outcome:
    """E4: walking down Deployment → ReplicaSet → Pod, the layer whose Warning events say why."""
    key = p["case"]
    end = _timeline(key).frames[-1]
    warned = {e[0].split("/")[0]: e[2] for e in end.event_log if e[1] == "Warning"}
    if not warned:
        raise Redraw("no warning")
    layer = next(k for k, _ in reversed(LAYERS) if k in warned)
    return Outcome(
        answer=frozenset([layer]),
        options=tuple(Option(k, t, "Kubernetes docs: Debug Applications (kubectl describe, kubectl get events)") for k, t in LAYERS),
        steps=(Step("Deployment condition", end.deployments[0]["progressing"], "", ROLLOUT),
               Step(f"Warning events on the {layer}", warned[layer], "", "kubectl get events"),
               Step("layer that names the cause", layer, "", "Kubernetes docs: Debug Applications")),
        mistakes=(Mistake("top_only", frozenset(["deployment"])),),
        facts={"change": STUCK[key]},
        show_me=_k8s_show(key, frame=int(end.t), why="Deployment/web"),
    )


@computation("k8s.hand_fix_drift")
def hand_fix_drift(p: Mapping[str, Any]) -> Outcome:
    """E4: an image set by hand on pods stays until those pods are replaced; nothing compares it."""
    key, k, dead = "hand-edit", p["edited"], p["deleted"]
    cmds: Commands = ()
    if k > 1:           # the guide edits one pod at t = 12
        f = _timeline(key).frames[14]
        plain = [q["name"] for q in f.pods if q["active"] and q["image"] == "web:1"]
        cmds = tuple((14, f"set image pod/{n} web=web:hotfix") for n in plain[:k - 1])
    if dead:
        f = _timeline(key, cmds).frames[30]
        hot = [q["name"] for q in f.pods if q["active"] and q["image"] == "web:hotfix"]
        cmds += tuple((30, f"delete pod {n}") for n in hot[:dead])
    end = _timeline(key, cmds).frames[-1]
    hot_n = sum(1 for q in end.pods if q["active"] and q["image"] == "web:hotfix")
    total = len(_alive(end, "web"))
    return Outcome(
        answer=float(hot_n), hand=float(k - dead),
        steps=(Step("image in the ReplicaSet's template", end.pods[0]["template_image"], "", OWNERS),
               Step("pods running in all (the count is all the ReplicaSet checks)", float(total), "pods", OWNERS),
               Step("pods still running web:hotfix", float(hot_n), "pods", OWNERS)),
        mistakes=(Mistake("reverted", 0.0), Mistake("spread", float(total))),
        show_me=_k8s_show(key, cmds, int(end.t), pod=next(q["name"] for q in end.pods if q["active"])),
    )


@computation("k8s.never_done")
def never_done(p: Mapping[str, Any]) -> Outcome:
    """E4: after a node dies its pods are replaced, but their objects stay Terminating while the
    node is away: the count listed is never simply the count asked for."""
    n = p["replicas"]
    cmds: Commands = ((2, f"scale deploy/web --replicas={n}"),) if n != 4 else ()
    tl = _timeline("stop-node", cmds)
    end = tl.frames[-1]
    listed = sum(1 for q in end.pods if q["name"].startswith("web"))
    stuck = listed - len(_alive(end, "web"))
    if not stuck:
        raise Redraw("no pod on the stopped node")
    return Outcome(
        answer=float(listed), hand=float(n + stuck),
        steps=(Step("replicas asked for, all running again elsewhere", float(len(_alive(end, "web"))), "pods", NODE),
               Step("pods of the dead node deleted after the toleration but still listed Terminating", float(stuck), "pods", NODE),
               Step(f"web pods kubectl lists at t = {end.t:g} s", float(listed), "pods", NODE)),
        mistakes=(Mistake("done", float(n)),),
        show_me=_k8s_show("stop-node", cmds, int(end.t)),
    )
