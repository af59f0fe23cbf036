"""Simulated seconds per wall second: 100 nodes, 3,000 pods, under a rolling update, then the same
rolling update with kubectl commands mixed in (scale, cordon/uncordon, delete pod, label, patch,
rollout pause/resume, drain) every 5 simulated seconds. The simulator must stay ≥ 10× faster than
real time.

Run: python benchmarks/k8s.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.k8s import Cluster  # noqa: E402
from engines.k8s.scenarios import web  # noqa: E402


def _cluster(nodes: int, pods: int) -> Cluster:
    c = Cluster(seed=0, record_noops=False)
    for i in range(nodes):
        c.apply({"kind": "Node", "metadata": {"name": f"node-{i:03d}"},
                 "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}})
    c.apply(web(pods, "web:1"))
    return c


def rolling(nodes: int = 100, pods: int = 3000, seconds: float = 120.0) -> float:
    c = _cluster(nodes, pods)
    t0 = time.perf_counter()
    c.run(30)
    setup = time.perf_counter() - t0
    ready = c.get("Deployment", "web")["status"].get("availableReplicas", 0)
    c.apply(web(pods, "web:2"))
    t0 = time.perf_counter()
    c.run(seconds)
    wall = time.perf_counter() - t0
    d = c.get("Deployment", "web")["status"]
    rate = seconds / wall
    print(f"{nodes} nodes, {pods} pods: initial roll-out 30 s simulated in {setup:.1f} s wall ({ready} available)")
    print(f"rolling update: {seconds:.0f} s simulated in {wall:.1f} s wall → {rate:.1f} simulated s per wall s "
          f"(updated {d.get('updatedReplicas')}, available {d.get('availableReplicas')})")
    return rate


def commands_mixed(nodes: int = 100, pods: int = 3000, seconds: int = 120, every: int = 5) -> float:
    """The rolling update above while an operator gives a command every ``every`` simulated
    seconds: scale, cordon, delete and relabel pods, pause/resume the rollout, patch, drain."""
    c = _cluster(nodes, pods)
    c.run(30)
    c.apply(web(pods, "web:2"))

    def pod(i: int) -> str:
        live = (k for k, p in c.store.objects["Pod"].items() if not p["metadata"].get("deletionTimestamp"))
        for _ in range(i):
            next(live)
        return next(live).split("/", 1)[1]
    script = [lambda: f"scale deploy/web --replicas={pods + 20}", lambda: "cordon node-007",
              lambda: f"delete pod {pod(3)}", lambda: f"label pod {pod(5)} tier=debug",
              lambda: "rollout pause deploy/web", lambda: "rollout resume deploy/web", lambda: "uncordon node-007",
              lambda: """patch deploy web --type merge -p '{"spec":{"replicas":%d}}'""" % pods,
              lambda: "drain node-011", lambda: "uncordon node-011", lambda: f"delete pod/{pod(7)} --grace-period=0",
              lambda: f"label pod {pod(9)} tier-"]
    accepted, wall, given = 0, 0.0, 0
    for _second in range(0, seconds, every):
        t0 = time.perf_counter()
        accepted += c.kubectl(script[given % len(script)]()).accepted
        given += 1
        c.run(every)
        wall += time.perf_counter() - t0
    d = c.get("Deployment", "web")["status"]
    rate = seconds / wall
    print(f"commands mixed in: {given} commands ({accepted} accepted) during the rolling update, {seconds} s "
          f"simulated in {wall:.1f} s wall → {rate:.1f} simulated s per wall s (updated {d.get('updatedReplicas')}, "
          f"available {d.get('availableReplicas')})")
    return rate


def main(nodes: int = 100, pods: int = 3000, seconds: float = 120.0) -> float:
    rate = rolling(nodes, pods, seconds)
    mixed = commands_mixed(nodes, pods, int(seconds))
    return min(rate, mixed)


if __name__ == "__main__":
    main()
