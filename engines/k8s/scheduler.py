"""The default scheduler's resource path (pkg/scheduler): filter, score, bind, or Pending.

Filter (noderesources/fit.go fitsRequest): the pod's *requests* (limits are ignored) must fit in
allocatable − Σ requests of the pods already on the node, for every requested resource (cpu,
memory, ephemeral-storage, extended resources such as nvidia.com/gpu) and the pod count; nodes
that are unschedulable or carry an untolerated NoSchedule/NoExecute taint are skipped. Score:
LeastAllocated (weight 1) on non-zero requests (100m / 200Mi for an unset one) + BalancedAllocation
(weight 1) on the requests as written, skipped for a pod that requests nothing (``rules.node_scores``).
Ties are broken at random (seeded), as selectHost does. A pod that fits nowhere stays Pending
with PodScheduled=False/Unschedulable and a FailedScheduling event, and is retried with back-off
(1 s doubling to 10 s) or at once when a node or a pod's removal changes the picture.
"""
from __future__ import annotations

import numpy as np

from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.quantity import format_bytes, format_cpu
from engines.k8s.store import obj_key

DEFAULT_MAX_PODS = 110          # kubelet --max-pods default
INITIAL_BACKOFF, MAX_BACKOFF = 1.0, 10.0   # podInitialBackoffDuration, podMaxBackoffDuration
_EMPTY: dict[str, int] = {}
EXACT = 2**53   # below this, int64 products ·100 and float64 quotients equal Python's exactly


class NodeTable:
    """The scheduler cache's numbers for every node, in name order, as arrays: one pod's filter
    and both scores then run over all nodes at once instead of node by node in Python, with
    results identical to ``filter_node`` and ``rules.node_scores`` (all numbers < 2**53)."""

    def __init__(self, nodes: list[dict], infos: list[tuple], sched: "Scheduler") -> None:
        self.nodes = nodes
        self.infos = infos
        self.row = {info[0]: k for k, info in enumerate(infos)}
        n = len(nodes)
        self.alloc_cpu = np.array([info[1].get("cpu", 0) for info in infos], dtype=object)
        self.alloc_memory = np.array([info[1].get("memory", 0) for info in infos], dtype=object)
        self.max_pods = np.array([info[1]["pods"] for info in infos], dtype=object)
        self.exact = all(0 <= int(v) < EXACT for a in (self.alloc_cpu, self.alloc_memory, self.max_pods) for v in a)
        self.alloc_cpu, self.alloc_memory, self.max_pods = (a.astype(np.int64) if self.exact else a for a in
                                                            (self.alloc_cpu, self.alloc_memory, self.max_pods))
        self.plain = np.array([not info[2] and not info[3] for info in infos], dtype=bool)
        self.special = [k for k, info in enumerate(infos) if info[2] or info[3]]   # unschedulable or tainted
        self.used_cpu, self.used_memory, self.nz_cpu, self.nz_memory, self.count = (np.zeros(n, np.int64) for _ in range(5))
        for info in infos:
            self.refresh(info[0], sched)

    def refresh(self, name: str, sched: "Scheduler") -> None:
        """Copy one node's requested sums from the scheduler cache (after a pod is (un)accounted)."""
        k = self.row.get(name)
        if k is None or not self.exact:
            return
        used, nz = sched.requested.get(name, _EMPTY), sched.nonzero.get(name, _EMPTY)
        values = (used.get("cpu", 0), used.get("memory", 0), nz.get("cpu", 0), nz.get("memory", 0))
        if not all(0 <= v < EXACT for v in values):
            self.exact = False
            return
        self.used_cpu[k], self.used_memory[k], self.nz_cpu[k], self.nz_memory[k] = values
        self.count[k] = sched.count.get(name, 0)

    def candidates(self, sched: "Scheduler", pod: dict, req: dict[str, int], wanted: list[tuple[str, int]],
                   nz: dict[str, int]) -> tuple[list[tuple[dict, int, int]], int]:
        """(node, LeastAllocated, BalancedAllocation) for the feasible nodes that can change the
        selectHost choice (score ≥ every earlier feasible score), and how many nodes are feasible."""
        ok = self.plain & (self.count < self.max_pods)
        for r, v in wanted:
            if r == "cpu":
                free = self.alloc_cpu - self.used_cpu
            elif r == "memory":
                free = self.alloc_memory - self.used_memory
            else:   # extended resources (nvidia.com/gpu …): rare, per node
                free = np.array([info[1].get(r, 0) - sched.requested.get(info[0], _EMPTY).get(r, 0)
                                 for info in self.infos], dtype=object)
            ok &= free >= v
        for k in self.special:   # taints need the pod's tolerations: the scalar filter decides
            ok[k] = not sched.filter_node(pod, req, self.nodes[k], wanted)
        idx = np.flatnonzero(ok)
        if not idx.size:
            return [], 0
        cap_cpu, cap_memory = self.alloc_cpu[idx], self.alloc_memory[idx]
        cpu, memory = self.nz_cpu[idx] + nz.get("cpu", 0), self.nz_memory[idx] + nz.get("memory", 0)
        has_cpu, has_memory = cap_cpu > 0, cap_memory > 0      # a resource the node lacks is left out
        l_cpu, l_memory = _least(cpu, cap_cpu), _least(memory, cap_memory)
        least = np.where(has_cpu & has_memory, (l_cpu + l_memory) // 2,
                         np.where(has_cpu, l_cpu, np.where(has_memory, l_memory, 0)))
        if rules.is_best_effort_request(req):
            balanced = np.zeros(idx.size, np.int64)
        else:
            real_cpu, real_memory = self.used_cpu[idx] + req.get("cpu", 0), self.used_memory[idx] + req.get("memory", 0)
            std = np.where(has_cpu & has_memory,
                           np.abs(_fraction(real_cpu, cap_cpu) - _fraction(real_memory, cap_memory)) / 2, 0.0)
            balanced = ((1 - std) * rules.MAX_NODE_SCORE).astype(np.int64)
        score = least + balanced
        running_best = np.concatenate(([-1], np.maximum.accumulate(score)[:-1]))
        keep = score >= running_best
        nodes = self.nodes
        return [(nodes[k], a, b) for k, a, b in zip(idx[keep].tolist(), least[keep].tolist(), balanced[keep].tolist())], \
            int(idx.size)


