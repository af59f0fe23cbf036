"""The in-memory API server: objects, resourceVersions, watch streams, informers, work queues.

Shapes follow the Kubernetes API (apiVersion, kind, metadata with labels, ownerReferences, uid,
resourceVersion, generation; spec; status). Times are simulated seconds since the cluster started.

Controllers never poll the store: each reads a shared informer cache filled from the watch stream
(client-go tools/cache shared_informer.go) and reacts by putting object *keys* on a work queue
(client-go util/workqueue). A "dropped events" fault makes the watch lose messages; the informer's
periodic relist (reflector ListAndWatch → DeltaFIFO Replace) repairs the cache and the resync
re-enqueues every key, which is why level-triggered controllers recover.
"""
from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from typing import Callable, Iterable

from engines.core.errors import ValidationError

KINDS = ("Node", "Pod", "ReplicaSet", "Deployment", "Service", "EndpointSlice", "ResourceQuota",
         "HorizontalPodAutoscaler")
API_VERSIONS = {"Node": "v1", "Pod": "v1", "Service": "v1", "ResourceQuota": "v1", "ReplicaSet": "apps/v1",
                "Deployment": "apps/v1", "EndpointSlice": "discovery.k8s.io/v1",
                "HorizontalPodAutoscaler": "autoscaling/v2"}
NAMESPACED = {"Pod", "ReplicaSet", "Deployment", "Service", "EndpointSlice", "ResourceQuota", "HorizontalPodAutoscaler"}

_ALIASES = {"po": "Pod", "pods": "Pod", "rs": "ReplicaSet", "replicasets": "ReplicaSet", "deploy": "Deployment",
            "deployments": "Deployment", "svc": "Service", "services": "Service", "no": "Node", "nodes": "Node",
            "quota": "ResourceQuota", "resourcequotas": "ResourceQuota", "endpointslices": "EndpointSlice",
            "hpa": "HorizontalPodAutoscaler", "horizontalpodautoscalers": "HorizontalPodAutoscaler"}


def normalize_kind(kind: str) -> str:
    """The kind as the store names it, from any case or kubectl's short and plural names (po, deploy, svc ...)."""
    if not isinstance(kind, str):
        raise ValidationError("kind", f"{kind!r} is not a kind", ", ".join(KINDS))
    for k in KINDS:
        if kind.lower() == k.lower():
            return k
    if kind.lower() in _ALIASES:
        return _ALIASES[kind.lower()]
    raise ValidationError("kind", f"{kind!r} is not a known kind", ", ".join(KINDS))


NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand SafeEncodeString alphabet


class ApiError(ValidationError):
    """An API-server refusal; ``reason`` is the HTTP status reason (NotFound, Forbidden, …)."""

    def __init__(self, reason: str, field: str, message: str, allowed: str | None = None) -> None:
        self.reason = reason
        self.message = message
        super().__init__(field, message, allowed)


def clone(obj):
    """Deep copy of JSON-shaped data (dicts, lists, scalars): ~5× faster than copy.deepcopy."""
    if isinstance(obj, dict):
        return {k: clone(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clone(v) for v in obj]
    return obj


def obj_key(obj: dict) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}" if obj["kind"] in NAMESPACED else meta["name"]


