"""A small transformer the app trains itself on multi-digit addition: the "hard task" of lesson B4.

Why: a whole language model's perplexity and its long, exact tasks can be measured apart only on a task
where one wrong token spoils the answer. Addition is such a task: an n-digit sum is right only if all
n + 1 digits (and the end mark) are right, and a wrong digit can carry into the next one.

The set-up follows McLeish et al., "Transformers Can Do Arithmetic with the Right Embeddings"
(NeurIPS 2024, arXiv 2405.17399): operands and answer are written least-significant digit first, and
every digit gets a learned embedding for its position *inside its number* ("Abacus" embeddings), so
digit i of both operands and of the answer share a position; sequences have no other position code.
A segment embedding (first operand, second operand, answer) is our addition. Two pre-LayerNorm blocks
(Xiong et al. 2020, arXiv 2002.04745) of width 128 with 4 heads: about 0.4 M parameters.

Quantization re-uses the quantization panel's round-to-nearest (:func:`engines.quant.affine.rtn`,
asymmetric min-max as in GPTQ's reference code) on every linear layer inside the blocks; the token
embeddings and, unless asked, the output head stay in float32 (as the whole-model evaluation does).

Measured quantities: exact match of greedy (free-running) answers by operand length, per-digit accuracy
under teacher forcing, and the answer perplexity exp(mean negative log-likelihood of the answer tokens,
end mark included) under teacher forcing.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from engines.core.errors import Cancelled, ValidationError, require, require_bool, require_choice, require_int
from engines.core.gpt_block import gpt_block
from engines.core.writing import atomic_write_bytes

# Vocabulary: digits 0-9, then the marks.
PLUS, EQUALS, END, PAD = 10, 11, 12, 13
VOCAB = 14
MAX_DIGITS = 6
SEQ_LEN = 3 * MAX_DIGITS + 4          # a (n) + b (n) + "+" "=" + answer (n + 1) + end
PLACES = MAX_DIGITS + 4
SEGMENTS = 4                          # first operand, second operand, answer, marks
FORMAT_VERSION = 1
CHECKPOINT_KIND = "explorer-addition-model"
WEIGHT_BITS = (2, 3, 4, 5, 6, 8)
GROUP_SIZES = (None, 32, 64, 128)
ADD_SWEEP_GROUPS = (32, None)          # the sweeps the shipped checkpoint carries


@dataclass(frozen=True)
class ModelShape:
    """Size of the addition transformer (the shipped one uses the defaults)."""

    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 512

    def __post_init__(self) -> None:
        require_int(self.d_model, "d_model", 16, 1024)
        require_int(self.n_layers, "n_layers", 1, 8)
        require_int(self.n_heads, "n_heads", 1, 16)
        require(self.d_model % self.n_heads == 0, "n_heads", f"{self.n_heads} does not divide d_model {self.d_model}",
                "a divisor of d_model")
        require_int(self.d_ff, "d_ff", 16, 4096)


@dataclass(frozen=True)
class TrainConfig:
    """How the model is trained; with one seed and one device the result is reproducible."""

    seed: int = 4
    steps: int = 5000
    batch: int = 64
    lr: float = 3e-3
    warmup: int = 100
    weight_decay: float = 0.1
    shape: ModelShape = field(default_factory=ModelShape)

    def __post_init__(self) -> None:
        require_int(self.seed, "seed", 0, 2**31 - 1)
        require_int(self.steps, "steps", 1, 200_000)
        require_int(self.batch, "batch", 1, 4096)
        require(isinstance(self.lr, (int, float)) and 0 < self.lr <= 0.1, "lr", f"{self.lr!r} is out of range",
                "0 < lr ≤ 0.1")
        require_int(self.warmup, "warmup", 0, self.steps)
        require(isinstance(self.weight_decay, (int, float)) and 0 <= self.weight_decay <= 1, "weight_decay",
                f"{self.weight_decay!r} is out of range", "0 … 1")
        require(isinstance(self.shape, ModelShape), "shape", "expected a ModelShape", "ModelShape")


# ---------------------------------------------------------------------------------------------- data


def encode(a: list[int], b: list[int], n: int):
    """Token ids, abacus positions, segments and the answer mask of the problems a + b with n digits.

    Returns four int64 tensors of shape (len(a), 3n + 4); the loss/answer mask marks the positions whose
    *next* token is part of the answer (from "=" to the last answer digit).
    """
    import torch

    a_t = torch.as_tensor(a, dtype=torch.int64)
    b_t = torch.as_tensor(b, dtype=torch.int64)
    c_t = a_t + b_t
    p = 10 ** torch.arange(n + 1, dtype=torch.int64)
    a_d = (a_t[:, None] // p[:n]) % 10                      # least significant first
    b_d = (b_t[:, None] // p[:n]) % 10
    c_d = (c_t[:, None] // p) % 10                           # n + 1 digits
    m = len(a)
    tok = torch.cat([a_d, torch.full((m, 1), PLUS), b_d, torch.full((m, 1), EQUALS), c_d,
                     torch.full((m, 1), END)], dim=1)
    digit_pos = torch.arange(1, n + 1)
    # "=" predicts answer digit 1 and carries place 1; answer digit j predicts digit j + 1 and carries
    # place j + 1 (the last one, place n + 2, predicts the end mark); "+" has place 0.
    pos = torch.cat([digit_pos, torch.zeros(1, dtype=torch.int64), digit_pos, torch.ones(1, dtype=torch.int64),
                     torch.arange(2, n + 4)])
    seg = torch.cat([torch.zeros(n, dtype=torch.int64), torch.full((1,), 3), torch.ones(n, dtype=torch.int64),
                     torch.full((1,), 3), torch.full((n + 2,), 2)])
    mask = torch.zeros(3 * n + 4, dtype=torch.bool)
    mask[2 * n + 1: 3 * n + 3] = True                         # "=" and the n + 1 answer digits predict
    return tok, pos.expand(m, -1).clone(), seg.expand(m, -1).clone(), mask.expand(m, -1).clone()


def sample_problems(n: int, count: int, generator) -> tuple[list[int], list[int]]:
    """``count`` problems with two uniformly random n-digit operands (leading zeros allowed for n = 1)."""
    import torch

    lo = 0 if n == 1 else 10 ** (n - 1)
    a = torch.randint(lo, 10 ** n, (count,), generator=generator)
    b = torch.randint(lo, 10 ** n, (count,), generator=generator)
    return a.tolist(), b.tolist()


def curriculum_length(step: int, steps: int) -> int:
    """Longest operand length trained at ``step``: 2 digits at first, all 6 from 40 % of the run on.

    Why: no single digit of the operands predicts an answer digit (b is uniform, so a_k + b_k mod 10 is
    independent of a_k), so attention must find both digits of a place at once; short sums, where few
    places compete, teach that alignment, and the shared place embeddings carry it to longer sums.
    """
    return min(MAX_DIGITS, 2 + (MAX_DIGITS - 1) * step // max(1, int(0.4 * steps)))


def training_batch(batch: int, generator, max_digits: int = MAX_DIGITS):
    """One batch of sums with one operand length drawn uniformly from 1 … ``max_digits``."""
    import torch

    n = int(torch.randint(1, max_digits + 1, (1,), generator=generator))
    a, b = sample_problems(n, batch, generator)
    return encode(a, b, n)


# --------------------------------------------------------------------------------------------- model


def build_model(shape: ModelShape):
    """The addition transformer (a torch ``nn.Module``) built from the shared GPT block
    (:mod:`engines.core.gpt_block`); weights drawn from the current torch RNG."""
    import torch
    from torch import nn

    class AdditionModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(VOCAB, shape.d_model)
            self.pos = nn.Embedding(PLACES, shape.d_model)      # abacus: digit place 0 … MAX_DIGITS + 3
            self.seg = nn.Embedding(SEGMENTS, shape.d_model)
            self.blocks = nn.ModuleList(gpt_block(shape.d_model, shape.n_heads, shape.d_ff)
                                        for _ in range(shape.n_layers))
            self.ln_f = nn.LayerNorm(shape.d_model)
            self.head = nn.Linear(shape.d_model, VOCAB, bias=False)

        def forward(self, tok, pos, seg):
            x = self.tok(tok) + self.pos(pos) + self.seg(seg)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    model = AdditionModel()
    for name, p in model.named_parameters():
        if p.ndim == 2:
            torch.nn.init.normal_(p, std=0.02)
        elif name.endswith("bias"):
            torch.nn.init.zeros_(p)
    return model


def parameter_count(model) -> int:
    return sum(p.numel() for p in model.parameters())


# ------------------------------------------------------------------------------------------ training


@dataclass(frozen=True)
class TrainResult:
    """A trained model and how it was made."""

    model: object                 # the torch module, on the training device
    config: TrainConfig
    device: str
    seconds: float
    final_loss: float
    losses: tuple[float, ...]     # mean loss per 100 steps


class _Deterministic:
    """Seed torch and ask for deterministic kernels while training, then restore the caller's setting
    (a process-wide switch: other panels' torch work must not inherit it)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def __enter__(self) -> None:
        import torch

        self.before = (torch.are_deterministic_algorithms_enabled(),
                       torch.is_deterministic_algorithms_warn_only_enabled())
        torch.manual_seed(self.seed)
        torch.use_deterministic_algorithms(True, warn_only=True)

    def __exit__(self, *exc) -> None:
        import torch

        torch.use_deterministic_algorithms(self.before[0], warn_only=self.before[1])


def train(config: TrainConfig = TrainConfig(), device: str = "cpu",
          progress: Callable[[float, str], None] | None = None,
          cancelled: Callable[[], bool] | None = None) -> TrainResult:
    """Train the addition model with AdamW, linear warm-up and cosine decay (Loshchilov & Hutter 2019).

    The data come from a generator seeded with ``config.seed`` and the weights from torch's RNG seeded
    with it too, so one seed on one device gives the same weights every time.
    """
    require(isinstance(config, TrainConfig), "config", "expected a TrainConfig", "TrainConfig")
    require_choice(device.split(":")[0], "device", ("cpu", "cuda"))
    with _Deterministic(config.seed):
        return _train(config, device, progress, cancelled)


def _train(config: TrainConfig, device: str, progress, cancelled) -> TrainResult:
    import math

    import torch
    from torch.nn import functional as F

    model = build_model(config.shape).to(device)
    gen = torch.Generator().manual_seed(config.seed)
    decay = [p for p in model.parameters() if p.ndim == 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=config.lr, betas=(0.9, 0.98))

    def lr_at(step: int) -> float:
        if step < config.warmup:
            return config.lr * (step + 1) / config.warmup
        t = (step - config.warmup) / max(1, config.steps - config.warmup)
        return config.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * t)))

    start = time.perf_counter()
    losses: list[float] = []
    window: list[float] = []
    model.train()
    for step in range(config.steps):
        if cancelled is not None and cancelled():
            raise Cancelled()
        tok, pos, seg, mask = (t.to(device) for t in training_batch(config.batch, gen, curriculum_length(step, config.steps)))
        logits = model(tok[:, :-1], pos[:, :-1], seg[:, :-1])
        target = tok[:, 1:]
        m = mask[:, :-1]
        loss = F.cross_entropy(logits[m], target[m])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.step()
        window.append(float(loss.detach()))
        if len(window) == 100 or step == config.steps - 1:
            losses.append(sum(window) / len(window))
            window = []
            if progress is not None:
                progress((step + 1) / config.steps, f"training step {step + 1}/{config.steps}, loss {losses[-1]:.4f}")
    model.eval()
    return TrainResult(model=model, config=config, device=device, seconds=time.perf_counter() - start,
                       final_loss=losses[-1], losses=tuple(losses))


