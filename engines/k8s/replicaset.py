"""The ReplicaSet controller (pkg/controller/replicaset/replica_set.go) and, for contrast, an
edge-triggered strawman that acts on watch events only.

Level-triggered: events only enqueue the owning ReplicaSet's key; ``sync`` lists the pods,
claims them (adopt/release by selector and ownerReferences), compares *counts* with
``spec.replicas`` (never the pods' contents: hand edits drift) and writes status. Creates run in
slow-start batches 1, 2, 4, … (a failing batch stops the rest), capped at 500 per sync, and the
controller waits for its expectations (it must *see* its creates and deletes) before acting again.
"""
from __future__ import annotations

from typing import NamedTuple

from engines.k8s import rules
from engines.k8s.base import Controller, Context
from engines.k8s.store import ApiError, clone, controller_ref, obj_key

BURST_REPLICAS = 500          # replica_set.go BurstReplicas
EXPECTATIONS_TIMEOUT = 300.0  # controller_utils.go ExpectationsTimeout (5 min)


class Expectations:
    """controller_utils.go (UIDTracking)ControllerExpectations: creates by count, deletes by key."""

    def __init__(self) -> None:
        self.records: dict[str, dict] = {}

    def expect_creations(self, key: str, n: int, now: float) -> None:
        self.records[key] = {"add": n, "del": set(), "t": now}

    def expect_deletions(self, key: str, pod_keys: list[str], now: float) -> None:
        self.records[key] = {"add": 0, "del": set(pod_keys), "t": now}

    def creation_observed(self, key: str) -> None:
        if key in self.records:
            self.records[key]["add"] -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        if key in self.records:
            self.records[key]["del"].discard(pod_key)

    def satisfied(self, key: str, now: float) -> bool:
        rec = self.records.get(key)
        if rec is None:
            return True
        return (rec["add"] <= 0 and not rec["del"]) or now - rec["t"] > EXPECTATIONS_TIMEOUT

    def pending(self, key: str) -> str:
        rec = self.records.get(key)
        if not rec:
            return ""
        return f"{max(rec['add'], 0)} creates, {len(rec['del'])} deletes not yet observed"

    def delete(self, key: str) -> None:
        self.records.pop(key, None)


class PodFacts(NamedTuple):
    """What a ReplicaSet sync reads of one pod."""

    active: bool          # IsPodActive
    matches: bool         # the ReplicaSet's selector matches its labels
    labeled: bool         # carries every template label (fullyLabeledReplicas)
    ready_since: float | None   # Ready since (None: not Ready)
    ready: bool


def pod_from_template(rs: dict) -> dict:
    """controller_utils.go GetPodFromTemplate + the controllerRef the ReplicaSet sets."""
    template = rs["spec"].get("template") or {}
    tmeta = template.get("metadata") or {}
    meta = rs["metadata"]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": meta["name"] + "-", "namespace": meta.get("namespace", "default"),
                     "labels": dict(tmeta.get("labels") or {}), "annotations": dict(tmeta.get("annotations") or {}),
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": meta["name"],
                                          "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}]},
        "spec": clone(template.get("spec") or {}),
        "status": {"phase": "Pending"},
    }


def set_condition(conditions: list[dict], cond: dict) -> list[dict]:
    """Replace the condition of the same type (keeping lastTransitionTime when status is unchanged)."""
    out = []
    for c in conditions:
        if c["type"] == cond["type"]:
            if c.get("status") == cond.get("status"):
                cond = {**cond, "lastTransitionTime": c.get("lastTransitionTime", cond.get("lastTransitionTime"))}
            continue
        out.append(c)
    out.append(cond)
    return out


