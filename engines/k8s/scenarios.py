"""Guided lecture scenarios: a cluster set-up, timed actions with captions, and a timeline of frames.

Each frame is a snapshot of the simulated cluster one second apart (nodes with request bars,
pods with phase/readiness/QoS, ReplicaSets, Deployments, Service endpoints), plus the reconcile
decisions and events of that second, so a panel can animate any scenario through the shared
player. ``serving_model_server`` takes its pod's GPU count and memory from
``engines.serving.replica_memory`` for the shared scenario.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import networkx as nx

from engines.core.errors import Cancelled, require_choice
from engines.k8s import rules
from engines.k8s.cluster import Cluster
from engines.k8s.dump import DUMP_SECONDS, Dump, load_dump
from engines.k8s.quantity import format_bytes
from engines.k8s.scheduler import DEFAULT_MAX_PODS
from engines.k8s.store import controller_ref

Action = Callable[[Cluster], None]


@dataclass
class Frame:
    """One simulated second. ``objects``: the API objects as stored then, by kind and key (shared,
    never changed: the store replaces objects instead of editing them); ``last_rules``: per object
    (e.g. "Pod web-1"), the last decision a controller made about it; ``event_log``: every event so
    far as (object, type, reason, message, count, last seen); ``commands``: kubectl commands given
    in the second before this frame, with the API server's answers."""

    t: float
    nodes: list[dict]
    pods: list[dict]
    replicasets: list[dict]
    deployments: list[dict]
    services: list[dict]
    decisions: list[dict]
    events: list[dict]
    caption: str
    twin: str = ""
    hpas: list[dict] = field(default_factory=list)
    commands: list = field(default_factory=list)
    objects: dict[str, dict[str, dict]] = field(default_factory=dict)
    last_rules: dict[str, dict] = field(default_factory=dict)
    event_log: tuple = ()

    def record(self, scenario: str) -> dict:
        """This second as an export: the objects ``kubectl get`` lists, the loops' decisions, the
        events and the commands given with their answers."""
        return {"scenario": scenario, "t": self.t, "nodes": self.nodes, "pods": self.pods,
                "replicasets": self.replicasets, "deployments": self.deployments, "services": self.services,
                "hpas": self.hpas, "decisions": self.decisions, "events": self.events,
                "commands": [{"t": r.t, "command": r.command, "accepted": r.accepted, "message": r.message}
                             for r in self.commands]}

    def pod_rows(self) -> list[dict]:
        """One row per pod, the columns of ``kubectl get pods -o wide`` that the lessons use."""
        return [{"pod": p["name"], "node": p["node"] or "", "status": p["badge"], "ready": p["ready"], "qos": p["qos"],
                 "owner": p["owner"] or "", "restarts": p["restarts"]} for p in self.pods]


@dataclass
class Timeline:
    key: str
    title: str
    frames: list[Frame]
    chapters: list[tuple[int, str]] = field(default_factory=list)