# ---------------------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class LengthScore:
    """One operand length: exact match of free-running answers and the teacher-forced digit accuracy."""

    digits: int
    problems: int
    exact: int                       # answers right in every digit and the end mark
    digit_accuracy: float            # share of answer tokens right under teacher forcing

    @property
    def exact_match(self) -> float:
        return self.exact / self.problems


@dataclass(frozen=True)
class AdditionScore:
    """A model's score on the held-out problems (the same ones for every configuration)."""

    by_length: tuple[LengthScore, ...]
    answer_perplexity: float

    def exact_match(self) -> dict[int, float]:
        return {s.digits: s.exact_match for s in self.by_length}


def test_problems(per_length: int = 1000, seed: int = 12345) -> dict[int, tuple[list[int], list[int]]]:
    """The fixed held-out problems: ``per_length`` sums for each operand length 1 … 6."""
    import torch

    require_int(per_length, "per_length", 1, 100_000)
    gen = torch.Generator().manual_seed(seed)
    return {n: sample_problems(n, per_length, gen) for n in range(1, MAX_DIGITS + 1)}


def score(model, per_length: int = 1000, device: str = "cpu", seed: int = 12345,
          progress: Callable[[float, str], None] | None = None,
          cancelled: Callable[[], bool] | None = None) -> AdditionScore:
    """Exact match by length (greedy decoding of the answer) and the answer perplexity (teacher forcing)."""
    import math

    import torch
    from torch.nn import functional as F

    problems = test_problems(per_length, seed)
    nll_sum, nll_count = 0.0, 0
    rows: list[LengthScore] = []
    with torch.no_grad():
        for i, (n, (a, b)) in enumerate(problems.items()):
            if cancelled is not None and cancelled():
                raise Cancelled()
            tok, pos, seg, mask = (t.to(device) for t in encode(a, b, n))
            logits = model(tok[:, :-1], pos[:, :-1], seg[:, :-1]).float()
            m = mask[:, :-1]
            target = tok[:, 1:]
            nll_sum += float(F.cross_entropy(logits[m], target[m], reduction="sum"))
            nll_count += int(m.sum())
            digit_acc = float((logits.argmax(-1)[m] == target[m]).float().mean())
            # free-running: feed the model's own answer digits back, one at a time
            start = 2 * n + 2                          # index of the first answer digit
            seq = tok.clone()
            for j in range(start, 3 * n + 4):
                out = model(seq[:, :j], pos[:, :j], seg[:, :j])
                seq[:, j] = out[:, -1].argmax(-1)
            exact = int((seq[:, start:] == tok[:, start:]).all(dim=1).sum())
            rows.append(LengthScore(digits=n, problems=len(a), exact=exact, digit_accuracy=digit_acc))
            if progress is not None:
                progress((i + 1) / len(problems), f"scored {n}-digit sums")
    return AdditionScore(by_length=tuple(rows), answer_perplexity=math.exp(nll_sum / nll_count))


