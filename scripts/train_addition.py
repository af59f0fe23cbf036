"""Train the quantization-evaluation panel's addition model and write the shipped checkpoint.

    .venv/bin/python scripts/train_addition.py --seed 4 --threads 1 \
        --out assets/qeval/addition.safetensors

The file records the full command in its metadata (``extra.generated_by``).

Trains :func:`engines.qeval.addition.train` with the given seed, measures the bit-width sweeps the panel
shows (group 32 and per channel, 1,000 held-out sums per length) and stores weights, training facts and
the sweeps in one safetensors file (metadata: seed, steps, date, device, seconds, torch version).

Where the rounding breaks depends on the seed. Tried on the build machine, 2026-12-02, 5,000 steps: with
weight decay 0.01 only seeds 2 and 4 of 2-9 learned 6-digit sums; at 2 bits g32 seed 2's answer perplexity
rose +53 %. With weight decay 0.1 (the default now) seeds 4 and 6 learned them, and at 2 bits g32 seed 4's
rose +7 % (seed 6: +89 %). Seed 4 ships; one thread, so the same seed gives the same weights.
Retrained 2026-12-04 after commit 1a69dd8 changed how the model is built: seed 4 now reaches final loss
0.00093 and at 2 bits g32 its answer perplexity rises +21.8 % (6-digit sums 99.8 % -> 51.9 %).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.qeval import addition as A  # noqa: E402
from scripts.provenance import record  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=A.TrainConfig().seed)
    ap.add_argument("--steps", type=int, default=A.TrainConfig().steps)
    ap.add_argument("--threads", type=int, default=1, help="one thread: the same seed gives the same weights")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--per-length", type=int, default=1000)
    ap.add_argument("--out", default="assets/qeval/addition.safetensors")
    return ap


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()

    def report(fraction: float, text: str) -> None:
        print(f"[{time.perf_counter() - t0:6.0f} s] {100 * fraction:5.1f} % {text}", flush=True)

    run = A.train(A.TrainConfig(seed=args.seed, steps=args.steps), args.device, report)
    print(f"trained in {run.seconds:.1f} s, final loss {run.final_loss:.5f}", flush=True)
    extra = {"script": "scripts/train_addition.py", "measured": A._measured_note(args.device),
             "per_length": args.per_length, "parameters": A.parameter_count(run.model),
             "generated_by": record("scripts/train_addition.py", parser, args)}
    for group in A.ADD_SWEEP_GROUPS:
        rows = A.bits_sweep(run.model, A.sweep_configs(group), args.per_length, args.device, progress=report)
        key = "sweep_per_channel" if group is None else f"sweep_g{group}"
        extra[key] = A.rows_to_list(rows)
        for r in rows:
            em = " ".join(f"{100 * v:5.1f}" for v in r.score.exact_match().values())
            print(f"{r.label:>14}: answer perplexity {r.score.answer_perplexity:.4f}; exact match % {em}", flush=True)
    path = A.save_checkpoint(run, args.out, extra)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
