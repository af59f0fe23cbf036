"""The Horizontal Pod Autoscaler: desired replicas from a metric, and the controller that acts on it.

Rules (kubernetes/kubernetes pkg/controller/podautoscaler):

- replica_calculator.go ``GetResourceReplicas`` / ``calcPlainMetricReplicas``: usage ratio =
  current / target; within the tolerance (``--horizontal-pod-autoscaler-tolerance``, 0.1) nothing
  changes, else desired = ceil(ratio × ready pods). ``groupPods``: deleted or Failed pods are
  ignored, Pending pods are *unready* and pods without a metric *missing*; when scaling up,
  unready pods count as using 0 and missing ones 0 (scaling down: missing ones count as at the
  target), the ratio is recomputed, and a result that flips direction or falls inside the
  tolerance keeps the current count.
- horizontal.go ``reconcileAutoscaler``: a target scaled to 0 disables autoscaling; outside
  [min, max] the count is clamped first; ``stabilizeRecommendationWithBehaviors`` takes the
  *highest* recommendation of the scale-down window (300 s by default) and the lowest of the
  scale-up window (0 s); ``convertDesiredReplicasWithBehaviorRate`` limits a step to the default
  policies (scale up by max(100 %, 4 pods) per 15 s; scale down by 100 % per 15 s); then min/max.
  The controller re-evaluates every 15 s (``--horizontal-pod-autoscaler-sync-period``).
"""
from __future__ import annotations

import math

from engines.core.errors import ValidationError, require_int, require_number
from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.quantity import parse_quantity
from engines.k8s.store import obj_key

DEFAULT_TOLERANCE = 0.1            # --horizontal-pod-autoscaler-tolerance
SYNC_PERIOD = 15.0                 # --horizontal-pod-autoscaler-sync-period
DOWNSCALE_WINDOW = 300             # behavior.scaleDown.stabilizationWindowSeconds default (5 min)
UPSCALE_WINDOW = 0                 # behavior.scaleUp.stabilizationWindowSeconds default
POLICY_PERIOD = 15.0               # default policies' periodSeconds
SCALE_UP_PERCENT, SCALE_UP_PODS = 100, 4    # default scale-up policies, selectPolicy Max
SCALE_DOWN_PERCENT = 100           # default scale-down policy


def hpa_desired_replicas(current_replicas: int, current_metric: float, target_metric: float,
                         tolerance: float = DEFAULT_TOLERANCE) -> int:
    """Desired replicas when every pod is ready and reports the metric (replica_calculator.go):
    ``ceil(current × current_metric / target_metric)`` unless the ratio is within ``tolerance``
    of 1, when the count stays. A target at 0 replicas stays at 0 (autoscaling disabled)."""
    current = require_int(current_replicas, "current_replicas", 0, rules.INT32_MAX)
    metric = require_number(current_metric, "current_metric", 0)
    target = require_number(target_metric, "target_metric", 0, lo_open=True)
    tol = require_number(tolerance, "tolerance", 0, 1)
    if current == 0:
        return 0
    ratio = metric / target
    if abs(1.0 - ratio) <= tol:
        return current
    return math.ceil(ratio * current)


