"""Time a steady-state sizing call and the serving panel's whole load study, beside a reference.

The reference, timed in the same run, is one plain 2,000-request simulation of the same replica at
half its saturation rate: the unit of work every steady-state probe repeats. Sizing must stay
interactive (p95 well under a second); the load study runs as a job with progress.

Run: ``python benchmarks/serving_sizing.py [--repeats N]``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.core.models import PRESETS  # noqa: E402
from engines.core.scenario import Scenario  # noqa: E402
from engines.serving import (LatencyTarget, capacity, default_workload, deployment_study, replica_memory,  # noqa: E402
                             saturation_throughput, simulate_batching, size_deployment, step_cost)

TARGET = LatencyTarget(ttft_p90_s=2.0, tpot_p90_s=0.1)
CASES = {
    "llama3-8b, H100, 8 slots (default)": Scenario(),
    "llama3-8b, H100, 64 slots, 8k": Scenario(model="llama3-8b", arch=PRESETS["llama3-8b"], serve_batch=64),
    "llama3-70b, H100, 32 slots, 8k": Scenario(model="llama3-70b", arch=PRESETS["llama3-70b"], serve_batch=32),
    "smollm2-135m, H100, 16 slots, 2k": Scenario(model="smollm2-135m", arch=PRESETS["smollm2-135m"], serve_batch=16,
                                                 serve_context=2048),
}


def _times(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    print(f"{'case':36s} {'reference 2k-request run':>26s} {'size_deployment p50/p95':>25s} {'load study':>12s}")
    worst = 0.0
    for name, s in CASES.items():
        mem = replica_memory(s)
        cost, kv = step_cost(s, mem.gpus_needed), capacity(s, mem.gpus_needed).max_tokens
        wl = default_workload(s)
        half = 0.5 * saturation_throughput(cost, wl, "continuous", s.serve_batch, kv)
        ref = _times(lambda: simulate_batching(cost, replace(wl, rate_per_s=half, n_requests=2000), "continuous",
                                               s.serve_batch, kv), a.repeats)
        sizing = _times(lambda: size_deployment(s, 100.0, TARGET), a.repeats)
        study = _times(lambda: deployment_study(s, wl, TARGET, 100.0), 1)[0]
        worst = max(worst, _p95(sizing))
        print(f"{name:36s} {statistics.median(ref):20.1f} ms    {statistics.median(sizing):10.1f} / "
              f"{_p95(sizing):6.1f} ms {study / 1e3:9.2f} s")
    print(f"sizing worst p95: {worst:.1f} ms (interactive: well under 1000 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
