"""The Deployment controller (pkg/controller/deployment: sync.go, rolling.go, recreate.go,
progress.go, util/deployment_util.go).

One action per sync (rolloutRolling): scale the new ReplicaSet up *or* old ones down, then write
status. Bounds: Σ spec.replicas ≤ replicas + surge, and no scale-down takes availability below
replicas − unavailable (ResolveFenceposts: surge rounds up, unavailable rounds down, both 0 → 1).
``progressDeadlineSeconds`` only *reports* a stall (Progressing=False, ProgressDeadlineExceeded);
nothing is rolled back automatically.
"""
from __future__ import annotations

import json
from functools import cmp_to_key

from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.replicaset import set_condition
from engines.k8s.store import NAME_ALPHABET, clone, controller_ref, obj_key

REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
HASH_LABEL = "pod-template-hash"


def template_hash(template: dict, collision_count: int = 0) -> str:
    """util/hash ComputeHash: FNV-1a 32 of the template (+ collisionCount), rendered with
    rand.SafeEncodeString. Upstream hashes a spew dump of the Go struct; this hashes sorted JSON,
    so names differ from a real cluster but are stable and collision-free the same way."""
    data = json.dumps(template, sort_keys=True).encode()
    if collision_count:
        data += str(collision_count).encode()
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(NAME_ALPHABET[ord(ch) % len(NAME_ALPHABET)] for ch in str(h))


def _without_hash(template: dict) -> dict:
    t = clone(template or {})
    (t.get("metadata") or {}).get("labels", {}).pop(HASH_LABEL, None)
    return t


def strategy_of(d: dict) -> tuple[str, object, object]:
    strategy = d["spec"].get("strategy") or {}
    kind = strategy.get("type", "RollingUpdate")
    ru = strategy.get("rollingUpdate") or {}
    return kind, ru.get("maxSurge", "25%"), ru.get("maxUnavailable", "25%")


def fenceposts(d: dict) -> tuple[int, int]:
    """(surge, MaxUnavailable) for a RollingUpdate Deployment; Recreate: (0, 0)."""
    kind, surge, unavailable = strategy_of(d)
    replicas = int(d["spec"].get("replicas", 1))
    if kind != "RollingUpdate":
        return 0, 0
    s, u = rules.resolve_fenceposts(replicas, surge, unavailable)
    return s, min(u, replicas)


def _status_condition(status: dict, kind: str) -> dict | None:
    return rules.condition({"status": status}, kind)


def _sum(rss: list[dict], path: str, where: str = "spec") -> int:
    return sum(int((rs.get(where) or {}).get(path, 0) or 0) for rs in rss)


def _by_age(rss: list[dict]) -> list[dict]:
    return sorted(rss, key=lambda r: (r["metadata"]["creationTimestamp"], r["metadata"]["name"]))


def _revision(rs: dict) -> int | None:
    """deployment_util.go Revision: the revision annotation as an integer; a missing annotation is
    0, one that does not parse is an error (None)."""
    value = (rs["metadata"].get("annotations") or {}).get(REVISION)
    if value is None:
        return 0
    try:
        return int(str(value), 10)
    except ValueError:
        return None


def _compare_by_revision(a: dict, b: dict) -> int:
    """deployment_util.go ReplicaSetsByRevision.Less: by revision; on a tie or an unparsable
    revision, controller.ReplicaSetsByCreationTimestamp (creation time, then name)."""
    ra, rb = _revision(a), _revision(b)
    if ra is None or rb is None or ra == rb:
        ka = (a["metadata"]["creationTimestamp"], a["metadata"]["name"])
        kb = (b["metadata"]["creationTimestamp"], b["metadata"]["name"])
    else:
        ka, kb = ra, rb
    return -1 if ka < kb else (1 if ka > kb else 0)


