"""Run the compute panel's scaling-law experiment on this machine and write the result the app ships.

    python scripts/run_scaling_experiment.py [--seed 0] [--device cpu] [--out assets/compute/experiment_result.json]

The file is marked as measured on the build machine (with its date, device and seed); the panel shows it
until a user presses "Run it here". Run it on the build machine with nothing else busy for honest seconds.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.compute.experiment import Params, run_experiment, save_result  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "compute" / "experiment_result.json")
    args = ap.parse_args()
    params = Params(seed=args.seed, device=args.device)
    shown = [-1.0]
    t0 = time.perf_counter()

    def progress(fraction: float, message: str) -> None:
        if fraction - shown[0] >= 0.05 or fraction >= 1.0:
            shown[0] = fraction
            print(f"{fraction:5.0%} {time.perf_counter() - t0:6.0f} s  {message}", flush=True)

    result = dataclasses.replace(run_experiment(params, progress), where="build machine")
    save_result(result, args.out)
    f = result.fit
    print(f"wrote {args.out}: {len(result.points)} points on {result.device_name} in {result.seconds:.0f} s")
    print(f"fit: E={f.E:.4f} A={f.A:.4g} B={f.B:.4g} alpha={f.alpha:.4f} beta={f.beta:.4f} "
          f"a={f.a:.3f} rmse(log)={f.rmse_log:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