class ReplicaSetController(Controller):
    name = "replicaset-controller"
    kind = "ReplicaSet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.rs = ctx.informers["ReplicaSet"]
        self.pods = ctx.informers["Pod"]
        self.expectations = Expectations()
        # per ReplicaSet: its spec object and {id(pod): (pod, PodFacts)} for the pods seen last
        # sync. A sync visits every pod, but between syncs few pods change (objects are replaced
        # on change, never mutated, so an identical object means identical facts)
        self._facts: dict[str, tuple[dict, dict[int, tuple[dict, PodFacts]]]] = {}
        self.rs.on_add.append(self.enqueue)
        self.rs.on_update.append(lambda old, new: self.enqueue(new))
        self.rs.on_delete.append(self._rs_deleted)
        self.pods.on_add.append(self._pod_added)
        self.pods.on_update.append(self._pod_updated)
        self.pods.on_delete.append(self._pod_deleted)

    # --- event handlers: they only enqueue keys (and count expectations) -------------------
    def _rs_deleted(self, rs: dict) -> None:
        self.expectations.delete(obj_key(rs))
        self._facts.pop(rs["metadata"]["uid"], None)
        self.enqueue(rs)

    def _owner(self, pod: dict) -> dict | None:
        ref = controller_ref(pod)
        if not ref or ref.get("kind") != "ReplicaSet":
            return None
        rs = self.rs.get(f"{pod['metadata'].get('namespace', 'default')}/{ref['name']}")
        return rs if rs is not None and rs["metadata"]["uid"] == ref["uid"] else None

    def _matching(self, pod: dict) -> list[dict]:
        """replica_set.go getPodReplicaSets: ReplicaSets whose selector matches an orphan."""
        labels = pod["metadata"].get("labels") or {}
        return [rs for rs in self.rs.values() if rules.selector_matches(rs["spec"].get("selector"), labels)]

    def _pod_added(self, pod: dict) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)
            return
        rs = self._owner(pod)
        if rs is not None:
            self.expectations.creation_observed(obj_key(rs))
            self.enqueue(rs)
        elif controller_ref(pod) is None:
            for rs in self._matching(pod):
                self.enqueue(rs)

    def _pod_updated(self, old: dict, new: dict) -> None:
        if old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]:
            return   # a resync: updateRS already enqueues every ReplicaSet
        labels_changed = old["metadata"].get("labels") != new["metadata"].get("labels")
        if new["metadata"].get("deletionTimestamp"):
            if labels_changed:
                self._pod_deleted(old)
            self._pod_deleted(new)
            return
        old_ref, new_ref = controller_ref(old), controller_ref(new)
        if old_ref != new_ref and old_ref is not None and (rs := self._owner(old)) is not None:
            self.enqueue(rs)
        if new_ref is not None:
            rs = self._owner(new)
            if rs is not None:
                self.enqueue(rs)
                mrs = rs["spec"].get("minReadySeconds", 0)
                if mrs and not rules.is_pod_ready(old) and rules.is_pod_ready(new):
                    self.queue.add_after(obj_key(rs), mrs, self.now)
            return
        if labels_changed or old_ref != new_ref:
            for rs in self._matching(new):
                self.enqueue(rs)

    def _pod_deleted(self, pod: dict) -> None:
        rs = self._owner(pod)
        if rs is not None:
            self.expectations.deletion_observed(obj_key(rs), obj_key(pod))
            self.enqueue(rs)

    # --- the reconcile --------------------------------------------------------------------
    def sync(self, key: str) -> None:
        rs = self.rs.get(key)
        if rs is None:
            self.expectations.delete(key)
            return
        name = f"ReplicaSet {rs['metadata']['name']}"
        satisfied = self.expectations.satisfied(key, self.now)
        pods = self.claim_pods(rs)
        desired = int(rs["spec"].get("replicas", 1))
        error: ApiError | None = None
        if rs["metadata"].get("deletionTimestamp"):
            pass
        elif not satisfied:
            self.decide(name, f"{len(pods)} pods", f"{desired}", "expectations not yet met",
                        f"wait ({self.expectations.pending(key)})")
        else:
            try:
                self.manage_replicas(rs, key, pods, desired)
            except ApiError as err:
                error = err
        self.update_status(rs, pods, error)
        if error is not None:
            raise error
        mrs = rs["spec"].get("minReadySeconds", 0)
        if mrs:
            facts = [self.facts(rs, p) for p in pods]
            if any(f.ready and not rules.available_since(f.ready_since, mrs, self.now) for f in facts):
                self.queue.add_after(key, mrs, self.now)

    def facts(self, rs: dict, pod: dict, fresh: dict[int, tuple[dict, PodFacts]] | None = None) -> PodFacts:
        """PodFacts of ``pod`` for ``rs``, from the last sync when neither object changed;
        ``fresh``: the cache being rebuilt by claim_pods."""
        spec, seen = self._facts.get(rs["metadata"]["uid"], (None, {}))
        hit = seen.get(id(pod)) if spec is rs["spec"] else None
        if hit is not None and hit[0] is pod:
            facts = hit[1]
        else:
            labels = pod["metadata"].get("labels") or {}
            tlabels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
            since = rules.ready_since(pod)
            facts = PodFacts(active=rules.is_active(pod), matches=rules.selector_matches(rs["spec"].get("selector"), labels),
                             labeled=all(labels.get(k) == v for k, v in tlabels.items()), ready_since=since,
                             ready=since is not None or rules.is_pod_ready(pod))
            if fresh is None:
                seen[id(pod)] = (pod, facts)
        if fresh is not None:
            fresh[id(pod)] = (pod, facts)
        return facts

    def claim_pods(self, rs: dict) -> list[dict]:
        """controller_ref_manager.go ClaimPods on the active pods (FilterActivePods)."""
        uid = rs["metadata"]["uid"]
        selector = rs["spec"].get("selector")
        deleting = bool(rs["metadata"].get("deletionTimestamp"))
        owned = self.pods.by_index("owner", uid)
        orphans = [p for p in self.pods.select(rules.match_labels_of(selector), among=self.pods.keys_by_index("owner", ""))
                   if rules.selector_matches(selector, p["metadata"].get("labels"))]
        claimed = []
        name = f"ReplicaSet {rs['metadata']['name']}"
        fresh: dict[int, tuple[dict, PodFacts]] = {}
        for pod in sorted(owned, key=lambda p: p["metadata"]["name"]):
            facts = self.facts(rs, pod, fresh)
            if not facts.active:
                continue
            if facts.matches:
                claimed.append(pod)
            elif not deleting:
                self.ctx.store.mutate("Pod", obj_key(pod), lambda o: o["metadata"].__setitem__(
                    "ownerReferences", [r for r in o["metadata"].get("ownerReferences") or [] if r["uid"] != uid]))
                self.decide(name, f"pod {pod['metadata']['name']} labels {pod['metadata'].get('labels')}",
                            f"selector {rules.match_labels_of(selector)}", "owned pod no longer matches the selector",
                            f"release {pod['metadata']['name']} (orphan, keeps running)")
        for pod in orphans:
            if deleting or not rules.is_active(pod):
                continue
            ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"], "uid": uid,
                   "controller": True, "blockOwnerDeletion": True}
            adopted = self.ctx.store.mutate("Pod", obj_key(pod), lambda o: o["metadata"].__setitem__(
                "ownerReferences", [*(o["metadata"].get("ownerReferences") or []), ref]))
            if adopted is not None:
                claimed.append(adopted)
                self.decide(name, f"orphan {pod['metadata']['name']} matches the selector", "", "adoption",
                            f"adopt {pod['metadata']['name']}")
        self._facts[uid] = (rs["spec"], fresh)
        return claimed

    def manage_replicas(self, rs: dict, key: str, pods: list[dict], desired: int) -> None:
        """replica_set.go manageReplicas: numbers only."""
        name = f"ReplicaSet {rs['metadata']['name']}"
        diff = len(pods) - desired
        store, rec = self.ctx.store, self.ctx.recorder
        if diff < 0:
            want = min(-diff, BURST_REPLICAS)
            self.expectations.expect_creations(key, want, self.now)
            created, error, batches = self.slow_start_batch(rs, want)
            for _ in range(want - created):      # never-attempted or failed creates: lower expectations
                self.expectations.creation_observed(key)
            rule = f"{len(pods)} observed < {desired} desired"
            action = f"create {want}" if error is None else \
                f"create {want}: {created} created in batches {batches}, then refused"
            self.decide(name, str(len(pods)), str(desired), rule, action)
            if error is not None:
                raise error
        elif diff > 0:
            diff = min(diff, BURST_REPLICAS)
            related = self._related_pods(rs)
            victims = rules.pods_to_delete(pods, related, diff, self.now)
            self.expectations.expect_deletions(key, [obj_key(p) for p in victims], self.now)
            for pod in victims:
                store.request_delete("Pod", obj_key(pod))
                rec.emit(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}", self.name)
            self.decide(name, str(len(pods)), str(desired), f"{len(pods)} observed > {desired} desired",
                        f"delete {diff} ({', '.join(p['metadata']['name'] for p in victims)}) by the deletion ranking")
        else:
            self.decide(name, str(len(pods)), str(desired), f"{len(pods)} observed = {desired} desired",
                        "nothing to do", noop=True)

    def slow_start_batch(self, rs: dict, count: int) -> tuple[int, ApiError | None, list[int]]:
        """replica_set.go slowStartBatch: batches 1, 2, 4, …; a batch with a failure stops the rest."""
        created, remaining, size, batches = 0, count, min(count, 1), []
        while size > 0:
            batches.append(size)
            first_error = None
            for _ in range(size):
                pod = pod_from_template(rs)
                try:
                    made = self.ctx.store.create(pod)
                    created += 1
                    self.ctx.recorder.emit(rs, "Normal", "SuccessfulCreate", f"Created pod: {made['metadata']['name']}",
                                           self.name)
                except ApiError as err:
                    self.ctx.recorder.emit(rs, "Warning", "FailedCreate", f"Error creating: {err.message}", self.name)
                    first_error = first_error or err
            if first_error is not None:
                return created, first_error, batches
            remaining -= size
            size = min(2 * size, remaining)
        return created, None, batches

    def _related_pods(self, rs: dict) -> list[dict]:
        """replica_set.go getIndirectlyRelatedPods, the pods rule 5 of the deletion ranking counts per
        node: those matching the selector of any ReplicaSet with the same controlling owner (its
        Deployment), each once. A ReplicaSet without a controller has none (upstream logs "has no
        controller" and returns nil), so every candidate ranks 0 there and later rules decide."""
        owner = controller_ref(rs)
        if not owner:
            return []
        seen: set[str] = set()
        out = []
        for sibling in self.rs.by_index("owner", owner["uid"]):
            namespace = sibling["metadata"].get("namespace", "default")
            selector = sibling["spec"].get("selector")
            for pod in self.pods.select(rules.match_labels_of(selector)):
                uid = pod["metadata"]["uid"]
                if (uid not in seen and pod["metadata"].get("namespace", "default") == namespace
                        and rules.selector_matches(selector, pod["metadata"].get("labels"))):
                    seen.add(uid)
                    out.append(pod)
        return out

    def update_status(self, rs: dict, pods: list[dict], error: ApiError | None) -> None:
        """replica_set_utils.go calculateStatus + the ReplicaFailure condition."""
        mrs = rs["spec"].get("minReadySeconds", 0)
        status = dict(rs.get("status") or {})
        labeled = ready = available = 0
        for p in pods:    # one pass over cached facts: this runs over every pod on each sync
            facts = self.facts(rs, p)
            labeled += facts.labeled
            if facts.ready:
                ready += 1
                available += rules.available_since(facts.ready_since, mrs, self.now)
        status["replicas"] = len(pods)
        status["fullyLabeledReplicas"] = labeled
        status["readyReplicas"] = ready
        status["availableReplicas"] = available
        status["observedGeneration"] = rs["metadata"].get("generation", 1)
        conditions = [c for c in status.get("conditions") or []]
        has_failure = any(c["type"] == "ReplicaFailure" for c in conditions)
        if error is not None and not has_failure:
            reason = "FailedCreate" if len(pods) < int(rs["spec"].get("replicas", 1)) else "FailedDelete"
            conditions.append({"type": "ReplicaFailure", "status": "True", "reason": reason,
                               "message": error.message, "lastTransitionTime": self.now})
        elif error is None and has_failure:
            conditions = [c for c in conditions if c["type"] != "ReplicaFailure"]
        status["conditions"] = conditions
        if status != rs.get("status"):
            self.ctx.store.write_status("ReplicaSet", obj_key(rs), status)


