""""Why?" for one object of a frame: a kubectl-describe-like walk that ends in a reason.

For a pod, ReplicaSet, Deployment, Service, node or HPA: the one-line answer first (e.g.
"Pending: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."), then its conditions with
their reasons, the owner chain (ownerReferences up to the top), what its labels and selectors
match, the events about it, and the controller rule that last acted on it. Pure functions of
``engines.k8s.scenarios.Frame``; the same walk kubectl describe prints, with the decision record
this simulator keeps added (a real cluster does not keep one).
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.k8s import rules
from engines.k8s.quantity import format_bytes, format_cpu
from engines.k8s.store import controller_ref

WHY_KINDS = ("Pod", "ReplicaSet", "Deployment", "Service", "Node", "HorizontalPodAutoscaler")


@dataclass(frozen=True)
class Why:
    """The walk: ``answer`` in one line, then ``sections`` of (heading, lines); plain text."""

    kind: str
    name: str
    answer: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def text(self) -> str:
        out = [f"{self.kind} {self.name}: {self.answer}"]
        for head, lines in self.sections:
            out.append(f"{head}:")
            out.extend(f"  {x}" for x in lines)
        return "\n".join(out)


def _find(frame, kind: str, name: str, namespace: str | None) -> dict:
    if kind not in WHY_KINDS:
        raise ValidationError("kind", f"{kind!r} has no Why? walk", ", ".join(WHY_KINDS))
    objs = (frame.objects or {}).get(kind, {})
    hits = [o for o in objs.values() if o["metadata"]["name"] == name
            and (namespace is None or o["metadata"].get("namespace", "") in (namespace, ""))]
    if not hits:
        raise ValidationError("name", f"no {kind} named {name!r} at t = {frame.t:.0f} s",
                              ", ".join(sorted(o["metadata"]["name"] for o in objs.values())[:12]) or "none")
    return hits[0]


def _conditions(obj: dict, now: float) -> tuple[str, ...]:
    out = []
    for c in (obj.get("status") or {}).get("conditions") or []:
        since = c.get("lastTransitionTime")
        text = f"{c['type']}={c.get('status')}"
        if c.get("reason"):
            text += f" ({c['reason']})"
        if c.get("message"):
            text += f": {c['message']}"
        if isinstance(since, (int, float)):
            text += f" — for {now - since:.0f} s"
        out.append(text)
    return tuple(out) or ("none reported",)


def _owner_chain(frame, obj: dict) -> tuple[str, ...]:
    chain, seen = [], set()
    current = obj
    while True:
        ref = controller_ref(current)
        if ref is None:
            chain.append(f"{current['kind']} {current['metadata']['name']}: no controller owns it"
                         + (" (an orphan: nothing recreates it if it goes)" if current is obj and obj["kind"] == "Pod" else ""))
            break
        owner = next((o for o in (frame.objects or {}).get(ref["kind"], {}).values()
                      if o["metadata"]["uid"] == ref["uid"]), None)
        chain.append(f"{current['kind']} {current['metadata']['name']} is owned by {ref['kind']} {ref['name']}"
                     + ("" if owner is not None else " (gone: the garbage collector deletes it)"))
        if owner is None or owner["metadata"]["uid"] in seen:
            break
        seen.add(owner["metadata"]["uid"])
        current = owner
    return tuple(chain)


def _events(frame, kind: str, name: str) -> tuple[str, ...]:
    ref = f"{kind.lower()}/{name}"
    mine = [e for e in frame.event_log if e[0] == ref][-6:]
    return tuple(f"{frame.t - last:.0f} s ago  {etype}  {reason}" + (f" (x{count})" if count > 1 else "") + f": {msg}"
                 for _o, etype, reason, msg, count, last in reversed(mine)) or ("none",)


def _last_rule(frame, kind: str, name: str) -> tuple[str, ...]:
    d = (frame.last_rules or {}).get(f"{kind} {name}")
    if d is None:
        return ("no controller has acted on it yet",)
    return (f"t = {d['t']:.0f} s, {d['controller']}: {d['rule']}" + (f" → {d['action']}" if d["action"] else ""),)


def _services_selecting(frame, labels: dict, namespace: str) -> list[dict]:
    return [s for s in (frame.objects or {}).get("Service", {}).values()
            if s["spec"].get("selector") and s["metadata"].get("namespace") == namespace
            and rules.selector_matches(s["spec"]["selector"], labels)]


def _pods_matching(frame, selector, namespace: str) -> list[dict]:
    return [p for p in (frame.objects or {}).get("Pod", {}).values()
            if p["metadata"].get("namespace") == namespace and rules.selector_matches(selector, p["metadata"].get("labels"))]


def _pod(frame, pod: dict) -> tuple[str, list]:
    from engines.k8s.scenarios import pod_badge
    status, ns = pod.get("status") or {}, pod["metadata"].get("namespace", "default")
    badge = pod_badge(pod)
    sched = rules.condition(pod, "PodScheduled")
    if pod["metadata"].get("deletionTimestamp"):
        answer = "Terminating: it was deleted; it stays until its containers stop (or, on an unreachable node, until the node returns)"
    elif sched and sched.get("status") == "False":
        answer = f"Pending: {sched.get('message', '')}"
    elif not pod["spec"].get("nodeName"):
        answer = "Pending: the scheduler has not placed it yet"
    elif status.get("reason") == "Evicted":
        answer = f"Evicted: {status.get('message', '')}"
    elif "CrashLoopBackOff" in badge or "OOMKilled" in badge:
        last = next(((c.get("lastState") or {}).get("terminated") for c in status.get("containerStatuses") or []
                     if (c.get("lastState") or {}).get("terminated")), {}) or {}
        answer = (f"{badge}: its container keeps exiting (last: {last.get('reason', '?')}, exit code "
                  f"{last.get('exitCode', '?')}); the kubelet restarts it with a growing back-off")
    elif rules.is_pod_ready(pod):
        answer = f"Running and Ready on {pod['spec']['nodeName']} at {status.get('podIP', '?')}"
    else:
        answer = f"{badge}, not Ready: its readiness probe has not passed yet, so Services send it no traffic"
    containers = []
    for c in status.get("containerStatuses") or []:
        state = next(iter(c.get("state") or {"unknown": {}}))
        detail = (c.get("state") or {}).get(state) or {}
        containers.append(f"{c['name']} ({c.get('image')}): {state}"
                          + (f" {detail.get('reason')}" if detail.get("reason") else "")
                          + f", ready={c.get('ready')}, restarts={c.get('restartCount', 0)}")
    labels = pod["metadata"].get("labels") or {}
    svcs = _services_selecting(frame, labels, ns)
    matches = [f"labels {labels or '{}'}"]
    matches += [f"selected by Service {s['metadata']['name']} {s['spec']['selector']}: "
                + ("a ready endpoint" if rules.is_pod_ready(pod) and not pod["metadata"].get("deletionTimestamp")
                   else "listed as not ready (no traffic)") for s in svcs] or ["no Service selects it"]
    sections = [("Placement", (f"node {pod['spec'].get('nodeName') or '—'}, pod IP {status.get('podIP') or '—'}, "
                               f"QoS {rules.qos_class(pod)}",)),
                ("Conditions", _conditions(pod, frame.t)), ("Containers", tuple(containers) or ("not started",)),
                ("Owner chain", _owner_chain(frame, pod)), ("Selector matches", tuple(matches))]
    return answer, sections


def _replicaset(frame, rs: dict) -> tuple[str, list]:
    st, ns = rs.get("status") or {}, rs["metadata"].get("namespace", "default")
    want = rs["spec"].get("replicas", 1)
    pods = [p for p in _pods_matching(frame, rs["spec"].get("selector"), ns) if rules.is_active(p)]
    owned = [p for p in pods if (controller_ref(p) or {}).get("uid") == rs["metadata"]["uid"]]
    failure = rules.condition(rs, "ReplicaFailure")
    if failure:
        answer = f"{st.get('replicas', 0)} of {want} pods: creating more fails: {failure.get('message', '')}"
    elif st.get("replicas", 0) != want:
        answer = f"{st.get('replicas', 0)} pods, {want} wanted: its loop is closing the gap"
    else:
        answer = f"{want} pods as wanted, {st.get('readyReplicas', 0)} ready, {st.get('availableReplicas', 0)} available"
    sections = [("Replicas", (f"spec {want}, status {st.get('replicas', 0)}, ready {st.get('readyReplicas', 0)}, "
                              f"available {st.get('availableReplicas', 0)}",)),
                ("Conditions", _conditions(rs, frame.t)), ("Owner chain", _owner_chain(frame, rs)),
                ("Selector matches", (f"selector {rules.match_labels_of(rs['spec'].get('selector'))}: {len(pods)} active "
                                      f"pod(s) match, {len(owned)} owned by it",
                                      "it counts pods; it never compares their images with its template"))]
    return answer, sections


def _deployment(frame, d: dict) -> tuple[str, list]:
    st, ns = d.get("status") or {}, d["metadata"].get("namespace", "default")
    want = d["spec"].get("replicas", 1)
    prog, avail = rules.condition(d, "Progressing"), rules.condition(d, "Available")
    if d["spec"].get("paused"):
        answer = "paused: template changes are recorded but not rolled out until resumed"
    elif prog and prog.get("reason") == "ProgressDeadlineExceeded":
        answer = f"rollout stalled: {prog.get('message')} (reported only; nothing is rolled back)"
    elif st.get("updatedReplicas", 0) == want and st.get("availableReplicas", 0) == want:
        answer = f"complete: {want} updated and available"
    else:
        answer = (f"not there yet: {st.get('updatedReplicas', 0)} updated, {st.get('availableReplicas', 0)} available of "
                  f"{want}" + (f" (Available={avail['status']})" if avail else ""))
    rss = sorted((r for r in (frame.objects or {}).get("ReplicaSet", {}).values()
                  if (controller_ref(r) or {}).get("uid") == d["metadata"]["uid"]),
                 key=lambda r: int(r["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision", "0") or 0))
    history = tuple(f"revision {r['metadata'].get('annotations', {}).get('deployment.kubernetes.io/revision', '?')}: "
                    f"ReplicaSet {r['metadata']['name']} ({r['spec']['template']['spec']['containers'][0].get('image')}) "
                    f"{r['spec'].get('replicas', 0)} wanted, {(r.get('status') or {}).get('availableReplicas', 0)} available"
                    for r in rss) or ("no ReplicaSet yet",)
    hpas = [h for h in (frame.objects or {}).get("HorizontalPodAutoscaler", {}).values()
            if h["spec"]["scaleTargetRef"].get("name") == d["metadata"]["name"] and h["metadata"].get("namespace") == ns]
    sections = [("Replicas", (f"spec {want}" + (f" (set by HorizontalPodAutoscaler {hpas[0]['metadata']['name']}: "
                                                 "a hand scale is overwritten at its next sync)" if hpas else ""),)),
                ("Conditions", _conditions(d, frame.t)), ("ReplicaSets by revision", history),
                ("Owner chain", _owner_chain(frame, d))]
    return answer, sections


def _service(frame, svc: dict) -> tuple[str, list]:
    ns = svc["metadata"].get("namespace", "default")
    sel = svc["spec"].get("selector")
    slices = [s for s in (frame.objects or {}).get("EndpointSlice", {}).values()
              if (controller_ref(s) or {}).get("uid") == svc["metadata"]["uid"]]
    eps = [e for s in slices for e in s.get("endpoints") or []]
    ready = [e for e in eps if e["conditions"]["ready"]]
    if not sel:
        answer = "no selector: the EndpointSlice controller manages no endpoints for it"
    elif not eps:
        matching = [p for p in _pods_matching(frame, sel, ns) if rules.is_active(p)]
        answer = (f"no endpoints yet: {len(matching)} pod(s) match {sel} but none has an address (not started)"
                  if matching else f"no endpoints: no pod's labels match {sel}")
    elif not ready:
        answer = f"{len(eps)} pod(s) match {sel} but none is ready: connections are refused"
    else:
        answer = f"{len(ready)} ready endpoint(s) behind ClusterIP {svc['spec'].get('clusterIP', '—')}"
    sections = [("Address", (f"ClusterIP {svc['spec'].get('clusterIP', '—')}, ports "
                             + ", ".join(f"{p.get('port')}→{p.get('targetPort', p.get('port'))}"
                                         for p in svc["spec"].get("ports") or []),)),
                ("Selector matches", (f"selector {sel}: membership is by labels only, owners play no part",)
                 + tuple(f"{e['targetRef']['name']} {e['addresses'][0]} ready={e['conditions']['ready']} "
                         f"serving={e['conditions']['serving']} terminating={e['conditions']['terminating']}"
                         for e in eps)),
                ("EndpointSlices", tuple(s["metadata"]["name"] for s in slices) or ("none",))]
    return answer, sections


def _node(frame, node: dict) -> tuple[str, list]:
    name = node["metadata"]["name"]
    ready = rules.condition(node, "Ready")
    spec = node.get("spec") or {}
    taints = [f"{t['key']}:{t['effect']}" for t in spec.get("taints") or []]
    if ready is None or ready.get("status") != "True":
        answer = f"NotReady ({ready.get('reason') if ready else 'no status'}): " + (ready.get("message", "") if ready else "")
    elif spec.get("unschedulable"):
        answer = "Ready but cordoned: no new pods are placed here; the pods on it keep running"
    else:
        answer = "Ready and schedulable"
    pods = [p for p in (frame.objects or {}).get("Pod", {}).values() if p["spec"].get("nodeName") == name]
    summary = next((n for n in frame.nodes if n["name"] == name), None)
    alloc = ", ".join(f"{k} {v}" for k, v in (node.get("status") or {}).get("allocatable", {}).items())
    fmt = {"cpu": format_cpu, "memory": format_bytes}
    requested = ", ".join(f"{k} {fmt.get(k, str)(v)}" for k, v in (summary or {}).get("requested", {}).items() if v) \
        or "nothing"
    sections = [("Capacity", (f"allocatable {alloc}", f"requested by pods {requested}",
                              f"pod CIDR {spec.get('podCIDR', '—')}: every pod here gets an address from it")),
                ("Conditions", _conditions(node, frame.t)),
                ("Scheduling", (f"unschedulable={bool(spec.get('unschedulable'))}", "taints: " + (", ".join(taints) or "none"))),
                ("Pods", tuple(f"{p['metadata']['name']} {(p.get('status') or {}).get('podIP', '')}" for p in pods) or ("none",))]
    return answer, sections


def _hpa(frame, h: dict) -> tuple[str, list]:
    st = h.get("status") or {}
    limited = next((c for c in st.get("conditions") or [] if c["reason"] in (
        "ScaleDownStabilized", "ScaleUpStabilized", "TooManyReplicas", "TooFewReplicas", "ScaleUpLimit")), None)
    answer = f"{st.get('currentReplicas')} → {st.get('desiredReplicas')} replicas" + (
        f": {limited['reason']} ({limited['message']})" if limited else "")
    metrics = tuple(f"{m['name']}: {m['current']:.1f} now, target {m['target']:g}" for m in st.get("currentMetrics") or [])
    sections = [("Bounds", (f"min {h['spec'].get('minReplicas', 1)}, max {h['spec']['maxReplicas']}, target "
                            f"{h['spec']['scaleTargetRef']['kind']} {h['spec']['scaleTargetRef']['name']}",)),
                ("Metrics", metrics or ("none yet",)), ("Conditions", _conditions(h, frame.t))]
    return answer, sections


def why(frame, kind: str, name: str, namespace: str | None = None) -> Why:
    """The describe-like walk for ``kind``/``name`` in ``frame`` (first namespace match unless given)."""
    obj = _find(frame, kind, name, namespace)
    answer, sections = {"Pod": _pod, "ReplicaSet": _replicaset, "Deployment": _deployment, "Service": _service,
                        "Node": _node, "HorizontalPodAutoscaler": _hpa}[kind](frame, obj)
    sections = [*sections, ("Events", _events(frame, kind, name)),
                ("Last controller rule", _last_rule(frame, kind, name))]
    return Why(kind, name, answer, tuple((h, tuple(lines)) for h, lines in sections))