def pod_badge(p: dict) -> str:
    """Short status as kubectl prints it: Running, ContainerCreating, CrashLoopBackOff, OOMKilled…"""
    st = p.get("status") or {}
    if p["metadata"].get("deletionTimestamp"):
        return "Terminating"
    if st.get("reason"):
        return st["reason"]
    for c in st.get("containerStatuses") or []:
        waiting = (c.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason") not in (None, "ContainerCreating"):
            last = ((c.get("lastState") or {}).get("terminated") or {}).get("reason")
            return f"{waiting['reason']} ({last})" if last == "OOMKilled" else waiting["reason"]
        if waiting:
            return waiting["reason"]
    if st.get("phase") == "Pending" and not p["spec"].get("nodeName"):
        return "Pending (unschedulable)" if rules.condition(p, "PodScheduled") else "Pending"
    return st.get("phase", "Pending")


def snapshot_nodes(c: Cluster) -> list[dict]:
    out = []
    for n in c.list("Node"):
        name = n["metadata"]["name"]
        alloc = rules.parse_allocatable(n["status"])
        used = c.scheduler.requested.get(name, {})
        kubelet = c.kubelets.get(name)
        ready = rules.condition(n, "Ready")
        pressure = rules.condition(n, "MemoryPressure")
        out.append({"name": name, "ready": ready["status"] if ready else "?", "alloc": alloc,
                    "requested": dict(used), "pods": c.scheduler.count.get(name, 0),
                    "max_pods": alloc.get("pods", DEFAULT_MAX_PODS),
                    "memory_used": kubelet.memory_used() if kubelet else 0,
                    "memory_capacity": kubelet.capacity_memory() if kubelet else 0,
                    "pressure": bool(pressure and pressure["status"] == "True"),
                    "unschedulable": bool((n.get("spec") or {}).get("unschedulable")),
                    "pod_cidr": (n.get("spec") or {}).get("podCIDR", ""),
                    "taints": [t["key"].split("/")[-1] for t in (n.get("spec") or {}).get("taints") or []]})
    return out


def _cpu(c: Cluster, p: dict) -> dict | None:
    """The pod's CFS counters (cAdvisor-style): CPU demand, CPU granted, periods run and throttled."""
    if p["spec"].get("nodeName") not in c.kubelets:
        return None
    m = c.metrics(p["metadata"]["name"], p["metadata"].get("namespace") or "default")
    if m["memory_bytes"] is None:           # no container running: nothing to count
        return None
    return {"demand": m["cpu_demand_millis"], "used": m["cpu_millis"], "periods": m["nr_periods"],
            "throttled": m["nr_throttled"]}


def _event_log(c: Cluster, keep: int = 400) -> tuple:
    """The last ``keep`` events as tuples; an event that did not change since the last frame keeps
    its tuple (frames share them: a long run would otherwise hold a copy of every event per second)."""
    cache = c.recorder.__dict__.setdefault("_frame_tuples", {})
    out = []
    for e in c.recorder.events[-keep:]:
        hit = cache.get(id(e))
        if hit is None or hit[0] is not e or hit[1][4] != e["count"] or hit[1][5] != e["lastTimestamp"]:
            hit = cache[id(e)] = (e, (e["object"], e["type"], e["reason"], e["message"], e["count"], e["lastTimestamp"]))
        out.append(hit[1])
    if len(cache) > 4 * keep:
        live = {id(e) for e in c.recorder.events[-keep:]}
        for k in [k for k in cache if k not in live]:
            del cache[k]
    return tuple(out)


class _Shared:
    """What the last frame held, so the next one can hold the same objects where nothing changed.

    A run keeps one frame per simulated second and most of a cluster stands still from one second
    to the next; without sharing, an autoscaler run of 721 seconds made some 35,000 containers the
    garbage collector walks on the window's thread (one pass over them: 26–52 ms). The values are
    never edited after a frame is made, so an equal value can stand for the new one."""

    def __init__(self) -> None:
        self.before: dict = {}
        self.now: dict = {}

    def value(self, key, new):
        old = self.before.get(key)
        value = old if old is not None and old == new else new
        self.now[key] = value
        return value

    def rows(self, kind: str, new: list, key=lambda d: (d.get("namespace"), d["name"])) -> list:
        """``new``'s items shared by ``key``; the list itself too when every item is the last one's."""
        items = [self.value((kind, key(d)), d) for d in new]
        old = self.before.get(kind)
        value = old if old is not None and len(old) == len(items) and all(a is b for a, b in zip(old, items)) else items
        self.now[kind] = value
        return value

    def turn(self) -> None:
        self.before, self.now = self.now, {}


def snapshot(c: Cluster, caption: str, decisions: list[dict], twin: str = "", last_rules: dict | None = None,
             commands: list | None = None) -> Frame:
    pods = []
    # a ReplicaSet's pod template image: a pod running another image was edited by hand
    templates = {(r["metadata"].get("namespace"), r["metadata"]["name"]):
                 r["spec"]["template"]["spec"]["containers"][0].get("image", "") for r in c.list("ReplicaSet")}
    for p in c.list("Pod"):
        owner = controller_ref(p)
        ns = p["metadata"].get("namespace") or "default"
        req, lim = rules.pod_requests(p), rules.pod_limits(p)
        pods.append({"name": p["metadata"]["name"], "namespace": ns, "node": p["spec"].get("nodeName"),
                     "phase": p["status"].get("phase"),
                     "ready": rules.is_pod_ready(p), "badge": pod_badge(p), "qos": rules.qos_class(p),
                     "owner": owner["name"] if owner else None, "labels": dict(p["metadata"].get("labels") or {}),
                     "requests": req, "limits": lim, "image": p["spec"]["containers"][0].get("image", ""),
                     "template_image": templates.get((ns, owner["name"])) if owner and owner.get("kind") == "ReplicaSet"
                     else None, "cpu": _cpu(c, p), "ip": p["status"].get("podIP") or "",
                     "restarts": rules.max_restarts(p), "active": rules.is_active(p),
                     "scheduled": rules.condition(p, "PodScheduled"), "priority": p["spec"].get("priority", 0) or 0,
                     "usage": c.kubelets[p["spec"]["nodeName"]].usage(f"{ns}/{p['metadata']['name']}")
                     if p["spec"].get("nodeName") in c.kubelets else None})
    rss = [{"name": r["metadata"]["name"], "owner": (controller_ref(r) or {}).get("name"),
            "desired": r["spec"].get("replicas", 1), "current": r["status"].get("replicas", 0),
            "ready": r["status"].get("readyReplicas", 0), "available": r["status"].get("availableReplicas", 0),
            "revision": r["metadata"]["annotations"].get("deployment.kubernetes.io/revision", ""),
            "selector": rules.match_labels_of(r["spec"].get("selector"))} for r in c.list("ReplicaSet")]
    deps = []
    for d in c.list("Deployment"):
        prog = rules.condition(d, "Progressing")
        max_total, min_avail = c.deployment_bounds(d["metadata"]["name"], d["metadata"].get("namespace", "default"))
        deps.append({"name": d["metadata"]["name"], "replicas": d["spec"].get("replicas", 1),
                     "updated": d["status"].get("updatedReplicas", 0), "available": d["status"].get("availableReplicas", 0),
                     "progressing": f"{prog['status']} {prog['reason']}" if prog else "", "max_total": max_total,
                     "min_available": min_avail, "image": d["spec"]["template"]["spec"]["containers"][0].get("image", ""),
                     "paused": bool(d["spec"].get("paused"))})
    services = []
    slices = c.list("EndpointSlice")
    for s in c.list("Service"):
        mine = [sl for sl in slices if sl["metadata"]["labels"].get("kubernetes.io/service-name") == s["metadata"]["name"]
                and sl["metadata"].get("namespace") == s["metadata"].get("namespace")]
        eps = [e for sl in mine for e in sl.get("endpoints") or []]
        services.append({"name": s["metadata"]["name"], "selector": dict(s["spec"].get("selector") or {}),
                         "cluster_ip": s["spec"].get("clusterIP", ""), "ports": list(s["spec"].get("ports") or []),
                         "slices": [sl["metadata"]["name"] for sl in mine],
                         "endpoints": [{"pod": e["targetRef"]["name"], "ip": e["addresses"][0], "node": e.get("nodeName"),
                                        **e["conditions"]} for e in eps],
                         "ready": [e["targetRef"]["name"] for e in eps if e["conditions"]["ready"]],
                         "not_ready": [e["targetRef"]["name"] for e in eps if not e["conditions"]["ready"]]})
    hpas = []
    for h in c.list("HorizontalPodAutoscaler"):
        st, ref = h.get("status") or {}, h["spec"]["scaleTargetRef"]
        ns = h["metadata"].get("namespace", "default")
        target_pods = [p for p in pods if p["owner"] and p["namespace"] == ns and p["active"]
                       and any(r["name"] == p["owner"] and r["owner"] == ref["name"] for r in rss)]
        hpas.append({"name": h["metadata"]["name"], "target": ref["name"], "min": h["spec"].get("minReplicas", 1),
                     "max": h["spec"]["maxReplicas"], "current": st.get("currentReplicas"),
                     "desired": st.get("desiredReplicas"), "metrics": list(st.get("currentMetrics") or []),
                     "conditions": [dict(x) for x in st.get("conditions") or []],
                     "load": c.hpa.load(f"{ns}/{ref['name']}"),
                     "pending": sum(1 for p in target_pods if not p["node"]),
                     "running": sum(1 for p in target_pods if p["node"])})
    log = _event_log(c)
    share = c.__dict__.setdefault("_frame_shared", _Shared())
    objects = {kind: share.value(("objects", kind), dict(c.store.objects[kind])) for kind in c.store.objects}
    frame = Frame(t=c.now, nodes=share.rows("nodes", snapshot_nodes(c), lambda d: d["name"]),
                  pods=share.rows("pods", pods), replicasets=share.rows("replicasets", rss),
                  deployments=share.rows("deployments", deps), services=share.rows("services", services),
                  decisions=decisions, events=share.rows("events", [dict(e) for e in c.recorder.events[-14:]],
                                       lambda d: d["seq"]),
                  caption=caption, twin=twin, hpas=share.rows("hpas", hpas), commands=list(commands or []),
                  objects=share.value("objects", objects), last_rules=dict(last_rules or {}), event_log=log)
    share.turn()
    return frame


def ownership_graph(frame: Frame) -> nx.DiGraph:
    """Deployment → ReplicaSet → Pod by ownerReferences ("owns"), Service → Pod by label match ("selects")."""
    g = nx.DiGraph()
    for d in frame.deployments:
        g.add_node(f"deploy/{d['name']}", kind="Deployment", label=d["name"])
    for r in frame.replicasets:
        g.add_node(f"rs/{r['name']}", kind="ReplicaSet", label=r["name"])
        if r["owner"]:
            g.add_edge(f"deploy/{r['owner']}", f"rs/{r['name']}", relation="owns")
    for p in frame.pods:
        if not p["active"] and p["badge"] != "Evicted":
            continue
        g.add_node(f"pod/{p['name']}", kind="Pod", label=p["name"], ready=p["ready"])
        if p["owner"]:
            g.add_edge(f"rs/{p['owner']}", f"pod/{p['name']}", relation="owns")
    for s in frame.services:
        g.add_node(f"svc/{s['name']}", kind="Service", label=s["name"])
        for name in s["ready"] + s["not_ready"]:
            if g.has_node(f"pod/{name}"):
                g.add_edge(f"svc/{s['name']}", f"pod/{name}", relation="selects")
    return g


def graph_layout(g: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Layered layout: Deployments/Services on top, ReplicaSets in the middle, Pods at the bottom."""
    layers = {"Deployment": 2.0, "Service": 2.0, "ReplicaSet": 1.0, "Pod": 0.0}
    pos = {}
    for kind, y in layers.items():
        names = sorted(n for n, data in g.nodes(data=True) if data.get("kind") == kind)
        if kind == "Service":
            continue
        tops = names + (sorted(n for n, d in g.nodes(data=True) if d.get("kind") == "Service") if kind == "Deployment" else [])
        for i, n in enumerate(tops):
            pos[n] = ((i + 0.5) / max(len(tops), 1), y)
    return pos


# --- scenario definitions ---------------------------------------------------------------------------
def _nodes(c: Cluster, n: int = 3, cpu: str = "4", memory: str = "8Gi", **extra) -> None:
    for i in range(n):
        c.apply({"kind": "Node", "metadata": {"name": f"node-{i}"},
                 "status": {"allocatable": {"cpu": cpu, "memory": memory, **extra}}})


def web(replicas: int = 4, image: str = "web:1", deadline: int | None = None, probe: bool = True,
        requests: dict | None = None, limits: dict | None = None) -> dict:
    container = {"name": "web", "image": image,
                 "resources": {"requests": requests or {"cpu": "250m", "memory": "256Mi"},
                               **({"limits": limits} if limits else {})}}
    if probe:
        container["readinessProbe"] = {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 2}
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}}
    if deadline:
        spec["progressDeadlineSeconds"] = deadline
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": spec}


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}


def _first_pod(c: Cluster, **labels) -> str:
    pods = [p for p in c.list("Pod", labels or None) if rules.is_active(p)]
    return pods[0]["metadata"]["name"]


@dataclass
class Guide:
    key: str
    title: str
    summary: str
    setup: Action
    steps: list[tuple[float, str, Action | None]]
    duration: float
    reconcile: str = "level"
    twin: bool = False


def _base(c: Cluster, replicas: int = 4, **kw) -> None:
    _nodes(c)
    c.apply(web(replicas, **kw))
    c.apply(SERVICE)


def _relabel(c: Cluster) -> None:
    c.patch("Pod", _first_pod(c, app="web"), {"metadata": {"labels": {"app": "debug"}}})


def _edit_image(c: Cluster) -> None:
    name = _first_pod(c, app="web")
    container = c.get("Pod", name)["spec"]["containers"][0]
    c.patch("Pod", name, {"spec": {"containers": [{**container, "image": "web:hotfix"}]}})


def _scale_rs(c: Cluster) -> None:
    c.patch("ReplicaSet", c.list("ReplicaSet")[0]["metadata"]["name"], {"spec": {"replicas": 7}})


def _node_with_pods(c: Cluster) -> str:
    return c.list("Pod", {"app": "web"})[0]["spec"]["nodeName"]


def _fill(c: Cluster) -> None:
    node = "node-0"
    k = c.kubelets[node]
    c.fill_node_memory(node, k.capacity_memory() - k.memory_used() - 40 * 2**20)


def _pressure_setup(c: Cluster) -> None:
    _nodes(c, 1)
    for name, res, usage in (("guaranteed", {"requests": {"cpu": "250m", "memory": "1Gi"}, "limits": {"cpu": "250m", "memory": "1Gi"}}, None),
                             ("burstable", {"requests": {"cpu": "100m", "memory": "512Mi"}, "limits": {"memory": "2Gi"}}, "1Gi"),
                             ("besteffort", {}, "300Mi")):
        c.apply({"kind": "Pod", "metadata": {"name": name, "labels": {"demo": "pressure"}},
                 "spec": {"containers": [{"name": "app", "image": f"{name}:1", "resources": res}]}})
        if usage:
            c.ctx.images[f"{name}:1"] = __import__("engines.k8s.base", fromlist=["ImageBehavior"]).ImageBehavior(
                memory_bytes=rules.quantity_bytes(usage, "usage"))


def _limits_setup(c: Cluster) -> None:
    _nodes(c, 1)
    c.apply({"kind": "Pod", "metadata": {"name": "leaky"}, "spec": {"containers": [{"name": "app", "image": "leaky:1",
             "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}}}]}})
    c.apply({"kind": "Pod", "metadata": {"name": "busy"}, "spec": {"containers": [{"name": "app", "image": "busy:1",
             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}}]}})


def _quota_setup(c: Cluster) -> None:
    _nodes(c)
    c.apply({"kind": "ResourceQuota", "metadata": {"name": "team-quota"}, "spec": {"hard": {"pods": "5"}}})
    c.apply(SERVICE)


def _dropped_setup(c: Cluster) -> None:
    _nodes(c, 2)
    c.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"}, "spec": {
        "replicas": 3, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}})


def _drop_and_delete(c: Cluster) -> None:
    c.drop_watch_events(5)
    c.delete("Pod", _first_pod(c, app="web"))


GUIDES: dict[str, Guide] = {g.key: g for g in [
    Guide("self-heal", "Delete a pod: the ReplicaSet replaces it",
          "Desired 4, observed 3 → create 1. The loop does not know why a pod is gone.",
          lambda c: _base(c), [(12, "kubectl delete pod", lambda c: c.delete("Pod", _first_pod(c, app="web")))], 30),
    Guide("relabel", "Relabel a pod: orphaned, still running, replaced, dropped by the Service",
          "The selector no longer matches: the ReplicaSet releases the pod and makes a new one; "
          "the Service follows labels, not owners.", lambda c: _base(c, 3),
          [(12, "kubectl label pod … app=debug --overwrite", _relabel)], 30),
    Guide("hand-edit", "Hand edits: an image edit drifts, a hand scale is undone",
          "The ReplicaSet compares counts only, so a hand-edited image stays; the Deployment owns the "
          "ReplicaSet's replica count and scales it back.", lambda c: _base(c, 3),
          [(12, "kubectl set image pod/… web=web:hotfix", _edit_image), (24, "kubectl scale rs … --replicas=7", _scale_rs)], 45),
    Guide("rolling", "Rolling update within maxSurge / maxUnavailable",
          "replicas 8, 25%/25%: at most 10 pods (surge rounds up), at least 6 available (unavailable rounds down).",
          lambda c: _base(c, 8), [(12, "kubectl set image deploy/web web=web:2", lambda c: c.apply(web(8, "web:2")))], 50),
    Guide("crashloop", "Roll out a crash-looping image: the rollout stalls and is reported, not rolled back",
          "New pods never become Ready; maxScaledDown reaches 0; after progressDeadlineSeconds (60 s here) "
          "Progressing=False ProgressDeadlineExceeded. The old pods keep serving.",
          lambda c: _base(c, 4, deadline=60), [(12, "kubectl apply (image web:crash) → accepted", lambda c: c.apply(web(4, "web:crash", deadline=60)))], 110),
    Guide("unschedulable", "Scheduling failure: Pending with the reason",
          "Requests (not limits) must fit allocatable − requested; no 4-CPU node fits a 5-CPU request, so the new pod stays Pending and the rollout waits.",
          lambda c: _base(c, 3), [(10, "kubectl apply: web with 5-CPU requests",
                                   lambda c: c.apply(web(3, "web:big", requests={"cpu": "5", "memory": "1Gi"})))], 40),
    Guide("stop-node", "Stop a node: NotReady after 40 s, pods replaced after 300 s",
          "The node lifecycle controller marks it Unknown, taints it; pods tolerate unreachable for 300 s, then are deleted "
          "(stuck Terminating) and replaced elsewhere.", lambda c: _base(c, 4),
          [(10, "power off the node", lambda c: c.stop_node(_node_with_pods(c)))], 370),
    Guide("memory-pressure", "Fill a node's memory: eviction by the kubelet's ranking",
          "memory.available < 100Mi: usage above request first, then priority, then usage − request. QoS is not "
          "consulted; critical pods are skipped.",
          _pressure_setup, [(10, "a non-pod process fills the node's memory", _fill)], 45),
    Guide("limits", "Past the limits: memory → OOMKilled and restarted; CPU → throttled",
          "leaky grows to 300Mi against a 256Mi limit; busy wants 800m against a 200m limit.",
          _limits_setup, [(8, "leaky allocates 300Mi; busy wants 800m CPU",
                           lambda c: (c.set_usage("leaky", memory="300Mi"), c.set_usage("busy", cpu_millis=800)))], 60),
    Guide("quota", "Set a quota: slow-start batches stop at the first refusal",
          "A ReplicaSet wants 10 pods, the quota allows 5: batches 1, 2, 4 → the 4-batch is refused half-way and no 8-batch is tried.",
          _quota_setup, [(5, "kubectl apply deployment web (10 replicas)", lambda c: c.apply(web(10)))], 30),
    Guide("dropped-events", "Drop watch events: level-triggered recovers, edge-triggered never does",
          "Events are lost for 5 s while a pod is deleted. This is the edge-triggered strawman: it never learns. "
          "The level-triggered twin (shown in the caption) repairs at the next relist/resync.",
          _dropped_setup, [(10, "watch stream loses events; a pod is deleted", _drop_and_delete)], 70,
          reconcile="edge", twin=True),
]}


@dataclass(frozen=True)
class ModelServerPlan:
    """What the model-server scenario deploys for a shared scenario (hashable: a cache key)."""

    model: str
    gpu_memory_bytes: int     # one replica's serving memory (engines.serving.replica_memory)
    weights_bytes: int
    gpus_needed: int          # nvidia.com/gpu per replica
    gpus_per_node: int
    n_nodes: int
    fit: int                  # replicas the nodes' GPUs hold
    replicas: int             # one more than fits (capped at 10), so the limit is visible

    @property
    def summary(self) -> str:
        gpu_mem = format_bytes(self.gpu_memory_bytes)
        return (f"{self.model}: one replica needs {gpu_mem} of GPU memory → nvidia.com/gpu: {self.gpus_needed} "
                f"(engines.serving); host memory request = weights ({format_bytes(self.weights_bytes)}) for loading. "
                + (f"No node has {self.gpus_needed} GPUs (a pod runs on one node; {self.n_nodes} node(s) × "
                   f"{self.gpus_per_node} GPUs) → every replica stays Pending: Insufficient nvidia.com/gpu."
                   if self.fit == 0 else
                   f"{self.n_nodes} node(s) × {self.gpus_per_node} GPUs fit {self.fit} replica(s); {self.replicas} requested"
                   + (" → the extra one stays Pending: Insufficient nvidia.com/gpu." if self.replicas > self.fit else ".")))


def model_server_plan(scenario) -> ModelServerPlan:
    """Cheap (no simulation): the serving memory of the shared scenario, in GPUs per replica."""
    from engines.serving import replica_memory

    mem = replica_memory(scenario)
    gpus_per_node = scenario.gpus_per_node
    n_nodes = max(1, min(2, scenario.n_gpus // gpus_per_node))
    fit = n_nodes * (gpus_per_node // mem.gpus_needed)    # a pod runs on one node: GPUs do not pool across nodes
    return ModelServerPlan(model=str(scenario.model), gpu_memory_bytes=int(mem.total_bytes),
                           weights_bytes=int(mem.weights_bytes), gpus_needed=int(mem.gpus_needed),
                           gpus_per_node=int(gpus_per_node), n_nodes=n_nodes, fit=fit, replicas=max(1, min(10, fit + 1)))


def model_server_guide(scenario) -> Guide:
    """Deploy the shared scenario's model server: GPUs and memory from engines.serving."""
    plan = model_server_plan(scenario)

    def setup(c: Cluster) -> None:
        # Host side assumed like a DGX H100 node: 112 cores, 2 TiB RAM (NVIDIA DGX H100 datasheet).
        for i in range(plan.n_nodes):
            c.apply({"kind": "Node", "metadata": {"name": f"gpu-node-{i}"},
                     "status": {"allocatable": {"cpu": "112", "memory": "2Ti", "nvidia.com/gpu": str(plan.gpus_per_node)}}})
        container = {"name": "server", "image": "vllm/vllm-openai:latest",
                     "resources": {"requests": {"cpu": "8", "memory": str(plan.weights_bytes)},
                                   "limits": {"nvidia.com/gpu": plan.gpus_needed}},
                     "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 20}}
        c.apply({"apiVersion": "apps/v1", "kind": "Deployment",
                 "metadata": {"name": "model-server", "annotations": {"explorer/gpu-memory": format_bytes(plan.gpu_memory_bytes)}},
                 "spec": {"replicas": plan.replicas, "selector": {"matchLabels": {"app": "model-server"}},
                          "template": {"metadata": {"labels": {"app": "model-server"}}, "spec": {"containers": [container]}}}})
        c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "model-server"},
                 "spec": {"selector": {"app": "model-server"}, "ports": [{"port": 8000}]}})

    return Guide("model-server", "Deploy the scenario's model server (GPUs as an extended resource)",
                 plan.summary, setup, [], 45)


