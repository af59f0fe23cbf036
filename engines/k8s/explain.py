"""What a frame's objects mean, in words: requests vs limits for one pod, a Deployment's rollout
bounds, a node's status. Pure functions of frame dicts (``engines.k8s.scenarios.snapshot``); the
panel only lays the text out. Light inline markup (<b>, <i>) marks the words a reader looks for.
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.k8s.quantity import format_bytes, format_cpu

CFS_PERIOD_MS = 100     # the kernel's default cpu.cfs_period_us (100 ms): a CPU limit is a quota per period


@dataclass(frozen=True)
class PodExplanation:
    """Requests vs limits for one pod, one sentence per line."""

    pod: str
    lines: tuple[str, ...]

    @property
    def html(self) -> str:
        return "<br>".join(self.lines)


def _amount(resource: str, value: float) -> str:
    return (f"{format_cpu(value)} CPU" if resource == "cpu" else f"{format_bytes(value)} of memory"
            if resource == "memory" else f"{value:g} {resource}")


def too_big_for_every_node(pod: dict, nodes: list[dict]) -> list[tuple[str, float, float]]:
    """(resource, requested, most any one node can allocate) for each request larger than every node's
    allocatable: the scheduler places a pod on one node, so such a pod stays Pending whatever else
    is freed (Kubernetes documentation, Pods: a pod's containers are co-located and co-scheduled)."""
    out = []
    for resource, wanted in pod["requests"].items() if nodes else ():
        most = max(n["alloc"].get(resource, 0) for n in nodes)
        if wanted > most:
            out.append((resource, wanted, most))
    return out


def explain_pod(pod: dict, nodes: list[dict] = ()) -> PodExplanation:
    """Placement (requests only), what happens past each limit, usage and the eviction ranking.
    With the frame's ``nodes``, a Pending pod that no node could ever hold says so."""
    req, lim = pod["requests"], pod["limits"]
    lines = [f"<b>{pod['name']}</b> — {pod['badge']}, {'Ready' if pod['ready'] else 'not Ready'}, QoS <b>{pod['qos']}</b>"]
    where = pod["node"] or "nowhere yet"
    lines.append(f"<b>Placement</b> (uses <i>requests</i> only): cpu {format_cpu(req.get('cpu', 0))}, "
                 f"memory {format_bytes(req.get('memory', 0))}"
                 + (f", GPUs {req['nvidia.com/gpu']}" if req.get("nvidia.com/gpu") else "") + f" → on <b>{where}</b>.")
    sched = pod.get("scheduled")
    if sched and sched.get("status") == "False":
        lines.append(f"Scheduler: {sched.get('message')}")
        for resource, wanted, most in too_big_for_every_node(pod, list(nodes)):
            lines.append(f"<b>No node can ever hold it</b>: it asks for {_amount(resource, wanted)} and the largest "
                         f"node allocates {_amount(resource, most)}; a pod runs on one node, so it waits for good.")
    cpu_lim, mem_lim = lim.get("cpu"), lim.get("memory")
    quota_ms = cpu_lim * CFS_PERIOD_MS / 1000 if cpu_lim else 0   # millicores × period
    lines.append("<b>CPU limit</b>: " + (f"{format_cpu(cpu_lim)} → a CFS quota of {quota_ms:.0f} ms per "
                                          f"{CFS_PERIOD_MS} ms; above it the container is <i>throttled</i>, never killed."
                                          if cpu_lim else "none: may use idle CPU on the node."))
    lines.append("<b>Memory limit</b>: " + (f"{format_bytes(mem_lim)} → above it the kernel OOM-kills the container "
                                             "(OOMKilled, exit 137); it restarts in place with back-off." if mem_lim
                                             else "none: bounded only by the node; under node pressure it is evicted first "
                                                  "if its usage exceeds its request."))
    cpu = pod.get("cpu")
    if cpu and cpu["demand"] > cpu["used"]:
        lines.append(f"CPU now: wants {format_cpu(cpu['demand'])}, gets {format_cpu(cpu['used'])}: throttled in "
                     f"{cpu['throttled']} of its {cpu['periods']} periods so far, still running "
                     f"({pod['restarts']} restarts).")
    elif cpu:
        lines.append(f"CPU now: {format_cpu(cpu['used'])}, not throttled.")
    if pod["usage"] is not None:
        lines.append(f"Usage now: {format_bytes(pod['usage'])} "
                     f"({'above' if pod['usage'] > req.get('memory', 0) else 'within'} its memory request).")
    image, template = pod.get("image"), pod.get("template_image")
    if template and image != template:
        lines.append(f"Image <b>{image}</b>, but its ReplicaSet's template says {template}: a hand edit. The "
                     "ReplicaSet counts pods and never compares images, so it stays until the pod is replaced.")
    lines.append(f"Eviction rank under memory pressure: usage &gt; request first, then priority ({pod['priority']}), "
                 "then usage − request. QoS only predicts this order.")
    return PodExplanation(pod["name"], tuple(lines))


def deployment_status(d: dict) -> str:
    """One Deployment's rollout in a line: updated, available of desired, the maxSurge /
    maxUnavailable bounds in pods, and its Progressing condition."""
    return (f"deploy/{d['name']}: {d['updated']} updated, {d['available']}/{d['replicas']} available "
            f"(≤ {d['max_total']} pods, ≥ {d['min_available']} available) Progressing={d['progressing']}")


def node_status(node: dict) -> str:
    """Ready, or NotReady with the Ready condition's status, and MemoryPressure when set."""
    status = "Ready" if node["ready"] == "True" else f"NotReady ({node['ready']})"
    return status + (", MemoryPressure" if node["pressure"] else "")
