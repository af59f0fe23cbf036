"""kubectl against the simulated cluster: what an operator types, and what the API server answers.

A command is applied at the cluster's current time. The answer is the API server's (or kubectl's
own, for client-side checks): *accepted* means the change was stored, not that anything works —
the controllers act on it from the next tick, and may undo it (a hand-scaled ReplicaSet), never
reach it (a Pending pod) or report it (a stalled rollout). Supported verbs: apply -f (the manifest
text after the first line), scale, set image, delete, label, cordon, uncordon, drain,
rollout undo / pause / resume, patch (JSON merge). Client-side behaviour follows kubectl's
sources (k8s.io/kubectl pkg/cmd/<verb>/<verb>.go; rollback: pkg/polymorphichelpers/rollback.go
DeploymentRollbacker; drain: pkg/drain/drain.go and filters.go).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.core.reading import load_yaml_all
from engines.k8s import manifests, rules
from engines.k8s.manifests import MAX_EXPANDED_NODES
from engines.k8s.deployment import HASH_LABEL, REVISION
from engines.k8s.store import NAMESPACED, ApiError, clone, controller_ref, normalize_kind, obj_key

MAX_COMMAND_CHARS = 200_000
ACCEPTED_NOTE = ("Accepted is not success: the API server stored the change; the controllers act on it from the "
                 "next tick, and only what they do decides whether anything works.")
VERBS = ("apply", "scale", "set image", "delete", "label", "cordon", "uncordon", "drain", "rollout undo",
         "rollout pause", "rollout resume", "patch")
_GROUPS = {"Deployment": "deployment.apps", "ReplicaSet": "replicaset.apps", "Pod": "pod", "Service": "service",
           "Node": "node", "EndpointSlice": "endpointslice.discovery.k8s.io", "ResourceQuota": "resourcequota",
           "HorizontalPodAutoscaler": "horizontalpodautoscaler.autoscaling"}
_PLURAL = {"Deployment": "deployments.apps", "ReplicaSet": "replicasets.apps", "Pod": "pods", "Service": "services",
           "Node": "nodes", "EndpointSlice": "endpointslices.discovery.k8s.io", "ResourceQuota": "resourcequotas",
           "HorizontalPodAutoscaler": "horizontalpodautoscalers.autoscaling"}


@dataclass(frozen=True)
class CommandResult:
    """One command's answer: ``accepted`` (stored by the API server) or refused, with the text
    kubectl prints; ``objects`` the ``kind/name`` refs it wrote; ``t`` the simulated second."""

    command: str
    accepted: bool
    message: str
    t: float
    objects: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        return ACCEPTED_NOTE if self.accepted else "Refused: nothing was changed by this part of the command."

    @property
    def text(self) -> str:
        head = self.command.splitlines()[0] if self.command else ""
        return f"$ kubectl {head}\n{self.message}\n({'accepted' if self.accepted else 'rejected'}) {self.note}"


class _Refused(Exception):
    """A command kubectl itself refuses (client-side), with its message."""


def _name_of(kind: str, name: str) -> str:
    return f"{_GROUPS.get(kind, kind.lower())}/{name}"


def _server_error(exc: ValidationError, kind: str = "", name: str = "") -> str:
    """The API server's refusal as kubectl prints it."""
    if isinstance(exc, ApiError):
        if exc.reason == "Invalid" and kind:
            return f'Error from server (Invalid): {_PLURAL.get(kind, kind)} "{name}" is invalid: {exc.field}: {exc.message}'
        return f"Error from server ({exc.reason}): {exc.message}"
    what = f'The {kind} "{name}" is invalid: ' if kind else ""
    return f"Error from server (Invalid): {what}{exc}"


