"""Per-node kubelets and the node lifecycle controller: where requests meet real usage.

Kubelet (pkg/kubelet): starts a bound pod's containers after the image's start-up time, marks it
Ready (after the readiness probe's initialDelaySeconds), restarts an exited container at once the
first time, then after 10 s, 20 s, 40 s … capped at 300 s (CrashLoopBackOff; kuberuntime_manager.go
doBackOff finds no back-off entry before the first restart, then backOff.Next starts one at 10 s),
OOM-kills a container whose working set passes its memory limit (reason OOMKilled, exit 137: a
container restart, not an eviction), throttles CPU above the limit (CFS quota: never killed), and
every 10 s checks memory.available against the 100Mi hard threshold, evicting one pod at a time
by rankMemoryPressure (pkg/kubelet/eviction). If the node runs out of memory before that, the
kernel OOM killer picks the process with the highest oom_score (usage share + oom_score_adj).

Node lifecycle controller (pkg/controller/nodelifecycle): a node whose kubelet has not renewed its
heartbeat for 40 s (--node-monitor-grace-period) becomes Ready=Unknown and is tainted
node.kubernetes.io/unreachable (NoSchedule, NoExecute); its pods become not Ready and are deleted
once their toleration (300 s, added by the DefaultTolerationSeconds admission plugin) runs out.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.network import HostLocal
from engines.k8s.quantity import format_bytes
from engines.k8s.store import obj_key

HARD_EVICTION_BYTES = 100 * 2**20     # memory.available<100Mi
EVICTION_INTERVAL = 10.0              # --housekeeping / eviction monitoring interval
PRESSURE_TRANSITION = 300.0           # --eviction-pressure-transition-period 5m
HEARTBEAT = 10.0                      # node lease renew / status update frequency
BACKOFF_INITIAL, BACKOFF_MAX = 10.0, 300.0   # kubelet container restart back-off
BACKOFF_RESET = 600.0                 # a container that ran 10 min resets its back-off
MONITOR_PERIOD, GRACE_PERIOD = 5.0, 40.0     # node lifecycle controller
DEFAULT_TOLERATION_SECONDS = 300
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
PERIOD_S = 0.1                        # CFS period 100 ms


@dataclass
class ContainerRuntime:
    """What the container runtime knows about one container (not in the API until reported)."""

    name: str
    image: str
    memory_limit: int | None
    cpu_limit: int | None
    memory_request: int
    state: str = "waiting"
    reason: str = "ContainerCreating"
    start_at: float = 0.0
    started_at: float | None = None
    ready_at: float | None = None
    exit_at: float | None = None
    exit_code: int = 0
    exit_reason: str = "Error"
    restart_count: int = 0
    backoff: float = 0.0                 # the back-off entry: the wait before the *next* restart (0: none yet)
    delay: float = 0.0                   # the back-off being waited out now (0: restarting at once)
    last_state: dict | None = None
    memory: int = 0
    cpu: int = 0
    nr_periods: int = 0
    nr_throttled: int = 0
    ready_delay: float = 0.0
    ready: bool = False


@dataclass
class PodRuntime:
    key: str
    uid: str
    ip: str
    containers: list[ContainerRuntime]
    restart_policy: str = "Always"
    stop_at: float | None = None
    finished: str | None = None          # "Succeeded" | "Failed" once terminal
    evicted: str | None = None
    dirty: bool = True
    qos: str = "BestEffort"             # status.qosClass (resources are immutable, so computed at admission)
    quiet_obj: dict | None = None        # the pod object seen when every container went steady
    quiet_mark: int = 0                  # the kubelet's CFS period count at that moment
    quiet_memory: int = 0                # its containers' working sets, fixed while quiet


class Kubelet:
    """One node agent."""

    def __init__(self, ctx: Context, node_name: str, index: int, ipam: HostLocal | None = None) -> None:
        self.ctx = ctx
        self.ipam = ipam or HostLocal(ipaddress.ip_network(f"10.244.{index}.0/24"))
        self.node = node_name
        self.index = index
        self.running = True
        self.last_heartbeat = ctx.clock.now
        self.pods: dict[str, PodRuntime] = {}
        self.system_memory = 0            # "fill a node's memory" fault: non-pod usage
        self.next_eviction_check = ctx.clock.now
        self.pressure_since: float | None = None
        self.pressure_clear_at: float | None = None
        self.periods_total = 0            # CFS periods this kubelet has run (lazy counters of quiet pods)
        self.quiet_memory = 0             # Σ working sets of quiet pods
        self._capacity: tuple[dict | None, int] = (None, 0)

    @property
    def now(self) -> float:
        return self.ctx.clock.now

    def node_obj(self) -> dict | None:
        return self.ctx.store.get("Node", self.node)

    def capacity_memory(self) -> int:
        """status.capacity.memory, else allocatable + the 100Mi hard threshold (allocatable =
        capacity − reserved − eviction threshold: docs 'Reserve Compute Resources')."""
        node = self.node_obj() or {}
        if self._capacity[0] is node:      # parsed once per node version (checked every tick)
            return self._capacity[1]
        status = node.get("status") or {}
        if (status.get("capacity") or {}).get("memory") is not None:
            capacity = rules.quantity_bytes(status["capacity"]["memory"], "status.capacity.memory")
        else:
            capacity = rules.parse_allocatable(status).get("memory", 0) + HARD_EVICTION_BYTES
        self._capacity = (node, capacity)
        return capacity

    # --- pods arriving and leaving ----------------------------------------------------------
    def admit(self, pod: dict) -> None:
        key = obj_key(pod)
        if key in self.pods:
            return
        containers = []
        for c in pod["spec"].get("containers") or []:
            req, lim = rules.container_resources(c)
            behavior = self.ctx.image(c.get("image", ""))
            probe = c.get("readinessProbe") or {}
            cr = ContainerRuntime(name=c.get("name", "main"), image=c.get("image", ""), memory_limit=lim.get("memory"),
                                  cpu_limit=lim.get("cpu"), memory_request=req.get("memory", 0))
            cr.start_at = self.now + behavior.startup_seconds
            cr.memory = behavior.memory_bytes if behavior.memory_bytes is not None else (req.get("memory") or 64 * 2**20)
            cr.cpu = behavior.cpu_millis if behavior.cpu_millis is not None else (req.get("cpu") or 50)
            cr.ready_delay = float(probe.get("initialDelaySeconds", 0)) + behavior.ready_after
            containers.append(cr)
        hint = self.ctx.ip_hints.pop(key, None)
        ip = hint if hint and self.ipam.take(hint) else self.ipam.get()
        runtime = PodRuntime(key=key, uid=pod["metadata"]["uid"], ip=ip,
                             containers=containers, restart_policy=pod["spec"].get("restartPolicy", "Always"),
                             qos=rules.qos_class(pod))
        self.pods[key] = runtime

    def forget(self, key: str) -> None:
        rt = self.pods.pop(key, None)
        if rt is not None:
            self.wake(rt)
            self.ipam.release(rt.ip)

    # --- quiet pods: steady containers are not stepped every tick ------------------------------
    @staticmethod
    def steady(c: ContainerRuntime) -> bool:
        """A tick changes nothing about this container but its CFS counters: running, Ready, no
        exit pending, within its memory limit, back-off already reset."""
        return (c.state == "running" and c.ready and c.exit_at is None and not c.backoff
                and (c.memory_limit is None or c.memory <= c.memory_limit))

    def settle(self, rt: PodRuntime) -> None:
        """Bring a quiet pod's CFS counters up to date (periods run since it went quiet)."""
        if rt.quiet_obj is not None:
            n = self.periods_total - rt.quiet_mark
            rt.quiet_mark = self.periods_total
            for c in rt.containers:
                c.nr_periods += n
                if c.cpu_limit is not None and c.cpu > c.cpu_limit:
                    c.nr_throttled += n

    def wake(self, rt: PodRuntime) -> None:
        """Something outside the tick is about to change the pod's containers: step it again."""
        if rt.quiet_obj is not None:
            self.settle(rt)
            self.quiet_memory -= rt.quiet_memory
            rt.quiet_obj = None

    def spec_changed(self, old: dict, new: dict) -> None:
        """A hand-edited image: the kubelet kills the container and starts the new image
        (container hash changed), restartCount + 1. Nothing reverts the edit."""
        rt = self.pods.get(obj_key(new))
        if rt is None:
            return
        images = {c["name"]: c.get("image", "") for c in new["spec"].get("containers") or []}
        for c in rt.containers:
            image = images.get(c.name, c.image)
            if image != c.image:
                self.wake(rt)
                c.image = image
                behavior = self.ctx.image(image)
                if c.state == "running":
                    c.state, c.reason, c.ready, c.exit_code = "terminated", "Completed", False, 0
                    c.last_state = {"terminated": {"reason": "Completed", "exitCode": 0, "startedAt": c.started_at,
                                                   "finishedAt": self.now}}
                    c.backoff = 0.0
                c.start_at = self.now + behavior.startup_seconds
                if behavior.memory_bytes is not None:
                    c.memory = behavior.memory_bytes
                rt.dirty = True
                self.ctx.recorder.emit(new, "Normal", "Killing",
                                       f"Container {c.name} definition changed, will be restarted", f"kubelet/{self.node}")

    # --- the per-tick sync loop -------------------------------------------------------------
    def tick(self, dt: float) -> None:
        if not self.running:
            return
        self.last_heartbeat = self.now
        stored = self.ctx.store.objects["Pod"]
        periods = round(dt / PERIOD_S)
        for key, rt in list(self.pods.items()):
            pod = stored.get(key)
            if rt.quiet_obj is not None:
                if pod is rt.quiet_obj:
                    continue          # unchanged object, steady containers: counters advance lazily
                self.wake(rt)
            if pod is None or pod["metadata"]["uid"] != rt.uid:
                self.forget(key)
                continue
            if pod["metadata"].get("deletionTimestamp"):
                self._terminate(pod, rt)
                continue
            if rt.finished:
                continue
            for c in rt.containers:
                if c.state == "running" and c.ready and c.exit_at is None and not c.backoff \
                        and (c.memory_limit is None or c.memory <= c.memory_limit):
                    # steady state (most containers, most ticks): only the CFS counters move;
                    # exactly what _step_container would do, without its checks
                    c.nr_periods += periods
                    if c.cpu_limit is not None and c.cpu > c.cpu_limit:
                        c.nr_throttled += periods
                else:
                    self._step_container(pod, rt, c, dt)
            if rt.dirty:
                self._write_status(pod, rt)
            if not rt.dirty and all(self.steady(c) for c in rt.containers):
                rt.quiet_obj, rt.quiet_mark = stored.get(key), self.periods_total + periods
                rt.quiet_memory = sum(c.memory for c in rt.containers)
                self.quiet_memory += rt.quiet_memory
        self.periods_total += periods
        if self.now >= self.next_eviction_check:
            self.next_eviction_check = self.now + EVICTION_INTERVAL
            self._check_memory()
        self._kernel_oom()

    def _step_container(self, pod: dict, rt: PodRuntime, c: ContainerRuntime, dt: float) -> None:
        now = self.now
        if c.state in ("waiting", "terminated") and now >= c.start_at and self._may_start(rt, c):
            if c.state == "terminated":
                c.restart_count += 1
            behavior = self.ctx.image(c.image)
            c.state, c.reason, c.started_at = "running", "", now
            c.ready_at = now + c.ready_delay
            c.exit_at = now + behavior.exit_after if behavior.exit_after is not None else None
            c.exit_code, c.exit_reason = behavior.exit_code, "Error" if behavior.exit_code else "Completed"
            if c.memory_limit is not None and c.memory > c.memory_limit:
                oom_at = now + 1.0
                if c.exit_at is None or oom_at < c.exit_at:
                    c.exit_at, c.exit_code, c.exit_reason = oom_at, 137, "OOMKilled"
            rt.dirty = True
            self.ctx.recorder.emit(pod, "Normal", "Started", f"Started container {c.name}", f"kubelet/{self.node}")
        if c.state == "running":
            c.nr_periods += round(dt / PERIOD_S)
            if c.cpu_limit is not None and c.cpu > c.cpu_limit:
                c.nr_throttled += round(dt / PERIOD_S)
            if c.memory_limit is not None and c.memory > c.memory_limit and (c.exit_at is None or c.exit_at > now):
                c.exit_at, c.exit_code, c.exit_reason = now, 137, "OOMKilled"
            if c.ready_at is not None and now >= c.ready_at and not c.ready:
                c.ready = True
                rt.dirty = True
            if c.exit_at is not None and now >= c.exit_at:
                self._container_exited(pod, rt, c)
            elif c.started_at is not None and now - c.started_at >= BACKOFF_RESET:
                c.backoff = 0.0

    def _may_start(self, rt: PodRuntime, c: ContainerRuntime) -> bool:
        if c.state != "terminated":
            return True
        return rt.restart_policy == "Always" or (rt.restart_policy == "OnFailure" and c.exit_code != 0)

    def _container_exited(self, pod: dict, rt: PodRuntime, c: ContainerRuntime, reason: str | None = None) -> None:
        c.state = "terminated"
        c.ready = False
        c.last_state = {"terminated": {"reason": reason or c.exit_reason, "exitCode": c.exit_code,
                                       "startedAt": c.started_at, "finishedAt": self.now}}
        c.reason = reason or c.exit_reason
        c.exit_at = None
        rt.dirty = True
        if reason == "OOMKilled" or c.exit_reason == "OOMKilled":
            self.ctx.recorder.emit(pod, "Warning", "OOMKilled",
                                   f"Container {c.name} exceeded its memory limit ({format_bytes(c.memory_limit or 0)}) "
                                   f"using {format_bytes(c.memory)}: killed by the kernel (exit 137)", f"kubelet/{self.node}")
        if self._may_start(rt, c):
            # doBackOff: wait out the current entry (none before the first restart), then
            # backOff.Next: 10 s initially, doubling to the 300 s cap
            c.delay = c.backoff
            c.start_at = self.now + c.delay
            c.backoff = BACKOFF_INITIAL if c.backoff == 0 else min(c.backoff * 2, BACKOFF_MAX)
            if c.delay:
                self.ctx.recorder.emit(pod, "Warning", "BackOff",
                                       f"Back-off restarting failed container {c.name} in pod {pod['metadata']['name']}",
                                       f"kubelet/{self.node}")
        elif all(x.state == "terminated" for x in rt.containers):
            rt.finished = "Succeeded" if all(x.exit_code == 0 for x in rt.containers) else "Failed"

    def _terminate(self, pod: dict, rt: PodRuntime) -> None:
        """Graceful termination: SIGTERM, containers stop within min(grace, 1 s), then the kubelet
        deletes the pod object with grace 0."""
        if rt.stop_at is None:
            grace = float(pod["metadata"].get("deletionGracePeriodSeconds", 30))
            rt.stop_at = self.now + min(grace, 1.0)
            for c in rt.containers:
                if c.state == "running":
                    self.ctx.recorder.emit(pod, "Normal", "Killing", f"Stopping container {c.name}", f"kubelet/{self.node}")
        if self.now >= rt.stop_at:
            self.forget(rt.key)
            self.ctx.store.remove("Pod", rt.key)

    # --- status -----------------------------------------------------------------------------
    def _write_status(self, pod: dict, rt: PodRuntime) -> None:
        rt.dirty = False
        status = self.pod_status(pod, rt)
        if status != pod.get("status"):
            self.ctx.store.write_status("Pod", rt.key, status)

    def pod_status(self, pod: dict, rt: PodRuntime) -> dict:
        """The PodStatus the kubelet reports (kubelet_pods.go generateAPIPodStatus, simplified)."""
        old = pod.get("status") or {}
        statuses = []
        for c in rt.containers:
            if c.state == "running":
                state = {"running": {"startedAt": c.started_at}}
            elif c.state == "terminated" and (not self._may_start(rt, c) or not c.delay):
                # not restarted, or restarting at once: no back-off reason cached, the exited state
                # stays (convertToAPIContainerStatuses)
                state = c.last_state or {"terminated": {"reason": c.reason, "exitCode": c.exit_code}}
            elif c.state == "terminated":
                state = {"waiting": {"reason": "CrashLoopBackOff",
                                     "message": f"back-off {c.delay:g}s restarting failed container={c.name} "
                                                f"pod={pod['metadata']['name']}"}}
            else:
                state = {"waiting": {"reason": c.reason or "ContainerCreating"}}
            entry = {"name": c.name, "image": c.image, "ready": c.ready,
                     "started": c.state == "running", "restartCount": c.restart_count, "state": state}
            if c.last_state:
                entry["lastState"] = c.last_state
            statuses.append(entry)
        ready = bool(statuses) and all(s["ready"] for s in statuses)
        if rt.finished:
            phase = rt.finished
        elif any(c.started_at is not None for c in rt.containers):
            phase = "Running"
        else:
            phase = "Pending"
        conditions = []
        for ctype in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
            prev = rules.condition(pod, ctype)
            if ctype == "PodScheduled":
                conditions.append(prev or {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.now})
                continue
            value = "True" if (ctype == "Initialized" or ready) else "False"
            since = prev["lastTransitionTime"] if prev and prev.get("status") == value else self.now
            conditions.append({"type": ctype, "status": value, "lastTransitionTime": since})
        status = {"phase": phase, "conditions": conditions, "hostIP": f"192.168.0.{self.index + 10}",
                  "podIP": rt.ip, "startTime": old.get("startTime", self.now), "qosClass": rt.qos,
                  "containerStatuses": statuses}
        if rt.evicted:
            status.update(reason="Evicted", message=rt.evicted)
        return status

    # --- memory: eviction and kernel OOM -------------------------------------------------------
    def usage(self, key: str) -> int | None:
        rt = self.pods.get(key)
        if rt is None or rt.finished or not any(c.state == "running" for c in rt.containers):
            return None
        return sum(c.memory for c in rt.containers if c.state == "running")

    def memory_used(self) -> int:
        """Non-pod usage + Σ working sets of running containers (= Σ ``usage`` over pods);
        quiet pods are summed once, when they go quiet."""
        return self.system_memory + self.quiet_memory + sum(
            c.memory for rt in self.pods.values() if rt.quiet_obj is None and not rt.finished
            for c in rt.containers if c.state == "running")

    def _check_memory(self) -> None:
        """eviction_manager.go synchronize: one hard-threshold eviction per interval."""
        available = self.capacity_memory() - self.memory_used()
        under = available < HARD_EVICTION_BYTES
        if under:
            self.pressure_clear_at = None
            if self.pressure_since is None:
                self.pressure_since = self.now
                self._set_pressure(True)
            self._evict_one(available)
        elif self.pressure_since is not None:
            if self.pressure_clear_at is None:
                self.pressure_clear_at = self.now + PRESSURE_TRANSITION
            elif self.now >= self.pressure_clear_at:
                self.pressure_since = self.pressure_clear_at = None
                self._set_pressure(False)

    def _set_pressure(self, on: bool) -> None:
        def change(o: dict) -> None:
            conds = [c for c in o["status"].get("conditions") or [] if c["type"] != "MemoryPressure"]
            conds.append({"type": "MemoryPressure", "status": "True" if on else "False", "lastTransitionTime": self.now,
                          "reason": "KubeletHasInsufficientMemory" if on else "KubeletHasSufficientMemory"})
            o["status"]["conditions"] = conds
            taints = [t for t in o.setdefault("spec", {}).get("taints") or [] if t["key"] != MEMORY_PRESSURE]
            if on:
                taints.append({"key": MEMORY_PRESSURE, "effect": "NoSchedule", "timeAdded": self.now})
            o["spec"]["taints"] = taints
        self.ctx.store.mutate("Node", self.node, change)
        node = self.node_obj()
        if node is not None:
            self.ctx.recorder.emit(node, "Normal" if not on else "Warning",
                                   "NodeHasInsufficientMemory" if on else "NodeHasSufficientMemory",
                                   f"Node {self.node} status is now: {'NodeHasInsufficientMemory' if on else 'NodeHasSufficientMemory'}",
                                   f"kubelet/{self.node}")

    def ranked_for_eviction(self) -> list[tuple[dict, int | None]]:
        """Active pods on this node in rankMemoryPressure order (first = evicted first)."""
        out = []
        for key, rt in self.pods.items():
            pod = self.ctx.store.get("Pod", key)
            if pod is None or rt.finished or pod["metadata"].get("deletionTimestamp"):
                continue
            out.append((pod, self.usage(key)))
        out.sort(key=lambda pu: (rules.eviction_sort_key(pu[0], pu[1]), pu[0]["metadata"]["name"]))
        return out

    def _evict_one(self, available: int) -> None:
        """The first pod in the ranking that is not critical (eviction_manager.go: evictPod refuses a
        critical pod and the loop tries the next); with none, nothing is evicted this interval."""
        ranked = [(pod, used) for pod, used in self.ranked_for_eviction() if not rules.is_critical(pod)]
        if not ranked:
            return
        pod, used = ranked[0]
        rt = self.pods[obj_key(pod)]
        self.wake(rt)
        request = rules.pod_requests(pod).get("memory", 0)
        big = max(rt.containers, key=lambda c: c.memory if c.state == "running" else -1)
        message = (f"The node was low on resource: memory. Threshold quantity: {format_bytes(HARD_EVICTION_BYTES)}, "
                   f"available: {format_bytes(max(available, 0))}. Container {big.name} was using "
                   f"{format_bytes(used or 0)}, request is {format_bytes(request)}, has larger consumption of memory.")
        for c in rt.containers:
            if c.state == "running":
                c.state, c.exit_code, c.reason = "terminated", 137, "Evicted"
                c.ready = False
                c.last_state = {"terminated": {"reason": "Error", "exitCode": 137, "startedAt": c.started_at,
                                               "finishedAt": self.now}}
        rt.finished, rt.evicted, rt.dirty = "Failed", message, True
        self.ctx.recorder.emit(pod, "Warning", "Evicted", message, f"kubelet/{self.node}")
        self._write_status(pod, rt)

    def _kernel_oom(self) -> None:
        """Out of memory before the kubelet reacted: the kernel kills the highest oom_score
        (≈ 1000·usage/capacity + oom_score_adj, mm/oom_kill.c oom_badness)."""
        capacity = self.capacity_memory()
        if capacity <= 0 or self.memory_used() <= capacity:
            return
        best, best_score = None, None
        for key, rt in self.pods.items():
            pod = self.ctx.store.get("Pod", key)
            if pod is None:
                continue
            for c in rt.containers:
                if c.state != "running":
                    continue
                score = 1000 * c.memory // capacity + rules.oom_score_adj(pod, capacity, c.name)
                if best_score is None or score > best_score:
                    best, best_score = (pod, rt, c), score
        if best is not None:
            pod, rt, c = best
            self.wake(rt)
            c.exit_code = 137
            self._container_exited(pod, rt, c, reason="OOMKilled")
            self._write_status(pod, rt)

    # --- faults ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """The machine goes away: containers die, nothing is reported any more."""
        self.running = False
        for rt in self.pods.values():
            self.wake(rt)
            for c in rt.containers:
                if c.state == "running":
                    c.state, c.reason, c.exit_code = "terminated", "Error", 255
                    c.ready = False
                    c.start_at = 0.0

    def start(self) -> None:
        """The node comes back: containers restart (restartCount + 1) and status is re-posted."""
        self.running = True
        self.last_heartbeat = self.now
        for rt in self.pods.values():
            self.wake(rt)
            rt.dirty = True
            for c in rt.containers:
                if c.state == "terminated" and c.reason != "Evicted":
                    c.start_at = self.now + 1.0


