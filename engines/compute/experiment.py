"""A scaling-law experiment small enough to run live: train a family of tiny byte-level transformers
(the GPT of ``engines.scale.tiny_lm``) on the shipped Shakespeare excerpt for a few token budgets each, measure held-out loss,
and fit L(N, D) = E + A/N^α + B/D^β to the points as Hoffmann et al. 2022 did (``engines.compute.fit``).

Choices, each with its reason and source:
- N counts non-embedding parameters (the token and position tables and the output layer left out) and
  C = 6·N·D (Kaplan et al. 2020, arXiv 2001.08361, §2.1); in models this small the embeddings are a large
  share and bend the power law if counted.
- One learning-rate schedule per model size, warm-up then constant, with a linear cool-down to zero over the
  last ``cooldown`` share of each budget branched off the constant trunk ("warmup-stable-decay": Hu et al.
  2024, MiniCPM, arXiv 2404.06395; Hägele et al. 2024, arXiv 2405.18392, find it matches a cosine schedule
  tuned to each length). Every budget so ends annealed, as Hoffmann et al. insist, at a fraction of the
  cost of separate runs.
- Held-out loss in nats per character (one byte each) on the last 10 % of the text, over fixed windows.
Deterministic for a seed on one device (batches are drawn from ``numpy`` generators keyed by seed and step;
the model is seeded per size). Results are cached as versioned JSON written atomically.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from engines.compute.fit import Fit, fit_scaling_law
from engines.scale.tiny_lm import VOCAB, build_model
from engines.core.errors import Cancelled, ValidationError, require
from engines.core.params import ParamsBase, param
from engines.core.versioned import parse_json, upgrade
from engines.core.writing import atomic_write_text

SCHEMA_VERSION = 1
KIND = "compute-scaling-experiment"
CORPUS = ("compute", "corpus", "shakespeare.txt")
CORPUS_SOURCE = ("William Shakespeare (public domain), excerpt of karpathy/char-rnn "
                 "data/tinyshakespeare/input.txt; see assets/compute/corpus/SOURCE.md")
HELD_OUT_SHARE = 0.1
CPU_THREADS = 1          # models this small run fastest on one thread (more threads only wait on each other)
MAX_RESULT_BYTES = 2_000_000
TRAIN_SHARE = 0.97       # of the progress bar; the fit takes the rest

@dataclass(frozen=True)
class Shape:
    """One model of the family: depth, width and attention heads."""

    n_layer: int
    d_model: int
    n_head: int

    @property
    def label(self) -> str:
        return f"{self.n_layer}L·{self.d_model}d"


# The family, smallest first: width and depth grow together as in Kaplan et al. 2020's ladders.
SIZES = (Shape(1, 16, 2), Shape(2, 24, 2), Shape(2, 32, 4), Shape(3, 40, 4), Shape(3, 56, 4), Shape(4, 64, 4))


@dataclass(frozen=True)
class Params(ParamsBase):
    """What the experiment trains: how many sizes and budgets, batch shape, optimiser, seed, device."""

    version = 1

    n_sizes: int = param(6, 3, len(SIZES), label="Model sizes", step=1,
                         tip="How many of the six tiny transformers (smallest first) to train")
    n_budgets: int = param(4, 2, 5, label="Budgets per size", step=1,
                           tip="Token budgets per size, each twice the one before")
    base_steps: int = param(200, 20, 20_000, label="Steps of the smallest budget", step=10)
    batch: int = param(8, 1, 256, label="Batch", unit="seq", step=1)
    context: int = param(64, 16, 256, label="Context", unit="chars", step=16)
    lr: float = param(3e-3, 1e-4, 3e-2, label="Peak learning rate", step=1e-4, decimals=4)
    warmup_steps: int = param(20, 0, 1_000, label="Warm-up", unit="steps", step=5)
    cooldown: float = param(0.2, 0.05, 0.5, label="Cool-down share", step=0.05, decimals=2,
                            tip="Share of each budget spent decaying the learning rate to zero (WSD schedule)")
    eval_windows: int = param(128, 4, 1_024, label="Held-out windows", step=4)
    seed: int = param(0, 0, 1_000_000, label="Seed", step=1)
    device: str = param("cpu", label="Device", choices=("auto", "cpu", "cuda"),
                        tip="The app passes its one device choice (--device); a script chooses here")

    def __post_init__(self) -> None:
        super().__post_init__()
        first_branch = int(round((1.0 - self.cooldown) * self.base_steps))
        require(self.warmup_steps < first_branch, "warmup_steps",
                f"{self.warmup_steps} steps of warm-up do not end before the first cool-down starts at step "
                f"{first_branch}", f"0…{first_branch - 1}")

    def budget_steps(self) -> tuple[int, ...]:
        return tuple(self.base_steps * 2 ** k for k in range(self.n_budgets))

    def branch_step(self, steps: int) -> int:
        """Trunk step at which the cool-down toward a budget of ``steps`` starts."""
        return int(round((1.0 - self.cooldown) * steps))


QUICK = Params(n_sizes=3, n_budgets=2, base_steps=30, batch=4, context=32, warmup_steps=4, eval_windows=16)


@dataclass(frozen=True)
class Point:
    """One trained (size, budget): what the fit sees (N, D, loss) and how it was made."""

    size: str
    n_layer: int
    d_model: int
    n_params: int           # non-embedding (the N of the fit)
    n_params_total: int
    steps: int
    tokens: int             # D: characters the model predicted during training
    flops: float            # C = 6·N·D
    loss: float             # held-out, nats per character
    train_loss: float       # mean training loss over the last tenth of the cool-down steps
    seconds: float          # wall time of the trunk share plus the cool-down branch


@dataclass(frozen=True)
class ExperimentResult:
    """The measured points, the fitted law and its compute-optimal frontier, with how they were made."""

    params: Params
    points: tuple[Point, ...]
    fit: Fit
    frontier: tuple[tuple[float, float, float, float], ...]   # (C, N_opt, D_opt, loss) from the fitted constants
    device: str              # "cpu" or "cuda"
    device_name: str         # e.g. "CPU (2 threads)", the CUDA device's name
    torch_version: str
    date: str                # UTC, when the run finished
    seconds: float
    corpus: str
    vocab: int
    where: str = ""          # who ran it: "build machine" for the shipped file, empty for a user's run


def _corpus_bytes() -> np.ndarray:
    """The shipped text as byte ids (ASCII: one byte per character)."""
    from engines.core.assets import asset_path

    return np.frombuffer(asset_path(*CORPUS).read_bytes(), dtype=np.uint8).astype(np.int64)


def _batch(data: np.ndarray, seed: int, step: int, batch: int, context: int):
    """Windows for one step, a pure function of (seed, step): trunk and branches see the same stream."""
    rng = np.random.default_rng([seed, step])
    starts = rng.integers(0, len(data) - context - 1, size=batch)
    x = np.stack([data[s:s + context] for s in starts])
    y = np.stack([data[s + 1:s + context + 1] for s in starts])
    return x, y


def _lr(step: int, params: Params, branch_from: int | None, end: int | None) -> float:
    """WSD: linear warm-up, constant, then (on a branch) linear decay to zero between branch_from and end."""
    if step < params.warmup_steps:
        return params.lr * (step + 1) / params.warmup_steps
    if branch_from is None or end is None:
        return params.lr
    return params.lr * max(0.0, (end - step) / (end - branch_from))


def _flop_weight(params: Params) -> list[float]:
    """Relative cost of each size (non-embedding params × steps run), for honest progress fractions."""
    steps = params.budget_steps()
    run = params.branch_step(steps[-1]) + sum(s - params.branch_step(s) for s in steps)
    return [12 * s.n_layer * s.d_model ** 2 * run for s in SIZES[:params.n_sizes]]


def run_experiment(params: Params = Params(), progress: Callable[[float, str], None] | None = None,
                   cancelled: Callable[[], bool] | None = None, cache_dir: str | os.PathLike | None = None
                   ) -> ExperimentResult:
    """Train the family, measure, fit; a cached result for the same params and device is returned at once."""
    import torch

    from engines.core.device import device_label, resolve_device

    if not isinstance(params, Params):
        raise ValidationError("params", f"expected compute experiment Params, got {type(params).__name__}")
    device = resolve_device(params.device)
    progress = progress or (lambda _f, _m: None)
    cancelled = cancelled or (lambda: False)
    cache = cache_path(params, device, cache_dir) if cache_dir is not None else None
    if cache is not None and cache.exists():
        try:
            return load_result(cache)
        except ValidationError:
            pass                                      # a broken cache entry is simply recomputed
    data = _corpus_bytes()
    split = int(len(data) * (1.0 - HELD_OUT_SHARE))
    train, held = data[:split], data[split:]
    require(len(held) > params.context + 1, "context", "longer than the held-out text", f"< {len(held) - 1}")
    weights = _flop_weight(params)
    total_w, done_w = sum(weights), 0.0
    threads = torch.get_num_threads()
    started = time.perf_counter()
    points: list[Point] = []
    try:
        if device == "cpu":
            torch.set_num_threads(min(CPU_THREADS, threads))
        for i, shape in enumerate(SIZES[:params.n_sizes]):
            def size_progress(frac: float, shape=shape, base=done_w, w=weights[i]) -> None:
                progress(TRAIN_SHARE * (base + frac * w) / total_w, f"training {shape.label} ({i + 1}/{params.n_sizes})")

            points += _train_size(shape, i, params, train, held, device, size_progress, cancelled)
            done_w += weights[i]
    finally:
        torch.set_num_threads(threads)
    progress(TRAIN_SHARE, "fitting E + A/N^α + B/D^β")
    fit = fit_scaling_law([(p.n_params, p.tokens, p.loss) for p in points])
    result = ExperimentResult(
        params=params, points=tuple(points), fit=fit, frontier=frontier_of(fit, points), device=device,
        device_name=device_label(device) if device != "cpu" else _cpu_label(min(CPU_THREADS, threads)),
        torch_version=torch.__version__, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        seconds=time.perf_counter() - started, corpus=CORPUS_SOURCE, vocab=VOCAB)
    if cache is not None:
        save_result(result, cache)
    progress(1.0, "done")
    return result


def _cpu_label(threads: int) -> str:
    return f"CPU, {threads} torch thread{'s' if threads != 1 else ''}"


def late_speedup(points) -> tuple[str, ...]:
    """Sizes whose loss fell more over the last doubling of data than over the one before: their runs
    end still speeding up, a regime a sum of power laws (convex in log D) cannot follow."""
    out = []
    for size in dict.fromkeys(p.size for p in points):
        losses = [p.loss for p in sorted((p for p in points if p.size == size), key=lambda p: p.tokens)]
        if len(losses) >= 3 and losses[-2] - losses[-1] > losses[-3] - losses[-2]:
            out.append(size)
    return tuple(out)


def frontier_of(fit: Fit, points) -> tuple[tuple[float, float, float, float], ...]:
    """The fitted compute-optimal frontier over the measured compute range and a decade beyond."""
    flops = [p.flops for p in points]
    grid = np.geomspace(min(flops), max(flops) * 10.0, 25)
    return tuple(fit.frontier(grid))


def _train_size(shape: Shape, index: int, params: Params, train: np.ndarray, held: np.ndarray, device: str,
                progress: Callable[[float], None], cancelled: Callable[[], bool]) -> list[Point]:
    """One trunk at constant learning rate with a cool-down branch ending at each budget."""
    import torch

    model = build_model(shape.d_model, shape.n_layer, shape.n_head, params.context,
                        params.seed * 1000 + index).to(device)
    n_params, n_total = _param_counts(model)
    opt = _adamw(model, params.lr)
    budgets = params.budget_steps()
    branches = {params.branch_step(s): s for s in budgets}
    total_steps = max(branches) + sum(s - b for b, s in branches.items())
    done = 0
    points = []
    trunk_seconds = 0.0

    def step(m, o, s: int, lr: float) -> float:
        nonlocal done
        if cancelled():
            raise Cancelled()
        x, y = _batch(train, params.seed, s, params.batch, params.context)
        x, y = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
        for g in o.param_groups:
            g["lr"] = lr
        loss = m(x, y)
        o.zero_grad(set_to_none=True)
        loss.backward()
        o.step()
        done += 1
        if done % 10 == 0:
            progress(done / total_steps)
        return float(loss.detach())

    t0 = time.perf_counter()
    for s in range(max(branches) + 1):
        if s in branches:
            trunk_seconds = time.perf_counter() - t0
            end = branches[s]
            b_model = copy.deepcopy(model)
            b_opt = _clone_optimizer(opt, b_model)
            tb = time.perf_counter()
            tail = []
            for bs in range(s, end):
                tail.append(step(b_model, b_opt, bs, _lr(bs, params, s, end)))
            keep = max(1, len(tail) // 10) if tail else 0
            points.append(Point(size=shape.label, n_layer=shape.n_layer, d_model=shape.d_model, n_params=n_params,
                                n_params_total=n_total, steps=end, tokens=end * params.batch * params.context,
                                flops=6.0 * n_params * end * params.batch * params.context,
                                loss=_held_out_loss(b_model, held, params, device),
                                train_loss=float(np.mean(tail[-keep:])) if keep else math.nan,
                                seconds=trunk_seconds + time.perf_counter() - tb))
            t0 -= time.perf_counter() - tb            # the branch's time is not trunk time
            del b_model, b_opt
        if s < max(branches):
            step(model, opt, s, _lr(s, params, None, None))
    progress(1.0)
    return sorted(points, key=lambda p: p.steps)


def _param_counts(model) -> tuple[int, int]:
    """(non-embedding, total): the token table, position table and output layer are the embeddings."""
    total = sum(p.numel() for p in model.parameters())
    embedding = model.tok.weight.numel() + model.pos.weight.numel() + model.head.weight.numel()
    return total - embedding, total


def _adamw(model, lr: float):
    """AdamW with GPT-3's betas (Brown et al. 2020, App. B) and no weight decay at these lengths; fused kernel."""
    import torch

    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0, fused=True)


