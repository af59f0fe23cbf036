"""What every controller shares: the cluster context, the work-queue loop, decision records.

A *decision* is one reconcile step made visible: which controller looked at which object, what it
observed, what was desired, the rule that fired and the action taken, e.g.
"ReplicaSet web-7d9: 2 observed < 3 desired → create 1".
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from engines.k8s.store import ApiError, Clock, Informer, Recorder, Store, WorkQueue


@dataclass
class ImageBehavior:
    """How a simulated container image behaves (the simulator's stand-in for real programs).

    ``startup_seconds``: image pull + start; ``ready_after``: extra seconds until the readiness
    probe passes; ``exit_after``: the process exits (code ``exit_code``) that long after start;
    ``memory_bytes``/``cpu_millis``: working set and CPU demand (None: the container's request,
    or 64 MiB / 50m without one).
    """

    startup_seconds: float = 2.0
    ready_after: float = 0.0
    exit_after: float | None = None
    exit_code: int = 1
    memory_bytes: int | None = None
    cpu_millis: int | None = None


def default_image_behavior(image: str) -> ImageBehavior:
    """Convention for images nobody registered: a tag containing "crash" exits (code 1) 1 s after
    start, before its readiness probe (5 s) could pass; anything else starts in 2 s and runs."""
    tag = image.rsplit(":", 1)[-1] if ":" in image else ""
    if "crash" in tag or "crash" in image.rsplit("/", 1)[-1].split(":")[0]:
        return ImageBehavior(exit_after=1.0, ready_after=5.0)
    return ImageBehavior()


@dataclass
class Context:
    """Shared state of one simulated cluster."""

    clock: Clock
    store: Store
    recorder: Recorder
    rng: random.Random
    informers: dict[str, Informer] = field(default_factory=dict)
    decisions: list[dict] = field(default_factory=list)
    images: dict[str, ImageBehavior] = field(default_factory=dict)
    record_noops: bool = True
    resync_seconds: float = 30.0
    ip_hints: dict[str, str] = field(default_factory=dict)   # "ns/pod" → the address it had in a dump

    def image(self, name: str) -> ImageBehavior:
        return self.images.get(name) or default_image_behavior(name)


def ref_name(obj: dict) -> str:
    return f"{obj['kind']} {obj['metadata']['name']}"


class Controller:
    """A level-triggered reconcile loop: handlers enqueue keys, ``sync(key)`` compares desired
    with observed and acts; errors re-queue the key with back-off (processNextWorkItem)."""

    name = "controller"
    kind = ""   # the kind whose keys the queue holds

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue()

    @property
    def now(self) -> float:
        return self.ctx.clock.now

    def enqueue(self, obj: dict) -> None:
        from engines.k8s.store import obj_key
        self.queue.add(obj_key(obj))

    def sync(self, key: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def process(self) -> int:
        """Drain the ready part of the queue once; returns how many keys were synced."""
        self.queue.promote(self.now)
        done = 0
        while (key := self.queue.pop()) is not None:
            done += 1
            try:
                self.sync(key)
                self.queue.forget(key)
            except ApiError as err:
                delay = self.queue.add_rate_limited(key, self.now)
                self.decide(key, "", "", f"error: {err}", f"retry in {delay:g} s (rate-limited back-off)")
        return done

    def decide(self, obj: str, observed: str, desired: str, rule: str, action: str, noop: bool = False) -> None:
        if noop and not self.ctx.record_noops:
            return
        text = f"{obj}: {rule}" + (f" → {action}" if action else "")
        self.ctx.decisions.append({"t": self.now, "controller": self.name, "object": obj, "observed": observed,
                                   "desired": desired, "rule": rule, "action": action, "noop": noop, "text": text})

    def tick(self) -> None:
        """Periodic work that is not driven by the queue (kubelets, node monitor)."""
