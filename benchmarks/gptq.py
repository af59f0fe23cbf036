"""GPTQ timing on a 4096 × 4096 layer with 2,048 calibration tokens (CPU), beside the plain
column-by-column form in the same run.

    python benchmarks/gptq.py [--size 4096] [--tokens 2048] [--bits 4] [--device cpu]

The lazy block update (Frantar et al., arXiv 2210.17323, §"Lazy batch-updates") turns the
per-column rank-1 update of the whole trailing matrix into a rank-128 GEMM per block, so it is
compute-bound instead of memory-bound; both forms give the same weights (no groups).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    import torch

    from engines.quant import gptq, gptq_reference, relative_output_error

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--tokens", type=int, default=2048)
    p.add_argument("--bits", type=int, default=4)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    gen = torch.Generator().manual_seed(0)
    w = (torch.randn(a.size, a.size, generator=gen) / a.size ** 0.5).to(a.device)
    mix = torch.randn(a.size, a.size, generator=gen) / a.size ** 0.5           # correlated inputs
    x = (torch.randn(a.tokens, a.size, generator=gen) @ mix).to(a.device)
    print(f"GPTQ {a.bits}-bit, W {a.size}×{a.size}, {a.tokens} calibration tokens, device {a.device}, "
          f"torch threads {torch.get_num_threads()}")
    if a.device.startswith("cuda"):            # load cuBLAS/cuSOLVER before timing anything
        gptq(w[:256, :256], x[:, :256], a.bits)
        torch.cuda.synchronize()
    results = {}
    for name, fn in (("gptq (lazy blocks of 128)", lambda: gptq(w, x, a.bits)),
                     ("plain column-by-column", lambda: gptq_reference(w, x, a.bits))):
        t0 = time.perf_counter()
        res = fn()
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        results[name] = res.dequant
        print(f"  {name:28s} {dt:8.2f} s   held-in relative output error "
              f"{relative_output_error(x, w, res.dequant):.5f}")
    a_, b_ = results.values()
    print(f"  max |difference| between the two: {float((a_ - b_).abs().max()):.2e}")


if __name__ == "__main__":
    main()
