"""Time PyTorch's own memory check (FSDP2 on fake tensors, FSDPMemTracker) of Llama 3 70B on 64 fake
ranks beside the analytic breakdown of the same scenario (target: ≤ 90 s on 2 cores).

Run: ``python benchmarks/fake_step.py`` (``--quick``: an 8-layer cut of the same shape).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.core.models import PRESETS  # noqa: E402
from engines.core.scenario import Scenario  # noqa: E402
from engines.memory import breakdown, compare, fake_step  # noqa: E402

TARGET_S = 90.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 layers instead of 80")
    ap.add_argument("--recompute", default="selective", choices=("none", "selective", "full"))
    a = ap.parse_args(argv)
    arch = PRESETS["llama3-70b"]
    if a.quick:
        arch = dataclasses.replace(arch, layers=8, label="Llama 3 70B, 8 layers")
    sc = Scenario(model="custom" if a.quick else "llama3-70b", arch=arch, n_gpus=64, strategy="zero3",
                  seq_len=4096, micro_batch=1, recompute=a.recompute)
    start = time.perf_counter()
    ours = breakdown(sc)
    analytic_ms = (time.perf_counter() - start) * 1e3
    cpu0 = time.process_time()
    fake = fake_step(sc)
    cpu = time.process_time() - cpu0
    print(f"{arch.label}, {arch.layers} layers, ZeRO-3 over 64 fake ranks, s 4096, b 1, {a.recompute} recompute")
    print(f"analytic breakdown: {analytic_ms:.2f} ms")
    print(f"fake step wall: {fake.seconds:.1f} s, CPU {cpu:.1f} s (torch {fake.torch_version}; "
          f"target ≤ {TARGET_S:.0f} s wall for 80 layers on 2 free cores)")
    print(f"{'category':14s} {'ours GB':>10s} {'PyTorch GB':>11s} {'diff':>8s}")
    for row in compare(ours, fake):
        rel = f"{row.relative * 100:+.1f}%" if row.ours else "—"
        print(f"{row.category:14s} {row.ours / 1e9:10.3f} {row.pytorch / 1e9:11.3f} {rel:>8s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
