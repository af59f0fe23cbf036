"""Evaluation that needs no returns: agreement, per-class accuracy, calibration and drift (numpy only).

- Precision TP/(TP+FP), recall TP/(TP+FN), F1 = 2PR/(P+R) per class (van Rijsbergen 1979's F-measure
  with β = 1); macro F1 is their unweighted mean.
- Cohen's κ = (p_o − p_e)/(1 − p_e) between two labelers (Cohen, "A coefficient of agreement for nominal
  scales", Educ. Psychol. Meas. 20(1):37–46, 1960), via :func:`engines.trading.stats.cohen_kappa`.
- Expected calibration error: confidences split into M equal-width bins ((m−1)/M, m/M];
  ECE = Σ_m (|B_m|/n)·|acc(B_m) − conf(B_m)| (Guo, Pleiss, Sun & Weinberger, "On Calibration of Modern
  Neural Networks", ICML 2017, §2, who use M = 15); the reliability diagram plots acc against conf per bin.
- Multi-class Brier score: mean over items of Σ_k (p_k − y_k)² (Brier, Monthly Weather Review 78(1), 1950).
- Population stability index Σ (a − e)·ln(a/e) over bins (see :func:`engines.trading.stats.psi`; reviewed
  by du Pisanie, Allison, Budde & Visagie, arXiv 2303.01227, 2023). Empty bins are smoothed with half a
  count each (our choice: ln 0 is infinite). The 0.1 / 0.25 bands are a practitioners' rule of thumb that
  we could not trace to a primary source: the app labels them so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engines.core.errors import require, require_int
from engines.trading.stats import cohen_kappa, f1, psi

PSI_BANDS = ((0.1, "stable"), (0.25, "moderate shift"), (float("inf"), "major shift"))
PSI_BANDS_NOTE = "PSI bands 0.1 / 0.25: practitioners' rule of thumb, unverified against a primary source"
SMOOTHING_COUNT = 0.5


def _labels(y, field: str, n_classes: int) -> np.ndarray:
    a = np.asarray(y)
    require(a.ndim == 1 and a.size > 0, field, "expected a non-empty list of class indices", "1-D, ≥ 1 item")
    require(np.issubdtype(a.dtype, np.integer), field, f"expected integer class indices, got {a.dtype}",
            f"0…{n_classes - 1}")
    require(bool(((a >= 0) & (a < n_classes)).all()), field, "a class index is out of range", f"0…{n_classes - 1}")
    return a.astype(np.int64)


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """Counts C[i, j] of items with true class i predicted as j."""
    k = require_int(n_classes, "n_classes", 2)
    t, p = _labels(y_true, "y_true", k), _labels(y_pred, "y_pred", k)
    require(t.size == p.size, "y_pred", f"{p.size} predictions for {t.size} labels", f"{t.size}")
    c = np.zeros((k, k), dtype=np.int64)
    np.add.at(c, (t, p), 1)
    return c


@dataclass(frozen=True)
class ClassScores:
    precision: tuple[float, ...]
    recall: tuple[float, ...]
    f1: tuple[float, ...]
    support: tuple[int, ...]
    accuracy: float
    macro_f1: float


def class_scores(confusion) -> ClassScores:
    """Per-class precision, recall, F1 and support from a confusion matrix (rows true, columns predicted).
    A class never predicted has precision 0 (no true positive), as scikit-learn's zero_division=0."""
    c = np.asarray(confusion, dtype=np.int64)
    require(c.ndim == 2 and c.shape[0] == c.shape[1] and c.shape[0] >= 2, "confusion",
            f"expected a square table, got shape {c.shape}", "k×k, k ≥ 2")
    require(bool((c >= 0).all()) and c.sum() > 0, "confusion", "counts must be ≥ 0 and not all zero")
    tp = np.diag(c)
    fp, fn = c.sum(0) - tp, c.sum(1) - tp
    prec = tuple(float(t / (t + f)) if t + f else 0.0 for t, f in zip(tp, fp))
    rec = tuple(float(t / (t + f)) if t + f else 0.0 for t, f in zip(tp, fn))
    f1s = tuple(f1(int(t), int(a), int(b)) for t, a, b in zip(tp, fp, fn))
    return ClassScores(prec, rec, f1s, tuple(int(s) for s in c.sum(1)), float(tp.sum() / c.sum()),
                       float(np.mean(f1s)))


