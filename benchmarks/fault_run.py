"""Time the fault run (engines.scale.faults): steps per second of the data-parallel run with each
injected fault, beside a clean run and a one-process loop without collectives, in the same process.

Run: ``python benchmarks/fault_run.py [--steps 100] [--device cpu|cuda|all]``. torch runs one intra-op
thread (the replicas are threads already); CUDA rows appear when a GPU is present.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.scale.faults import Fault, FaultConfig, run  # noqa: E402
from engines.scale.tiny_lm import batch_tokens, build_model  # noqa: E402


def plain_loop(config: FaultConfig, device: str) -> float:
    """Reference: the same model and global batch in one process, no all-reduce, no checksum, steps/s."""
    import torch

    model = build_model(config.d_model, config.layers, config.heads, config.seq_len, config.seed).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=(0.9, 0.95), weight_decay=0.1)
    t0 = time.perf_counter()
    for step in range(config.steps):
        opt.zero_grad()
        for r in range(config.replicas):
            x, y = (torch.from_numpy(a).to(device) for a in batch_tokens(config.seed, step, r, config.batch,
                                                                         config.seq_len))
            (model(x, y) / config.replicas).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
    if device == "cuda":
        torch.cuda.synchronize()
    return config.steps / (time.perf_counter() - t0)


def main() -> int:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--device", default="all", choices=("cpu", "cuda", "all"))
    args = ap.parse_args()
    torch.set_num_threads(1)     # the replicas are threads already; intra-op threads on a busy 2-core box thrash
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    devices = [d for d in devices if d == "cpu" or torch.cuda.is_available()]
    config = FaultConfig(steps=args.steps)
    at = max(config.z_warmup + 10, args.steps // 2)
    cases = [("clean run (reference)", ()), ("bad batch", (Fault("bad_batch", at, 1),)),
             ("learning-rate spike ×100", (Fault("lr_spike", at, 0),)),
             ("bit flip in weights", (Fault("weight_flip", at, 1),)),
             ("bit flip in a gradient", (Fault("grad_flip", at, 1),))]
    print(f"fault run: {config.replicas} replicas × {config.batch} × {config.seq_len} bytes, "
          f"{config.layers} layers, d={config.d_model}, {args.steps} steps, faults at step {at}")
    print(f"{'device':6} {'case':28} {'steps/s':>8} {'wall s':>7} {'executed':>8} {'lost':>5} {'lost s':>7}  detected")
    for device in devices:
        print(f"{device:6} {'one process, no collectives':28} {plain_loop(config, device):8.1f}")
        clean = None
        for name, faults in cases:
            t0 = time.perf_counter()
            r = run(config, faults, device)
            clean = clean or r
            wall = time.perf_counter() - t0
            first = r.first_alarm()
            seen = f"step {first.step} by {first.rule}" if first else "-"
            print(f"{device:6} {name:28} {r.steps_per_second:8.1f} {wall:7.2f} {len(r.records):8d} {r.lost_steps:5d} "
                  f"{r.lost_seconds:7.2f}  {seen}; actions: {', '.join(a.kind for a in r.actions) or '-'}")
        print(f"fault run {device} steps/s: {clean.steps_per_second:.1f}  (clean run, {config.replicas} replicas)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
