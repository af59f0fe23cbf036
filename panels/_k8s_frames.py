"""What the Kubernetes panel's views read off a whole timeline, not one frame: what the frame shown
follows from, since when the level-triggered twin's count holds, when a pod was evicted. Reading
engine frames only; no rules live here."""
from __future__ import annotations

from engines.k8s.scenarios import Frame


def context_lines(timeline, frame: Frame) -> tuple[str, ...]:
    """What the frame shown follows from, longest wording first: the scenario's title and the last
    action before it ("since t = 10 s: power off the node"). A tour step cites that second, and in
    presenter mode the panel's caption line, which says it, is folded away."""
    if timeline is None:
        return ()
    # chapters are (frame index, label); the first, the set-up, is no action; a command's chapter is
    # the frame with its answer, and the command was given the second before (the answer's t)
    last = next(((timeline.frames[i], label) for i, label in reversed(timeline.chapters[1:])
                 if i < len(timeline.frames) and timeline.frames[i].t <= frame.t), None)
    since = ""
    if last:
        given, label = last
        since = f"since t = {given.commands[0].t if given.commands else given.t:.0f} s: {label.lstrip('$ ')}"
    return tuple(x for x in (f"{timeline.title} — {since}" if since else timeline.title, since) if x)


def twin_since(timeline, frame: Frame) -> float | None:
    """The second the level-triggered twin's count last changed, up to ``frame`` (E1 cites it)."""
    if timeline is None or not frame.twin:
        return None
    since = None
    for f in timeline.frames:
        if f.t > frame.t:
            break
        if since is None or f.twin != since[1]:
            since = (f.t, f.twin)
    return since[0] if since else None


def evicted_at(frame: Frame) -> dict[str, float]:
    """Pod name → the simulated second of its last Evicted event (the kubelet's or the Eviction API's),
    read from the frame's event log: the pod object itself keeps no timestamp of it."""
    out: dict[str, float] = {}
    for obj, _type, reason, _msg, _count, last in frame.event_log:
        if reason == "Evicted" and obj.lower().startswith("pod/"):
            out[obj.split("/", 1)[1]] = last
    return out