class Kubectl:
    """Parses one command line and carries it out on ``cluster``."""

    def __init__(self, cluster) -> None:
        self.c = cluster

    # --- entry ----------------------------------------------------------------------------------
    def run(self, command: str) -> CommandResult:
        if not isinstance(command, str) or not command.strip():
            raise ValidationError("command", "expected a kubectl command", ", ".join(VERBS))
        if len(command) > MAX_COMMAND_CHARS:
            raise ValidationError("command", f"longer than {MAX_COMMAND_CHARS:,} characters", "a shorter manifest")
        first, _, body = command.strip("\n").partition("\n")
        try:
            words = shlex.split(first)
        except ValueError as exc:
            return self._result(command, False, f"error: cannot parse the command line: {exc}")
        if words and words[0] == "kubectl":
            words = words[1:]
        try:
            args, flags = self._split(words)
            ns = flags.pop("namespace", None) or flags.pop("n", None) or "default"
            if not args:
                raise _Refused(f"error: no command given; supported: {', '.join(VERBS)}")
            verb, rest = args[0], args[1:]
            if verb in ("set", "rollout") and rest:
                verb, rest = f"{verb} {rest[0]}", rest[1:]
            handler = {"apply": self.apply, "scale": self.scale, "set image": self.set_image, "delete": self.delete,
                       "label": self.label, "cordon": self.cordon, "uncordon": self.uncordon, "drain": self.drain,
                       "rollout undo": self.undo, "rollout pause": self.pause, "rollout resume": self.resume,
                       "patch": self.patch}.get(verb)
            if handler is None:
                raise _Refused(f'error: unknown or unsupported command "{verb}" in this simulator; supported: '
                               f"{', '.join(VERBS)}")
            lines, objects, ok = handler(rest, flags, ns, body)
            return self._result(command, ok, "\n".join(lines), objects)
        except _Refused as exc:
            return self._result(command, False, str(exc))
        except ValidationError as exc:
            return self._result(command, False, _server_error(exc))

    def _result(self, command: str, accepted: bool, message: str, objects=()) -> CommandResult:
        result = CommandResult(command, accepted, message, self.c.now, tuple(objects))
        self.c.commands.append(result)
        return result

    @staticmethod
    def _split(words: list[str]) -> tuple[list[str], dict[str, str]]:
        """Positional arguments and --flag=value / --flag value / -p value flags."""
        args, flags = [], {}
        takes_value = {"replicas", "namespace", "n", "p", "patch", "type", "to-revision", "grace-period", "cascade",
                       "f", "filename", "timeout"}
        i = 0
        while i < len(words):
            w = words[i]
            if w.startswith("-") and w != "-":
                key, eq, value = w.lstrip("-").partition("=")
                if not eq and key in takes_value:
                    if i + 1 >= len(words):
                        raise _Refused(f"error: flag needs an argument: {w}")
                    value, i = words[i + 1], i + 1
                elif not eq:
                    value = "true"
                flags[key] = value
            else:
                args.append(w)
            i += 1
        return args, flags

    def _target(self, rest: list[str], verb: str, kinds: tuple[str, ...] | None = None) -> tuple[str, str, list[str]]:
        """(kind, name, remaining args) from "kind/name ..." or "kind name ..."."""
        if not rest:
            raise _Refused(f"error: {verb} needs a resource, e.g. deployment/web")
        if "/" in rest[0]:
            kind_word, _, name = rest[0].partition("/")
            remaining = rest[1:]
        else:
            if len(rest) < 2:
                raise _Refused(f"error: {verb} needs a kind and a name, e.g. deployment web")
            kind_word, name, remaining = rest[0], rest[1], rest[2:]
        try:
            kind = normalize_kind(kind_word.split(".")[0])
        except ValidationError:
            raise _Refused(f'error: the server doesn\'t have a resource type "{kind_word}"') from None
        if kinds and kind not in kinds:
            raise _Refused(f"error: {verb} is not supported for {_PLURAL.get(kind, kind)} (supported: "
                           f"{', '.join(_PLURAL[k] for k in kinds)})")
        return kind, name, remaining

    def _get(self, kind: str, name: str, ns: str) -> dict:
        try:
            return self.c._find(kind, name, ns)
        except ApiError:
            raise ApiError("NotFound", "name", f'{_PLURAL.get(kind, kind)} "{name}" not found') from None

    # --- verbs ----------------------------------------------------------------------------------
    def apply(self, rest, flags, ns, body):
        if "f" not in flags and "filename" not in flags:
            raise _Refused("error: must specify one of -f and -k (this simulator reads the manifest that follows "
                           "the command line)")
        if not body.strip():
            raise _Refused("error: no objects passed to apply (put the manifest on the lines after the command)")
        try:
            docs = manifests.load_manifests(body)
        except ValidationError as exc:
            raise _Refused(f"error: error validating data: {exc}") from None
        lines, objects, ok = [], [], True
        for doc in docs:
            obj = doc.obj
            kind, name = obj["kind"], obj["metadata"].get("name", "")
            if kind in NAMESPACED:
                obj["metadata"].setdefault("namespace", ns)
            key_ns = obj["metadata"].get("namespace", ns)
            before = None
            try:
                before = clone(self.c._find(kind, name, key_ns)) if name else None
            except ApiError:
                before = None
            try:
                after = self.c.apply(obj)
            except ValidationError as exc:
                ok = False
                lines.append(_server_error(exc, kind, name))
                continue
            if before is None:
                verb = "created"
            elif after["metadata"].get("resourceVersion") == before["metadata"].get("resourceVersion") or (
                    after.get("spec") == before.get("spec")
                    and after["metadata"].get("labels") == before["metadata"].get("labels")):
                verb = "unchanged"
            else:
                verb = "configured"
            lines.append(f"{_name_of(kind, after['metadata']['name'])} {verb}")
            objects.append(f"{kind}/{after['metadata']['name']}")
            lines.extend(f"Warning: {u} (not simulated)" for u in doc.unsupported)
        return lines, objects, ok

    def scale(self, rest, flags, ns, body):
        if "replicas" not in flags:
            raise _Refused("error: required flag(s) \"replicas\" not set")
        try:
            replicas = int(flags["replicas"])
        except ValueError:
            replicas = -1
        if replicas < 0:
            raise _Refused("error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
        kind, name, _ = self._target(rest, "scale", ("Deployment", "ReplicaSet"))
        try:
            self._get(kind, name, ns)
            self.c.patch(kind, name, {"spec": {"replicas": replicas}}, ns)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        return [f"{_name_of(kind, name)} scaled"], [f"{kind}/{name}"], True

    def set_image(self, rest, flags, ns, body):
        kind, name, pairs = self._target(rest, "set image", ("Deployment", "ReplicaSet", "Pod"))
        if not pairs or any("=" not in p for p in pairs):
            raise _Refused("error: at least one image update is required, as container=image (e.g. web=web:2)")
        try:
            obj = self._get(kind, name, ns)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        spec = obj["spec"] if kind == "Pod" else obj["spec"]["template"]["spec"]
        containers = clone(spec["containers"])
        for pair in pairs:
            cname, _, image = pair.partition("=")
            hits = [c for c in containers if cname in ("*", c["name"])]
            if not hits:
                raise _Refused(f'error: unable to find container named "{cname}"')
            for c in hits:
                c["image"] = image
        patch = {"spec": {"containers": containers}} if kind == "Pod" else \
            {"spec": {"template": {"spec": {"containers": containers}}}}
        try:
            self.c.patch(kind, name, patch, ns)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        return [f"{_name_of(kind, name)} image updated"], [f"{kind}/{name}"], True

    def delete(self, rest, flags, ns, body):
        kind, name, _ = self._target(rest, "delete")
        cascade = flags.get("cascade", "background")
        if cascade in ("true", "foreground"):
            cascade = "background"
        if cascade not in ("background", "orphan"):
            raise _Refused(f'error: invalid cascade value ({cascade}). Must be "background", "foreground", or "orphan".')
        grace = _grace(flags.get("grace-period"))
        try:
            obj = self._get(kind, name, ns)
            if kind == "Pod" and grace is not None:
                self.c.store.request_delete("Pod", obj_key(obj), grace=grace)
            else:
                self.c.delete(kind, name, ns, cascade=cascade)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        return [f'{_GROUPS.get(kind, kind.lower())} "{name}" deleted'], [f"{kind}/{name}"], True

    def label(self, rest, flags, ns, body):
        kind, name, changes = self._target(rest, "label")
        if not changes:
            raise _Refused("error: at least one label update is required")
        try:
            obj = self._get(kind, name, ns)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        labels = dict(obj["metadata"].get("labels") or {})
        patch: dict = {}
        overwrite = flags.get("overwrite", "false") == "true"
        for change in changes:
            if change.endswith("-") and "=" not in change:
                patch[change[:-1]] = None
                continue
            key, eq, value = change.partition("=")
            if not eq:
                raise _Refused(f"error: invalid label spec: {change} (use key=value, or key- to remove)")
            if key in labels and labels[key] != value and not overwrite:
                raise _Refused(f"error: '{key}' already has a value ({labels[key]}), and --overwrite is false")
            patch[key] = value
        if all((labels.get(k) == v) if v is not None else k not in labels for k, v in patch.items()):
            return [f"{_name_of(kind, name)} not labeled"], [], True
        try:
            self.c.patch(kind, name, {"metadata": {"labels": patch}}, ns)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        removed = all(v is None for v in patch.values())
        return [f"{_name_of(kind, name)} {'unlabeled' if removed else 'labeled'}"], [f"{kind}/{name}"], True

    def _node(self, rest, verb) -> dict:
        if not rest:
            raise _Refused(f"error: {verb} needs a node name")
        name = rest[0].split("/", 1)[1] if rest[0].startswith(("node/", "nodes/", "no/")) else rest[0]
        return self._get("Node", name, "")

    def _set_unschedulable(self, node: dict, value: bool) -> bool:
        if bool((node.get("spec") or {}).get("unschedulable")) == value:
            return False
        self.c.patch("Node", node["metadata"]["name"], {"spec": {"unschedulable": value or None}})
        return True

    def cordon(self, rest, flags, ns, body):
        try:
            node = self._node(rest, "cordon")
        except ValidationError as exc:
            return [_server_error(exc)], [], False
        name = node["metadata"]["name"]
        changed = self._set_unschedulable(node, True)
        return [f"node/{name} {'cordoned' if changed else 'already cordoned'}"], [f"Node/{name}"], True

    def uncordon(self, rest, flags, ns, body):
        try:
            node = self._node(rest, "uncordon")
        except ValidationError as exc:
            return [_server_error(exc)], [], False
        name = node["metadata"]["name"]
        changed = self._set_unschedulable(node, False)
        return [f"node/{name} {'uncordoned' if changed else 'already uncordoned'}"], [f"Node/{name}"], True

    def drain(self, rest, flags, ns, body):
        """drain.go: cordon, then evict every pod on the node; pods no controller owns are refused
        unless --force (they would be gone for good). There are no DaemonSets, PodDisruptionBudgets
        or emptyDir volumes here, so those checks never fire. kubectl waits until the pods are
        gone; this command returns at once, and the evictions play out over the next ticks."""
        try:
            node = self._node(rest, "drain")
        except ValidationError as exc:
            return [_server_error(exc)], [], False
        name = node["metadata"]["name"]
        lines = [f"node/{name} {'cordoned' if self._set_unschedulable(node, True) else 'already cordoned'}"]
        pods = [p for p in self.c.ctx.informers["Pod"].by_index("node", name)
                if rules.is_active(p) or p["metadata"].get("deletionTimestamp")]
        bare = [obj_key(p) for p in pods if controller_ref(p) is None]
        if bare and flags.get("force") != "true":
            lines.append(f'error: unable to drain node "{name}" due to error: cannot delete Pods that declare no '
                         f"controller (use --force to override): {', '.join(sorted(bare))}")
            return lines, [f"Node/{name}"], False
        if bare:
            lines.append(f"Warning: deleting Pods that declare no controller: {', '.join(sorted(bare))}")
        grace = _grace(flags.get("grace-period"))
        objects = [f"Node/{name}"]
        for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
            key = obj_key(pod)
            lines.append(f"evicting pod {key}")
            self.c.store.request_delete("Pod", key, grace=grace)
            self.c.recorder.emit(pod, "Normal", "Evicted", f"Eviction API: draining node {name}", "kubectl-drain")
            lines.append(f"pod/{pod['metadata']['name']} evicted")
            objects.append(f"Pod/{pod['metadata']['name']}")
        lines.append(f"node/{name} drained")
        return lines, objects, True

    def _deployment(self, rest, verb, ns):
        kind, name, _ = self._target(rest, verb, ("Deployment",))
        return self._get(kind, name, ns), name

    def undo(self, rest, flags, ns, body):
        """rollback.go DeploymentRollbacker.Rollback: refuse a paused Deployment; find the revision
        (0: the one before the current); copy its ReplicaSet's template (hash label removed) into the
        Deployment. The Deployment controller then rolls out as for any template change."""
        try:
            d, name = self._deployment(rest, "rollout undo", ns)
        except ValidationError as exc:
            return [_server_error(exc, "Deployment")], [], False
        if d["spec"].get("paused"):
            raise _Refused("error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout "
                           f"resume deployment/{name}' and try again")
        try:
            to = int(flags.get("to-revision", "0"))
        except ValueError:
            raise _Refused(f"error: invalid --to-revision {flags['to-revision']!r}") from None
        history = {}
        for rs in self.c.ctx.informers["ReplicaSet"].by_index("owner", d["metadata"]["uid"]):
            rev = rs["metadata"].get("annotations", {}).get(REVISION)
            if rev and rev.isdigit():
                history[int(rev)] = rs
        if not history:
            raise _Refused(f'error: no rollout history found for deployment "{name}"')
        if to == 0:
            revisions = sorted(history)
            if len(revisions) < 2:
                raise _Refused("error: no rollout history found: there is no previous revision to roll back to")
            to = revisions[-2]
        if to not in history:
            raise _Refused(f"error: unable to find specified revision {to} in history")
        template = clone(history[to]["spec"]["template"])
        template.setdefault("metadata", {}).setdefault("labels", {}).pop(HASH_LABEL, None)
        if template == d["spec"]["template"]:
            return [f"{_name_of('Deployment', name)} skipped rollback (current template already matches revision {to})"], \
                [], True
        meta = d["metadata"]
        manifest = {"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {k: clone(meta[k]) for k in ("name", "namespace", "labels", "annotations") if k in meta},
                    "spec": {**clone(d["spec"]), "template": template}}
        try:
            self.c.apply(manifest)
        except ValidationError as exc:
            return [_server_error(exc, "Deployment", name)], [], False
        return [f"{_name_of('Deployment', name)} rolled back"], [f"Deployment/{name}"], True

    def _pause(self, rest, ns, paused: bool):
        try:
            d, name = self._deployment(rest, f"rollout {'pause' if paused else 'resume'}", ns)
        except ValidationError as exc:
            return [_server_error(exc, "Deployment")], [], False
        if bool(d["spec"].get("paused")) == paused:
            raise _Refused(f'error: deployments.apps "{name}" is {"already paused" if paused else "not paused"}')
        self.c.patch("Deployment", name, {"spec": {"paused": paused or None}}, ns)
        return [f"{_name_of('Deployment', name)} {'paused' if paused else 'resumed'}"], [f"Deployment/{name}"], True

    def pause(self, rest, flags, ns, body):
        return self._pause(rest, ns, True)

    def resume(self, rest, flags, ns, body):
        return self._pause(rest, ns, False)

    def patch(self, rest, flags, ns, body):
        kind, name, _ = self._target(rest, "patch")
        text = flags.get("p", flags.get("patch"))
        if text is None:
            raise _Refused("error: must specify -p to patch")
        kind_of_patch = flags.get("type", "strategic")
        if kind_of_patch not in ("merge", "strategic"):
            raise _Refused(f"error: --type {kind_of_patch} is not simulated here; use --type merge (RFC 7386)")
        try:     # bounded like a manifest: a recursive alias (&r {x: *r}) or a YAML bomb is refused here
            docs = load_yaml_all(text, "patch", MAX_EXPANDED_NODES)
        except ValidationError as exc:
            raise _Refused(f"error: unable to parse \"{text}\": the patch must be JSON or YAML ({exc})") from None
        patch = docs[0] if len(docs) == 1 else None
        if not isinstance(patch, dict):
            raise _Refused(f'error: unable to parse "{text}": the patch must be an object, e.g. {{"spec": {{"replicas": 3}}}}')
        if kind_of_patch == "strategic" and _has_list(patch):
            raise _Refused("error: a strategic merge patch with lists merges them by key, which this simulator does "
                           "not model; use --type merge (lists are then replaced whole)")
        try:
            before = self._get(kind, name, ns)
            after = self.c.patch(kind, name, patch, ns)
        except ValidationError as exc:
            return [_server_error(exc, kind, name)], [], False
        same = after["metadata"].get("labels") == before["metadata"].get("labels") and after.get("spec") == before.get("spec")
        return [f"{_name_of(kind, name)} patched{' (no change)' if same else ''}"], [f"{kind}/{name}"], True


def _grace(value: str | None) -> float | None:
    """--grace-period: seconds ≥ 0, or a negative value / none for the pod's own period."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        raise _Refused(f"error: invalid argument \"{value}\" for \"--grace-period\" flag: an integer is expected") from None
    return seconds if seconds >= 0 else None


def _has_list(value: object) -> bool:
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and any(_has_list(v) for v in value.values())


def operator_commands(frame, pod: str | None = None) -> dict[str, str]:
    """The commands an operator's buttons give at this frame, aimed at ``pod`` (else the first
    active pod), its Deployment (else the first) and its node (else the first): action → command.
    Actions that make no sense here (no pod, a paused rollout cannot be paused) are left out."""
    pods = [p for p in frame.pods if p["active"]]
    chosen = next((p for p in pods if p["name"] == pod), None) or (pods[0] if pods else None)
    out: dict[str, str] = {}
    ns = f" -n {chosen['namespace']}" if chosen and chosen.get("namespace", "default") != "default" else ""
    if chosen is not None:
        out["delete pod"] = f"delete pod/{chosen['name']}{ns}"
        key = next(iter(sorted(chosen["labels"])), "app")
        out["relabel pod"] = f"label pod/{chosen['name']} {key}=debug --overwrite{ns}"
    owner = None
    if chosen is not None and chosen["owner"]:
        owner = next((r["owner"] for r in frame.replicasets if r["name"] == chosen["owner"] and r["owner"]), None)
    dep = next((d for d in frame.deployments if d["name"] == owner), None) or (frame.deployments[0] if frame.deployments else None)
    if dep is not None:
        dns = ns if dep["name"] == owner else ""
        out["scale up"] = f"scale deployment/{dep['name']} --replicas={dep['replicas'] + 1}{dns}"
        if dep["replicas"] > 0:
            out["scale down"] = f"scale deployment/{dep['name']} --replicas={dep['replicas'] - 1}{dns}"
        out["rollout undo"] = f"rollout undo deployment/{dep['name']}{dns}"
        out["rollout resume" if dep.get("paused") else "rollout pause"] = \
            f"rollout {'resume' if dep.get('paused') else 'pause'} deployment/{dep['name']}{dns}"
    node = next((n for n in frame.nodes if chosen is not None and n["name"] == chosen["node"]), None) or \
        (frame.nodes[0] if frame.nodes else None)
    if node is not None:
        out["uncordon" if node.get("unschedulable") else "cordon"] = \
            f"{'uncordon' if node.get('unschedulable') else 'cordon'} {node['name']}"
        out["drain"] = f"drain {node['name']}"
    return out
