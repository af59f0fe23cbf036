"""ResourceQuota: the admission check on pod creation and the controller that reports usage.

Admission (plugin/pkg/admission/resourcequota): a create that would take ``used`` past ``hard``
for any constrained resource is refused with "exceeded quota: NAME, requested: …, used: …,
limited: …". Pods in a terminal phase do not count (pkg/quota/v1/evaluator/core/pods.go
QuotaV1Pod). Supported resources: pods, count/pods, requests.cpu, requests.memory, cpu, memory,
limits.cpu, limits.memory, requests.nvidia.com/gpu.
"""
from __future__ import annotations

from engines.core.errors import ValidationError
from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.quantity import format_bytes, format_cpu, resource_amount
from engines.k8s.store import ApiError

SUPPORTED = ("pods", "count/pods", "requests.cpu", "requests.memory", "cpu", "memory", "limits.cpu",
             "limits.memory", "requests.nvidia.com/gpu")


def _amount(name: str, value: object) -> int:
    base = name.split(".", 1)[1] if name.startswith(("requests.", "limits.")) else name
    return resource_amount("cpu" if base == "cpu" else base, value, f"spec.hard.{name}")


def pod_usage(pod: dict) -> dict[str, int]:
    """What one pod charges against each quota resource."""
    req, lim = rules.pod_requests(pod), rules.pod_limits(pod)
    return {"pods": 1, "count/pods": 1, "requests.cpu": req.get("cpu", 0), "cpu": req.get("cpu", 0),
            "requests.memory": req.get("memory", 0), "memory": req.get("memory", 0),
            "limits.cpu": lim.get("cpu", 0), "limits.memory": lim.get("memory", 0),
            "requests.nvidia.com/gpu": req.get("nvidia.com/gpu", 0)}


def _fmt(name: str, value: int) -> str:
    if name.endswith("cpu"):
        return format_cpu(value)
    if name.endswith("memory"):
        return format_bytes(value)
    return str(value)


def validate_hard(hard: dict) -> None:
    for name, value in (hard or {}).items():
        if name not in SUPPORTED:
            raise ValidationError(f"spec.hard.{name}", "not a resource this simulator meters", ", ".join(SUPPORTED))
        _amount(name, value)


class QuotaController(Controller):
    """Keeps ``status.used``/``status.hard`` current (resource_quota_controller.go) and admits pods."""

    name = "resourcequota-controller"
    kind = "ResourceQuota"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.quotas = ctx.informers["ResourceQuota"]
        self.quotas.on_add.append(self.enqueue)
        self.quotas.on_update.append(lambda old, new: self.enqueue(new))
        ctx.informers["Pod"].on_add.append(self._pod_changed)
        ctx.informers["Pod"].on_update.append(lambda old, new: self._pod_changed(new) if old is not new else None)
        ctx.informers["Pod"].on_delete.append(self._pod_changed)
        ctx.store.admission.append(self.admit)

    def _pod_changed(self, pod: dict) -> None:
        for q in self.quotas.values():
            if q["metadata"].get("namespace") == pod["metadata"].get("namespace", "default"):
                self.enqueue(q)

    def used(self, namespace: str) -> dict[str, int]:
        total: dict[str, int] = {}
        for pod in self.ctx.store.list("Pod"):
            if pod["metadata"].get("namespace") != namespace or pod["status"].get("phase") in ("Succeeded", "Failed"):
                continue
            for k, v in pod_usage(pod).items():
                total[k] = total.get(k, 0) + v
        return total

    def admit(self, obj: dict) -> None:
        if obj["kind"] != "Pod":
            return
        ns = obj["metadata"].get("namespace", "default")
        quotas = [q for q in self.ctx.store.list("ResourceQuota") if q["metadata"].get("namespace") == ns]
        if not quotas:
            return
        used = self.used(ns)
        wanted = pod_usage(obj)
        for q in sorted(quotas, key=lambda q: q["metadata"]["name"]):
            hard = {k: _amount(k, v) for k, v in (q["spec"].get("hard") or {}).items()}
            over = [k for k in sorted(hard) if wanted.get(k, 0) and used.get(k, 0) + wanted[k] > hard[k]]
            if over:
                name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
                req = ",".join(f"{k}={_fmt(k, wanted[k])}" for k in over)
                use = ",".join(f"{k}={_fmt(k, used.get(k, 0))}" for k in over)
                lim = ",".join(f"{k}={_fmt(k, hard[k])}" for k in over)
                raise ApiError("Forbidden", "pods", f'pods "{name}" is forbidden: exceeded quota: {q["metadata"]["name"]}, '
                                                    f"requested: {req}, used: {use}, limited: {lim}")

    def sync(self, key: str) -> None:
        q = self.quotas.get(key)
        if q is None:
            return
        used = self.used(q["metadata"].get("namespace", "default"))
        hard = q["spec"].get("hard") or {}
        status = {"hard": dict(hard), "used": {k: _fmt(k, used.get(k, 0)) for k in hard}}
        if status != q.get("status"):
            self.ctx.store.write_status("ResourceQuota", key, status)
            self.decide(f"ResourceQuota {q['metadata']['name']}", ", ".join(f"{k}={v}" for k, v in status["used"].items()),
                        ", ".join(f"{k}={v}" for k, v in hard.items()), "recount usage", "update status.used")
