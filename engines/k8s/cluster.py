"""The ``Cluster`` facade: apply/patch/delete objects, run the clock, read state, inject faults.

Every controller runs each simulated tick (1 s by default): kubelets first (containers start,
crash, get OOM-killed, evicted), then the node lifecycle controller, then the queue-driven
controllers drain their work queues until the cluster is quiet. Informers relist and resync every
``resync_seconds`` (30 s here; upstream resync periods are minutes to hours, shortened so lectures
see the repair). Everything is deterministic for a seed.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING

from engines.core.errors import ValidationError, require_int, require_number
from engines.k8s import manifests, rules
from engines.k8s.base import Context, ImageBehavior
from engines.k8s.deployment import DeploymentController, fenceposts
from engines.k8s.endpointslice import EndpointSliceController
from engines.k8s.hpa import HpaController, check_traffic
from engines.k8s.kubelet import Kubelet, NodeLifecycleController, default_tolerations
from engines.k8s.network import HostLocal, NodeIpam, ServiceIps
from engines.k8s.quantity import to_int
from engines.k8s.quota import QuotaController
from engines.k8s.replicaset import EdgeTriggeredReplicaSetController, ReplicaSetController
from engines.k8s.scheduler import Scheduler
from engines.k8s.store import (KINDS, NAMESPACED, ApiError, Clock, DropRule, Informer, Recorder, Store, clone,
                               controller_ref, index_by_label, index_by_node, index_by_owner, normalize_kind,
                               obj_key)

if TYPE_CHECKING:
    from engines.k8s.kubectl import CommandResult

MAX_ROUNDS = 20


def merge_patch(target: object, patch: object) -> object:
    """RFC 7386 JSON merge patch: maps merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return clone(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# This simulator's limit on pod objects in one cluster (not an API rule: every pod is simulated, each
# costs CPU every tick). Twice manifests.SIM_MAX_REPLICAS, so one Deployment at the replicas limit
# can still roll out with a 100 % surge.
SIM_MAX_PODS = 20_000
MAX_IMAGE_SECONDS = 10**9   # set_image times: ~30 simulated years, far past any run
# set_image's arguments: (check, may be None); ImageBehavior documents what each means
_IMAGE_FIELDS = {"startup_seconds": ("seconds", False), "ready_after": ("seconds", False),
                 "exit_after": ("seconds", True), "exit_code": ("exit_code", False),
                 "memory_bytes": ("amount", True), "cpu_millis": ("amount", True)}


class Cluster:
    """A simulated cluster with the upstream controllers. ``reconcile="edge"`` swaps the
    ReplicaSet controller for the edge-triggered strawman."""

    def __init__(self, seed: int = 0, *, reconcile: str = "level", tick: float = 1.0,
                 resync_seconds: float = 30.0, record_noops: bool = True) -> None:
        if reconcile not in ("level", "edge"):
            raise ValidationError("reconcile", f"{reconcile!r} is not a mode", "'level', 'edge'")
        if not isinstance(tick, (int, float)) or not 0 < tick <= 10:
            raise ValidationError("tick", f"{tick!r} is out of range", "0 < tick ≤ 10 seconds")
        self.seed, self.reconcile, self.tick = seed, reconcile, float(tick)
        self.clock = Clock()
        try:
            rng = random.Random(seed)
        except TypeError:
            raise ValidationError("seed", f"{seed!r} is not a seed", "an integer") from None
        self.store = Store(self.clock, rng)
        self.recorder = Recorder(self.clock)
        self.ctx = Context(clock=self.clock, store=self.store, recorder=self.recorder, rng=rng,
                           record_noops=record_noops, resync_seconds=resync_seconds)
        inf = self.ctx.informers
        inf["Pod"] = Informer(self.store, "Pod", {"owner": index_by_owner, "node": index_by_node, "label": index_by_label})
        inf["ReplicaSet"] = Informer(self.store, "ReplicaSet", {"owner": index_by_owner, "label": index_by_label})
        inf["Deployment"] = Informer(self.store, "Deployment", {"label": index_by_label})
        inf["Service"] = Informer(self.store, "Service")
        inf["EndpointSlice"] = Informer(self.store, "EndpointSlice", {"owner": index_by_owner})
        inf["Node"] = Informer(self.store, "Node")
        inf["ResourceQuota"] = Informer(self.store, "ResourceQuota")
        inf["HorizontalPodAutoscaler"] = Informer(self.store, "HorizontalPodAutoscaler")
        self.store.admission.append(self._pod_limit_admission)
        self.store.admission.append(self._mutating_admission)
        self.ipam = NodeIpam()
        self.service_ips = ServiceIps(seed if isinstance(seed, int) else 0)
        self.kubelets: dict[str, Kubelet] = {}
        self.deployments = DeploymentController(self.ctx)
        self.replicasets = (ReplicaSetController if reconcile == "level" else EdgeTriggeredReplicaSetController)(self.ctx)
        self.scheduler = Scheduler(self.ctx)
        self.endpoints = EndpointSliceController(self.ctx)
        self.quota = QuotaController(self.ctx)
        self.node_lifecycle = NodeLifecycleController(self.ctx, self.kubelets)
        self.hpa = HpaController(self.ctx, self.kubelets)
        self.controllers = [self.hpa, self.deployments, self.replicasets, self.scheduler, self.endpoints, self.quota]
        inf["Node"].on_add.append(self._node_added)
        inf["Pod"].on_add.append(self._pod_to_kubelet)
        inf["Pod"].on_update.append(lambda old, new: self._pod_to_kubelet(new, old))
        self.store.on_removed.append(self._removed)
        self.warnings: list[str] = []
        self.next_resync = resync_seconds
        self.repairs = 0
        self._loading_dump = False
        self.commands: list = []          # CommandResults, in the order given
        self.dump = None                  # the engines.k8s.dump.Dump this cluster was loaded from

    @classmethod
    def from_dump(cls, path, seed: int = 0) -> "Cluster":
        """A cluster loaded from a ``kubectl get nodes,deployments,replicasets,pods,services -o yaml``
        (or json) dump (engines.k8s.dump): checked first, so a broken file raises ValidationError
        saying what is wrong and nothing is built; ``cluster.dump`` says what was loaded and skipped."""
        from engines.k8s.dump import load_dump, read_dump
        dump = read_dump(path)
        cluster = cls(seed=seed)
        load_dump(cluster, dump)
        cluster.dump = dump
        return cluster

    # --- wiring -----------------------------------------------------------------------------
    def _mutating_admission(self, obj: dict) -> None:
        if obj["kind"] == "Pod":
            default_tolerations(obj)
            obj.setdefault("status", {})["phase"] = obj.get("status", {}).get("phase", "Pending")
        elif obj["kind"] == "Service":
            # the Service registry allocates the ClusterIP on create (headless "None" gets none)
            spec = obj.setdefault("spec", {})
            if spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None":
                spec["clusterIP"] = self.service_ips.allocate(spec.get("clusterIP") or None,
                                                              check_range=not self._loading_dump)

    def _pod_limit_admission(self, obj: dict) -> None:
        """Refuse a pod past SIM_MAX_PODS like an admission plugin: a controller's create fails
        (FailedCreate event, ReplicaFailure) and it retries, as with an exhausted ResourceQuota."""
        if obj["kind"] == "Pod" and len(self.store.objects["Pod"]) >= SIM_MAX_PODS:
            name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
            raise ApiError("Forbidden", "pods", f'pods "{name}" is forbidden: this simulator runs at most '
                           f"{SIM_MAX_PODS:,} pods in a cluster (a simulator limit, not an API one)",
                           f"at most {SIM_MAX_PODS:,} pods")

    def _node_added(self, node: dict) -> None:
        name = node["metadata"]["name"]
        if name not in self.kubelets:
            cidr = (node.get("spec") or {}).get("podCIDR")
            net = self.ipam.occupy(name, cidr) if cidr else self.ipam.allocate(name)
            self.kubelets[name] = Kubelet(self.ctx, name, len(self.kubelets) + 1, HostLocal(net))
            if not cidr:
                self.store.mutate("Node", name, lambda o: o.setdefault("spec", {}).__setitem__("podCIDR", str(net)))

            def ready(o: dict) -> None:
                conds = [c for c in o["status"].get("conditions") or [] if c["type"] not in ("Ready", "MemoryPressure")]
                conds += [{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                           "lastTransitionTime": self.clock.now},
                          {"type": "Ready", "status": "True", "reason": "KubeletReady",
                           "message": "kubelet is posting ready status", "lastTransitionTime": self.clock.now}]
                o["status"]["conditions"] = conds
            self.store.mutate("Node", name, ready)

    def _pod_to_kubelet(self, pod: dict, old: dict | None = None) -> None:
        node = pod["spec"].get("nodeName")
        kubelet = self.kubelets.get(node) if node else None
        if kubelet is None:
            return
        key = obj_key(pod)
        if key not in kubelet.pods and rules.is_active(pod):
            kubelet.admit(pod)
        elif old is not None and key in kubelet.pods:
            kubelet.spec_changed(old, pod)

    def _removed(self, obj: dict) -> None:
        if obj["kind"] == "Service":
            self.service_ips.release((obj.get("spec") or {}).get("clusterIP"))
        if obj["kind"] == "Node":
            self.ipam.release(obj["metadata"]["name"])
            kubelet = self.kubelets.pop(obj["metadata"]["name"], None)
            if kubelet is not None:   # pod GC: pods bound to a node that no longer exists
                for key in list(kubelet.pods):
                    self.store.remove("Pod", key)

    # --- the public API -------------------------------------------------------------------------
    def apply(self, manifest: dict) -> dict:
        """Create or update one object (kubectl apply). Unsupported fields are reported in
        ``self.warnings`` (and dropped). Returns the stored object."""
        checked = manifests.validate(manifest)
        obj = checked.obj
        name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
        for note in checked.unsupported:
            self.warnings.append(f"{obj['kind']}/{name}: {note}")
        if obj["kind"] in NAMESPACED:
            obj["metadata"].setdefault("namespace", "default")
        existing = self.store.get(obj["kind"], obj_key(obj)) if obj["metadata"].get("name") else None
        if existing is None:
            if obj["kind"] == "Pod":
                obj["status"] = {"phase": "Pending"}
            return clone(self.store.create(obj))
        return clone(self._replace(existing, obj))

    def _replace(self, existing: dict, obj: dict) -> dict:
        kind = obj["kind"]
        manifests.validate_update(existing, obj)
        new = clone(existing)
        new["metadata"]["labels"] = obj["metadata"].get("labels", {})
        new["metadata"]["annotations"] = obj["metadata"].get("annotations", {})
        if kind == "Pod":
            self._check_pod_update(existing, obj["spec"])
            for c_new in obj["spec"]["containers"]:
                for c in new["spec"]["containers"]:
                    if c["name"] == c_new["name"]:
                        c["image"] = c_new["image"]
        else:
            new["spec"] = self._keep_allocated(existing, obj["spec"])
        if kind == "Node" and "status" in obj:
            new["status"] = {**new.get("status", {}), **obj["status"]}
        return self.store.update(new)

    @staticmethod
    def _keep_allocated(existing: dict, spec: dict) -> dict:
        """Fields the control plane allocated stay: a Service's clusterIP (immutable once set:
        core/validation ValidateServiceUpdate) and a Node's podCIDR (ValidateNodeUpdate)."""
        field = {"Service": "clusterIP", "Node": "podCIDR"}.get(existing["kind"])
        old = (existing.get("spec") or {}).get(field) if field else None
        if not old:
            return spec
        new = spec.get(field)
        if new not in (None, "", old):
            raise ApiError("Invalid", f"spec.{field}", f"Invalid value: {new!r}: field is immutable")
        return {**spec, field: old}

    @staticmethod
    def _check_pod_update(existing: dict, spec: dict) -> None:
        """ValidatePodUpdate: only images (and a few fields) of a running pod may change."""
        def strip(s: dict) -> dict:
            s = clone(s)
            for c in s.get("containers") or []:
                c.pop("image", None)
            for k in ("tolerations", "nodeName", "activeDeadlineSeconds", "terminationGracePeriodSeconds"):
                s.pop(k, None)
            return s
        if strip(existing["spec"]) != strip(spec):
            raise ApiError("Invalid", "spec", "Forbidden: pod updates may not change fields other than "
                           "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, "
                           "`spec.tolerations` (only additions to existing tolerations), "
                           "`spec.terminationGracePeriodSeconds`")

    def _find(self, kind: str, name: str, namespace: str = "default") -> dict:
        kind = normalize_kind(kind)
        if not isinstance(name, str) or not name:
            raise ValidationError("name", f"{name!r} is not a name")
        key = f"{namespace}/{name}" if kind in NAMESPACED else name
        obj = self.store.get(kind, key)
        if obj is None:
            raise ApiError("NotFound", "name", f'{kind.lower()}s "{name}" not found')
        return obj

    def get(self, kind: str, name: str, namespace: str = "default") -> dict:
        return clone(self._find(kind, name, namespace))

    def list(self, kind: str, selector: dict | None = None, namespace: str | None = None) -> list[dict]:
        """Objects of ``kind`` sorted by name; ``selector`` is a label map or a LabelSelector."""
        kind = normalize_kind(kind)
        if selector is not None:
            manifests.check_selector(selector, "selector", plain_ok=True)
        out = []
        for obj in self.store.list(kind):
            if namespace is not None and obj["metadata"].get("namespace") != namespace:
                continue
            if selector is None or rules.selector_matches(selector, obj["metadata"].get("labels")):
                out.append(clone(obj))
        return sorted(out, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def delete(self, kind: str, name: str, namespace: str = "default", cascade: str = "background") -> None:
        """kubectl delete: pods terminate gracefully; owners' dependents are garbage-collected
        (``cascade="orphan"`` strips their ownerReferences instead)."""
        obj = self._find(kind, name, namespace)
        if cascade not in ("background", "orphan"):
            raise ValidationError("cascade", f"{cascade!r} is not supported", "'background', 'orphan'")
        if cascade == "orphan":
            uid = obj["metadata"]["uid"]
            for dep_kind, key in sorted(self.store.dependents.get(uid, set())):
                self.store.mutate(dep_kind, key, lambda o: o["metadata"].__setitem__(
                    "ownerReferences", [r for r in o["metadata"].get("ownerReferences") or [] if r["uid"] != uid]))
        self.store.request_delete(obj["kind"], obj_key(obj))

    def patch(self, kind: str, name: str, patch: dict, namespace: str = "default") -> dict:
        """A JSON merge patch (kubectl patch --type merge) of metadata/spec (and a Node's status)."""
        if not isinstance(patch, dict):
            raise ValidationError("patch", "must be a mapping", "{'spec': {'replicas': 3}}")
        obj = self._find(kind, name, namespace)
        extra = set(patch) - {"metadata", "spec", "status"}
        if extra:
            raise ValidationError(f"patch.{sorted(extra)[0]}", "cannot be patched", "metadata, spec")
        if "status" in patch and obj["kind"] != "Node":
            raise ValidationError("patch.status", "status is written by controllers", "metadata, spec")
        if not isinstance(patch.get("metadata") or {}, dict):
            raise ValidationError("patch.metadata", "must be a mapping", "{'labels': {'app': 'web'}}")
        for k in ("name", "namespace", "uid"):
            if k in (patch.get("metadata") or {}):
                raise ValidationError(f"patch.metadata.{k}", "is immutable")
        merged = merge_patch(obj, patch)
        merged["status"] = obj.get("status", {}) if obj["kind"] != "Node" else merged.get("status", {})
        manifests.validate_update(obj, merged)
        checked = manifests.validate({k: v for k, v in merged.items() if not (k == "status" and obj["kind"] != "Node")})
        if obj["kind"] == "Pod":
            self._check_pod_update(obj, checked.obj["spec"])
        new = clone(obj)
        new["metadata"]["labels"] = checked.obj["metadata"].get("labels", {})
        new["metadata"]["annotations"] = checked.obj["metadata"].get("annotations", {})
        new["spec"] = (self._keep_allocated(obj, checked.obj["spec"]) if obj["kind"] != "Pod"
                       else {**obj["spec"], **checked.obj["spec"]})
        if obj["kind"] == "Node":
            new["status"] = merged.get("status", {})
        return clone(self.store.update(new))

    def kubectl(self, command: str) -> "CommandResult":
        """Run one kubectl command now (engines.k8s.kubectl): apply -f (the manifest on the lines
        after the command), scale, set image, delete, label, cordon, uncordon, drain, rollout
        undo/pause/resume, patch. Returns whether the API server accepted it, with its message;
        accepted is not success: the controllers take it from the next tick."""
        from engines.k8s.kubectl import Kubectl
        return Kubectl(self).run(command)

    def run(self, seconds: float) -> None:
        """Advance the simulated clock, every controller running each tick."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 10**7:
            raise ValidationError("seconds", f"{seconds!r} is out of range", "0 … 10,000,000")
        end = self.clock.now + seconds
        while self.clock.now < end - 1e-9:
            dt = min(self.tick, end - self.clock.now)
            self.clock.now += dt
            self.step(dt)

    def step(self, dt: float) -> None:
        """One tick of the control plane."""
        if self.clock.now >= self.next_resync - 1e-9:
            self.next_resync = self.clock.now + self.ctx.resync_seconds
            if self.store.drop is None or self.clock.now >= self.store.drop.until:
                for informer in self.ctx.informers.values():
                    self.repairs += informer.relist()
        for kubelet in self.kubelets.values():
            kubelet.tick(dt)
        self.node_lifecycle.tick()
        self.settle()

    def settle(self) -> None:
        for _ in range(MAX_ROUNDS):
            if sum(c.process() for c in self.controllers) == 0:
                break
        if len(self.ctx.decisions) > 5000:
            del self.ctx.decisions[:-2000]

    @property
    def events(self) -> list[dict]:
        """Events, oldest first (kubectl get events --sort-by=.lastTimestamp, aggregated)."""
        return [dict(e) for e in self.recorder.events]

    @property
    def now(self) -> float:
        return self.clock.now

    # --- faults and simulated facts outside the API -----------------------------------------------
    def set_image(self, image: str, **behavior) -> None:
        """Say how a container image behaves (see ImageBehavior): e.g. exit_after=1 crash-loops.

        Every argument is checked here, so a bad value is refused now rather than failing later
        inside ``run``."""
        if not isinstance(image, str) or not image.strip():
            raise ValidationError("image", f"{image!r} is not an image name", "a non-empty string, e.g. 'web:1'")
        unknown = sorted(set(behavior) - set(_IMAGE_FIELDS))
        if unknown:
            raise ValidationError("behavior", f"unknown argument {', '.join(unknown)}", ", ".join(_IMAGE_FIELDS))
        checked = {}
        for key, value in behavior.items():
            kind, optional = _IMAGE_FIELDS[key]
            if value is None and optional:
                checked[key] = None
            elif kind == "seconds":
                checked[key] = require_number(value, key, 0, MAX_IMAGE_SECONDS)
            elif kind == "exit_code":   # a process exit status is 0…255
                checked[key] = require_int(value, key, 0, 255)
            else:
                checked[key] = require_int(value, key, 0)
        self.ctx.images[image] = ImageBehavior(**checked)

    def _kubelet(self, node: str) -> Kubelet:
        if node not in self.kubelets:
            raise ApiError("NotFound", "node", f'nodes "{node}" not found', ", ".join(sorted(self.kubelets)))
        return self.kubelets[node]

    def stop_node(self, node: str) -> None:
        """Power the machine off: its kubelet stops reporting and its containers die."""
        self._kubelet(node).stop()

    def start_node(self, node: str) -> None:
        self._kubelet(node).start()

    def fill_node_memory(self, node: str, amount: int | str) -> None:
        """Something outside Kubernetes (a daemon, page cache pinned by a leak) uses ``amount``."""
        self._kubelet(node).system_memory = to_int(amount, "amount")

    def set_usage(self, pod: str, memory: int | str | None = None, cpu_millis: int | None = None,
                  namespace: str = "default") -> None:
        """The pod's containers start using this much (a leak, a load spike)."""
        obj = self._find("Pod", pod, namespace)
        kubelet = self.kubelets.get(obj["spec"].get("nodeName") or "")
        rt = kubelet.pods.get(obj_key(obj)) if kubelet else None
        if rt is None:
            raise ValidationError("pod", f"{pod} is not running on any node")
        kubelet.wake(rt)
        for c in rt.containers:
            if memory is not None:
                c.memory = to_int(memory, "memory") // len(rt.containers)
            if cpu_millis is not None:
                c.cpu = int(cpu_millis) // len(rt.containers)

    def set_traffic(self, deployment: str, points, namespace: str = "default") -> None:
        """Requests per second sent to ``deployment``'s pods over time (piecewise-linear through
        ``points`` of (simulated s, requests/s)); an HPA with a Pods metric reads each Ready pod's
        share. Traffic comes from outside the cluster, so it is set here, not through the API."""
        self.hpa.traffic[f"{namespace}/{deployment}"] = check_traffic(points)

    def drop_watch_events(self, seconds: float, probability: float = 1.0) -> None:
        """Watch messages are lost for ``seconds`` (each with ``probability``); caches go stale
        until the next relist after the outage."""
        if not 0 < probability <= 1:
            raise ValidationError("probability", f"{probability!r} is out of range", "0 < p ≤ 1")
        self.store.drop = DropRule(until=self.clock.now + float(seconds), probability=float(probability))

    def metrics(self, pod: str, namespace: str = "default") -> dict:
        """cAdvisor-style numbers for a pod: working set, CPU demand, CFS periods and throttling."""
        obj = self._find("Pod", pod, namespace)
        kubelet = self.kubelets.get(obj["spec"].get("nodeName") or "")
        rt = kubelet.pods.get(obj_key(obj)) if kubelet else None
        if rt is None:
            return {"memory_bytes": None, "cpu_millis": None, "nr_periods": 0, "nr_throttled": 0}
        kubelet.settle(rt)
        running = [c for c in rt.containers if c.state == "running"]
        cpu_used = sum(min(c.cpu, c.cpu_limit) if c.cpu_limit is not None else c.cpu for c in running)
        return {"memory_bytes": sum(c.memory for c in running) if running else None,
                "cpu_demand_millis": sum(c.cpu for c in running), "cpu_millis": cpu_used,
                "nr_periods": sum(c.nr_periods for c in rt.containers),
                "nr_throttled": sum(c.nr_throttled for c in rt.containers)}

    # --- read models for views ---------------------------------------------------------------------
    def owner_name(self, obj: dict) -> str | None:
        ref = controller_ref(obj)
        return ref["name"] if ref else None

    def deployment_bounds(self, name: str, namespace: str = "default") -> tuple[int, int]:
        """(maxTotal, minAvailable) of a Deployment: replicas + surge, replicas − unavailable."""
        d = self._find("Deployment", name, namespace)
        surge, unavailable = fenceposts(d)
        replicas = int(d["spec"].get("replicas", 1))
        return replicas + surge, replicas - unavailable