class NodeLifecycleController(Controller):
    """Marks silent nodes Unknown, taints them, and evicts pods whose NoExecute toleration ran out."""

    name = "node-lifecycle-controller"
    kind = "Node"

    def __init__(self, ctx: Context, kubelets: dict[str, Kubelet]) -> None:
        super().__init__(ctx)
        self.kubelets = kubelets
        self.next_check = 0.0

    def sync(self, key: str) -> None:  # driven by tick
        return

    def tick(self) -> None:
        if self.now < self.next_check:
            return
        self.next_check = self.now + MONITOR_PERIOD
        for name, kubelet in sorted(self.kubelets.items()):
            node = self.ctx.store.get("Node", name)
            if node is None:
                continue
            ready = rules.condition(node, "Ready")
            silent = self.now - kubelet.last_heartbeat > GRACE_PERIOD
            if silent and (ready is None or ready.get("status") == "True"):
                self._mark_unknown(node)
            elif not silent and (ready is None or ready.get("status") != "True"):
                self._mark_ready(node)
            self._evict_untolerated(self.ctx.store.get("Node", name))

    def _mark_unknown(self, node: dict) -> None:
        name = node["metadata"]["name"]

        def change(o: dict) -> None:
            conds = [c for c in o["status"].get("conditions") or [] if c["type"] != "Ready"]
            conds.append({"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                          "message": "Kubelet stopped posting node status.", "lastTransitionTime": self.now})
            o["status"]["conditions"] = conds
            taints = [t for t in o.setdefault("spec", {}).get("taints") or [] if t["key"] != UNREACHABLE]
            taints += [{"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": self.now},
                       {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": self.now}]
            o["spec"]["taints"] = taints
        self.ctx.store.mutate("Node", name, change)
        self.ctx.recorder.emit(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady", self.name)
        self.decide(f"Node {name}", f"no heartbeat for > {GRACE_PERIOD:g} s", "Ready",
                    "node-monitor-grace-period passed", "Ready=Unknown, taint unreachable, mark its pods not Ready")
        for pod in self.ctx.informers["Pod"].by_index("node", name):
            if rules.is_pod_ready(pod):
                def unready(o: dict) -> None:
                    o["status"]["conditions"] = [
                        {**c, "status": "False", "lastTransitionTime": self.now} if c["type"] in ("Ready", "ContainersReady") else c
                        for c in o["status"].get("conditions") or []]
                self.ctx.store.mutate("Pod", obj_key(pod), unready)

    def _mark_ready(self, node: dict) -> None:
        name = node["metadata"]["name"]

        def change(o: dict) -> None:
            conds = [c for c in o["status"].get("conditions") or [] if c["type"] != "Ready"]
            conds.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                          "message": "kubelet is posting ready status", "lastTransitionTime": self.now})
            o["status"]["conditions"] = conds
            o.setdefault("spec", {})["taints"] = [t for t in o["spec"].get("taints") or []
                                                  if t["key"] not in (UNREACHABLE, NOT_READY)]
        self.ctx.store.mutate("Node", name, change)
        self.ctx.recorder.emit(node, "Normal", "NodeReady", f"Node {name} status is now: NodeReady", self.name)

    def _evict_untolerated(self, node: dict | None) -> None:
        """taint_eviction.go: delete pods on a NoExecute-tainted node once their toleration ends."""
        if node is None:
            return
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]
        if not taints:
            return
        for pod in list(self.ctx.informers["Pod"].by_index("node", node["metadata"]["name"])):
            if pod["metadata"].get("deletionTimestamp"):
                continue
            deadline = 0.0
            for taint in taints:
                tol = next((t for t in pod["spec"].get("tolerations") or []
                            if t.get("key") == taint["key"] and t.get("effect") in (None, "NoExecute")), None)
                if tol is None:
                    deadline = max(deadline, taint.get("timeAdded", 0.0))
                elif tol.get("tolerationSeconds") is not None:
                    deadline = max(deadline, taint.get("timeAdded", 0.0) + float(tol["tolerationSeconds"]))
                else:
                    deadline = float("inf")
            if self.now >= deadline:
                self.ctx.recorder.emit(pod, "Normal", "TaintManagerEviction",
                                       f"Marking for deletion Pod {obj_key(pod)}", self.name)
                self.decide(f"Pod {pod['metadata']['name']}", f"on {node['metadata']['name']} (NoExecute taint)",
                            "tolerated ≤ 300 s", "toleration expired", "delete pod (it stays Terminating while the node is away)")
                self.ctx.store.request_delete("Pod", obj_key(pod))


def default_tolerations(pod: dict) -> None:
    """plugin/pkg/admission/defaulttolerationseconds: tolerate not-ready/unreachable for 300 s."""
    tolerations = pod["spec"].setdefault("tolerations", [])
    for key in (NOT_READY, UNREACHABLE):
        if not any(t.get("key") == key and t.get("effect") in (None, "NoExecute") for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
