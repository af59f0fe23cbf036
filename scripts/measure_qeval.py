"""Measure the default comparison of the quantization-evaluation panel and write ``assets/qeval/shipped.json``.

    python scripts/measure_qeval.py [--budget quick] [--threads 2] [--device cpu] [--out assets/qeval/shipped.json]

Runs :func:`engines.qeval.evaluate` on every configuration of ``engines.qeval.DEFAULT_COMPARISON``
(the baseline first) and saves after each one, so an interrupted run still leaves a readable file.
Every entry records where and when it was measured; the panel shows that line next to the numbers.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", default="quick", choices=("quick", "full"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "assets/qeval/shipped.json")
    args = p.parse_args()
    import torch

    from engines.qeval import DEFAULT_COMPARISON, evaluate, load, save_evaluations

    torch.set_num_threads(args.threads)
    lm = load("smollm2", args.device)
    done = []
    note = (f"Default comparison, {args.budget} budget, measured by scripts/measure_qeval.py on the build machine "
            f"({args.device}); each entry names its date and device.")
    for config in DEFAULT_COMPARISON:
        t0 = time.perf_counter()
        ev = evaluate(lm, config, args.budget)
        done.append(ev)
        save_evaluations(args.out, done, note)
        print(f"{config.label():45s} ppl {ev.perplexity:8.3f}  flips {ev.flip_rate:6.3f}  kl {ev.mean_kl:7.4f}  "
              f"surv@32 {ev.survival_at(32):.2f} @128 {ev.survival_at(128):.2f}  {time.perf_counter() - t0:5.1f} s",
              flush=True)


if __name__ == "__main__":
    main()