def _clone_optimizer(opt, model):
    """An AdamW for ``model`` carrying a deep copy of ``opt``'s moments (the branch continues the trunk)."""
    clone = _adamw(model, opt.param_groups[0]["lr"])
    clone.load_state_dict(copy.deepcopy(opt.state_dict()))
    return clone


def _held_out_loss(model, held: np.ndarray, params: Params, device: str) -> float:
    """Mean next-character cross-entropy (nats) over evenly spaced windows of the held-out text."""
    import torch

    starts = np.linspace(0, len(held) - params.context - 1, params.eval_windows).astype(np.int64)
    x = torch.from_numpy(np.stack([held[s:s + params.context] for s in starts])).to(device)
    y = torch.from_numpy(np.stack([held[s + 1:s + params.context + 1] for s in starts])).to(device)
    model.eval()
    with torch.no_grad():
        loss = model(x, y)
    model.train()
    return float(loss)


# --- files: versioned JSON, written atomically, checked on read -------------------------------------------

def default_cache_dir() -> Path:
    """Where "Run it here" keeps its results (beside the app's log)."""
    base = os.environ.get("EXPLORER_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")), "ai-systems-explorer")
    return Path(base) / "compute-experiment"


def cache_path(params: Params, device: str, cache_dir: str | os.PathLike) -> Path:
    """One file per (params, device): the same run on another device is a different measurement."""
    key = json.dumps({"params": params.to_dict(), "device": device, "schema": SCHEMA_VERSION}, sort_keys=True)
    return Path(cache_dir) / f"experiment-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def result_to_dict(result: ExperimentResult) -> dict:
    return {"schema_version": SCHEMA_VERSION, "kind": KIND, "params_version": Params.version,
            "params": result.params.to_dict(), "points": [asdict(p) for p in result.points],
            "fit": result.fit.to_dict(), "frontier": [list(f) for f in result.frontier],
            "device": result.device, "device_name": result.device_name, "torch_version": result.torch_version,
            "date": result.date, "seconds": result.seconds, "corpus": result.corpus, "vocab": result.vocab,
            "where": result.where}