class DeploymentController(Controller):
    name = "deployment-controller"
    kind = "Deployment"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.deps = ctx.informers["Deployment"]
        self.rs = ctx.informers["ReplicaSet"]
        self.pods = ctx.informers["Pod"]
        self.deps.on_add.append(self.enqueue)
        self.deps.on_update.append(lambda old, new: self.enqueue(new))
        self.deps.on_delete.append(self.enqueue)
        self.rs.on_add.append(self._rs_changed)
        self.rs.on_update.append(self._rs_updated)
        self.rs.on_delete.append(self._rs_changed)
        self.pods.on_delete.append(self._pod_deleted)
        self.pods.on_update.append(self._pod_updated)

    # --- handlers --------------------------------------------------------------------------
    def _owner(self, rs: dict) -> dict | None:
        ref = controller_ref(rs)
        if not ref or ref.get("kind") != "Deployment":
            return None
        d = self.deps.get(f"{rs['metadata'].get('namespace', 'default')}/{ref['name']}")
        return d if d is not None and d["metadata"]["uid"] == ref["uid"] else None

    def _rs_changed(self, rs: dict) -> None:
        d = self._owner(rs)
        if d is not None:
            self.enqueue(d)
        elif controller_ref(rs) is None:
            for d in self.deps.values():
                if rules.selector_matches(d["spec"].get("selector"), rs["metadata"].get("labels")):
                    self.enqueue(d)

    def _rs_updated(self, old: dict, new: dict) -> None:
        if old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]:
            return
        if controller_ref(old) != controller_ref(new):
            self._rs_changed(old)
        self._rs_changed(new)

    def _pod_deleted(self, pod: dict) -> None:
        """deletePod: a Recreate rollout waits for old pods to be gone."""
        ref = controller_ref(pod)
        if ref and ref.get("kind") == "ReplicaSet":
            rs = self.rs.get(f"{pod['metadata'].get('namespace', 'default')}/{ref['name']}")
            d = self._owner(rs) if rs else None
            if d is not None and strategy_of(d)[0] == "Recreate":
                self.enqueue(d)

    def _pod_updated(self, old: dict, new: dict) -> None:
        if new["status"].get("phase") in ("Failed", "Succeeded") and old["status"].get("phase") != new["status"].get("phase"):
            self._pod_deleted(new)

    # --- sync -----------------------------------------------------------------------------
    def sync(self, key: str) -> None:
        d = self.deps.get(key)
        if d is None:
            return
        rss = self.claim_replicasets(d)
        if d["spec"].get("paused") and not d["metadata"].get("deletionTimestamp"):
            rss = self.scale_paused(d, rss)
        if d["metadata"].get("deletionTimestamp") or d["spec"].get("paused"):
            self.sync_status(d, rss, self.find_new(d, rss))
            return
        if strategy_of(d)[0] == "Recreate":
            self.rollout_recreate(d, rss)
        else:
            self.rollout_rolling(d, rss)

    def scale_paused(self, d: dict, rss: list[dict]) -> list[dict]:
        """sync.go sync → scale for a paused Deployment: a replica change still applies (no rollout).
        With one active ReplicaSet (or none: the newest) it takes the whole count
        (FindActiveOrLatest); spreading it over several active ones (proportional scaling) is not
        modelled, so then nothing is scaled."""
        replicas = int(d["spec"].get("replicas", 1))
        active = [rs for rs in rss if int(rs["spec"].get("replicas", 0)) > 0]
        target = active[0] if len(active) == 1 else (_by_age(rss)[-1] if not active and rss else None)
        if target is None or int(target["spec"].get("replicas", 0)) == replicas:
            return rss
        scaled = self.scale(d, target, replicas, "paused: replicas still apply, the template does not (sync.go scale)")
        return [scaled if rs is target else rs for rs in rss]

    def claim_replicasets(self, d: dict) -> list[dict]:
        """ClaimReplicaSets: keep owned ones that match, release the rest, adopt matching orphans."""
        uid, selector = d["metadata"]["uid"], d["spec"].get("selector")
        out = []
        for rs in self.rs.by_index("owner", uid):
            if rules.selector_matches(selector, rs["metadata"].get("labels")):
                out.append(rs)
            else:
                self.ctx.store.mutate("ReplicaSet", obj_key(rs), lambda o: o["metadata"].__setitem__(
                    "ownerReferences", [r for r in o["metadata"].get("ownerReferences") or [] if r["uid"] != uid]))
        for rs in self.rs.by_index("owner", ""):
            if rules.selector_matches(selector, rs["metadata"].get("labels")) and not d["metadata"].get("deletionTimestamp"):
                ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": d["metadata"]["name"], "uid": uid,
                       "controller": True, "blockOwnerDeletion": True}
                adopted = self.ctx.store.mutate("ReplicaSet", obj_key(rs), lambda o: o["metadata"].__setitem__(
                    "ownerReferences", [*(o["metadata"].get("ownerReferences") or []), ref]))
                if adopted is not None:
                    out.append(adopted)
        return out

    def find_new(self, d: dict, rss: list[dict]) -> dict | None:
        """FindNewReplicaSet: the oldest RS whose template equals the Deployment's, hash ignored."""
        want = _without_hash(d["spec"].get("template"))
        for rs in _by_age(rss):
            if _without_hash(rs["spec"].get("template")) == want:
                return rs
        return None

    def _max_revision(self, rss: list[dict]) -> int:
        """deployment_util.go MaxRevision: a revision that does not parse is skipped (upstream logs it)."""
        return max([r for r in map(_revision, rss) if r is not None] or [0])

    def get_new_rs(self, d: dict, rss: list[dict], create: bool) -> tuple[dict | None, dict]:
        """sync.go getNewReplicaSet: reuse (bumping its revision) or create the new ReplicaSet.
        Returns (new RS or None, status changes for the Deployment's Progressing condition)."""
        new = self.find_new(d, rss)
        olds = [rs for rs in rss if rs is not new]
        revision = self._max_revision(olds) + 1
        name = d["metadata"]["name"]
        if new is not None:
            current = _revision(new)        # SetNewReplicaSetAnnotations leaves an unparsable one alone
            if current is not None and current < revision:
                new = self.ctx.store.mutate("ReplicaSet", obj_key(new), lambda o: o["metadata"]["annotations"].__setitem__(
                    REVISION, str(revision)))
            return new, {}
        if not create:
            return None, {}
        template = clone(d["spec"].get("template") or {})
        h = template_hash(template, d.get("status", {}).get("collisionCount", 0))
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
        selector = clone(d["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = h
        surge, _ = fenceposts(d)
        replicas = int(d["spec"].get("replicas", 1))
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": f"{name}-{h}", "namespace": d["metadata"].get("namespace", "default"),
                           "labels": dict(template["metadata"]["labels"]),
                           "annotations": {REVISION: str(revision), DESIRED: str(replicas), MAX_REPLICAS: str(replicas + surge)},
                           "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                                "uid": d["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
              "spec": {"replicas": 0, "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                       "selector": selector, "template": template}}
        rs["spec"]["replicas"] = self.new_rs_new_replicas(d, olds, rs)
        made = self.ctx.store.create(rs)
        if made["spec"]["replicas"] > 0:
            self.ctx.recorder.emit(d, "Normal", "ScalingReplicaSet",
                                   f"Scaled up replica set {made['metadata']['name']} from 0 to {made['spec']['replicas']}", self.name)
        self.decide(f"Deployment {name}", "no ReplicaSet matches the pod template", "template", "new template (revision "
                    f"{revision})", f"create ReplicaSet {made['metadata']['name']} with {made['spec']['replicas']} replicas")
        cond = {"type": "Progressing", "status": "True", "reason": "NewReplicaSetCreated",
                "message": f'Created new replica set "{made["metadata"]["name"]}"',
                "lastUpdateTime": self.now, "lastTransitionTime": self.now}
        return made, {"condition": cond}

    def new_rs_new_replicas(self, d: dict, all_rss: list[dict], new: dict) -> int:
        """deployment_util.go NewRSNewReplicas."""
        replicas = int(d["spec"].get("replicas", 1))
        if strategy_of(d)[0] != "RollingUpdate":
            return replicas
        surge, _ = fenceposts(d)
        current = _sum([r for r in all_rss if r is not new and r["metadata"].get("uid") != new["metadata"].get("uid")], "replicas") \
            + int(new["spec"].get("replicas", 0))
        max_total = replicas + surge
        if current >= max_total:
            return int(new["spec"].get("replicas", 0))
        up = min(max_total - current, replicas - int(new["spec"].get("replicas", 0)))
        return int(new["spec"].get("replicas", 0)) + up

    def scale(self, d: dict, rs: dict, to: int, why: str) -> dict:
        """scaleReplicaSetAndRecordEvent."""
        current = int(rs["spec"].get("replicas", 0))
        if current == to:
            return rs
        surge, _ = fenceposts(d)
        replicas = int(d["spec"].get("replicas", 1))

        def change(o: dict) -> None:
            o["spec"]["replicas"] = to
            o["metadata"]["annotations"][DESIRED] = str(replicas)
            o["metadata"]["annotations"][MAX_REPLICAS] = str(replicas + surge)
        new = self.ctx.store.mutate("ReplicaSet", obj_key(rs), change)
        verb = "up" if to > current else "down"
        self.ctx.recorder.emit(d, "Normal", "ScalingReplicaSet",
                               f"Scaled {verb} replica set {rs['metadata']['name']} from {current} to {to}", self.name)
        self.decide(f"Deployment {d['metadata']['name']}", f"ReplicaSet {rs['metadata']['name']} spec {current}", str(to),
                    why, f"scale {rs['metadata']['name']} {current} → {to}")
        return new

    # --- RollingUpdate (rolling.go) -------------------------------------------------------------
    def rollout_rolling(self, d: dict, rss: list[dict]) -> None:
        new, changes = self.get_new_rs(d, rss, create=True)
        olds = [rs for rs in rss if rs["metadata"]["uid"] != new["metadata"]["uid"]]
        all_rss = [*olds, new]
        replicas = int(d["spec"].get("replicas", 1))
        surge, unavailable = fenceposts(d)
        name = f"Deployment {d['metadata']['name']}"
        # reconcileNewReplicaSet
        spec_new = int(new["spec"].get("replicas", 0))
        if spec_new > replicas:
            new = self.scale(d, new, replicas, f"new RS {spec_new} > {replicas} desired")
            return self.sync_status(d, [*olds, new], new, changes)
        if spec_new < replicas:
            target = self.new_rs_new_replicas(d, all_rss, new)
            if target != spec_new:
                total = _sum(all_rss, "replicas")
                new = self.scale(d, new, target,
                                 f"Σ spec {total} < maxTotal {replicas}+{surge}: scale up new by min({replicas + surge - total}, "
                                 f"{replicas - spec_new})")
                return self.sync_status(d, [*olds, new], new, changes)
        # reconcileOldReplicaSets
        active_olds = [rs for rs in olds if int(rs["spec"].get("replicas", 0)) > 0]
        if active_olds:
            all_pods = _sum(all_rss, "replicas")
            min_available = replicas - unavailable
            new_unavailable = int(new["spec"].get("replicas", 0)) - int((new.get("status") or {}).get("availableReplicas", 0))
            max_scaled_down = all_pods - min_available - new_unavailable
            if max_scaled_down <= 0:
                self.decide(name, f"Σ spec {all_pods}, new RS unavailable {new_unavailable}", f"minAvailable {min_available}",
                            f"maxScaledDown = {all_pods} − {min_available} − {new_unavailable} = {max_scaled_down} ≤ 0",
                            "cannot scale old ReplicaSets down (waiting for new pods to become available)", noop=True)
            else:
                cleaned_count, cleaned = self.cleanup_unhealthy(d, active_olds, max_scaled_down)
                olds = [next((c for c in cleaned if c["metadata"]["uid"] == o["metadata"]["uid"]), o) for o in olds]
                scaled = self.scale_down_olds(d, [*olds, new], [o for o in olds if int(o["spec"].get("replicas", 0)) > 0])
                olds = [next((c for c in scaled[1] if c["metadata"]["uid"] == o["metadata"]["uid"]), o) for o in olds]
                if cleaned_count or scaled[0]:
                    return self.sync_status(d, [*olds, new], new, changes)
        status = self.calculate_status(d, [*olds, new], new)
        if self.complete(d, status):
            self.cleanup_history(d, olds)
        self.sync_status(d, [*olds, new], new, changes)

    def cleanup_unhealthy(self, d: dict, olds: list[dict], max_cleanup: int) -> tuple[int, list[dict]]:
        """rolling.go cleanupUnhealthyReplicas: scale old RSs down by their unavailable pods first."""
        out, total = [], 0
        for rs in _by_age(olds):
            spec, avail = int(rs["spec"].get("replicas", 0)), int((rs.get("status") or {}).get("availableReplicas", 0))
            if total >= max_cleanup or spec == 0 or spec == avail:
                out.append(rs)
                continue
            count = min(max_cleanup - total, spec - avail)
            out.append(self.scale(d, rs, spec - count, f"cleanup: {spec - avail} unhealthy old pods"))
            total += count
        return total, out

    def scale_down_olds(self, d: dict, all_rss: list[dict], olds: list[dict]) -> tuple[int, list[dict]]:
        """rolling.go scaleDownOldReplicaSetsForRollingUpdate."""
        replicas = int(d["spec"].get("replicas", 1))
        _, unavailable = fenceposts(d)
        min_available = replicas - unavailable
        available = _sum(all_rss, "availableReplicas", "status")
        name = f"Deployment {d['metadata']['name']}"
        if available <= min_available:
            self.decide(name, f"{available} available", f"minAvailable {min_available}",
                        f"{available} available ≤ {min_available} = {replicas} − {unavailable}",
                        "no old pods may go yet", noop=True)
            return 0, []
        target, done, changed = available - min_available, 0, []
        for rs in _by_age(olds):
            if done >= target:
                break
            spec = int(rs["spec"].get("replicas", 0))
            if spec == 0:
                continue
            count = min(spec, target - done)
            changed.append(self.scale(d, rs, spec - count,
                                      f"{available} available > minAvailable {min_available}: scale old down by {count}"))
            done += count
        return done, changed

    # --- Recreate (recreate.go) ---------------------------------------------------------------
    def rollout_recreate(self, d: dict, rss: list[dict]) -> None:
        new, changes = self.get_new_rs(d, rss, create=False)
        olds = [rs for rs in rss if new is None or rs["metadata"]["uid"] != new["metadata"]["uid"]]
        scaled = False
        for i, rs in enumerate(olds):
            if int(rs["spec"].get("replicas", 0)) > 0:
                olds[i] = self.scale(d, rs, 0, "Recreate: old ReplicaSets go to 0 first")
                scaled = True
        all_rss = [*olds, *([new] if new else [])]
        if scaled:
            return self.sync_status(d, all_rss, new, changes)
        running = [p for rs in olds for p in self.pods.by_index("owner", rs["metadata"]["uid"])
                   if (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")]
        if running:
            self.decide(f"Deployment {d['metadata']['name']}", f"{len(running)} old pods still running", "0",
                        "Recreate waits until every old pod is gone", "wait", noop=True)
            return self.sync_status(d, all_rss, new, changes)
        if new is None:
            new, changes = self.get_new_rs(d, rss, create=True)
        replicas = int(d["spec"].get("replicas", 1))
        new = self.scale(d, new, replicas, "Recreate: old pods gone, scale new up")
        all_rss = [*olds, new]
        if self.complete(d, self.calculate_status(d, all_rss, new)):
            self.cleanup_history(d, olds)
        self.sync_status(d, all_rss, new, changes)

    # --- history ----------------------------------------------------------------------------------
    def cleanup_history(self, d: dict, olds: list[dict]) -> None:
        """sync.go cleanupDeployment: with more than revisionHistoryLimit (default 10) old
        ReplicaSets not being deleted, look at the ``diff`` lowest *revisions* (ReplicaSetsByRevision,
        not creation order: a rollback re-uses an old ReplicaSet under a new revision) and delete
        those that are empty (status and spec replicas 0, generation observed); a non-empty one
        among them is skipped, not replaced by the next."""
        limit = int(d["spec"].get("revisionHistoryLimit", 10))
        cleanable = [rs for rs in olds if rs is not None and not rs["metadata"].get("deletionTimestamp")]
        diff = len(cleanable) - limit
        if diff <= 0:
            return
        cleanable.sort(key=cmp_to_key(_compare_by_revision))
        for rs in cleanable[:diff]:
            status = rs.get("status") or {}
            if (int(status.get("replicas", 0) or 0) != 0 or int(rs["spec"].get("replicas", 0) or 0) != 0
                    or rs["metadata"].get("generation", 1) > status.get("observedGeneration", 0)):
                continue
            self.ctx.store.request_delete("ReplicaSet", obj_key(rs))

    # --- status and progress (sync.go calculateStatus, progress.go) ------------------------------
    def calculate_status(self, d: dict, all_rss: list[dict], new: dict | None) -> dict:
        replicas = int(d["spec"].get("replicas", 1))
        _, unavailable = fenceposts(d)
        status = clone(d.get("status") or {})
        status["observedGeneration"] = d["metadata"].get("generation", 1)
        status["replicas"] = _sum(all_rss, "replicas", "status")
        status["updatedReplicas"] = int((new or {}).get("status", {}).get("replicas", 0)) if new else 0
        status["readyReplicas"] = _sum(all_rss, "readyReplicas", "status")
        status["availableReplicas"] = _sum(all_rss, "availableReplicas", "status")
        # sync.go calculateStatus: totalReplicas = GetReplicaCountForReplicaSets(allRSs), the sum of
        # *spec*.replicas, so pods a ReplicaSet wants but could not create (quota) count as unavailable
        status["unavailableReplicas"] = max(_sum(all_rss, "replicas") - status["availableReplicas"], 0)
        conditions = status.get("conditions") or []
        if status["availableReplicas"] >= replicas - unavailable:
            cond = {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability."}
        else:
            cond = {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                    "message": "Deployment does not have minimum availability."}
        current = _status_condition(status, "Available")
        if not current or current.get("status") != cond["status"] or current.get("reason") != cond["reason"]:
            conditions = set_condition(conditions, {**cond, "lastUpdateTime": self.now, "lastTransitionTime": self.now})
        status["conditions"] = conditions
        return status

    def complete(self, d: dict, status: dict) -> bool:
        """DeploymentComplete (pkg/controller/deployment/util/deployment_util.go): updated == total ==
        available == replicas, observedGeneration ≥ generation: every desired pod available, not
        just replicas − maxUnavailable of them."""
        replicas = int(d["spec"].get("replicas", 1))
        return (status.get("updatedReplicas") == replicas and status.get("replicas") == replicas
                and status.get("availableReplicas", 0) == replicas
                and status.get("observedGeneration", 0) >= d["metadata"].get("generation", 1))

    @staticmethod
    def progressing(d: dict, status: dict) -> bool:
        """DeploymentProgressing: more updated pods, fewer old pods or more available pods."""
        old = d.get("status") or {}
        old_olds = old.get("replicas", 0) - old.get("updatedReplicas", 0)
        new_olds = status.get("replicas", 0) - status.get("updatedReplicas", 0)
        return (status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or new_olds < old_olds
                or status.get("availableReplicas", 0) > old.get("availableReplicas", 0))

    def sync_status(self, d: dict, all_rss: list[dict], new: dict | None, changes: dict | None = None) -> None:
        """progress.go syncRolloutStatus: Progressing condition, deadline, then write status."""
        status = self.calculate_status(d, all_rss, new)
        if changes and changes.get("condition"):
            status["conditions"] = set_condition(status.get("conditions") or [], changes["condition"])
            d = {**d, "status": {**(d.get("status") or {}), "conditions": status["conditions"]}}
        deadline = d["spec"].get("progressDeadlineSeconds", 600)
        name = f"Deployment {d['metadata']['name']}"
        current = _status_condition(status, "Progressing")
        rs_name = new["metadata"]["name"] if new else ""
        if deadline is not None and not d["spec"].get("paused"):
            is_complete = (status["replicas"] == status["updatedReplicas"] and current is not None
                           and current.get("reason") == "NewReplicaSetAvailable")
            if not is_complete:
                if self.complete(d, status):
                    cond = {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                            "message": f'ReplicaSet "{rs_name}" has successfully progressed.',
                            "lastUpdateTime": self.now, "lastTransitionTime": self.now}
                    if not (current and current.get("reason") == "NewReplicaSetAvailable"):
                        status["conditions"] = set_condition(status["conditions"], cond)
                        self.decide(name, f"updated {status['updatedReplicas']}, available {status['availableReplicas']}",
                                    f"{d['spec'].get('replicas', 1)}", "DeploymentComplete", "Progressing=True NewReplicaSetAvailable")
                elif self.progressing(d, status):
                    cond = {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                            "message": f'ReplicaSet "{rs_name}" is progressing.', "lastUpdateTime": self.now,
                            "lastTransitionTime": current["lastTransitionTime"] if current and current.get("status") == "True"
                            else self.now}
                    status["conditions"] = [c for c in status["conditions"] if c["type"] != "Progressing"] + [cond]
                elif self.timed_out(d, status):
                    cond = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                            "message": f'ReplicaSet "{rs_name}" has timed out progressing.',
                            "lastUpdateTime": self.now, "lastTransitionTime": self.now}
                    if not (current and current.get("reason") == "ProgressDeadlineExceeded"):
                        status["conditions"] = set_condition(status["conditions"], cond)
                        self.decide(name, f"no progress since t={current['lastUpdateTime']:.0f} s", f"deadline {deadline} s",
                                    "now − Progressing.lastUpdateTime > progressDeadlineSeconds",
                                    "Progressing=False ProgressDeadlineExceeded (reported; no rollback)")
        failures = [c for rs in all_rss for c in (rs.get("status") or {}).get("conditions") or [] if c["type"] == "ReplicaFailure"]
        if failures:
            status["conditions"] = set_condition(status["conditions"], {**failures[0], "lastUpdateTime": self.now})
        else:
            status["conditions"] = [c for c in status["conditions"] if c["type"] != "ReplicaFailure"]
        if status != d.get("status"):
            self.ctx.store.write_status("Deployment", obj_key(d), status)
        self.requeue_stuck(d, status, deadline)

    def timed_out(self, d: dict, status: dict) -> bool:
        """DeploymentTimedOut."""
        deadline = d["spec"].get("progressDeadlineSeconds", 600)
        cond = _status_condition(status, "Progressing")
        if deadline is None or cond is None or cond.get("reason") == "NewReplicaSetAvailable":
            return False
        if cond.get("reason") == "ProgressDeadlineExceeded":
            return True
        return cond["lastUpdateTime"] + deadline < self.now

    def requeue_stuck(self, d: dict, status: dict, deadline) -> None:
        """progress.go requeueStuckDeployment: check again when the deadline would pass."""
        cond = _status_condition(status, "Progressing")
        if deadline is None or cond is None or cond.get("reason") in ("NewReplicaSetAvailable", "ProgressDeadlineExceeded"):
            return
        if self.complete(d, status):
            return
        after = cond["lastUpdateTime"] + deadline - self.now
        self.queue.add_after(obj_key(d), max(after, 0) + 1.0, self.now)
