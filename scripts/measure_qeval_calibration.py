"""Measure the calibration-size and calibration-domain rows the quantization-evaluation panel ships.

    .venv/bin/python scripts/measure_qeval_calibration.py --threads 2 --out assets/qeval/calibration.json

GPTQ and AWQ at 3 bits, groups of 128, calibrated on different amounts and kinds of text, evaluated with
:func:`engines.qeval.evaluate` at the quick budget. Each entry records where and when it was measured; the
panel shows these next to the default comparison (``assets/qeval/shipped.json``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.qeval.params import config_from_code  # noqa: E402

CONFIGS = ("weight_bits=3 group_size=128 method=gptq calib_tokens=256",     # size: 1,024 prose is in shipped.json
           "weight_bits=3 group_size=128 method=gptq calib_tokens=2048",
           "weight_bits=3 group_size=128 method=gptq calib_domain=code",     # domain: calibrate on one, judge on both
           "weight_bits=3 group_size=128 method=gptq calib_domain=chat",
           "weight_bits=3 group_size=128 method=awq",
           "weight_bits=3 group_size=128 method=awq calib_domain=code",
           "weight_bits=3 group_size=128 method=awq calib_domain=chat")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget", default="quick")
    ap.add_argument("--out", default="assets/qeval/calibration.json")
    ap.add_argument("configs", nargs="*", default=list(CONFIGS))
    args = ap.parse_args(argv)
    import torch

    from engines.qeval import evaluate, load, save_evaluations

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    lm = load("smollm2", "cpu")
    out = []
    for code in args.configs:
        cfg = config_from_code(code, "configs")
        ev = evaluate(lm, cfg, args.budget,
                      lambda f, t="": print(f"[{time.perf_counter() - t0:6.0f} s] {cfg.label()} {100 * f:4.0f} % {t}",
                                            flush=True))
        print(f"{cfg.label()}: perplexity {ev.perplexity:.3f} {ev.perplexity_by_domain}", flush=True)
        out.append(ev)
    save_evaluations(args.out, out, note="Calibration size and domain rows, measured by "
                                         "scripts/measure_qeval_calibration.py on the build machine.")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
