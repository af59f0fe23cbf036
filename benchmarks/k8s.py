"""Simulated seconds per wall second: 100 nodes, 3,000 pods, under a rolling update.

Run: python benchmarks/k8s.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.k8s import Cluster  # noqa: E402
from engines.k8s.scenarios import web  # noqa: E402


def main(nodes: int = 100, pods: int = 3000, seconds: float = 120.0) -> float:
    c = Cluster(seed=0, record_noops=False)
    for i in range(nodes):
        c.apply({"kind": "Node", "metadata": {"name": f"node-{i:03d}"},
                 "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}})
    c.apply(web(pods, "web:1"))
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


if __name__ == "__main__":
    main()
