"""Run the compute panel's scaling-law experiment on this machine and write the result the app ships.

    python scripts/run_scaling_experiment.py [--seed 0] [--device cpu] [--out assets/compute/experiment_result.json]

The file is marked as measured on the build machine (with its date, device and seed) and records this
command in ``generated_by``; the panel shows it until a user presses "Run it here". Run it on the build
machine with nothing else busy for honest seconds. The losses depend only on the seed, the device and
torch (one CPU thread, see ``CPU_THREADS``); the seconds are the machine's.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.compute.experiment import CPU_THREADS, Params, result_to_dict, run_experiment  # noqa: E402
from engines.core.writing import atomic_write_text  # noqa: E402
from scripts.provenance import record  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "compute" / "experiment_result.json")
    return ap


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = build_parser()
    args = parser.parse_args(argv)
    params = Params(seed=args.seed, device=args.device)
    shown = [-1.0]
    t0 = time.perf_counter()

    def progress(fraction: float, message: str) -> None:
        if fraction - shown[0] >= 0.05 or fraction >= 1.0:
            shown[0] = fraction
            print(f"{fraction:5.0%} {time.perf_counter() - t0:6.0f} s  {message}", flush=True)

    result = dataclasses.replace(run_experiment(params, progress), where="build machine")
    doc = result_to_dict(result)
    doc["generated_by"] = record("scripts/run_scaling_experiment.py", parser, args,
                                 threads=min(CPU_THREADS, torch.get_num_threads()) if result.device == "cpu"
                                 else torch.get_num_threads())
    atomic_write_text(args.out, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    f = result.fit
    print(f"wrote {args.out}: {len(result.points)} points on {result.device_name} in {result.seconds:.0f} s")
    print(f"fit: E={f.E:.4f} A={f.A:.4g} B={f.B:.4g} alpha={f.alpha:.4f} beta={f.beta:.4f} "
          f"a={f.a:.3f} rmse(log)={f.rmse_log:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