class EdgeTriggeredReplicaSetController(Controller):
    """A strawman for the lecture: reacts to each watch event *delta* and never re-reads state.

    It subscribes to the raw watch stream (no informer cache, no relist, no resync). Seeing a
    ReplicaSet ADDED it creates ``replicas`` pods; seeing one of its pods DELETED or terminating it
    creates one. If an event is lost, nothing ever tells it, so the cluster stays wrong forever.
    """

    name = "edge-triggered-replicaset"
    kind = "ReplicaSet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.pending: list[tuple[str, str, str]] = []   # (rs key, rule, action) to act on
        self.handled: set[str] = set()
        ctx.store.watch("ReplicaSet", self._rs_event)
        ctx.store.watch("Pod", self._pod_event)

    def _rs_event(self, kind_of_event: str, old: dict | None, new: dict | None) -> None:
        if kind_of_event == "ADDED":
            self.pending.append((obj_key(new), "saw ReplicaSet ADDED", f"create {new['spec'].get('replicas', 1)}"))
        elif kind_of_event == "MODIFIED" and old["spec"].get("replicas") != new["spec"].get("replicas"):
            delta = int(new["spec"].get("replicas", 1)) - int(old["spec"].get("replicas", 1))
            self.pending.append((obj_key(new), "saw spec.replicas change", f"create {delta}" if delta > 0 else f"delete {-delta}"))

    def _pod_event(self, kind_of_event: str, old: dict | None, new: dict | None) -> None:
        pod = new if new is not None else old
        ref = controller_ref(pod)
        if not ref or ref.get("kind") != "ReplicaSet":
            return
        uid = pod["metadata"]["uid"]
        gone = kind_of_event == "DELETED" or (new is not None and not rules.is_active(new))
        if gone and uid not in self.handled:
            self.handled.add(uid)
            key = f"{pod['metadata'].get('namespace', 'default')}/{ref['name']}"
            self.pending.append((key, f"saw Pod {pod['metadata']['name']} go", "create 1"))

    def sync(self, key: str) -> None:  # not queue-driven
        return

    def process(self) -> int:
        work, self.pending = self.pending, []
        for key, rule, action in work:
            rs = self.ctx.store.get("ReplicaSet", key)
            if rs is None:
                continue
            verb, n = action.split()
            n = int(n)
            if verb == "create":
                for _ in range(n):
                    made = self.ctx.store.create(pod_from_template(rs))
                    self.ctx.recorder.emit(rs, "Normal", "SuccessfulCreate", f"Created pod: {made['metadata']['name']}", self.name)
            else:
                mine = [p for p in self.ctx.store.list("Pod") if (controller_ref(p) or {}).get("uid") == rs["metadata"]["uid"]
                        and rules.is_active(p)]
                for p in sorted(mine, key=lambda p: p["metadata"]["name"])[:n]:
                    self.ctx.store.request_delete("Pod", obj_key(p))
            self.decide(f"ReplicaSet {rs['metadata']['name']}", "(not looked at)", str(rs["spec"].get("replicas", 1)),
                        f"edge: {rule}", action)
        return len(work)
