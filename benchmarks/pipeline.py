"""Pipeline engine timings: schedule + simulate for growing (p, m, v), and one executed run.

    python benchmarks/pipeline.py [--device cpu] [--hidden 512] [--skip-exec]

Prints milliseconds per schedule+simulate (the cost of one slider step in the panel) and, for the
executed mode, the measured makespan, bubble and mean op times next to the simulated bubble with
those mean times: on a machine with at least p free cores (or a GPU) the two bubbles approach each
other; with fewer cores the ranks compete and the measured bubble is larger.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from engines.pipeline import schedule, simulate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--skip-exec", action="store_true")
    a = ap.parse_args()

    print(f"{'kind':18} {'p':>3} {'m':>4} {'v':>2} {'ops':>6} {'ms':>8} {'bubble/ideal':>13}")
    for kind, p, m, v in (("1f1b", 4, 8, 1), ("1f1b", 8, 32, 1), ("interleaved-1f1b", 8, 32, 2),
                          ("zb-h1", 8, 64, 1), ("zb-v", 8, 64, 2), ("interleaved-1f1b", 16, 128, 4)):
        t0 = time.perf_counter()
        ranks = schedule(kind, p, m, v)
        sim = simulate(ranks)
        ms = (time.perf_counter() - t0) * 1e3
        print(f"{kind:18} {p:>3} {m:>4} {v:>2} {len(sim.ops):>6} {ms:>8.1f} {sim.bubble_over_ideal:>13.4f}")

    if a.skip_exec:
        return
    from engines.pipeline.execution import execute

    for kind, v in (("1f1b", 1), ("zb-h1", 1), ("interleaved-1f1b", 2)):
        run = execute(kind, 4, 8, v, device=a.device, hidden=a.hidden, layers_per_stage=2, batch=128)
        costs = ", ".join(f"{k} {t * 1e3:.2f} ms" for k, t in run.mean_costs.items())
        print(f"executed {kind} on {run.device}: makespan {run.measured.makespan * 1e3:.1f} ms, "
              f"bubble/total measured {run.measured.bubble_fraction:.1%} vs simulated "
              f"{run.simulated.bubble_fraction:.1%}; {costs}; grad error {run.max_grad_error:.1e}")


if __name__ == "__main__":
    main()
