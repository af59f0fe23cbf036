"""Read and check Kubernetes YAML: the fields the simulator models, and a report of the rest.

Anything outside the modelled subset is *reported* (path and why) and dropped, never silently
ignored; malformed input raises ``ValidationError`` naming the field, like the API server's
validation (pkg/apis/*/validation) for the rules reproduced here: names, selectors matching the
template, replicas ≥ 0, containers with name and image, requests ≤ limits, valid
maxSurge/maxUnavailable (not both 0, maxUnavailable ≤ 100%).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from engines.errors import ValidationError
from engines.k8s import rules
from engines.k8s.quota import validate_hard
from engines.k8s.store import API_VERSIONS, clone

ANY = "*"
_PROBE = {"initialDelaySeconds": ANY, "periodSeconds": ANY, "timeoutSeconds": ANY, "successThreshold": ANY,
          "failureThreshold": ANY, "httpGet": ANY, "tcpSocket": ANY, "exec": ANY, "grpc": ANY}
_CONTAINER = {"name": ANY, "image": ANY, "imagePullPolicy": ANY, "command": ANY, "args": ANY, "env": ANY, "ports": ANY,
              "resources": {"requests": ANY, "limits": ANY}, "readinessProbe": _PROBE}
_POD_SPEC = {"containers": [_CONTAINER], "initContainers": [_CONTAINER], "restartPolicy": ANY,
             "terminationGracePeriodSeconds": ANY, "tolerations": ANY, "priority": ANY, "nodeName": ANY,
             "overhead": ANY, "nodeSelector": None}
_META = {"name": ANY, "generateName": ANY, "namespace": ANY, "labels": ANY, "annotations": ANY}
_TEMPLATE = {"metadata": {"labels": ANY, "annotations": ANY}, "spec": _POD_SPEC}
_SELECTOR = {"matchLabels": ANY, "matchExpressions": ANY}
SCHEMA = {
    "Pod": {"spec": _POD_SPEC},
    "ReplicaSet": {"spec": {"replicas": ANY, "selector": _SELECTOR, "template": _TEMPLATE, "minReadySeconds": ANY}},
    "Deployment": {"spec": {"replicas": ANY, "selector": _SELECTOR, "template": _TEMPLATE, "minReadySeconds": ANY,
                            "strategy": {"type": ANY, "rollingUpdate": {"maxSurge": ANY, "maxUnavailable": ANY}},
                            "progressDeadlineSeconds": ANY, "revisionHistoryLimit": ANY, "paused": ANY}},
    "Service": {"spec": {"selector": ANY, "ports": ANY, "type": ANY, "publishNotReadyAddresses": ANY}},
    "ResourceQuota": {"spec": {"hard": ANY}},
    "Node": {"spec": {"unschedulable": ANY, "taints": ANY}, "status": {"allocatable": ANY, "capacity": ANY}},
}
SERVER_SET = {"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
              "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers"}


@dataclass
class Manifest:
    """One checked object and what in it the simulator does not model."""

    obj: dict
    unsupported: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.obj['kind']}/{self.obj['metadata']['name']}"


def _walk(value: object, schema: object, path: str, out: list[str]) -> object:
    """Copy ``value`` keeping what ``schema`` allows; record every dropped path in ``out``."""
    if schema == ANY:
        return clone(value)
    if isinstance(schema, list):
        if not isinstance(value, list):
            raise ValidationError(path, "must be a list")
        return [_walk(v, schema[0], f"{path}[{i}]", out) for i, v in enumerate(value)]
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise ValidationError(path, "must be a mapping")
        kept = {}
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if k in schema and schema[k] is not None:
                kept[k] = _walk(v, schema[k], sub, out)
            else:
                out.append(f"{sub} (not simulated: dropped)")
        return kept
    return clone(value)


def _int(value: object, field_: str, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValidationError(field_, f"{value!r} is not an integer ≥ {lo}", f"integer ≥ {lo}")
    return value


def _check_pod_spec(spec: dict, where: str) -> None:
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ValidationError(f"{where}.containers", "at least one container is required")
    names = set()
    for i, c in enumerate(containers + (spec.get("initContainers") or [])):
        f = f"{where}.containers[{i}]"
        if not isinstance(c, dict) or not c.get("name") or not c.get("image"):
            raise ValidationError(f, "every container needs a name and an image")
        if c["name"] in names:
            raise ValidationError(f"{f}.name", f"duplicate container name {c['name']!r}")
        names.add(c["name"])
        req, lim = rules.container_resources(c)
        for r, v in req.items():
            if r in lim and v > lim[r]:
                raise ValidationError(f"{f}.resources.requests.{r}", f"must be less than or equal to {r} limit",
                                      f"≤ the limit {((c.get('resources') or {}).get('limits') or {})[r]}")
    if spec.get("restartPolicy", "Always") not in ("Always", "OnFailure", "Never"):
        raise ValidationError(f"{where}.restartPolicy", f"{spec['restartPolicy']!r} is not supported",
                              "Always, OnFailure, Never")


def _check_workload(obj: dict) -> None:
    spec = obj["spec"]
    kind = obj["kind"]
    if "replicas" in spec:
        _int(spec["replicas"], "spec.replicas")
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        raise ValidationError("spec.selector", "required (apps/v1), and must not be empty", "matchLabels: {app: web}")
    template = spec.get("template")
    if not isinstance(template, dict):
        raise ValidationError("spec.template", "required")
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not rules.selector_matches(selector, labels):
        raise ValidationError("spec.template.metadata.labels", "`selector` does not match template `labels`",
                              f"labels that satisfy {selector}")
    _check_pod_spec(template.get("spec") or {}, "spec.template.spec")
    if template["spec"].get("restartPolicy", "Always") != "Always":
        raise ValidationError("spec.template.spec.restartPolicy", "must be Always for a controller's pods", "Always")
    if kind == "Deployment":
        strategy = spec.get("strategy") or {}
        stype = strategy.get("type", "RollingUpdate")
        if stype not in ("RollingUpdate", "Recreate"):
            raise ValidationError("spec.strategy.type", f"{stype!r} is not supported", "RollingUpdate, Recreate")
        if stype == "Recreate" and strategy.get("rollingUpdate"):
            raise ValidationError("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
        ru = strategy.get("rollingUpdate") or {}
        surge, unavailable = ru.get("maxSurge", "25%"), ru.get("maxUnavailable", "25%")
        rules.scaled_int_or_percent(surge, 100, True, "spec.strategy.rollingUpdate.maxSurge")
        pct = rules.scaled_int_or_percent(unavailable, 100, False, "spec.strategy.rollingUpdate.maxUnavailable")
        if isinstance(unavailable, str) and pct > 100:
            raise ValidationError("spec.strategy.rollingUpdate.maxUnavailable", "must not be greater than 100%")
        if stype == "RollingUpdate" and surge in (0, "0%") and unavailable in (0, "0%"):
            raise ValidationError("spec.strategy.rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0",
                                  "> 0 (or maxSurge > 0)")
        if spec.get("progressDeadlineSeconds") is not None:
            deadline = _int(spec["progressDeadlineSeconds"], "spec.progressDeadlineSeconds", 1)
            if deadline <= int(spec.get("minReadySeconds", 0)):
                raise ValidationError("spec.progressDeadlineSeconds", "must be greater than minReadySeconds")


def validate(manifest: dict) -> Manifest:
    """Check one object; returns the modelled part and the report of everything else."""
    if not isinstance(manifest, dict):
        raise ValidationError("manifest", "must be a mapping", "a Kubernetes object with apiVersion, kind, metadata")
    kind = manifest.get("kind")
    if kind not in SCHEMA:
        raise ValidationError("kind", f"{kind!r} is not supported by the simulator", ", ".join(SCHEMA))
    api = manifest.get("apiVersion", API_VERSIONS[kind])
    if api != API_VERSIONS[kind]:
        raise ValidationError("apiVersion", f"{api!r} does not serve {kind}", API_VERSIONS[kind])
    out: list[str] = []
    meta = manifest.get("metadata")
    if not isinstance(meta, dict) or not (meta.get("name") or (kind == "Pod" and meta.get("generateName"))):
        raise ValidationError("metadata.name", "required")
    clean_meta = {}
    for k, v in meta.items():
        if k in _META:
            clean_meta[k] = clone(v)
        elif k in SERVER_SET:
            out.append(f"metadata.{k} (set by the server: ignored)")
        else:
            out.append(f"metadata.{k} (not simulated: dropped)")
    for k in ("labels", "annotations"):
        if k in clean_meta and not isinstance(clean_meta[k], dict):
            raise ValidationError(f"metadata.{k}", "must be a mapping of strings")
    obj = {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": clean_meta}
    schema = SCHEMA[kind]
    for k, v in manifest.items():
        if k in ("apiVersion", "kind", "metadata"):
            continue
        if k == "status" and "status" not in schema:
            out.append("status (written by controllers: ignored)")
        elif k in schema:
            obj[k] = _walk(v, schema[k], k, out)
        else:
            out.append(f"{k} (not simulated: dropped)")
    obj.setdefault("spec", {})
    if kind == "Pod":
        _check_pod_spec(obj["spec"], "spec")
    elif kind in ("ReplicaSet", "Deployment"):
        _check_workload(obj)
    elif kind == "Service":
        sel = obj["spec"].get("selector")
        if sel is not None and not isinstance(sel, dict):
            raise ValidationError("spec.selector", "must be a map of labels")
    elif kind == "ResourceQuota":
        validate_hard(obj["spec"].get("hard") or {})
    elif kind == "Node":
        alloc = (obj.get("status") or {}).get("allocatable")
        if not isinstance(alloc, dict) or "cpu" not in alloc or "memory" not in alloc:
            raise ValidationError("status.allocatable", "a Node needs allocatable cpu and memory",
                                  "{cpu: '4', memory: 16Gi, pods: '110'}")
        rules.parse_allocatable(obj["status"])
    return Manifest(obj=obj, unsupported=out)


MAX_EXPANDED_NODES = 100_000   # go-yaml refuses "excessive aliasing" the same way (decode.go)


def expanded_size(obj: object, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many values ``obj`` holds once YAML aliases are expanded, counted without expanding
    them (each shared list/map is sized once), stopping past ``limit``: a 500-byte "billion
    laughs" document parses into a few shared lists that would expand to 9⁹ strings."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[object, bool]] = [(obj, False)]
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in sizes:
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if not children_done:
            if id(node) in entered:
                return limit + 1          # a recursive alias (&a [*a]): infinite once expanded
            entered.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if isinstance(c, (dict, list)) and id(c) not in sizes)
            continue
        sizes[id(node)] = min(limit + 1, 1 + sum(sizes.get(id(c), 1) if isinstance(c, (dict, list)) else 1
                                                 for c in children))
    return sizes.get(id(obj), 1)


def load_manifests(text: str) -> list[Manifest]:
    """Parse a YAML stream (documents separated by ---; a List's items are expanded)."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ValidationError("yaml", f"not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:
        raise ValidationError("yaml", "nested too deeply", "ordinary Kubernetes manifests") from None
    for doc in docs:
        if expanded_size(doc) > MAX_EXPANDED_NODES:
            raise ValidationError("yaml", f"expands to more than {MAX_EXPANDED_NODES:,} values through aliases "
                                          "(a YAML bomb?)", "manifests without excessive aliasing")
    out = []
    for doc in docs:
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        if items is not None and not isinstance(items, list):
            raise ValidationError("items", "a List's items must be a list of objects", "items: [{kind: Pod, …}]")
        out.extend(validate(item) for item in items or [])
    if not out:
        raise ValidationError("yaml", "no objects found", "one or more Kubernetes objects")
    return out