def replicas_from_pods(current: int, metrics: dict[str, float], pods: list[dict], target: float,
                       tolerance: float = DEFAULT_TOLERANCE,
                       requests: dict[str, float] | None = None) -> tuple[int, float, str]:
    """(desired, usage ratio over the ready pods, how) by calcPlainMetricReplicas over the target's pods; ``metrics``
    maps pod name → its metric value (absent: missing). With ``requests`` (pod → cpu request) the
    metric is usage and the target a utilisation in %: the ratio is Σ usage / Σ requests against
    it (GetResourceUtilizationRatio), not the mean of per-pod percentages."""
    ready, unready, missing, values = 0, [], [], {}
    for pod in pods:
        name = pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            continue
        if phase in (None, "Pending"):
            unready.append(name)
            continue
        if name not in metrics:
            missing.append(name)
            continue
        values[name] = metrics[name]
        ready += 1
    if not values:
        raise ValidationError("metrics", "did not receive metrics for any ready pods of the target")

    def usage_ratio(vals: dict[str, float]) -> float:
        if requests is None:
            return sum(vals.values()) / len(vals) / target
        total = sum(requests.get(n, 0) for n in vals)
        if total <= 0:
            raise ValidationError("metrics", "missing request for cpu", "pods with cpu requests")
        return 100.0 * sum(vals.values()) / total / target

    def at_target(name: str) -> float:
        return target if requests is None else target / 100.0 * requests.get(name, 0)

    ratio = usage_ratio(values)
    scale_up_unready = bool(unready) and ratio > 1.0
    if not scale_up_unready and not missing:
        if abs(1.0 - ratio) <= tolerance:
            return current, ratio, f"ratio {ratio:.2f} within ±{tolerance:g} of 1: keep {current}"
        return math.ceil(ratio * ready), ratio, f"ceil({ratio:.2f} × {ready} ready) = {math.ceil(ratio * ready)}"
    for name in missing:
        values[name] = at_target(name) if ratio < 1.0 else 0.0
    if scale_up_unready:
        for name in unready:
            values[name] = 0.0
    new_ratio = usage_ratio(values)
    note = (f"{len(unready)} Pending pod(s) counted at 0" if scale_up_unready else "") + \
        (f"{', ' if scale_up_unready else ''}{len(missing)} pod(s) without a metric" if missing else "")
    if abs(1.0 - new_ratio) <= tolerance or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current, ratio, f"ratio {ratio:.2f} over ready pods, {new_ratio:.2f} with {note}: keep {current}"
    new = math.ceil(new_ratio * len(values))
    if (new_ratio < 1.0 and new > current) or (new_ratio > 1.0 and new < current):
        return current, ratio, f"{note}: the rebalanced count {new} goes the wrong way: keep {current}"
    return new, ratio, f"ceil({new_ratio:.2f} × {len(values)} pods, {note}) = {new}"


def rate_at(points: list[tuple[float, float]], t: float) -> float:
    """A piecewise-linear request rate through ``points`` (time, requests/s), flat outside them."""
    if t <= points[0][0]:
        return points[0][1]
    for (t0, r0), (t1, r1) in zip(points, points[1:]):
        if t <= t1:
            return r0 + (r1 - r0) * (t - t0) / (t1 - t0) if t1 > t0 else r1
    return points[-1][1]


def check_traffic(points: object) -> list[tuple[float, float]]:
    if not isinstance(points, (list, tuple)) or not points:
        raise ValidationError("traffic", "expected a list of (seconds, requests per second) points", "[(0, 5), (60, 40)]")
    out = []
    for i, p in enumerate(points):
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise ValidationError(f"traffic[{i}]", f"{p!r} is not a (seconds, rate) pair", "(60, 40.0)")
        out.append((require_number(p[0], f"traffic[{i}].t", 0), require_number(p[1], f"traffic[{i}].rate", 0, 1e9)))
    if any(b[0] < a[0] for a, b in zip(out, out[1:])):
        raise ValidationError("traffic", "times must not decrease", "points in time order")
    return out


def check_hpa_spec(spec: dict) -> None:
    """autoscaling/validation ValidateHorizontalPodAutoscalerSpec, for the fields simulated."""
    ref = spec.get("scaleTargetRef")
    if not isinstance(ref, dict) or ref.get("kind") not in ("Deployment", "ReplicaSet") or not ref.get("name"):
        raise ValidationError("spec.scaleTargetRef", "must name a Deployment or ReplicaSet",
                              "{apiVersion: apps/v1, kind: Deployment, name: web}")
    low = require_int(spec.get("minReplicas", 1), "spec.minReplicas", 1, rules.INT32_MAX)
    high = require_int(spec.get("maxReplicas"), "spec.maxReplicas", 1, rules.INT32_MAX)
    if high < low:
        raise ValidationError("spec.maxReplicas", "must be greater than or equal to `minReplicas`", f"≥ {low}")
    metrics = spec.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise ValidationError("spec.metrics", "at least one metric is needed here (the API defaults to 80 % CPU)",
                              "[{type: Pods, pods: {metric: {name: requests_per_second}, target: "
                              "{type: AverageValue, averageValue: '10'}}}]")
    for i, m in enumerate(metrics):
        metric_target(m, f"spec.metrics[{i}]")
    behavior = spec.get("behavior") or {}
    for side in ("scaleUp", "scaleDown"):
        window = (behavior.get(side) or {}).get("stabilizationWindowSeconds")
        if window is not None:
            require_int(window, f"spec.behavior.{side}.stabilizationWindowSeconds", 0, 3600)