@dataclass(frozen=True)
class AutoscalePlan:
    """The autoscaled model server for a shared scenario: GPUs per replica and a replica's request
    rate from engines.serving, the HPA's target and the traffic curve (hashable: a cache key)."""

    server: ModelServerPlan
    capacity_rps: float        # one replica's saturation rate (engines.serving.saturation_rate)
    target_rps: float          # the HPA's per-pod target: DEFAULT_MAX_UTILISATION × capacity
    max_replicas: int
    traffic: tuple[tuple[float, float], ...]

    @property
    def summary(self) -> str:
        s = self.server
        return (f"{s.model}: {s.gpus_needed} GPU(s) per replica, about {self.capacity_rps:.1f} requests/s each at "
                f"saturation (engines.serving roofline bound, an estimate); the HPA aims at {self.target_rps:.1f} "
                f"requests/s per pod (80 %), min 1, max {self.max_replicas}. The nodes hold {s.fit} replica(s): "
                "at the peak the HPA asks for more than the GPUs hold, and the extra pods stay Pending.")


AUTOSCALE_SECONDS = 720


def autoscale_plan(scenario) -> AutoscalePlan:
    """Cheap arithmetic: the model server's GPUs, its saturation rate and a rise-and-fall load."""
    from engines.serving import DEFAULT_MAX_UTILISATION, default_workload, saturation_rate, step_cost

    server = model_server_plan(scenario)
    capacity = float(saturation_rate(step_cost(scenario, server.gpus_needed), default_workload(scenario),
                                     scenario.serve_batch))
    target = round(DEFAULT_MAX_UTILISATION * capacity, 2)
    wanted = min(server.fit + 3, 28)          # more than the GPUs hold, so the limit shows
    peak = round(wanted * target, 2)
    traffic = ((0.0, round(0.6 * target, 2)), (40.0, round(0.6 * target, 2)), (160.0, peak), (330.0, peak),
               (360.0, round(1.5 * target, 2)))
    return AutoscalePlan(server, capacity, target, max(wanted + 1, 4), traffic)