def _least(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """LeastAllocated per resource: (cap − req)·100 // cap, 0 when cap = 0 or req > cap."""
    safe = np.maximum(capacity, 1)
    return np.where((capacity == 0) | (requested > capacity), 0, (capacity - requested) * rules.MAX_NODE_SCORE // safe)


def _fraction(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """BalancedAllocation's requested/allocatable, capped at 1 (unused where allocatable is 0)."""
    return np.where(capacity > 0, np.minimum(requested / np.maximum(capacity, 1), 1.0), 1.0)


def tolerates(pod: dict, taint: dict) -> bool:
    """v1helper.TolerationsTolerateTaint."""
    for tol in (pod.get("spec") or {}).get("tolerations") or []:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("operator", "Equal") == "Exists":
            if not tol.get("key") or tol["key"] == taint["key"]:
                return True
        elif tol.get("key") == taint["key"] and tol.get("value", "") == taint.get("value", ""):
            return True
    return False


class Scheduler(Controller):
    name = "default-scheduler"
    kind = "Pod"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.pods = ctx.informers["Pod"]
        self.nodes = ctx.informers["Node"]
        self.requested: dict[str, dict[str, int]] = {}      # node → Σ real requests
        self.nonzero: dict[str, dict[str, int]] = {}        # node → Σ non-zero requests
        self.count: dict[str, int] = {}
        self.accounted: dict[str, tuple[str, dict, dict]] = {}
        self.attempts: dict[str, int] = {}
        self.unschedulable: set[str] = set()
        self._alloc: dict[str, tuple[dict, tuple]] = {}   # node → (the object parsed, node_info)
        self._pod_req: dict[str, tuple[dict[str, int], dict[str, int]]] = {}  # pod uid → (requests, non-zero)
        self.pods.on_add.append(self._pod_event)
        self.pods.on_update.append(lambda old, new: self._pod_event(new))
        self.pods.on_delete.append(self._pod_deleted)
        self.nodes.on_add.append(lambda n: self._retry_all())
        self.nodes.on_update.append(self._node_updated)
        self._table: NodeTable | None = None
        for handlers in (self.nodes.on_add, self.nodes.on_update, self.nodes.on_delete):
            handlers.append(lambda *_: setattr(self, "_table", None))

    # --- cache of requested resources per node (the scheduler cache's NodeInfo) -----------------
    def _account(self, key: str, pod: dict | None) -> None:
        old = self.accounted.get(key)
        if old is not None and pod is not None and old[0] == pod["spec"].get("nodeName") \
                and old[1] is self._pod_req.get(pod["metadata"]["uid"], (None,))[0] \
                and pod["status"].get("phase") not in ("Succeeded", "Failed"):
            return   # same pod, same node, still counted: a status update changes nothing here
        old = self.accounted.pop(key, None)
        if old is not None:
            node, req, nz = old
            for r, v in req.items():
                self.requested[node][r] -= v
            for r, v in nz.items():
                self.nonzero[node][r] -= v
            self.count[node] -= 1
            if self._table is not None:
                self._table.refresh(node, self)
        if pod is None:
            return
        node = pod["spec"].get("nodeName")
        if not node or pod["status"].get("phase") in ("Succeeded", "Failed"):
            return
        req, nz = self.pod_requests(pod)
        self.accounted[key] = (node, req, nz)
        bucket, nzb = self.requested.setdefault(node, {}), self.nonzero.setdefault(node, {})
        for r, v in req.items():
            bucket[r] = bucket.get(r, 0) + v
        for r, v in nz.items():
            nzb[r] = nzb.get(r, 0) + v
        self.count[node] = self.count.get(node, 0) + 1
        if self._table is not None:
            self._table.refresh(node, self)

    def pod_requests(self, pod: dict) -> tuple[dict[str, int], dict[str, int]]:
        """(requests, non-zero requests) of a pod; a pod's resources are immutable once created
        (ValidatePodUpdate), so they are computed once per uid."""
        uid = pod["metadata"]["uid"]
        cached = self._pod_req.get(uid)
        if cached is None:
            cached = self._pod_req[uid] = (rules.pod_requests(pod), rules.pod_requests(pod, non_zero=True))
        return cached

    def _pod_event(self, pod: dict) -> None:
        key = obj_key(pod)
        was = self.accounted.get(key)
        self._account(key, pod)
        if not pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp") \
                and key not in self.unschedulable and (pod["status"].get("phase") in (None, "Pending")):
            self.queue.add(key)
        if was is not None and key not in self.accounted:
            self._retry_all()

    def _pod_deleted(self, pod: dict) -> None:
        key = obj_key(pod)
        freed = key in self.accounted
        self._account(key, None)
        self._pod_req.pop(pod["metadata"]["uid"], None)
        self.unschedulable.discard(key)
        self.attempts.pop(key, None)
        if freed:
            self._retry_all()

    def _node_updated(self, old: dict, new: dict) -> None:
        if old is not new and (old.get("status") != new.get("status") or old.get("spec") != new.get("spec")):
            self._retry_all()

    def _retry_all(self) -> None:
        """MoveAllToActiveOrBackoffQueue on a cluster event that may make pods schedulable."""
        for key in sorted(self.unschedulable):
            self.queue.add(key)
        self.unschedulable.clear()

    # --- one scheduling cycle -------------------------------------------------------------------
    def node_info(self, node: dict) -> tuple[str, dict[str, int], bool, list[dict]]:
        """(name, allocatable with the pod limit, unschedulable, NoSchedule/NoExecute taints),
        parsed once per node version: informer objects are replaced on update, never mutated."""
        name = node["metadata"]["name"]
        cached = self._alloc.get(name)
        if cached is None or cached[0] is not node:
            spec = node.get("spec") or {}
            alloc = rules.parse_allocatable(node.get("status") or {})
            alloc.setdefault("pods", DEFAULT_MAX_PODS)
            taints = [t for t in spec.get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
            cached = self._alloc[name] = (node, (name, alloc, bool(spec.get("unschedulable")), taints))
        return cached[1]

    def filter_node(self, pod: dict, req: dict[str, int], node: dict,
                    wanted: list[tuple[str, int]] | None = None) -> list[str]:
        """Reasons the node is rejected (empty: it fits). ``wanted``: the pod's non-zero
        requests sorted by resource (computed once per pod by ``sync``)."""
        name, alloc, unschedulable, taints = self.node_info(node)
        if unschedulable:
            return ["node(s) were unschedulable"]
        for taint in taints:
            if not tolerates(pod, taint):
                return [f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"]
        used = self.requested.get(name, _EMPTY)
        reasons = []
        if self.count.get(name, 0) + 1 > alloc["pods"]:
            reasons.append("Too many pods")
        for r, v in (wanted if wanted is not None else sorted((r, v) for r, v in req.items() if v > 0)):
            if v > alloc.get(r, 0) - used.get(r, 0):
                reasons.append(f"Insufficient {r}")
        return reasons

    def _candidates_loop(self, pod: dict, req: dict[str, int], wanted: list[tuple[str, int]],
                         nz: dict[str, int]) -> list[tuple[dict, int, int]]:
        """(node, LeastAllocated, BalancedAllocation) of every feasible node in name order, one
        node at a time (used when numbers are too large for NodeTable's exact arrays)."""
        out = []
        balanced = not rules.is_best_effort_request(req)   # once per pod, not per node
        for node in sorted(self.nodes.values(), key=lambda n: n["metadata"]["name"]):
            if self.filter_node(pod, req, node, wanted):
                continue
            name, alloc, _, _ = self.node_info(node)
            used_nz, used = self.nonzero.get(name, _EMPTY), self.requested.get(name, _EMPTY)
            out.append((node, *rules.node_scores(used_nz.get("cpu", 0) + nz.get("cpu", 0),
                                                 used_nz.get("memory", 0) + nz.get("memory", 0),
                                                 alloc.get("cpu", 0), alloc.get("memory", 0),
                                                 used.get("cpu", 0) + req.get("cpu", 0),
                                                 used.get("memory", 0) + req.get("memory", 0),
                                                 balanced=balanced)))
        return out

    def node_table(self) -> NodeTable | None:
        """The array view of every node (rebuilt after a node changes); None if some number is
        too large to hold exactly."""
        if self._table is None:
            nodes = sorted(self.nodes.values(), key=lambda n: n["metadata"]["name"])
            self._table = NodeTable(nodes, [self.node_info(n) for n in nodes], self)
        return self._table if self._table.exact else None

    def sync(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            return
        name = pod["metadata"]["name"]
        req, nz = self.pod_requests(pod)
        wanted = sorted((r, v) for r, v in req.items() if v > 0)
        table = self.node_table()
        if table is not None and all(v < EXACT for _, v in wanted):
            candidates, feasible = table.candidates(self, pod, req, wanted, nz)
        else:
            candidates = self._candidates_loop(pod, req, wanted, nz)
            feasible = len(candidates)
        n_nodes = len(self.nodes.cache)
        if not feasible:
            histogram: dict[str, int] = {}
            for node in self.nodes.values():
                for r in self.filter_node(pod, req, node, wanted):
                    histogram[r] = histogram.get(r, 0) + 1
            return self._unschedulable(pod, key, histogram, n_nodes)
        # selectHost: the highest score; ties broken uniformly at random, one draw per tie in
        # node order (reservoir sampling), so the draws replay exactly for a seed
        # The draw is uniform on [0, ties) by rejection sampling on getrandbits(bit_length), the
        # algorithm random.randrange uses, written out: it is the inner loop of scheduling.
        getrandbits = self.ctx.rng.getrandbits
        best, best_score, ties, best_parts = None, -1, 0, (0, 0)
        for node, least, balanced in candidates:
            score = least + balanced
            if score > best_score:
                best, best_score, ties, best_parts = node, score, 1, (least, balanced)
            elif score == best_score:
                ties += 1
                bits = ties.bit_length()
                draw = getrandbits(bits)
                while draw >= ties:
                    draw = getrandbits(bits)
                if draw == 0:
                    best, best_parts = node, (least, balanced)
        node_name = best["metadata"]["name"]

        def bind(o: dict) -> dict:
            status = {k: v for k, v in o["status"].items() if k not in ("reason", "message")}
            status["conditions"] = [c for c in o["status"].get("conditions") or [] if c["type"] != "PodScheduled"] + [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.now}]
            return {"spec": {**o["spec"], "nodeName": node_name}, "status": status}
        self.ctx.store.write_parts("Pod", key, bind)
        self.attempts.pop(key, None)
        self.ctx.recorder.emit(pod, "Normal", "Scheduled",
                               f"Successfully assigned {pod['metadata'].get('namespace', 'default')}/{name} to {node_name}",
                               self.name)
        self.decide(f"Pod {name}", f"{feasible}/{n_nodes} nodes fit "
                    f"(cpu {format_cpu(req.get('cpu', 0))}, memory {format_bytes(req.get('memory', 0))})",
                    "a node", f"best score {best_score} = LeastAllocated {best_parts[0]} + "
                    + ("Balanced skipped (requests nothing)" if rules.is_best_effort_request(req) else f"Balanced {best_parts[1]}"),
                    f"bind to {node_name}")

    def _unschedulable(self, pod: dict, key: str, histogram: dict[str, int], n_nodes: int) -> None:
        parts = ", ".join(f"{n} {r}" for r, n in sorted(histogram.items()))
        message = f"0/{n_nodes} nodes are available: {parts}." if n_nodes else "no nodes available to schedule pods"

        def mark(o: dict) -> None:
            o["status"]["phase"] = "Pending"
            o["status"]["conditions"] = [c for c in o["status"].get("conditions") or [] if c["type"] != "PodScheduled"] + [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                 "lastTransitionTime": self.now}]
        self.unschedulable.add(key)      # before the write, so our own update does not re-queue it
        current = rules.condition(pod, "PodScheduled")
        if not current or current.get("message") != message:
            self.ctx.store.mutate("Pod", key, mark)
        self.ctx.recorder.emit(pod, "Warning", "FailedScheduling", message, self.name)
        n = self.attempts.get(key, 0)
        self.attempts[key] = n + 1
        backoff = min(INITIAL_BACKOFF * 2**n, MAX_BACKOFF)
        self.queue.add_after(key, backoff, self.now)
        self.decide(f"Pod {pod['metadata']['name']}", message, "a node", "no node passes the filters",
                    f"stay Pending, retry in {backoff:g} s")