def metric_target(m: object, field: str) -> tuple[str, str, float]:
    """(type, name, target) of one metric: Pods AverageValue or Resource cpu Utilization (%)."""
    if not isinstance(m, dict):
        raise ValidationError(field, "must be a mapping", "{type: Pods, pods: {…}}")
    if m.get("type") == "Pods":
        pods = m.get("pods") or {}
        name = (pods.get("metric") or {}).get("name")
        target = pods.get("target") or {}
        if not isinstance(name, str) or not name or target.get("type") != "AverageValue":
            raise ValidationError(f"{field}.pods", "needs metric.name and target {type: AverageValue, averageValue}",
                                  "{metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: '10'}}")
        value = float(parse_quantity(target.get("averageValue"), f"{field}.pods.target.averageValue"))
        if value <= 0:
            raise ValidationError(f"{field}.pods.target.averageValue", "must be positive", "> 0")
        return "Pods", name, value
    if m.get("type") == "Resource":
        res = m.get("resource") or {}
        target = res.get("target") or {}
        if res.get("name") != "cpu" or target.get("type") != "Utilization":
            raise ValidationError(f"{field}.resource", "only cpu Utilization is simulated",
                                  "{name: cpu, target: {type: Utilization, averageUtilization: 80}}")
        return "Resource", "cpu", float(require_int(target.get("averageUtilization"),
                                                    f"{field}.resource.target.averageUtilization", 1, 10_000))
    raise ValidationError(f"{field}.type", f"{m.get('type')!r} is not simulated", "Pods, Resource")