def result_from_dict(doc: object) -> ExperimentResult:
    """Rebuild a result; anything missing or malformed raises ValidationError naming it."""
    doc = upgrade(doc, SCHEMA_VERSION, {}, "compute experiment")
    require(doc.get("kind") == KIND, "kind", f"{doc.get('kind')!r} is not a compute experiment result", KIND)
    try:
        params = Params.from_dict(doc["params"])
        points = []
        for i, raw in enumerate(doc["points"]):
            require(isinstance(raw, dict), f"points[{i}]", "expected an object")
            try:
                points.append(Point(**raw))
            except TypeError as exc:
                raise ValidationError(f"points[{i}]", str(exc)) from None
            p = points[-1]
            require(all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0
                        for v in (p.n_params, p.tokens, p.flops, p.loss)), f"points[{i}]",
                    "N, D, C and loss must be positive numbers")
        fit = Fit.from_dict(doc["fit"])
        frontier = tuple(tuple(float(x) for x in row) for row in doc["frontier"])
        require(all(len(row) == 4 for row in frontier), "frontier", "rows of (C, N_opt, D_opt, loss)")
        return ExperimentResult(params=params, points=tuple(points), fit=fit, frontier=frontier,
                                device=str(doc["device"]), device_name=str(doc["device_name"]),
                                torch_version=str(doc["torch_version"]), date=str(doc["date"]),
                                seconds=float(doc["seconds"]), corpus=str(doc["corpus"]), vocab=int(doc["vocab"]),
                                where=str(doc.get("where", "")))
    except KeyError as exc:
        raise ValidationError(str(exc.args[0]), "missing") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            raise
        raise ValidationError("file", f"malformed compute experiment result: {exc}") from None


def save_result(result: ExperimentResult, path: str | os.PathLike) -> Path:
    """Write the result as JSON atomically (a crash leaves the old file or none, never half a file)."""
    path = Path(path)
    atomic_write_text(path, json.dumps(result_to_dict(result), indent=1), make_parents=True)
    return path


def load_result(path: str | os.PathLike) -> ExperimentResult:
    """Read a saved result; a broken file raises ValidationError saying what is wrong."""
    from engines.core.reading import read_json

    return result_from_dict(read_json(path, MAX_RESULT_BYTES))


def shipped_result() -> ExperimentResult:
    """The experiment as run on the build machine (``assets/compute/experiment_result.json``)."""
    from engines.core.assets import asset_path

    return load_result(asset_path("compute", "experiment_result.json"))