# -------------------------------------------------------------------------------------- quantization


def check_weight_bits(bits: int) -> int:
    if bits in (16, 32):
        return bits
    require(bits in WEIGHT_BITS, "weight_bits", f"{bits!r} is not offered", ", ".join(map(str, WEIGHT_BITS + (16,))))
    return bits


def quantized_copy(model, weight_bits: int, group_size: int | None = None, include_head: bool = False):
    """A copy of ``model`` whose block linear layers (and optionally the head) are rounded RTN.

    16 means no quantization (the float32 model itself, copied). Group size None is one scale per output
    channel; otherwise one scale and zero per ``group_size`` consecutive inputs.
    """
    import copy

    import torch

    from engines.quant.affine import rtn

    check_weight_bits(weight_bits)
    require(group_size in GROUP_SIZES, "group_size", f"{group_size!r} is not offered", "per channel, 32, 64, 128")
    require_bool(include_head, "include_head")
    q = copy.deepcopy(model)
    if weight_bits >= 16:
        return q
    targets = [m for blk in q.blocks for m in (blk.qkv, blk.proj, blk.fc1, blk.fc2)]
    if include_head:
        targets.append(q.head)
    with torch.no_grad():
        for lin in targets:
            lin.weight.copy_(rtn(lin.weight.detach().float().cpu(), weight_bits, group_size).dequant.to(lin.weight))
    return q


