"""The EndpointSlice controller (pkg/controller/endpointslice): a Service's members by label only.

Every pod in the Service's namespace whose labels match ``spec.selector`` and that has an IP and is
not terminal becomes an endpoint, whoever owns it; ownerReferences play no part. Conditions
(endpointslice/utils.go podToEndpoint): serving = pod Ready, terminating = deletionTimestamp set,
ready = publishNotReadyAddresses or (serving and not terminating). Traffic goes to ready endpoints
only. Slices hold at most 100 endpoints (--max-endpoints-per-slice).
"""
from __future__ import annotations

from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.store import obj_key

MAX_ENDPOINTS_PER_SLICE = 100
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


class EndpointSliceController(Controller):
    name = "endpointslice-controller"
    kind = "Service"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.services = ctx.informers["Service"]
        self.pods = ctx.informers["Pod"]
        self.slices = ctx.informers["EndpointSlice"]
        self.services.on_add.append(self.enqueue)
        self.services.on_update.append(lambda old, new: self.enqueue(new))
        self.services.on_delete.append(self.enqueue)
        self.pods.on_add.append(lambda p: self._pod_changed(None, p))
        self.pods.on_update.append(self._pod_changed)
        self.pods.on_delete.append(lambda p: self._pod_changed(p, None))

    def _pod_changed(self, old: dict | None, new: dict | None) -> None:
        """GetPodServiceMemberships for the old and the new labels."""
        if old is not None and new is not None and old is new:
            return
        for svc in self.services.values():
            selector = svc["spec"].get("selector")
            if not selector:
                continue
            if any(p is not None and rules.selector_matches(selector, p["metadata"].get("labels")) for p in (old, new)):
                self.enqueue(svc)

    def endpoints_for(self, svc: dict) -> list[dict]:
        selector = svc["spec"]["selector"]
        publish = bool(svc["spec"].get("publishNotReadyAddresses"))
        out = []
        for pod in self.pods.select(rules.match_labels_of(selector)):
            if not rules.selector_matches(selector, pod["metadata"].get("labels")):
                continue
            status = pod.get("status") or {}
            if not status.get("podIP") or status.get("phase") in ("Succeeded", "Failed"):
                continue
            serving = rules.is_pod_ready(pod)
            terminating = bool(pod["metadata"].get("deletionTimestamp"))
            out.append({"addresses": [status["podIP"]],
                        "conditions": {"ready": publish or (serving and not terminating), "serving": serving,
                                       "terminating": terminating},
                        "nodeName": pod["spec"].get("nodeName"),
                        "targetRef": {"kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}})
        return sorted(out, key=lambda e: e["targetRef"]["name"])

    def sync(self, key: str) -> None:
        svc = self.services.get(key)
        if svc is None or not svc["spec"].get("selector"):
            return   # deleted (its slices are garbage-collected) or selector-less (endpoints by hand)
        name = svc["metadata"]["name"]
        endpoints = self.endpoints_for(svc)
        chunks = [endpoints[i:i + MAX_ENDPOINTS_PER_SLICE] for i in range(0, len(endpoints), MAX_ENDPOINTS_PER_SLICE)] or [[]]
        existing = sorted(self.slices.by_index("owner", svc["metadata"]["uid"]), key=lambda s: s["metadata"]["name"])
        changed = 0
        for i, chunk in enumerate(chunks):
            if i < len(existing):
                if existing[i].get("endpoints") != chunk:
                    self.ctx.store.mutate("EndpointSlice", obj_key(existing[i]), lambda o, c=chunk: o.__setitem__("endpoints", c))
                    changed += 1
            else:
                self.ctx.store.create({
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
                    "metadata": {"generateName": f"{name}-", "namespace": svc["metadata"].get("namespace", "default"),
                                 "labels": {SERVICE_NAME_LABEL: name},
                                 "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                                                      "uid": svc["metadata"]["uid"], "controller": True,
                                                      "blockOwnerDeletion": True}]},
                    "endpoints": chunk, "ports": [{"port": p.get("targetPort", p.get("port")), "protocol": "TCP"}
                                                  for p in svc["spec"].get("ports") or []]})
                changed += 1
        for extra in existing[len(chunks):]:
            self.ctx.store.remove("EndpointSlice", obj_key(extra))
            changed += 1
        ready = sum(1 for e in endpoints if e["conditions"]["ready"])
        rule = f"{len(endpoints)} pods match {rules.match_labels_of(svc['spec']['selector'])}, {ready} ready"
        self.decide(f"Service {name}", f"{len(endpoints)} matching", "every matching pod listed", rule,
                    f"update {changed} EndpointSlice(s)" if changed else "nothing to do", noop=not changed)

    def ready_addresses(self, svc_key: str) -> list[str]:
        svc = self.services.get(svc_key)
        if svc is None:
            return []
        return [e["targetRef"]["name"] for s in self.slices.by_index("owner", svc["metadata"]["uid"])
                for e in s.get("endpoints") or [] if e["conditions"]["ready"]]
