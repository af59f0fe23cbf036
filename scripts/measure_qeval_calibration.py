"""Measure the calibration-size and calibration-domain rows the quantization-evaluation panel ships.

    .venv/bin/python scripts/measure_qeval_calibration.py --threads 1 --out assets/qeval/calibration.json

GPTQ and AWQ at 3 bits, groups of 128, calibrated on different amounts and kinds of text, evaluated with
:func:`engines.qeval.evaluate` at the quick budget. Each entry records where and when it was measured; the
panel shows these next to the default comparison (``assets/qeval/shipped.json``). Each entry records the
command that measured it (``generated_by``); giving a subset of the codes re-measures only those rows.
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


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--budget", default="quick")
    ap.add_argument("--out", default="assets/qeval/calibration.json")
    ap.add_argument("configs", nargs="*", default=list(CONFIGS),
                    help="configuration codes; a subset re-measures those rows and keeps the others")
    return ap


NOTE = "Calibration size and domain rows, measured by scripts/measure_qeval_calibration.py on the build machine."


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import torch

    from engines.qeval import load
    from scripts.measure_qeval import measure_entry, merge, read_entries, write_entries
    from scripts.provenance import record

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    lm = load("smollm2", "cpu")
    order = [config_from_code(code, "configs").to_dict() for code in CONFIGS]
    subset = sorted(args.configs) != sorted(CONFIGS)
    entries = read_entries(Path(args.out)) if subset else []
    rec = record("scripts/measure_qeval_calibration.py", parser, args)
    for code in args.configs:
        cfg = config_from_code(code, "configs")
        entry = measure_entry(lm, cfg, args.budget, rec,
                              lambda f, t="": print(f"[{time.perf_counter() - t0:6.0f} s] {cfg.label()} "
                                                    f"{100 * f:4.0f} % {t}", flush=True))
        print(f"{cfg.label()}: perplexity {entry['perplexity']:.3f} {entry['perplexity_by_domain']}", flush=True)
        entries = merge(entries, entry, order)
        write_entries(Path(args.out), entries, NOTE)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