def autoscale_guide(scenario) -> Guide:
    """The model server under an HPA: request rate → per-pod load → replicas → GPUs."""
    plan = autoscale_plan(scenario)
    server = plan.server

    def setup(c: Cluster) -> None:
        for i in range(server.n_nodes):
            c.apply({"kind": "Node", "metadata": {"name": f"gpu-node-{i}"},
                     "status": {"allocatable": {"cpu": "112", "memory": "2Ti", "nvidia.com/gpu": str(server.gpus_per_node)}}})
        container = {"name": "server", "image": "vllm/vllm-openai:latest",
                     "resources": {"requests": {"cpu": "8", "memory": str(server.weights_bytes)},
                                   "limits": {"nvidia.com/gpu": server.gpus_needed}},
                     "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 20}}
        c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "model-server"},
                 "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "model-server"}},
                          "template": {"metadata": {"labels": {"app": "model-server"}}, "spec": {"containers": [container]}}}})
        c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "model-server"},
                 "spec": {"selector": {"app": "model-server"}, "ports": [{"port": 8000}]}})
        c.apply({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "model-server"},
                 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "model-server"},
                          "minReplicas": 1, "maxReplicas": plan.max_replicas,
                          "metrics": [{"type": "Pods", "pods": {"metric": {"name": "requests_per_second"},
                                                                "target": {"type": "AverageValue",
                                                                           "averageValue": f"{plan.target_rps:g}"}}}]}})
        c.set_traffic("model-server", list(plan.traffic))

    peak = plan.traffic[2][1]
    return Guide("autoscale", "Autoscale the model server: the HPA asks, the GPUs decide", plan.summary, setup,
                 [(40, f"traffic climbs towards {peak:.0f} requests/s", None),
                  (160, "peak load: the HPA wants more replicas than the GPU nodes hold", None),
                  (330, "traffic falls: the HPA keeps the replicas for its 300 s scale-down window", None),
                  (640, "the window has passed: the HPA scales down", None)], AUTOSCALE_SECONDS)


