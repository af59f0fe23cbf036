"""Time the compute panel's scaling-law experiment (engines.compute.experiment) on the CPU: the whole run
(six sizes × their budgets, the held-out losses and the fit), each size's training steps per second
beside a plain training loop of the same model in the same process (the reference: no branches, no
evaluation, no progress), and the process CPU time, which shared machines inflate less than wall time.

Run: ``python benchmarks/scaling_experiment.py [--quick]``. Target: the default run within a few minutes
on two CPU cores (the experiment uses one intra-op thread).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.compute.experiment import QUICK, SIZES, Params, run_experiment  # noqa: E402
from engines.scale.tiny_lm import build_model  # noqa: E402

TARGET_S = 300.0


def plain_steps_per_s(shape, params: Params, steps: int = 40) -> float:
    """Reference: AdamW steps of the same model and batch shape, nothing else."""
    import numpy as np
    import torch

    model = build_model(shape.d_model, shape.n_layer, shape.n_head, params.context, 0)
    opt = torch.optim.AdamW(model.parameters(), lr=params.lr, betas=(0.9, 0.95), weight_decay=0.0, fused=True)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.integers(0, 128, size=(params.batch, params.context)))
    y = torch.from_numpy(rng.integers(0, 128, size=(params.batch, params.context)))
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return steps / (time.perf_counter() - t0)


def main() -> int:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the small run the tests use")
    args = ap.parse_args()
    params = QUICK if args.quick else Params(device="cpu")
    print(f"scaling experiment: {params.n_sizes} sizes × {params.n_budgets} budgets "
          f"({', '.join(str(s) for s in params.budget_steps())} steps of {params.batch}×{params.context} bytes), "
          f"{os.cpu_count()} CPUs here, load average {os.getloadavg()[0]:.1f}")
    cpu0, t0 = time.process_time(), time.perf_counter()
    result = run_experiment(params)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    print(f"{'model':10} {'N':>8} {'steps':>6} {'run steps/s':>11} {'plain steps/s':>13}  (reference)")
    torch.set_num_threads(1)
    for shape in SIZES[:params.n_sizes]:
        pts = [p for p in result.points if p.size == shape.label]
        longest = max(pts, key=lambda p: p.steps)
        run_rate = longest.steps / longest.seconds
        print(f"{shape.label:10} {pts[0].n_params:8,} {longest.steps:6} {run_rate:11.1f} "
              f"{plain_steps_per_s(shape, params):13.1f}")
    f = result.fit
    print(f"fit: alpha={f.alpha:.3f} beta={f.beta:.3f} a={f.a:.3f} rmse(log)={f.rmse_log:.4f}")
    print(f"scaling experiment wall: {wall:.1f} s (target {TARGET_S:.0f} s)")
    print(f"scaling experiment cpu: {cpu:.1f} s")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (other work on this machine slows the wall time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
