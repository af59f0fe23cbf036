"""Read and check Kubernetes YAML: the fields the simulator models, and a report of the rest.

Anything outside the modelled subset is *reported* (path and why) and dropped, never silently
ignored; malformed input raises ``ValidationError`` naming the field, like the API server's
validation (pkg/apis/core/validation, pkg/apis/apps/validation, apimachinery's
ValidateObjectMeta / ValidateLabelSelector) for every field the simulator reads: names
(RFC 1123), labels and annotations (strings), label selectors, selectors matching the template,
non-negative integers, containers with a name and an image, requests ≤ limits, tolerations,
taints, Service ports, the pod-deletion-cost annotation, valid maxSurge/maxUnavailable (not both
0, maxUnavailable ≤ 100%). Nothing the controllers read later can then fail inside ``run()``.
``validate_update`` adds the update-only rules (an immutable ``spec.selector``).
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from engines.core.errors import ValidationError, require_bool, require_int, require_number
from engines.core.reading import load_yaml_all, tree_size
from engines.k8s import rules
from engines.k8s.network import parse_cidr
from engines.k8s.quota import validate_hard
from engines.k8s.store import API_VERSIONS, clone

ANY = "*"
_PROBE = {"initialDelaySeconds": ANY, "periodSeconds": ANY, "timeoutSeconds": ANY, "successThreshold": ANY,
          "failureThreshold": ANY, "httpGet": ANY, "tcpSocket": ANY, "exec": ANY, "grpc": ANY}
_CONTAINER = {"name": ANY, "image": ANY, "imagePullPolicy": ANY, "command": ANY, "args": ANY, "env": ANY, "ports": ANY,
              "resources": {"requests": ANY, "limits": ANY}, "readinessProbe": _PROBE}
_POD_SPEC = {"containers": [_CONTAINER], "initContainers": [_CONTAINER], "restartPolicy": ANY,
             "terminationGracePeriodSeconds": ANY, "tolerations": ANY, "priority": ANY, "priorityClassName": ANY,
             "nodeName": ANY, "overhead": ANY, "nodeSelector": None}
_META = {"name": ANY, "generateName": ANY, "namespace": ANY, "labels": ANY, "annotations": ANY}
_TEMPLATE = {"metadata": {"labels": ANY, "annotations": ANY}, "spec": _POD_SPEC}
_SELECTOR = {"matchLabels": ANY, "matchExpressions": ANY}
SCHEMA = {
    "Pod": {"spec": _POD_SPEC},
    "ReplicaSet": {"spec": {"replicas": ANY, "selector": _SELECTOR, "template": _TEMPLATE, "minReadySeconds": ANY}},
    "Deployment": {"spec": {"replicas": ANY, "selector": _SELECTOR, "template": _TEMPLATE, "minReadySeconds": ANY,
                            "strategy": {"type": ANY, "rollingUpdate": {"maxSurge": ANY, "maxUnavailable": ANY}},
                            "progressDeadlineSeconds": ANY, "revisionHistoryLimit": ANY, "paused": ANY}},
    "Service": {"spec": {"selector": ANY, "ports": ANY, "type": ANY, "publishNotReadyAddresses": ANY, "clusterIP": ANY}},
    "ResourceQuota": {"spec": {"hard": ANY}},
    "HorizontalPodAutoscaler": {"spec": {"scaleTargetRef": ANY, "minReplicas": ANY, "maxReplicas": ANY, "metrics": ANY,
                                         "behavior": ANY}},
    "Node": {"spec": {"unschedulable": ANY, "taints": ANY, "podCIDR": ANY}, "status": {"allocatable": ANY, "capacity": ANY}},
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


INT32_MAX = rules.INT32_MAX
# This simulator's own limit (not the API's, which is int32): every pod is simulated, and 10^5
# replicas cost about a minute of CPU per simulated second. benchmarks/k8s.py runs 3,000.
SIM_MAX_REPLICAS = 10_000
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_NAMES = {   # apimachinery util/validation IsDNS1123Subdomain, IsDNS1123Label, IsDNS1035Label
    "subdomain": (re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"), 253,
                  "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, "
                  "≤ 253 characters (RFC 1123 subdomain, e.g. 'web-1')"),
    "label": (re.compile(_DNS_LABEL), 63, "lowercase letters, digits and '-', starting and ending with a letter "
                                          "or digit, ≤ 63 characters (RFC 1123 label, e.g. 'web')"),
    "dns1035": (re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?"), 63, "lowercase letters, digits and '-', starting with a "
                "letter, ending with a letter or digit, ≤ 63 characters (RFC 1035 label, e.g. 'web')"),
}
_QNAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_QNAME_ALLOWED = "[prefix/]name: name ≤ 63 of letters, digits, '-', '_', '.' (alphanumeric at both ends)"
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_ALLOWED = "a string of ≤ 63 letters, digits, '-', '_' or '.', alphanumeric at both ends (or empty)"
_IANA_SVC_NAME = re.compile(r"(?=.*[a-z])(?!.*--)[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROBE_INTS = ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold", "failureThreshold")


def _name(value: object, field_: str, kind: str = "subdomain") -> str:
    """A DNS name (``kind``: subdomain, label or dns1035) as apimachinery's IsDNS1123Subdomain etc."""
    pattern, limit, allowed = _NAMES[kind]
    if not isinstance(value, str) or len(value) > limit or not pattern.fullmatch(value):
        raise ValidationError(field_, f"{value!r} is not a valid name", allowed)
    return value


