"""Your own manifests in a fresh simulated cluster: the checks a pasted YAML passes, and its one run.

``check_yaml`` parses and validates the text (``load_manifests``) and refuses more pods than the
animation can draw, naming the field; ``run_yaml`` plays the manifests for ``YAML_SECONDS`` in a
fresh cluster (three 4-CPU / 8Gi nodes unless they define Nodes), one frame per simulated second.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engines.core.errors import ValidationError
from engines.k8s.manifests import load_manifests
from engines.k8s.scenarios import Guide, Timeline, play_guide

YAML_SECONDS = 60
MAX_YAML_PODS = 2000   # a teaching animation: ~10 ms of simulation per pod-second, one tile per pod
DEFAULT_NODES = 3      # nodes added when the manifests define none: 4 CPUs, 8Gi each
DEFAULT_NODE_ALLOCATABLE = {"cpu": "4", "memory": "8Gi"}

EXAMPLE_YAML = """apiVersion: v1
kind: Node
metadata: {name: node-0}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {memory: 512Mi}}
"""


def pod_demand(objs: list[dict]) -> list[tuple[str, str, int]]:
    """(object, field, pods) for every pasted object that creates pods: a Deployment or
    ReplicaSet its ``spec.replicas`` (default 1), a bare Pod one."""
    out = []
    for o in objs:
        title = f"{o['kind']}/{o['metadata'].get('name') or o['metadata'].get('generateName', '')}"
        if o["kind"] in ("Deployment", "ReplicaSet"):
            out.append((title, "spec.replicas", int((o.get("spec") or {}).get("replicas", 1))))
        elif o["kind"] == "Pod":
            out.append((title, "kind: Pod", 1))
    return out


def pod_limit(objs: list[dict], limit: int = MAX_YAML_PODS) -> tuple[str, str] | None:
    """(field, why) when these manifests ask for more pods than the animation draws, else None."""
    demand = pod_demand(objs)
    for title, field, n in demand:
        if n > limit:
            return (f"{title} {field}", f"{n} pods is more than this simulator animates (at most {limit}); "
                                        "lower the replica count")
    total = sum(n for _t, _f, n in demand)
    if total > limit:
        parts = ", ".join(f"{t} {n}" for t, _f, n in sorted(demand, key=lambda d: -d[2])[:4])
        return ("spec.replicas", f"{total} pods in total ({parts}{', …' if len(demand) > 4 else ''}) is more than "
                                 f"this simulator animates (at most {limit}); lower the replica counts")
    return None


def pod_limit_error(objs: list[dict], limit: int = MAX_YAML_PODS) -> str | None:
    """Why these manifests are too big to animate (naming the field), or None."""
    found = pod_limit(objs, limit)
    return None if found is None else str(ValidationError(*found))


@dataclass(frozen=True)
class YamlCheck:
    """Manifests that passed every check: the objects to apply and the fields the simulator drops."""

    objects: tuple[dict, ...]
    unsupported: tuple[str, ...]     # "Kind/name: field …", one per dropped field


def check_yaml(text: str) -> YamlCheck:
    """Parse and validate ``text``; a :class:`ValidationError` names the field of the first problem
    (including more pods than ``MAX_YAML_PODS``). Quick: no simulation."""
    docs = load_manifests(text)
    objs = tuple(m.obj for m in docs)
    too_big = pod_limit(list(objs))
    if too_big:
        raise ValidationError(*too_big)
    return YamlCheck(objs, tuple(f"{m.title}: {u}" for m in docs for u in m.unsupported))


@dataclass(frozen=True)
class YamlRun:
    """The timeline of a YAML run, or why the cluster refused an object on apply."""

    timeline: Timeline | None
    error: str | None
    unsupported: tuple[str, ...]

    @property
    def report(self) -> str:
        """What the YAML tab says under the Apply button (HTML line breaks)."""
        if self.error is not None:
            return f"Error: {self.error}"
        if self.unsupported:
            return "Applied. Unsupported fields (dropped):<br>" + "<br>".join(self.unsupported)
        return "Applied; every field is simulated."


def yaml_guide(objs: tuple[dict, ...]) -> Guide:
    """The objects as a guide of its own (never registered in ``GUIDES``): Nodes first."""
    def setup(c) -> None:
        if not any(o["kind"] == "Node" for o in objs):
            for i in range(DEFAULT_NODES):
                c.apply({"kind": "Node", "metadata": {"name": f"node-{i}"},
                         "status": {"allocatable": dict(DEFAULT_NODE_ALLOCATABLE)}})
        for o in sorted(objs, key=lambda o: o["kind"] != "Node"):
            c.apply(o)
    return Guide("yaml", "Your YAML", "Your manifests, applied at t = 0.", setup, [], YAML_SECONDS)


def run_yaml(text: str, progress: Callable[[float, str], None] | None = None,
             cancelled: Callable[[], bool] | None = None, commands=()) -> YamlRun:
    """Check ``text`` and play it for ``YAML_SECONDS`` in a fresh cluster. ``progress(fraction,
    text)`` once per simulated second; ``cancelled()`` true raises ``engines.core.errors.Cancelled``.
    Bad manifests raise ValidationError; an object the cluster refuses on apply is the run's error.
    ``commands``: kubectl commands given during the run, as (second, command) (``play_guide``)."""
    check = check_yaml(text)
    guide = yaml_guide(check.objects)
    seconds = max(int(guide.duration), max([t for t, _ in commands], default=-60) + 60) + 1

    def step(fraction: float) -> None:
        if progress is not None:
            progress(fraction, f"simulating your YAML: {round(fraction * seconds)} of {seconds - 1} s")
    try:
        timeline = play_guide(guide, progress=step, cancelled=cancelled, commands=commands)
    except ValidationError as exc:
        return YamlRun(None, str(exc), check.unsupported)
    return YamlRun(timeline, None, check.unsupported)