def controller_ref(obj: dict) -> dict | None:
    """metav1.GetControllerOf: the ownerReference with controller: true."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


class Clock:
    """Simulated time in seconds."""

    def __init__(self) -> None:
        self.now = 0.0


@dataclass
class DropRule:
    """Watch events are lost until ``until`` (simulated s), each with ``probability``."""

    until: float
    probability: float = 1.0
    dropped: int = 0


class Store:
    """Objects by kind and key, with resourceVersions, a garbage-collector owner index and watches."""

    def __init__(self, clock: Clock, rng: random.Random) -> None:
        self.clock = clock
        self.rng = rng
        self.objects: dict[str, dict[str, dict]] = {k: {} for k in KINDS}
        self.version = 0
        self.watchers: dict[str, list[Callable[[str, dict | None, dict | None], None]]] = {k: [] for k in KINDS}
        self.admission: list[Callable[[dict], None]] = []
        self.dependents: dict[str, set[tuple[str, str]]] = {}   # owner uid → {(kind, key)}
        self.uids: dict[str, tuple[str, str]] = {}
        self.drop: DropRule | None = None
        self.on_removed: list[Callable[[dict], None]] = []

    # --- identity ------------------------------------------------------------------------
    def new_uid(self) -> str:
        h = "%032x" % self.rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:32]}"

    def random_suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(NAME_ALPHABET) for _ in range(n))

    # --- reads ---------------------------------------------------------------------------
    def get(self, kind: str, key: str) -> dict | None:
        return self.objects[kind].get(key)

    def list(self, kind: str) -> Iterable[dict]:
        return self.objects[kind].values()

    def by_uid(self, uid: str) -> dict | None:
        where = self.uids.get(uid)
        return self.objects[where[0]].get(where[1]) if where else None

    # --- writes --------------------------------------------------------------------------
    def create(self, obj: dict) -> dict:
        """Default metadata, run admission (quota), store, emit ADDED."""
        kind = obj["kind"]
        meta = obj.setdefault("metadata", {})
        if kind in NAMESPACED:
            meta.setdefault("namespace", "default")
        if not meta.get("name") and not meta.get("generateName"):
            raise ApiError("Invalid", "metadata.name", "name or generateName is required")
        for admit in self.admission:      # before name generation: messages show "web-7d9-"
            admit(obj)
        if not meta.get("name"):
            for _ in range(100):
                meta["name"] = meta["generateName"] + self.random_suffix()
                if obj_key(obj) not in self.objects[kind]:
                    break
        key = obj_key(obj)
        if key in self.objects[kind]:
            raise ApiError("AlreadyExists", "metadata.name", f'{kind.lower()}s "{meta["name"]}" already exists')
        obj.setdefault("apiVersion", API_VERSIONS[kind])
        meta.setdefault("labels", {})
        meta.setdefault("annotations", {})
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = self.clock.now
        meta["generation"] = 1
        obj.setdefault("spec", {})
        obj.setdefault("status", {})
        self.version += 1
        meta["resourceVersion"] = str(self.version)
        self.objects[kind][key] = obj
        self.uids[meta["uid"]] = (kind, key)
        self._index_owners(obj, add=True)
        self._emit(kind, "ADDED", None, obj)
        return obj

    def update(self, obj: dict) -> dict:
        """Replace the stored object with ``obj`` (a fresh dict); bump resourceVersion/generation."""
        kind, key = obj["kind"], obj_key(obj)
        old = self.objects[kind].get(key)
        if old is None:
            raise ApiError("NotFound", kind, f'{kind.lower()}s "{obj["metadata"]["name"]}" not found')
        meta = obj["metadata"]
        meta["uid"] = old["metadata"]["uid"]
        meta["creationTimestamp"] = old["metadata"]["creationTimestamp"]
        if kind != "Pod" and obj.get("spec") != old.get("spec"):
            meta["generation"] = old["metadata"].get("generation", 1) + 1
        self.version += 1
        meta["resourceVersion"] = str(self.version)
        self._index_owners(old, add=False)
        self.objects[kind][key] = obj
        self._index_owners(obj, add=True)
        self._emit(kind, "MODIFIED", old, obj)
        return obj

    def mutate(self, kind: str, key: str, fn: Callable[[dict], None]) -> dict | None:
        """Copy, change with ``fn``, write back (an optimistic-concurrency update in one step)."""
        old = self.objects[kind].get(key)
        if old is None:
            return None
        new = clone(old)
        fn(new)
        return self.update(new)

    def write_parts(self, kind: str, key: str, parts: Callable[[dict], dict]) -> dict | None:
        """Update by replacing whole top-level parts: ``parts(current)`` returns e.g.
        ``{"status": new_status}`` built from the current stored object without changing it.

        The new object shares its other parts (spec, labels, ownerReferences) with the old one
        instead of deep-copying them as ``mutate`` does: stored objects are never changed in
        place, so sharing is safe, and status reports, binds and deletion marks (most writes)
        then cost a few dict copies instead of a deep copy of the pod."""
        old = self.objects[kind].get(key)
        if old is None:
            return None
        new = {**old, **parts(old)}
        if new["metadata"] is old["metadata"]:
            new["metadata"] = dict(old["metadata"])   # update() stamps resourceVersion into it
        return self.update(new)

    def write_status(self, kind: str, key: str, status: dict) -> dict | None:
        """The /status subresource (what controllers' UpdateStatus calls): replace ``status``."""
        return self.write_parts(kind, key, lambda _old: {"status": status})

    def remove(self, kind: str, key: str) -> dict | None:
        """Delete now (grace 0), emit DELETED, let the garbage collector delete dependents."""
        old = self.objects[kind].pop(key, None)
        if old is None:
            return None
        self.version += 1
        self._index_owners(old, add=False)
        uid = old["metadata"]["uid"]
        self.uids.pop(uid, None)
        self._emit(kind, "DELETED", old, None)
        for hook in self.on_removed:
            hook(old)
        self.collect_garbage(uid)
        return old

    def collect_garbage(self, owner_uid: str) -> None:
        """Background cascading deletion (garbagecollector): dependents whose owner is gone."""
        for kind, key in sorted(self.dependents.pop(owner_uid, set())):
            dep = self.objects[kind].get(key)
            if dep is None:
                continue
            refs = dep["metadata"].get("ownerReferences") or []
            if all(self.by_uid(r["uid"]) is None for r in refs):
                self.request_delete(kind, key)

    def request_delete(self, kind: str, key: str, grace: float | None = None) -> dict | None:
        """API DELETE: bound, running pods get a deletionTimestamp and terminate gracefully
        (registry/core/pod strategy CheckGracefulDelete); everything else goes at once."""
        obj = self.objects[kind].get(key)
        if obj is None:
            return None
        if kind == "Pod":
            phase = obj["status"].get("phase")
            if obj["spec"].get("nodeName") and phase not in ("Succeeded", "Failed"):
                if obj["metadata"].get("deletionTimestamp"):
                    return obj
                period = obj["spec"].get("terminationGracePeriodSeconds", 30) if grace is None else grace
                return self.write_parts(kind, key, lambda o: {"metadata": {
                    **o["metadata"], "deletionTimestamp": self.clock.now + period, "deletionGracePeriodSeconds": period}})
        return self.remove(kind, key)

    # --- owner index -----------------------------------------------------------------------
    def _index_owners(self, obj: dict, add: bool) -> None:
        entry = (obj["kind"], obj_key(obj))
        for ref in obj["metadata"].get("ownerReferences") or []:
            bucket = self.dependents.setdefault(ref["uid"], set())
            if add:
                bucket.add(entry)
            else:
                bucket.discard(entry)

    # --- watch -----------------------------------------------------------------------------
    def watch(self, kind: str, fn: Callable[[str, dict | None, dict | None], None]) -> None:
        self.watchers[kind].append(fn)

    def _emit(self, kind: str, kind_of_event: str, old: dict | None, new: dict | None) -> None:
        drop = self.drop
        if drop is not None:
            if self.clock.now >= drop.until:
                self.drop = None
            elif drop.probability >= 1.0 or self.rng.random() < drop.probability:
                drop.dropped += 1
                return
        for fn in self.watchers[kind]:
            fn(kind_of_event, old, new)


# --- informers -----------------------------------------------------------------------------
Indexer = Callable[[dict], Iterable[str]]


def index_by_owner(obj: dict) -> Iterable[str]:
    ref = controller_ref(obj)
    return (ref["uid"],) if ref else ("",)


def index_by_node(obj: dict) -> Iterable[str]:
    return (obj.get("spec", {}).get("nodeName") or "",)


def index_by_label(obj: dict) -> Iterable[str]:
    return [f"{k}={v}" for k, v in (obj["metadata"].get("labels") or {}).items()]


class Informer:
    """A shared informer: a cache of one kind kept by the watch stream, indexes, handlers.

    Handlers receive (old, new) like ResourceEventHandlerFuncs. ``relist`` is the reflector's
    list-and-replace, used on the resync period: differences become synthetic add/update/delete
    events, then every cached object is re-delivered as an update (the resync).
    """

    def __init__(self, store: Store, kind: str, indexers: dict[str, Indexer] | None = None) -> None:
        self.store, self.kind = store, kind
        self.cache: dict[str, dict] = {}
        self.indexers = indexers or {}
        # buckets are insertion-ordered dicts used as sets: a set's order depends on the string
        # hash seed, which would make by_index (and so deletions, evictions) differ per process
        self.indices: dict[str, dict[str, dict[str, None]]] = {n: {} for n in self.indexers}
        self.on_add: list[Callable[[dict], None]] = []
        self.on_update: list[Callable[[dict, dict], None]] = []
        self.on_delete: list[Callable[[dict], None]] = []
        store.watch(kind, self._event)

    def get(self, key: str) -> dict | None:
        return self.cache.get(key)

    def values(self) -> Iterable[dict]:
        return self.cache.values()

    def by_index(self, name: str, value: str) -> list[dict]:
        keys = self.indices[name].get(value, ())
        return [self.cache[k] for k in keys]

    def keys_by_index(self, name: str, value: str) -> set[str]:
        return set(self.indices[name].get(value, ()))

    def select(self, match_labels: dict, among: Iterable[str] | None = None) -> list[dict]:
        """Objects carrying every label pair (index intersection), sorted by key; the caller
        applies expressions. ``among``: only these keys (e.g. another index's bucket)."""
        sets = sorted((self.indices["label"].get(f"{k}={v}", {}) for k, v in match_labels.items()), key=len)
        if not sets:
            return list(self.cache.values()) if among is None else [o for k, o in self.cache.items() if k in among]
        if among is not None:
            sets.insert(0, among)
        keys = set(sets[0]).intersection(*sets[1:])
        return [self.cache[k] for k in sorted(keys)]

    def _reindex(self, key: str, old: dict | None, new: dict | None) -> None:
        for name, fn in self.indexers.items():
            index = self.indices[name]
            if old is not None and new is not None:
                before, after = fn(old), fn(new)
                if before == after:   # most updates (status reports) leave every index alone
                    continue
            if old is not None:
                for v in fn(old):
                    bucket = index.get(v)
                    if bucket is not None:
                        bucket.pop(key, None)
                        if not bucket:
                            del index[v]
            if new is not None:
                for v in fn(new):
                    index.setdefault(v, {})[key] = None

    def _event(self, kind_of_event: str, old: dict | None, new: dict | None) -> None:
        obj = new if new is not None else old
        key = obj_key(obj)
        cached = self.cache.get(key)
        if kind_of_event == "DELETED":
            if cached is None:
                return
            del self.cache[key]
            self._reindex(key, cached, None)
            for fn in self.on_delete:
                fn(cached)
            return
        self.cache[key] = new
        self._reindex(key, cached, new)
        if cached is None:
            for fn in self.on_add:
                fn(new)
        else:
            for fn in self.on_update:
                fn(cached, new)

    def relist(self) -> int:
        """Repair the cache from the store and resync; returns how many differences were found."""
        live = self.store.objects[self.kind]
        repaired = 0
        for key in [k for k in self.cache if k not in live]:
            repaired += 1
            self._event("DELETED", self.cache[key], None)
        for key, obj in list(live.items()):
            if self.cache.get(key) is not obj:
                repaired += 1
                self._event("MODIFIED" if key in self.cache else "ADDED", self.cache.get(key), obj)
        for obj in list(self.cache.values()):
            for fn in self.on_update:
                fn(obj, obj)
        return repaired


# --- work queues ---------------------------------------------------------------------------
class WorkQueue:
    """client-go workqueue with a rate limiter: a key added many times is processed once;
    failures back off 5 ms·2ⁿ up to 1000 s (DefaultControllerRateLimiter's per-item part)."""

    def __init__(self) -> None:
        self.ready: dict[str, None] = {}
        self.delayed: list[tuple[float, int, str]] = []
        self.failures: dict[str, int] = {}
        self._seq = 0

    def add(self, key: str) -> None:
        self.ready[key] = None

    def add_after(self, key: str, delay: float, now: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        self._seq += 1
        heapq.heappush(self.delayed, (now + delay, self._seq, key))

    def add_rate_limited(self, key: str, now: float) -> float:
        n = self.failures.get(key, 0)
        self.failures[key] = n + 1
        delay = min(0.005 * 2**n, 1000.0)
        self.add_after(key, delay, now)
        return delay

    def forget(self, key: str) -> None:
        self.failures.pop(key, None)

    def promote(self, now: float) -> None:
        while self.delayed and self.delayed[0][0] <= now + 1e-9:
            self.ready[heapq.heappop(self.delayed)[2]] = None

    def pop(self) -> str | None:
        if not self.ready:
            return None
        key = next(iter(self.ready))
        del self.ready[key]
        return key

    def __len__(self) -> int:
        return len(self.ready)


# --- events --------------------------------------------------------------------------------
@dataclass
class Recorder:
    """record.EventRecorder with the correlator's aggregation: the same (object, type, reason,
    message) increments ``count`` and ``lastTimestamp`` instead of adding a row."""

    clock: Clock
    events: list[dict] = field(default_factory=list)
    _index: dict[tuple, dict] = field(default_factory=dict)
    limit: int = 5000

    def emit(self, obj: dict | str, kind_of_event: str, reason: str, message: str, source: str) -> dict:
        ref = obj if isinstance(obj, str) else f"{obj['kind'].lower()}/{obj['metadata']['name']}"
        key = (ref, kind_of_event, reason, message)
        now = self.clock.now
        existing = self._index.get(key)
        if existing is not None:
            existing["count"] += 1
            existing["lastTimestamp"] = now
            return existing
        event = {"type": kind_of_event, "reason": reason, "object": ref, "message": message, "source": source,
                 "count": 1, "firstTimestamp": now, "lastTimestamp": now, "seq": len(self.events)}
        self.events.append(event)
        self._index[key] = event
        while len(self.events) > self.limit:   # keep memory bounded on long benchmark runs
            e = self.events.pop(0)               # in place: a memmove, not a 5,000-item copy per event
            self._index.pop((e["object"], e["type"], e["reason"], e["message"]), None)
        return event