def _qualified_name(key: object, field_: str) -> None:
    """util/validation IsQualifiedName: an optional DNS-subdomain prefix and '/', then the name."""
    prefix, sep, name = key.rpartition("/") if isinstance(key, str) else ("", "", None)
    if not (isinstance(name, str) and len(name) <= 63 and _QNAME.fullmatch(name)
            and (not sep or (len(prefix) <= 253 and _NAMES["subdomain"][0].fullmatch(prefix)))):
        raise ValidationError(field_, f"{key!r} is not a valid key", _QNAME_ALLOWED)


def _label_value(value: object, field_: str) -> None:
    """util/validation IsValidLabelValue."""
    if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        raise ValidationError(field_, f"{value!r} is not a valid label value", _LABEL_VALUE_ALLOWED)


def _labels(value: object, field_: str) -> None:
    """metav1validation.ValidateLabels: qualified-name keys, label-value strings."""
    if not isinstance(value, dict):
        raise ValidationError(field_, "must be a mapping of strings", "{app: web}")
    for k, v in value.items():
        _qualified_name(k, field_)
        _label_value(v, f"{field_}.{k}")


def _annotations(value: object, field_: str, pod: bool) -> None:
    """apimachinery ValidateAnnotations (string values); for pods and pod templates also
    ValidatePodSpecificAnnotations: pod-deletion-cost must be a 32-bit integer."""
    if not isinstance(value, dict):
        raise ValidationError(field_, "must be a mapping of strings", "{team: search}")
    for k, v in value.items():
        _qualified_name(k, field_)
        if not isinstance(v, str):
            raise ValidationError(f"{field_}.{k}", f"{v!r} is not a string", "a string (quote numbers: '100')")
    if pod:
        rules.deletion_cost(value, field_)


def _entries(value: object, field_: str, example: str):
    """(``field[i]``, entry) for a list of mappings, refusing anything else with ``example`` as the
    allowed shape (tolerations, taints, ports, match expressions)."""
    if not isinstance(value, list):
        raise ValidationError(field_, "must be a list", f"[{example}]")
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ValidationError(f"{field_}[{i}]", "must be a mapping", example)
        yield f"{field_}[{i}]", entry