def dump_guide(dump: Dump) -> Guide:
    """The dump as a guide of its own: its objects at t = 0, the loops run ``DUMP_SECONDS``."""
    name = Path(dump.source).name
    return Guide("dump", f"Your cluster dump: {name}",
                 f"{name}: {', '.join(f'{n} {k}' for k, n in dump.counts.items())}; the loops take over at t = 0.",
                 lambda c: load_dump(c, dump), [], DUMP_SECONDS)


def guide_keys() -> list[str]:
    return [*GUIDES, "model-server", "autoscale"]


COMMAND_TAIL = 60          # seconds simulated after the last command, so the loops' answer is seen
MAX_SECONDS = 1800         # a timeline's length with commands (30 simulated minutes)
Commands = tuple[tuple[int, str], ...]


def check_commands(commands: object) -> Commands:
    """(second, kubectl command) pairs in time order: the seconds whole, ≥ 0 and < MAX_SECONDS."""
    from engines.core.errors import ValidationError, require_int
    if not isinstance(commands, (list, tuple)):
        raise ValidationError("commands", "expected a list of (second, command) pairs", "[(12, 'scale deploy/web --replicas=6')]")
    out = []
    for i, pair in enumerate(commands):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[1], str) or not pair[1].strip():
            raise ValidationError(f"commands[{i}]", f"{pair!r:.80} is not a (second, command) pair", "(12, 'cordon node-1')")
        out.append((require_int(pair[0], f"commands[{i}].second", 0, MAX_SECONDS - 1), pair[1]))
    if any(b[0] < a[0] for a, b in zip(out, out[1:])):
        raise ValidationError("commands", "seconds must not decrease", "commands in time order")
    return tuple(out)


