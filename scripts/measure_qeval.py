"""Measure the default comparison of the quantization-evaluation panel and write ``assets/qeval/shipped.json``.

    python scripts/measure_qeval.py [--budget quick] [--threads 1] [--device cpu] [--out assets/qeval/shipped.json]
    python scripts/measure_qeval.py --only "weight_bits=3 group_size=128 method=gptq"   # re-measure rows

Runs :func:`engines.qeval.evaluate` on every configuration of ``engines.qeval.DEFAULT_COMPARISON``
(the baseline first) and saves after each one, so an interrupted run still leaves a readable file.
``--only CODE`` (repeatable; codes as :func:`engines.qeval.params.config_code` writes them) re-measures
just those rows and keeps the others. Every entry records where and when it was measured (the panel
shows that line next to the numbers) and, in ``generated_by``, the exact command that measured it.
One torch thread by default: the same command then gives the same numbers bit for bit on one machine.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.provenance import record  # noqa: E402

SCRIPT = "scripts/measure_qeval.py"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", default="quick", choices=("quick", "full"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--only", action="append", metavar="CODE", help="re-measure only this configuration")
    p.add_argument("--out", type=Path, default=ROOT / "assets/qeval/shipped.json")
    return p


def note(budget: str, device: str, threads: int) -> str:
    """The file's note, from the settings alone (so a re-run writes the same words)."""
    return (f"Default comparison, {budget} budget, measured by {SCRIPT} on the build machine ({device}, "
            f"{threads} torch thread{'s' * (threads != 1)}); each entry names its date, device and command. "
            f"Calibration-size and -domain rows (GPTQ, AWQ) are in calibration.json.")


def read_entries(path: Path) -> list[dict]:
    """The raw entries of an evaluations file (with their ``generated_by``), or none if it is absent."""
    from engines.core.reading import read_json
    from engines.qeval.store import MAX_EVALUATION_BYTES, from_document

    if not path.exists():
        return []
    doc = read_json(path, MAX_EVALUATION_BYTES)
    from_document(doc)                                   # refuse a broken file before merging into it
    return list(doc["evaluations"])


def write_entries(path: Path, entries: list[dict], text: str) -> None:
    """Entries (each with its command) as the versioned document, sorted keys, atomically."""
    from engines.core.writing import atomic_write_text
    from engines.qeval.store import to_document

    doc = to_document((), text)
    doc["evaluations"] = entries
    atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def measure_entry(lm, config, budget: str, rec: dict, progress=None) -> dict:
    """One evaluation as the file stores it: the engine's numbers plus the command that made them."""
    from engines.qeval import evaluate

    ev = evaluate(lm, config, budget, progress) if progress else evaluate(lm, config, budget)
    return {**ev.to_dict(), "generated_by": rec}


def merge(entries: list[dict], new: dict, order: list[dict]) -> list[dict]:
    """``entries`` with ``new`` in place of the row of the same configuration, in ``order``'s order."""
    rows = {json.dumps(e["config"], sort_keys=True): e for e in entries}
    rows[json.dumps(new["config"], sort_keys=True)] = new
    keys = [json.dumps(c, sort_keys=True) for c in order]
    return [rows[k] for k in keys if k in rows] + [v for k, v in rows.items() if k not in keys]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import torch

    from engines.qeval import DEFAULT_COMPARISON, load
    from engines.qeval.params import config_from_code

    torch.set_num_threads(args.threads)
    order = [c.to_dict() for c in DEFAULT_COMPARISON]
    configs = [config_from_code(code, "--only") for code in args.only] if args.only else list(DEFAULT_COMPARISON)
    entries = read_entries(args.out) if args.only else []
    rec = record(SCRIPT, parser, args)
    lm = load("smollm2", args.device)
    for config in configs:
        t0 = time.perf_counter()
        entry = measure_entry(lm, config, args.budget, rec)
        entries = merge(entries, entry, order)
        write_entries(args.out, entries, note(args.budget, args.device, args.threads))
        print(f"{config.label():45s} ppl {entry['perplexity']:8.3f}  flips {entry['flip_rate']:6.3f}  "
              f"kl {entry['mean_kl']:7.4f}  {time.perf_counter() - t0:5.1f} s", flush=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