def check_selector(selector: object, field_: str, plain_ok: bool = False) -> None:
    """metav1validation.ValidateLabelSelector: matchLabels are labels; each matchExpression has a
    key, an operator In/NotIn/Exists/DoesNotExist and string values (required for In/NotIn, empty
    for Exists/DoesNotExist). ``plain_ok``: a plain label map (a Service's selector) is allowed."""
    if not isinstance(selector, dict):
        raise ValidationError(field_, "must be a mapping", "{matchLabels: {app: web}}")
    if plain_ok and "matchLabels" not in selector and "matchExpressions" not in selector:
        _labels(selector, field_)
        return
    if selector.get("matchLabels") is not None:
        _labels(selector["matchLabels"], f"{field_}.matchLabels")
    expressions = selector.get("matchExpressions")
    for f, e in _entries(expressions or [], f"{field_}.matchExpressions", "{key: app, operator: In, values: [web]}"):
        _qualified_name(e.get("key"), f"{f}.key")
        op, values = e.get("operator"), e.get("values")
        if op not in _OPERATORS:
            raise ValidationError(f"{f}.operator", f"{op!r} is not a valid selector operator", ", ".join(_OPERATORS))
        if values is not None and not isinstance(values, list):
            raise ValidationError(f"{f}.values", "must be a list of strings", "[web, api]")
        if op in ("In", "NotIn") and not values:
            raise ValidationError(f"{f}.values", "must be specified when `operator` is 'In' or 'NotIn'", "[web, …]")
        if op in ("Exists", "DoesNotExist") and values:
            raise ValidationError(f"{f}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        for k, v in enumerate(values or []):
            _label_value(v, f"{f}.values[{k}]")


def _tolerations(value: object, field_: str) -> None:
    """core/validation ValidateTolerations."""
    for f, t in _entries(value, field_, "{key: k, operator: Equal, value: v, effect: NoSchedule}"):
        key, op, effect = t.get("key"), t.get("operator") or "Equal", t.get("effect") or ""
        if key not in (None, ""):
            _qualified_name(key, f"{f}.key")
        if op not in ("Equal", "Exists"):
            raise ValidationError(f"{f}.operator", f"{op!r} is not supported", "Equal, Exists")
        if key in (None, "") and op != "Exists":
            raise ValidationError(f"{f}.operator", "must be Exists when `key` is empty, which means "
                                  '"match all values and all keys"', "Exists")
        if op == "Exists" and t.get("value") not in (None, ""):
            raise ValidationError(f"{f}.value", "must be empty when `operator` is 'Exists'")
        if t.get("value") is not None:
            _label_value(t["value"], f"{f}.value")
        if effect and effect not in _EFFECTS:
            raise ValidationError(f"{f}.effect", f"{effect!r} is not supported", ", ".join(_EFFECTS))
        if t.get("tolerationSeconds") is not None:
            if effect != "NoExecute":
                raise ValidationError(f"{f}.effect", "must be 'NoExecute' when `tolerationSeconds` is set", "NoExecute")
            require_int(t["tolerationSeconds"], f"{f}.tolerationSeconds", -2**53)


def _taints(value: object, field_: str) -> None:
    """core/validation validateNodeTaints: key and effect required, unique by (key, effect);
    ``timeAdded`` (set by controllers) is simulated seconds."""
    seen = set()
    for f, t in _entries(value, field_, "{key: dedicated, value: gpu, effect: NoSchedule}"):
        _qualified_name(t.get("key"), f"{f}.key")
        if t.get("value") is not None:
            _label_value(t["value"], f"{f}.value")
        if t.get("effect") not in _EFFECTS:
            raise ValidationError(f"{f}.effect", f"{t.get('effect')!r} is not supported", ", ".join(_EFFECTS))
        if t.get("timeAdded") is not None:
            require_number(t["timeAdded"], f"{f}.timeAdded", 0)
        if (t["key"], t["effect"]) in seen:
            raise ValidationError(f, "taints must be unique by key and effect pair")
        seen.add((t["key"], t["effect"]))


def _port(value: object, field_: str, name_ok: bool) -> None:
    """IsValidPortNum (1…65535), or with ``name_ok`` an IANA service name (targetPort: http)."""
    if name_ok and isinstance(value, str):
        if not _IANA_SVC_NAME.fullmatch(value):
            raise ValidationError(field_, f"{value!r} is not a port name", "≤ 15 lowercase letters, digits, '-'")
        return
    require_int(value, field_, 1, 65535)


def _service_ports(value: object, field_: str) -> None:
    """core/validation validateServicePort: port 1…65535, targetPort a port or a name, protocol
    TCP/UDP/SCTP, names DNS labels, required and unique when there are several ports."""
    names = set()
    for f, p in _entries(value, field_, "{port: 80, targetPort: 8080}"):
        _port(p.get("port"), f"{f}.port", False)
        if p.get("targetPort") is not None:
            _port(p["targetPort"], f"{f}.targetPort", True)
        if p.get("protocol", "TCP") not in ("TCP", "UDP", "SCTP"):
            raise ValidationError(f"{f}.protocol", f"{p['protocol']!r} is not supported", "TCP, UDP, SCTP")
        if p.get("name") is not None or len(value) > 1:
            _name(p.get("name"), f"{f}.name", "label")
            if p["name"] in names:
                raise ValidationError(f"{f}.name", f"duplicate port name {p['name']!r}")
            names.add(p["name"])


def _check_container(c: dict, f: str, names: set) -> None:
    """core/validation validateContainers: a DNS-1123 label name unique in the pod, an image,
    requests ≤ limits, readiness-probe integers ≥ 0 (ValidateNonnegativeField)."""
    _name(c.get("name"), f"{f}.name", "label")
    if c["name"] in names:
        raise ValidationError(f"{f}.name", f"duplicate container name {c['name']!r}")
    names.add(c["name"])
    image = c.get("image")
    if not isinstance(image, str) or not image or image != image.strip():
        raise ValidationError(f"{f}.image", f"{image!r} is not an image name",
                              "a non-empty string without surrounding spaces, e.g. 'nginx:1.27'")
    req, lim = rules.container_resources(c, f)
    for r, v in req.items():
        if r in lim and v > lim[r]:
            raise ValidationError(f"{f}.resources.requests.{r}", f"must be less than or equal to {r} limit",
                                  f"≤ the limit {c['resources']['limits'][r]}")
    probe = c.get("readinessProbe") or {}
    for k in _PROBE_INTS:
        if k in probe:
            require_int(probe[k], f"{f}.readinessProbe.{k}", 0, INT32_MAX)


def _check_pod_spec(spec: dict, where: str) -> None:
    """core/validation ValidatePodSpec, for the fields the simulator reads."""
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ValidationError(f"{where}.containers", "at least one container is required")
    names: set = set()
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or []):
            _check_container(c, f"{where}.{group}[{i}]", names)
    if spec.get("restartPolicy", "Always") not in ("Always", "OnFailure", "Never"):
        raise ValidationError(f"{where}.restartPolicy", f"{spec['restartPolicy']!r} is not supported",
                              "Always, OnFailure, Never")
    if "terminationGracePeriodSeconds" in spec:
        require_int(spec["terminationGracePeriodSeconds"], f"{where}.terminationGracePeriodSeconds", 0)
    if "priority" in spec:
        require_int(spec["priority"], f"{where}.priority", -INT32_MAX - 1, INT32_MAX)
    if "priorityClassName" in spec:
        cls = _name(spec["priorityClassName"], f"{where}.priorityClassName")
        value = rules.SYSTEM_PRIORITY_CLASSES.get(cls)
        if value is None:   # admission plugin "Priority": the class must exist; this cluster has only the system ones
            raise ValidationError(f"{where}.priorityClassName", f"no PriorityClass with name {cls} was found",
                                  ", ".join(rules.SYSTEM_PRIORITY_CLASSES))
        if spec.get("priority", value) != value:   # admission plugin "Priority"
            raise ValidationError(f"{where}.priority", f"the integer value of priority ({spec['priority']}) must not "
                                  f"be provided in pod spec; {cls} computes {value}", f"omit it, or {value}")
    if spec.get("nodeName") not in (None, ""):
        _name(spec["nodeName"], f"{where}.nodeName")
    if "tolerations" in spec:
        _tolerations(spec["tolerations"], f"{where}.tolerations")
    rules.resource_list(spec.get("overhead"), f"{where}.overhead")


