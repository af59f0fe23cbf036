"""Time the full memory sweep: every strategy × 1–1024 GPUs (target: under 5 ms).

Run: ``python benchmarks/memory_sweep.py`` (prints the median of repeated runs per scenario).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.memory import sweep  # noqa: E402
from engines.core.models import PRESETS  # noqa: E402
from engines.core.scenario import STRATEGIES, Scenario  # noqa: E402

TARGET_MS = 5.0
CASES = {
    "llama3-8b, TP1 PP1": Scenario(),
    "llama3-70b, TP8 PP4, accum 8": Scenario(model="llama3-70b", arch=PRESETS["llama3-70b"], tp=8, pp=4, n_gpus=512,
                                             grad_accum=8),
    "llama3-405b, TP8 PP16": Scenario(model="llama3-405b", arch=PRESETS["llama3-405b"], tp=8, pp=16, n_gpus=1024,
                                      seq_len=8192, grad_accum=16),
}


def main(repeats: int = 50) -> int:
    worst = 0.0
    for name, scenario in CASES.items():
        sweep(scenario)  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            result = sweep(scenario, STRATEGIES, 1024)
            times.append((time.perf_counter() - start) * 1e3)
        median = statistics.median(times)
        worst = max(worst, median)
        print(f"{name:32s} {len(STRATEGIES)} strategies × {result.n_gpus.size} GPU counts: "
              f"median {median:.2f} ms, min {min(times):.2f} ms")
    verdict = "OK" if worst < TARGET_MS else "SLOWER than target"
    print(f"worst median {worst:.2f} ms (target < {TARGET_MS} ms): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