@dataclass(frozen=True)
class BitsRow:
    """One bit width of the sweep: the score and its labels."""

    label: str
    weight_bits: int
    group_size: int | None
    score: AdditionScore


def sweep_configs(group_size: int | None = 32) -> tuple[tuple[int, int | None], ...]:
    """float32, then 8 bits per channel, then 4, 3 and 2 bits at ``group_size`` (None: per channel)."""
    require(group_size in GROUP_SIZES, "group_size", f"{group_size!r} is not offered", "per channel, 32, 64, 128")
    return ((16, None), (8, None), (4, group_size), (3, group_size), (2, group_size))


def bits_sweep(model, configs: tuple[tuple[int, int | None], ...] = sweep_configs(32),
               per_length: int = 1000, device: str = "cpu", include_head: bool = False,
               progress: Callable[[float, str], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> tuple[BitsRow, ...]:
    """Score the model at each (bits, group size): exact match by length and answer perplexity."""
    require(len(configs) > 0, "configs", "is empty", "at least one (bits, group size)")
    rows = []
    for i, (bits, group) in enumerate(configs):
        q = quantized_copy(model, bits, group, include_head).to(device)
        inner = None
        if progress is not None:
            inner = lambda f, msg, i=i: progress((i + f) / len(configs), msg)  # noqa: E731
        rows.append(BitsRow(label=config_label(bits, group), weight_bits=bits, group_size=group,
                            score=score(q, per_length, device, progress=inner, cancelled=cancelled)))
    return tuple(rows)


def config_label(bits: int, group_size: int | None) -> str:
    if bits >= 16:
        return "float32"
    return f"W{bits} " + ("per channel" if group_size is None else f"g{group_size}")


# ------------------------------------------------------------------------------------------ checkpoint


@dataclass(frozen=True)
class Checkpoint:
    """A loaded addition model and the facts about how it was made."""

    model: object
    config: TrainConfig
    meta: dict


def save_checkpoint(result: TrainResult, path: str | Path, extra: dict | None = None) -> Path:
    """Write weights and metadata (seed, steps, date, device, train time) as safetensors, atomically."""
    import torch
    from safetensors.torch import save

    cfg = result.config
    meta = {"kind": CHECKPOINT_KIND, "format_version": str(FORMAT_VERSION),
            "config": json.dumps(asdict(cfg)), "device": result.device,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "train_seconds": f"{result.seconds:.1f}", "final_loss": f"{result.final_loss:.6f}",
            "torch": torch.__version__, "extra": json.dumps(extra or {})}
    tensors = {k: v.detach().cpu().contiguous() for k, v in result.model.state_dict().items()}
    path = Path(path)
    atomic_write_bytes(path, save(tensors, metadata=meta), make_parents=True)
    return path


def _config_from_json(text: str) -> TrainConfig:
    raw = json.loads(text)
    shape = ModelShape(**raw.pop("shape"))
    return TrainConfig(shape=shape, **raw)


def load_checkpoint(path: str | Path | None = None, device: str = "cpu") -> Checkpoint:
    """Read a checkpoint (the shipped one by default); a broken file raises ValidationError saying why."""
    from safetensors import safe_open

    path = Path(path) if path is not None else shipped_path()
    require(path.is_file(), "path", f"{path} does not exist", "an addition-model .safetensors file")
    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = dict(fh.metadata() or {})
            tensors = {k: fh.get_tensor(k) for k in fh.keys()}
    except Exception as exc:  # safetensors raises its own types for truncated or foreign files
        raise ValidationError("path", f"{path.name} is not a readable safetensors file ({exc})",
                              "an addition-model .safetensors file") from None
    require(meta.get("kind") == CHECKPOINT_KIND, "path", f"{path.name} is not an addition-model checkpoint",
            CHECKPOINT_KIND)
    require(meta.get("format_version") == str(FORMAT_VERSION), "format_version",
            f"{meta.get('format_version')!r} is not supported", str(FORMAT_VERSION))
    try:
        config = _config_from_json(meta["config"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError("config", f"the stored training config is unreadable ({exc})", "TrainConfig fields") from None
    model = build_model(config.shape)
    try:
        model.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        raise ValidationError("path", f"the weights do not fit the stored shape ({str(exc)[:200]})",
                              "weights for the stored ModelShape") from None
    model.to(device).eval()
    meta["extra"] = json.loads(meta.get("extra") or "{}")
    return Checkpoint(model=model, config=config, meta=meta)


# ------------------------------------------------------------------------------------ runs for the panel


def _score_to_dict(s: AdditionScore) -> dict:
    return {"answer_perplexity": s.answer_perplexity,
            "by_length": [{"digits": r.digits, "problems": r.problems, "exact": r.exact,
                           "digit_accuracy": r.digit_accuracy} for r in s.by_length]}


def _score_from_dict(d: dict) -> AdditionScore:
    return AdditionScore(by_length=tuple(LengthScore(digits=int(r["digits"]), problems=int(r["problems"]),
                                                     exact=int(r["exact"]), digit_accuracy=float(r["digit_accuracy"]))
                                         for r in d["by_length"]),
                         answer_perplexity=float(d["answer_perplexity"]))


def rows_to_list(rows: tuple[BitsRow, ...]) -> list[dict]:
    return [{"weight_bits": r.weight_bits, "group_size": r.group_size, **_score_to_dict(r.score)} for r in rows]


def rows_from_list(items: list) -> tuple[BitsRow, ...]:
    try:
        return tuple(BitsRow(label=config_label(int(d["weight_bits"]), d["group_size"]), weight_bits=int(d["weight_bits"]),
                             group_size=None if d["group_size"] is None else int(d["group_size"]),
                             score=_score_from_dict(d)) for d in items)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError("sweep", f"a stored row is malformed ({exc!r})", "rows written by rows_to_list") from None


@dataclass(frozen=True)
class HardTaskRun:
    """The addition model at each bit width: what the panel draws, and where and when it was measured."""

    seed: int
    steps: int
    trained: str                  # when and on what the weights were trained
    measured: str                 # when and on what the sweep was measured
    group_size: int | None
    rows: tuple[BitsRow, ...]
    shipped: bool                 # True: the checkpoint and numbers that ship with the app
    train_seconds: float = 0.0

    def row(self, bits: int) -> BitsRow | None:
        return next((r for r in self.rows if r.weight_bits == bits), None)

    def perplexity_change(self, row: BitsRow) -> float:
        """Answer perplexity against the float32 row's (0.03 = +3 %)."""
        return row.score.answer_perplexity / self.rows[0].score.answer_perplexity - 1.0

    def narrowest_quiet(self, limit: float = 0.10) -> BitsRow | None:
        """The fewest-bit row whose answer perplexity stays within ``limit`` of float32: where "perplexity
        barely moves" holds, and what exact match does there."""
        quiet = [r for r in self.rows[1:] if self.perplexity_change(r) < limit]
        return min(quiet, key=lambda r: r.weight_bits) if quiet else None

    def unlearned_lengths(self, threshold: float = 0.95) -> tuple[int, ...]:
        """Sum lengths the float32 model itself gets wrong more than 1 time in 20: training with this
        seed did not converge there, so rounding's effect cannot be read at those lengths."""
        return tuple(n for n, em in self.rows[0].score.exact_match().items() if em < threshold)


def _measured_note(device: str) -> str:
    from engines.qeval.evaluate import machine_label

    return f"{time.strftime('%Y-%m-%d', time.gmtime())} on {machine_label(device)}"


def read_metadata(path: str | Path | None = None) -> dict:
    """A checkpoint's metadata without torch: the safetensors header is an 8-byte length and JSON."""
    import struct

    path = Path(path) if path is not None else shipped_path()
    require(path.is_file(), "path", f"{path} does not exist", "an addition-model .safetensors file")
    try:
        with open(path, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            require(0 < size < 100_000_000, "path", f"{path.name} has no readable safetensors header",
                    "a safetensors file")
            header = json.loads(fh.read(size).decode("utf-8"))
    except (OSError, struct.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError("path", f"{path.name} is not a readable safetensors file ({exc})",
                              "an addition-model .safetensors file") from None
    meta = dict(header.get("__metadata__") or {})
    require(meta.get("kind") == CHECKPOINT_KIND, "path", f"{path.name} is not an addition-model checkpoint",
            CHECKPOINT_KIND)
    try:
        meta["extra"] = json.loads(meta.get("extra") or "{}")
        meta["config"] = _config_from_json(meta["config"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError("config", f"the stored metadata is unreadable ({exc})", "TrainConfig fields") from None
    return meta


def shipped_path() -> Path:
    from engines.core.assets import asset_path

    return asset_path("qeval", "addition.safetensors")


def shipped_run(group_size: int | None = 32) -> HardTaskRun:
    """The shipped checkpoint's sweep as measured on the build machine when it was made (reads no weights)."""
    require(group_size in ADD_SWEEP_GROUPS, "group_size", f"{group_size!r} has no shipped sweep", "32, None")
    meta = read_metadata()
    extra, config = meta["extra"], meta["config"]
    key = "sweep_per_channel" if group_size is None else f"sweep_g{group_size}"
    require(key in extra, "sweep", f"the shipped checkpoint holds no {key}",
            ", ".join(k for k in extra if k.startswith("sweep")))
    return HardTaskRun(seed=config.seed, steps=config.steps,
                       trained=f"{meta.get('date', '?')} on {meta.get('device', '?')}",
                       measured=str(extra.get("measured", "?")), group_size=group_size,
                       rows=rows_from_list(extra[key]), shipped=True,
                       train_seconds=float(meta.get("train_seconds", 0.0)))


def remeasure(group_size: int | None = 32, per_length: int = 1000, device: str = "cpu",
              progress: Callable[[float, str], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> HardTaskRun:
    """Score the shipped checkpoint again here, at each bit width."""
    if cancelled is not None and cancelled():
        raise Cancelled()
    ckpt = load_checkpoint(device=device)
    rows = bits_sweep(ckpt.model, sweep_configs(group_size), per_length, device, progress=progress, cancelled=cancelled)
    return HardTaskRun(seed=ckpt.config.seed, steps=ckpt.config.steps,
                       trained=f"{ckpt.meta.get('date', '?')} on {ckpt.meta.get('device', '?')}",
                       measured=_measured_note(device), group_size=group_size, rows=rows, shipped=True,
                       train_seconds=float(ckpt.meta.get("train_seconds", 0.0)))


def retrain(seed: int, steps: int | None = None, group_size: int | None = 32, per_length: int = 1000,
            device: str = "cpu", progress: Callable[[float, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> HardTaskRun:
    """Train a fresh model with ``seed`` (the shipped step count unless given), then sweep its bit widths.

    Training takes the first 80 % of the progress bar; on CUDA it takes seconds, on two CPU cores minutes.
    """
    if cancelled is not None and cancelled():
        raise Cancelled()
    shipped = TrainConfig()
    config = TrainConfig(seed=seed, steps=shipped.steps if steps is None else steps)
    outer = progress or (lambda f, t="": None)
    run = train(config, device, lambda f, t: outer(0.8 * f, t), cancelled)
    rows = bits_sweep(run.model, sweep_configs(group_size), per_length, device,
                      progress=lambda f, t: outer(0.8 + 0.2 * f, t), cancelled=cancelled)
    note = _measured_note(device)
    return HardTaskRun(seed=seed, steps=config.steps, trained=note, measured=note, group_size=group_size,
                       rows=rows, shipped=False, train_seconds=run.seconds)