def _check_workload(obj: dict) -> None:
    """apps/validation ValidateDeploymentSpec / ValidateReplicaSetSpec."""
    spec = obj["spec"]
    kind = obj["kind"]
    for k in ("replicas", "minReadySeconds", "revisionHistoryLimit"):   # ValidateNonnegativeField
        if k in spec:
            require_int(spec[k], f"spec.{k}", 0, INT32_MAX)
    if spec.get("replicas", 0) > SIM_MAX_REPLICAS:   # not an API rule: the cost of simulating every pod
        raise ValidationError("spec.replicas", f"{spec['replicas']} is more than this simulator runs",
                              f"integer 0…{SIM_MAX_REPLICAS}: the API allows up to 2^31−1; this simulator runs up to "
                              f"{SIM_MAX_REPLICAS:,} per {kind}")
    if "paused" in spec:
        require_bool(spec["paused"], "spec.paused")
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        raise ValidationError("spec.selector", "required (apps/v1), and must not be empty", "matchLabels: {app: web}")
    check_selector(selector, "spec.selector")
    template = spec.get("template")
    if not isinstance(template, dict):
        raise ValidationError("spec.template", "required")
    meta = template.get("metadata") or {}
    labels = meta.get("labels") or {}
    _labels(labels, "spec.template.metadata.labels")
    if "annotations" in meta:
        _annotations(meta["annotations"], "spec.template.metadata.annotations", pod=True)
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
            deadline = require_int(spec["progressDeadlineSeconds"], "spec.progressDeadlineSeconds", 1, INT32_MAX)
            if deadline <= spec.get("minReadySeconds", 0):
                raise ValidationError("spec.progressDeadlineSeconds", "must be greater than minReadySeconds")