class HpaController(Controller):
    """horizontal.go: every 15 s per HPA, metrics → desired → stabilise → rate-limit → clamp → scale."""

    name = "horizontal-pod-autoscaler"
    kind = "HorizontalPodAutoscaler"

    def __init__(self, ctx: Context, kubelets: dict) -> None:
        super().__init__(ctx)
        self.kubelets = kubelets
        self.hpas = ctx.informers["HorizontalPodAutoscaler"]
        self.traffic: dict[str, list[tuple[float, float]]] = {}       # "ns/deployment" → rate points
        self.recommendations: dict[str, list[tuple[float, int]]] = {}
        self.scale_events: dict[str, list[tuple[float, int]]] = {}
        self.hpas.on_add.append(self.enqueue)
        self.hpas.on_update.append(lambda old, new: self.enqueue(new) if old.get("spec") != new.get("spec") else None)

    def load(self, target_key: str) -> float:
        points = self.traffic.get(target_key)
        return rate_at(points, self.now) if points else 0.0

    def pod_metrics(self, hpa: dict, kind: str, metric: str, pods: list[dict]) -> dict[str, float]:
        """Per pod: a Pods metric is the target's request rate shared by its Ready pods (a pod that
        is not Ready gets no traffic and reports 0); for cpu, the millicores its running
        containers use (at most their limits)."""
        values: dict[str, float] = {}
        ref = hpa["spec"]["scaleTargetRef"]
        if kind == "Pods":
            ready = [p for p in pods if rules.is_pod_ready(p) and rules.is_active(p)]
            share = self.load(f"{hpa['metadata'].get('namespace', 'default')}/{ref['name']}") / max(len(ready), 1)
            for p in pods:
                if (p.get("status") or {}).get("phase") == "Running":
                    values[p["metadata"]["name"]] = share if rules.is_pod_ready(p) else 0.0
            return values
        for p in pods:
            kubelet = self.kubelets.get(p["spec"].get("nodeName") or "")
            rt = kubelet.pods.get(obj_key(p)) if kubelet else None
            request = rules.pod_requests(p).get("cpu", 0)
            if rt is None or not request:
                continue
            values[p["metadata"]["name"]] = float(sum(min(c.cpu, c.cpu_limit) if c.cpu_limit is not None else c.cpu
                                                      for c in rt.containers if c.state == "running"))
        return values

    def sync(self, key: str) -> None:
        hpa = self.hpas.get(key)
        if hpa is None:
            self.recommendations.pop(key, None)
            self.scale_events.pop(key, None)
            return
        self.queue.add_after(key, SYNC_PERIOD, self.now)
        spec, ns = hpa["spec"], hpa["metadata"].get("namespace", "default")
        ref = spec["scaleTargetRef"]
        title = f"HorizontalPodAutoscaler {hpa['metadata']['name']}"
        target = self.ctx.informers[ref["kind"]].get(f"{ns}/{ref['name']}")
        low, high = int(spec.get("minReplicas", 1)), int(spec["maxReplicas"])
        if target is None:
            return self._status(hpa, None, None, [], ("AbleToScale", "False", "FailedGetScale",
                                f'{ref["kind"].lower()}s "{ref["name"]}" not found'))
        current = int(target["spec"].get("replicas", 1))
        pods = [p for p in self.ctx.informers["Pod"].select(rules.match_labels_of(target["spec"].get("selector")))
                if p["metadata"].get("namespace") == ns and rules.selector_matches(target["spec"].get("selector"),
                                                                                 p["metadata"].get("labels"))]
        conditions = []
        if current == 0:
            desired, rule = 0, "the target is scaled to 0: autoscaling is disabled"
            conditions.append(("ScalingActive", "False", "ScalingDisabled",
                               "scaling is disabled since the replica count of the target is zero"))
            metrics_now = []
        elif current > high or current < low:
            desired = high if current > high else low
            rule = f"current {current} outside [{low}, {high}]"
            metrics_now = []
            conditions.append(("ScalingLimited", "True", "TooManyReplicas" if current > high else "TooFewReplicas",
                               f"the desired replica count is {'more' if current > high else 'less'} than the "
                               f"{'maximum' if current > high else 'minimum'} replica count"))
        else:
            proposals, metrics_now = [], []
            for i, m in enumerate(spec["metrics"]):
                kind, metric, goal = metric_target(m, f"spec.metrics[{i}]")
                values = self.pod_metrics(hpa, kind, metric, pods)
                requests = ({p["metadata"]["name"]: rules.pod_requests(p).get("cpu", 0) for p in pods}
                            if kind == "Resource" else None)
                try:
                    n, ratio, how = replicas_from_pods(current, values, pods, goal, requests=requests)
                except ValidationError as exc:
                    conditions.append(("ScalingActive", "False", "FailedGetPodsMetric", str(exc)))
                    continue
                average = ratio * goal      # the metric as the ratio saw it (cpu: % of requests)
                metrics_now.append({"type": kind, "name": metric, "current": average, "target": goal})
                proposals.append((n, f"{metric} {average:.1f}/{goal:g}: {how}"))
            if not proposals:
                return self._status(hpa, current, current, metrics_now, *conditions)
            raw, rule = max(proposals)
            conditions.append(("ScalingActive", "True", "ValidMetricFound",
                               "the HPA was able to successfully calculate a replica count"))
            desired, limit_reason = self.normalize(key, hpa, current, raw)
            if limit_reason:
                rule += f"; {limit_reason[1]}"
                conditions.append(limit_reason[0])
            else:
                conditions.append(("ScalingLimited", "False", "DesiredWithinRange",
                                   "the desired count is within the acceptable range"))
        if desired != current:
            self.ctx.store.mutate(ref["kind"], f"{ns}/{ref['name']}",
                                  lambda o: o["spec"].__setitem__("replicas", desired))
            self.scale_events.setdefault(key, []).append((self.now, desired - current))
            self.ctx.recorder.emit(hpa, "Normal", "SuccessfulRescale",
                                   f"New size: {desired}; reason: {rule}", self.name)
            self.decide(title, f"{ref['name']} at {current}", f"{desired}", rule, f"scale {ref['name']} to {desired}")
            conditions.insert(0, ("AbleToScale", "True", "SucceededRescale", "the HPA controller was able to update the "
                                  "target scale"))
        else:
            self.decide(title, f"{ref['name']} at {current}", f"{desired}", rule, "no change", noop=True)
            if not any(c[0] == "AbleToScale" for c in conditions):
                conditions.insert(0, ("AbleToScale", "True", "ReadyForNewScale",
                                      "recommended size matches current size"))
        self._status(hpa, current, desired, metrics_now, *conditions)

    def normalize(self, key: str, hpa: dict, current: int, raw: int) -> tuple[int, tuple | None]:
        """normalizeDesiredReplicasWithBehaviors: stabilise, limit the rate, clamp to [min, max]."""
        spec = hpa["spec"]
        behavior = spec.get("behavior") or {}
        down_window = (behavior.get("scaleDown") or {}).get("stabilizationWindowSeconds", DOWNSCALE_WINDOW)
        up_window = (behavior.get("scaleUp") or {}).get("stabilizationWindowSeconds", UPSCALE_WINDOW)
        history = [r for r in self.recommendations.get(key, []) if r[0] > self.now - max(down_window, up_window, 0)]
        history.append((self.now, raw))
        self.recommendations[key] = history
        up = min([r for t, r in history if t > self.now - up_window] + [raw])
        down = max([r for t, r in history if t > self.now - down_window] + [raw])
        stabilized, reason = current, None
        if stabilized < up:
            stabilized = up
        if stabilized > down:
            stabilized = down
        if stabilized != raw:
            if stabilized > raw:
                reason = (("AbleToScale", "True", "ScaleDownStabilized", "recent recommendations were higher than current "
                           "one, applying the highest recent recommendation"),
                          f"scale-down stabilisation: the highest recommendation of the last {down_window} s is {stabilized}")
            else:
                reason = (("AbleToScale", "True", "ScaleUpStabilized", "recent recommendations were lower than current "
                           "one, applying the lowest recent recommendation"),
                          f"scale-up stabilisation: the lowest recommendation of the last {up_window} s is {stabilized}")
        events = [e for e in self.scale_events.get(key, []) if e[0] > self.now - POLICY_PERIOD]
        self.scale_events[key] = events
        added = sum(d for _, d in events if d > 0)
        removed = -sum(d for _, d in events if d < 0)
        up_limit = max(math.ceil((current - added) * (1 + SCALE_UP_PERCENT / 100)), current - added + SCALE_UP_PODS)
        down_limit = max(math.ceil((current + removed) * (1 - SCALE_DOWN_PERCENT / 100)), 0)
        low, high = int(spec.get("minReplicas", 1)), int(spec["maxReplicas"])
        desired = stabilized
        if desired > up_limit:
            desired, reason = up_limit, (("ScalingLimited", "True", "ScaleUpLimit", "the desired replica count is "
                                          "increasing faster than the maximum scale rate"),
                                         f"rate limit: at most {up_limit} (max of +100 %, +4 pods per 15 s)")
        elif desired < down_limit:
            desired = down_limit
        if desired > high:
            desired, reason = high, (("ScalingLimited", "True", "TooManyReplicas",
                                      "the desired replica count is more than the maximum replica count"),
                                     f"clamped to maxReplicas {high}")
        elif desired < low:
            desired, reason = low, (("ScalingLimited", "True", "TooFewReplicas",
                                     "the desired replica count is less than the minimum replica count"),
                                    f"raised to minReplicas {low}")
        return desired, reason

    def _status(self, hpa: dict, current, desired, metrics_now: list, *conditions) -> None:
        old = hpa.get("status") or {}
        previous = {c["type"]: c for c in old.get("conditions") or []}
        conds = []
        for ctype, status, reason, message in conditions:
            prev = previous.get(ctype)
            since = prev["lastTransitionTime"] if prev and prev.get("status") == status else self.now
            conds.append({"type": ctype, "status": status, "reason": reason, "message": message,
                          "lastTransitionTime": since})
        status = {"currentReplicas": current, "desiredReplicas": desired, "currentMetrics": metrics_now,
                  "conditions": conds,
                  "lastScaleTime": self.now if desired is not None and desired != current else old.get("lastScaleTime")}
        if status != old:
            self.ctx.store.write_status("HorizontalPodAutoscaler", obj_key(hpa), status)
