"""Replay a real cluster: read a ``kubectl get nodes,deployments,replicasets,pods,services -o yaml``
(or ``-o json``) dump and load its objects into a simulated cluster. Offline: a file, never a
connection or credentials.

The dump is checked before anything is loaded: an unreadable file, broken YAML/JSON, a file that
is not a List of objects, or an object the API validation refuses is reported (the item, its
kind/namespace/name and the field) and nothing is loaded. Kinds the simulator does not model
(ConfigMap, StatefulSet, …) are listed and skipped; EndpointSlices and Events are rebuilt by the
loops. What the server set (uids, status, managed fields) is dropped: ownerReferences go too, so
the ReplicaSets and Deployments *adopt* their pods again by selector, as their controllers do
(controller_ref_manager.go). Pods keep their node and, where it fits the node's pod CIDR, their
address; their containers are started afresh by the simulated kubelets.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engines.core import reading
from engines.core.errors import ValidationError
from engines.k8s import manifests, rules
from engines.k8s.store import NAMESPACED, clone

MAX_DUMP_BYTES = 64 * 2**20
MAX_DUMP_NODES = 10 * manifests.MAX_EXPANDED_NODES   # a dump is a whole cluster, ten times one manifest
LOAD_ORDER = ("Node", "Service", "ResourceQuota", "Deployment", "ReplicaSet", "Pod", "HorizontalPodAutoscaler")
REBUILT = {"EndpointSlice": "rebuilt by the EndpointSlice controller", "Endpoints": "rebuilt from the EndpointSlices",
           "Event": "a record, not state: the simulation writes its own"}
DUMP_SECONDS = 60


@dataclass(frozen=True)
class Dump:
    """A checked dump: the objects to load (in load order), what was skipped and why."""

    source: str
    objects: tuple[dict, ...]
    skipped: tuple[tuple[str, int, str], ...]      # (kind, how many, why)
    notes: tuple[str, ...]
    ip_hints: tuple[tuple[str, str], ...]           # ("namespace/pod", its IP in the dump)

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for o in self.objects:
            out[o["kind"]] = out.get(o["kind"], 0) + 1
        return out

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(sorted({o["metadata"].get("namespace", "default") for o in self.objects if o["kind"] in NAMESPACED}))

    @property
    def report(self) -> str:
        loaded = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in self.counts.items())
        lines = [f"Loaded {loaded} from {Path(self.source).name} (namespaces: {', '.join(self.namespaces) or '—'})."]
        lines += [f"Skipped {n} {k}: {why}" for k, n, why in self.skipped]
        lines += self.notes
        return "\n".join(lines)


def read_dump(path: str | os.PathLike) -> Dump:
    """Read and check the dump at ``path`` (raises ValidationError saying what is wrong)."""
    p = Path(path)

    def fail(name: str, why: str) -> ValidationError:
        return ValidationError("path", f"cannot read {p if why.startswith('cannot') else name}: {why}",
                               f"a kubectl get … -o yaml|json file of at most {MAX_DUMP_BYTES // 2**20} MiB")

    text = reading.read_text(p, MAX_DUMP_BYTES, fail, not_text="is not UTF-8 text")
    try:
        return parse_dump(text, str(p))
    except ValidationError as exc:
        raise reading.in_file(exc, p.name) from None


def _parse(text: str) -> list:
    """The dump's documents: JSON or YAML, refused when deeper than ``reading.MAX_DEPTH`` or larger
    than :data:`MAX_DUMP_NODES` values once YAML aliases are expanded (a "billion laughs", ``&r [*r]``)."""
    if text.lstrip().startswith(("{", "[")):
        return [reading.load_json(text, "dump", MAX_DUMP_NODES)]
    return reading.load_yaml_all(text, "dump", MAX_DUMP_NODES)


def _items(docs: list) -> list:
    items = []
    for d, doc in enumerate(docs):
        if isinstance(doc, dict) and (doc.get("kind") == "List" or str(doc.get("kind", "")).endswith("List")):
            if not isinstance(doc.get("items"), list):
                raise ValidationError(f"documents[{d}].items", "a List's items must be a list of objects")
            items.extend(doc["items"])
        elif isinstance(doc, dict) and "kind" in doc:
            items.append(doc)
        else:
            raise ValidationError(f"documents[{d}]", "not a Kubernetes object or List",
                                  "the output of kubectl get nodes,deployments,replicasets,pods,services -o yaml")
    if not items:
        raise ValidationError("dump", "no objects found", "a List with items")
    return items


def _map(value) -> dict:
    """A field read for the dump's own bookkeeping: a wrong type reads as empty here, and the API
    validation (:func:`manifests.validate`) then names it."""
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _sanitize(obj: dict, notes: dict[str, list[str]], title: str) -> dict:
    """Fields a real object carries that this cluster cannot accept as they are."""
    obj = clone(obj)
    kind = obj.get("kind")
    if kind == "Node":
        for t in _list(_map(obj.get("spec")).get("taints")):
            if isinstance(t, dict):
                t.pop("timeAdded", None)        # an RFC 3339 time; simulated time starts at 0
    specs = []
    if kind == "Pod":
        specs.append(obj.get("spec"))
    elif kind in ("Deployment", "ReplicaSet"):
        specs.append(_map(_map(obj.get("spec")).get("template")).get("spec"))
    for spec in specs:
        if isinstance(spec, dict) and spec.get("priorityClassName") is not None \
                and not isinstance(spec["priorityClassName"], str):
            raise ValidationError(f"{title}.spec.priorityClassName", "must be text")
        if isinstance(spec, dict) and spec.get("priorityClassName") and \
                spec["priorityClassName"] not in rules.SYSTEM_PRIORITY_CLASSES:
            notes.setdefault(spec["priorityClassName"], []).append(f"{title} (priority {spec.get('priority', 0)})")
            spec.pop("priorityClassName")
    return obj


def parse_dump(text: str, source: str = "dump") -> Dump:
    """Check a dump's text; see the module docstring."""
    if not isinstance(text, str):
        raise ValidationError("dump", "expected text")
    items = _items(_parse(text))
    skipped: dict[str, list] = {}
    notes: list[str] = []
    classes: dict[str, list[str]] = {}      # PriorityClass → the objects that named it
    checked: list[dict] = []
    seen: set[tuple] = set()
    hints: list[tuple[str, str]] = []
    node_names = {i["metadata"].get("name") for i in items if isinstance(i, dict) and i.get("kind") == "Node"
                  and isinstance(i.get("metadata"), dict) and isinstance(i["metadata"].get("name"), str)}
    foreign_owned: dict[str, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict):
            raise ValidationError(f"items[{i}]", "not a Kubernetes object (no metadata)")
        kind = item.get("kind")
        meta = item["metadata"]
        ns = meta.get("namespace")
        title = f"{kind}/{ns + '/' if isinstance(ns, str) and ns else ''}{meta.get('name', '?')}"
        if not isinstance(kind, str) or kind not in LOAD_ORDER:
            skipped.setdefault(str(kind), []).append(REBUILT.get(kind, "not simulated") if isinstance(kind, str)
                                                     else "not simulated")
            continue
        if kind == "Pod":
            phase = _map(item.get("status")).get("phase")
            if phase in ("Succeeded", "Failed") or meta.get("deletionTimestamp"):
                skipped.setdefault("Pod", []).append("finished or being deleted in the dump")
                continue
            owner = next((r for r in _list(meta.get("ownerReferences")) if isinstance(r, dict) and r.get("controller")),
                         None)
            if owner is not None and owner.get("kind") not in ("ReplicaSet",):
                foreign_owned[str(owner.get("kind"))] = foreign_owned.get(str(owner.get("kind")), 0) + 1
            node = _map(item.get("spec")).get("nodeName")
            if isinstance(node, str) and node and node not in node_names:
                notes.append(f"{title}: its node {node} is not in the dump: the scheduler places it again")
                item = {**item, "spec": {k: v for k, v in item["spec"].items() if k != "nodeName"}}
        obj = _sanitize(item, classes, title)
        try:
            manifest = manifests.validate(obj)
        except ValidationError as exc:
            raise ValidationError(f"items[{i}] ({title}).{exc.field}", str(exc).split(": ", 1)[-1]) from None
        clean = manifest.obj
        if kind in NAMESPACED:
            clean["metadata"].setdefault("namespace", "default")
        name, ns = clean["metadata"].get("name"), clean["metadata"].get("namespace", "")
        if not isinstance(name, str) or not name or not isinstance(ns, str):
            raise ValidationError(f"items[{i}] ({title}).metadata", "needs a name (and a namespace, if any) as text")
        key = (kind, ns, name)
        if key in seen:
            raise ValidationError(f"items[{i}] ({title})", "appears twice in the dump")
        seen.add(key)
        if kind == "Pod" and _map(item.get("status")).get("podIP") and clean["spec"].get("nodeName"):
            hints.append((f"{key[1]}/{key[2]}", str(item["status"]["podIP"])))
        checked.append(clean)
    for name, users in sorted(classes.items()):
        notes.append(f"PriorityClass {name} is not in the dump: {len(users)} object(s) keep their priority value "
                     f"instead ({', '.join(users[:2])}{', …' if len(users) > 2 else ''})")
    for kind, n in sorted(foreign_owned.items()):
        notes.append(f"{n} pod(s) belong to a {kind}, which is not in the dump: they run here as bare pods, and "
                     "nothing recreates them if they go")
    if not checked:
        raise ValidationError("dump", "none of its objects is a kind the simulator loads", ", ".join(LOAD_ORDER))
    checked.sort(key=lambda o: LOAD_ORDER.index(o["kind"]))
    return Dump(source=source, objects=tuple(checked),
                skipped=tuple((k, len(v), v[0]) for k, v in sorted(skipped.items())),
                notes=tuple(notes), ip_hints=tuple(hints))


def load_dump(cluster, dump: Dump) -> None:
    """Apply the dump's objects to ``cluster`` in load order (a refusal names the object)."""
    cluster.ctx.ip_hints.update(dict(dump.ip_hints))
    cluster._loading_dump = True
    try:
        for obj in dump.objects:
            try:
                cluster.apply(clone(obj))
            except ValidationError as exc:
                m = obj["metadata"]
                raise ValidationError(f"{obj['kind']}/{m.get('namespace', '') + '/' if m.get('namespace') else ''}"
                                      f"{m['name']}.{exc.field}", str(exc).split(": ", 1)[-1]) from None
    finally:
        cluster._loading_dump = False
    cluster.settle()