def _check_metadata(meta: dict, kind: str) -> None:
    """apimachinery ValidateObjectMeta: the name (a DNS-1035 label for a Service, else an RFC 1123
    subdomain; a generateName prefix likewise), a DNS-label namespace, labels, annotations."""
    style = "dns1035" if kind == "Service" else "subdomain"
    if meta.get("name"):
        _name(meta["name"], "metadata.name", style)
    elif "generateName" in meta:   # maskTrailingDash: "web-" is checked as "weba"
        prefix = meta["generateName"]
        masked = prefix[:-1] + "a" if isinstance(prefix, str) and prefix.endswith("-") else prefix
        if not isinstance(masked, str) or not _NAMES[style][0].fullmatch(masked) or len(masked) > _NAMES[style][1]:
            raise ValidationError("metadata.generateName", f"{prefix!r} is not a valid name prefix", _NAMES[style][2])
    if "namespace" in meta:
        _name(meta["namespace"], "metadata.namespace", "label")
    if "labels" in meta:
        _labels(meta["labels"], "metadata.labels")
    if "annotations" in meta:
        _annotations(meta["annotations"], "metadata.annotations", pod=kind == "Pod")


def _selector_of(obj: dict) -> object:
    """spec.selector with empty parts dropped (equality.Semantic treats nil and empty alike)."""
    sel = (obj.get("spec") or {}).get("selector")
    return {k: v for k, v in sel.items() if v not in (None, {}, [])} if isinstance(sel, dict) else sel