@dataclass(frozen=True)
class Reliability:
    """Per confidence bin: edges, count, mean confidence and accuracy (NaN where empty), and the ECE."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]
    confidence: tuple[float, ...]
    accuracy: tuple[float, ...]
    ece: float


def reliability(confidences, correct, n_bins: int = 15) -> Reliability:
    """Equal-width bins ((m−1)/M, m/M] of the top-class confidence; ECE as Guo et al. (2017)."""
    m = require_int(n_bins, "n_bins", 1, 100)
    conf = np.asarray(confidences, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    require(conf.ndim == 1 and conf.size > 0, "confidences", "expected a non-empty list", "1-D")
    require(bool(np.isfinite(conf).all()) and bool(((conf >= 0) & (conf <= 1)).all()), "confidences",
            "confidences must lie in [0, 1]", "0…1")
    require(ok.shape == conf.shape, "correct", f"{ok.size} flags for {conf.size} confidences", f"{conf.size}")
    edges = np.linspace(0.0, 1.0, m + 1)
    idx = np.clip(np.searchsorted(edges[1:], conf, side="left"), 0, m - 1)   # (lo, hi]; 0 joins the first bin
    counts, cmean, amean, ece = [], [], [], 0.0
    for b in range(m):
        sel = idx == b
        n_b = int(sel.sum())
        counts.append(n_b)
        if n_b:
            cb, ab = float(conf[sel].mean()), float(ok[sel].mean())
            ece += n_b / conf.size * abs(ab - cb)
        else:
            cb = ab = float("nan")
        cmean.append(cb)
        amean.append(ab)
    return Reliability(tuple(float(e) for e in edges), tuple(counts), tuple(cmean), tuple(amean), float(ece))


def brier(probabilities, y_true) -> float:
    """Multi-class Brier score: mean Σ_k (p_k − 1[k = y])²; 0 is perfect, 2 the worst."""
    p = np.asarray(probabilities, dtype=float)
    require(p.ndim == 2 and p.shape[0] > 0 and p.shape[1] >= 2, "probabilities", "expected an n×k table",
            "n ≥ 1, k ≥ 2")
    y = _labels(y_true, "y_true", p.shape[1])
    require(y.size == p.shape[0], "y_true", f"{y.size} labels for {p.shape[0]} rows", f"{p.shape[0]}")
    onehot = np.eye(p.shape[1])[y]
    return float(((p - onehot) ** 2).sum(1).mean())


def smoothed_shares(counts) -> np.ndarray:
    """Bin shares with half a count added to every bin, so no share is zero."""
    c = np.asarray(counts, dtype=float)
    require(c.ndim == 1 and c.size >= 2 and bool((c >= 0).all()), "counts", "expected ≥ 2 non-negative counts",
            "≥ 2 bins")
    c = c + SMOOTHING_COUNT
    return c / c.sum()


def psi_counts(expected_counts, actual_counts) -> float:
    """PSI of two histograms over the same bins, empty bins smoothed."""
    return psi(smoothed_shares(expected_counts), smoothed_shares(actual_counts))


def decile_edges(baseline, n_bins: int = 10) -> np.ndarray:
    """Inner bin edges at the baseline's quantiles (the usual PSI binning of a score), duplicates dropped."""
    b = np.asarray(baseline, dtype=float)
    require(b.ndim == 1 and b.size >= 2, "baseline", "expected ≥ 2 values", "1-D")
    n = require_int(n_bins, "n_bins", 2, 100)
    return np.unique(np.quantile(b, np.linspace(0, 1, n + 1)[1:-1]))


def psi_scores(baseline, current, n_bins: int = 10) -> tuple[float, np.ndarray, np.ndarray]:
    """PSI of a continuous score between a baseline and a current sample, binned at baseline deciles.
    Returns (psi, baseline counts, current counts)."""
    edges = decile_edges(baseline, n_bins)
    e = np.bincount(np.searchsorted(edges, np.asarray(baseline, float), side="right"), minlength=edges.size + 1)
    cur = np.asarray(current, dtype=float)
    require(cur.ndim == 1 and cur.size >= 1, "current", "expected ≥ 1 value", "1-D")
    a = np.bincount(np.searchsorted(edges, cur, side="right"), minlength=edges.size + 1)
    return psi_counts(e, a), e, a


def psi_band(value: float) -> str:
    for limit, name in PSI_BANDS:
        if value < limit:
            return name
    return PSI_BANDS[-1][1]


def kappa_of_labels(a, b, n_classes: int) -> float:
    """Cohen's κ of two label lists over the same items."""
    return cohen_kappa(confusion_matrix(a, b, n_classes))