def fork(commands: Commands, second: int, command: str) -> Commands:
    """Branch the timeline at ``second``: commands up to and including that second stay, later ones
    (the old future) go, and ``command`` is given at ``second``."""
    return check_commands([*(c for c in check_commands(commands) if c[0] <= second), (second, command)])


def guide_for(key: str, scenario=None) -> Guide:
    require_choice(key, "scenario", tuple(guide_keys()))
    if key in ("model-server", "autoscale"):
        from engines.core.scenario import Scenario
        return (model_server_guide if key == "model-server" else autoscale_guide)(scenario or Scenario())
    return GUIDES[key]


def run_guide(key: str, scenario=None, seed: int = 0, progress: Callable[[float], None] | None = None,
              cancelled: Callable[[], bool] | None = None, commands: Commands = ()) -> Timeline:
    """Play a guided scenario and record one frame per simulated second. ``progress(fraction)``
    is called once per simulated second; ``cancelled()`` is asked as often (true: raise
    :class:`engines.core.errors.Cancelled`). ``commands``: kubectl commands given by you, as
    (second, command): each runs on the cluster as it was at that second (``fork``)."""
    return play_guide(guide_for(key, scenario), seed=seed, progress=progress, cancelled=cancelled, commands=commands)


def play_guide(guide: Guide, seed: int = 0, progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None, commands: Commands = ()) -> Timeline:
    """Play ``guide`` (registered or not) in a fresh cluster, one frame per simulated second: a
    worker thread can run its own Guide without touching the shared ``GUIDES`` registry. A command
    at second s is given to the cluster in the state of frame s; frame s + 1 shows the first tick
    of the loops' answer, and replaying the same commands gives the same frames."""
    commands = check_commands(commands)
    cluster = Cluster(seed=seed, reconcile=guide.reconcile)
    twin = Cluster(seed=seed) if guide.twin else None
    guide.setup(cluster)
    if twin is not None:
        guide.setup(twin)
    steps = sorted(guide.steps, key=lambda s: s[0])
    frames, chapters = [], [(0, "set-up")]
    caption = guide.summary
    cluster.settle()
    seen = 0
    last_rules: dict[str, dict] = {}
    duration = int(guide.duration)
    if commands:
        duration = min(max(duration, commands[-1][0] + COMMAND_TAIL), MAX_SECONDS - 1)
    for second in range(duration + 1):
        if cancelled is not None and cancelled():
            raise Cancelled()
        if progress is not None:
            progress(second / (duration + 1))
        for at, text, action in steps:
            if at == second:
                if action is not None:
                    action(cluster)
                    if twin is not None:
                        action(twin)
                caption = text
                chapters.append((len(frames), text))
        given = []
        for at, command in commands:
            if at + 1 == second:
                given.append(cluster.kubectl(command))
                if twin is not None:
                    twin.kubectl(command)
        if given:
            caption = "You: " + "; ".join(f"kubectl {r.command.splitlines()[0]} → "
                                          f"{'accepted' if r.accepted else 'rejected'}" for r in given)
            chapters.append((len(frames), "$ kubectl " + given[-1].command.splitlines()[0]))
        if second:
            cluster.run(1)
            if twin is not None:
                twin.run(1)
        decisions = cluster.ctx.decisions[seen:] if seen <= len(cluster.ctx.decisions) else cluster.ctx.decisions[:]
        seen = len(cluster.ctx.decisions)
        for d in decisions:
            if not d["noop"] or d["object"] not in last_rules:
                last_rules[d["object"]] = d
        twin_text = ""
        if twin is not None:
            alive = [p for p in twin.list("Pod") if rules.is_active(p)]
            twin_text = f"level-triggered twin: {len(alive)}/3 pods"
        frames.append(snapshot(cluster, caption, [dict(d) for d in decisions[-40:]], twin_text, last_rules, given))
    return Timeline(key=guide.key, title=guide.title, frames=frames, chapters=chapters)