def validate_update(old: dict, new: dict) -> None:
    """Update-only rules: apps/v1 ValidateDeploymentUpdate / ValidateReplicaSetUpdate keep
    ``spec.selector`` immutable ("field is immutable"). ``new`` may be unchecked input."""
    if old["kind"] in ("Deployment", "ReplicaSet") and isinstance(new.get("spec"), dict):
        if _selector_of(old) != _selector_of(new):
            raise ValidationError("spec.selector", "field is immutable",
                                  f"the selector it was created with: {old['spec'].get('selector')}")


def validate(manifest: dict) -> Manifest:
    """Check one object; returns the modelled part and the report of everything else."""
    if not isinstance(manifest, dict):
        raise ValidationError("manifest", "must be a mapping", "a Kubernetes object with apiVersion, kind, metadata")
    kind = manifest.get("kind")
    if not isinstance(kind, str) or kind not in SCHEMA:
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
    _check_metadata(clean_meta, kind)
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
        spec = obj["spec"]
        if spec.get("selector") is not None:
            _labels(spec["selector"], "spec.selector")
        if spec.get("ports") is not None:
            _service_ports(spec["ports"], "spec.ports")
        if spec.get("type", "ClusterIP") not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
            raise ValidationError("spec.type", f"{spec['type']!r} is not supported",
                                  "ClusterIP, NodePort, LoadBalancer, ExternalName")
        if "publishNotReadyAddresses" in spec:
            require_bool(spec["publishNotReadyAddresses"], "spec.publishNotReadyAddresses")
        if spec.get("clusterIP") not in (None, "", "None"):
            try:
                ipaddress.IPv4Address(spec["clusterIP"])
            except ValueError:
                raise ValidationError("spec.clusterIP", f"{spec['clusterIP']!r} is not an IPv4 address",
                                      "an address such as 10.96.0.10, 'None' (headless) or empty") from None
    elif kind == "ResourceQuota":
        validate_hard(obj["spec"].get("hard") or {})
    elif kind == "HorizontalPodAutoscaler":
        from engines.k8s.hpa import check_hpa_spec
        check_hpa_spec(obj["spec"])
    elif kind == "Node":
        alloc = (obj.get("status") or {}).get("allocatable")
        if not isinstance(alloc, dict) or "cpu" not in alloc or "memory" not in alloc:
            raise ValidationError("status.allocatable", "a Node needs allocatable cpu and memory",
                                  "{cpu: '4', memory: 16Gi, pods: '110'}")
        rules.parse_allocatable(obj["status"])
        rules.resource_list(obj["status"].get("capacity"), "status.capacity")
        spec = obj["spec"]
        if "taints" in spec:
            _taints(spec["taints"], "spec.taints")
        if "unschedulable" in spec:
            require_bool(spec["unschedulable"], "spec.unschedulable")
        if spec.get("podCIDR"):
            parse_cidr(spec["podCIDR"], "spec.podCIDR")
    return Manifest(obj=obj, unsupported=out)


MAX_EXPANDED_NODES = 100_000   # go-yaml refuses "excessive aliasing" the same way (decode.go)


def expanded_size(obj: object, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many values ``obj`` holds once YAML aliases are expanded, counted without expanding
    them, stopping past ``limit`` (``limit + 1`` for a recursive alias): a 500-byte "billion
    laughs" document parses into a few shared lists that would expand to 9⁹ strings. One count
    for every reader: :func:`engines.core.reading.tree_size`."""
    return tree_size(obj, limit)[0]


def load_manifests(text: str) -> list[Manifest]:
    """Parse a YAML stream (documents separated by ---; a List's items are expanded)."""
    docs = load_yaml_all(text, "yaml", MAX_EXPANDED_NODES)   # a YAML bomb, a recursive alias, deep nesting: refused
    out = []
    for doc in docs:
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        if items is not None and not isinstance(items, list):
            raise ValidationError("items", "a List's items must be a list of objects", "items: [{kind: Pod, …}]")
        out.extend(validate(item) for item in items or [])
    if not out:
        raise ValidationError("yaml", "no objects found", "one or more Kubernetes objects")
    return out
