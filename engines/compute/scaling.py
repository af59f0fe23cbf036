"""Scaling laws in closed form: training compute, the Chinchilla loss surface and its compute-optimal
frontier, and Kaplan's power laws.

Sources
- C ≈ 6·N·D: Kaplan et al. 2020, *Scaling Laws for Neural Language Models*, arXiv 2001.08361, §2.1, Table 1.
- L(N, D) = E + A/N^α + B/D^β and the optimum N_opt = G·(C/6)^a, D_opt = G⁻¹·(C/6)^b with
  a = β/(α+β), b = α/(α+β), G = (αA/(βB))^(1/(α+β)): Hoffmann et al. 2022, *Training Compute-Optimal
  Large Language Models*, arXiv 2203.15556, §3.3 (Eq. 2) and Appendix D.2 (Eq. 4).
- Constants: the paper's printed (rounded) values; the unrounded values from the paper's TeX source as
  Epoch AI's replication notebook uses them; and the refit of Besiroglu et al. 2024, *Chinchilla
  Scaling: A replication attempt*, arXiv 2404.10102 (notebook values).
- Kaplan's laws L(N) = (N_c/N)^α_N, L(D) = (D_c/D)^α_D, L(C_min) = (C_c/C_min)^α_C: arXiv 2001.08361,
  Eqs. 1.1–1.3 (N counts non-embedding parameters, loss in nats on WebText2 tokens, C in PF-days).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engines.core.errors import ValidationError, require_choice, require_number

PF_DAY = 1e15 * 86_400.0
"""One petaFLOP/s-day in FLOP (Kaplan et al. 2020 use it as the unit of compute)."""


@dataclass(frozen=True)
class LawConstants:
    """One published set of Chinchilla constants: L(N, D) = E + A/N^α + B/D^β."""

    key: str
    label: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str
    note: str = ""


FITS: dict[str, LawConstants] = {
    "hoffmann": LawConstants(
        "hoffmann", "Hoffmann 2022, printed (rounded)", 1.69, 406.4, 410.7, 0.34, 0.28,
        "Hoffmann et al. 2022, arXiv 2203.15556, §3.3 (Approach 3), constants as printed",
        "The rounded constants put the optimum near 93 tokens per parameter at Chinchilla's budget, "
        "not the ~20 of the paper's Table 3 (Approach 1)."),
    "hoffmann-unrounded": LawConstants(
        "hoffmann-unrounded", "Hoffmann 2022, unrounded (TeX source)", math.exp(0.5267228), math.exp(6.0073404),
        math.exp(6.0179186), 0.33917084, 0.2849083,
        "Hoffmann et al. 2022 TeX source: ln E = 0.5267228, ln A = 6.0073404, ln B = 6.0179186, α = 0.33917084, "
        "β = 0.2849083, as read in Epoch AI's replication notebook (analyzing-chinchilla, data_analysis.ipynb)",
        "The same fit without rounding: about 59 tokens per parameter at Chinchilla's budget."),
    "besiroglu": LawConstants(
        "besiroglu", "Besiroglu 2024 refit", math.exp(0.59711), 482.00572, 2085.43420, 0.347813, 0.365854,
        "Besiroglu et al. 2024, arXiv 2404.10102, refit of Hoffmann's Fig. 4 data (Huber loss, δ = 1e-3); "
        "values from the replication notebook",
        "At Chinchilla's budget the refit lands near 20 tokens per parameter, close to Chinchilla's 70B on 1.4T tokens."),
}
"""The three fits a user can pick; their difference is part of the lesson."""


def _constants(fit) -> LawConstants:
    """A key of :data:`FITS`, a :class:`LawConstants`, or any object with E, A, B, alpha, beta (a measured fit)."""
    if isinstance(fit, str):
        require_choice(fit, "fit", tuple(FITS))
        return FITS[fit]
    if isinstance(fit, LawConstants):
        return fit
    try:
        values = {k: float(getattr(fit, k)) for k in ("E", "A", "B", "alpha", "beta")}
    except (AttributeError, TypeError, ValueError):
        raise ValidationError("fit", f"expected a fit name or constants, got {fit!r}", ", ".join(FITS)) from None
    for k in ("A", "B", "alpha", "beta"):
        require_number(values[k], f"fit.{k}", 0.0, None, lo_open=True)
    require_number(values["E"], "fit.E", 0.0)
    return LawConstants("measured", getattr(fit, "label", "measured fit"), **values,
                        source=getattr(fit, "source", "fitted to measured losses"))


def _positive(x: float, field: str) -> float:
    return require_number(x, field, 0.0, None, lo_open=True)


def training_flops(params: float, tokens: float) -> float:
    """Training compute C = 6·N·D in FLOP (forward 2N, backward 4N per token; Kaplan 2020 §2.1)."""
    return 6.0 * _positive(params, "params") * _positive(tokens, "tokens")


def inference_flops_per_token(params: float) -> float:
    """Forward-only compute per processed or generated token, 2N FLOP (Kaplan 2020 §2.1, Table 1)."""
    return 2.0 * _positive(params, "params")


def chinchilla_loss(N: float, D: float, fit="hoffmann") -> float:
    """Predicted loss (nats per token on the fit's data) of N parameters trained on D tokens (Hoffmann Eq. 2)."""
    c = _constants(fit)
    return c.E + c.A / _positive(N, "N") ** c.alpha + c.B / _positive(D, "D") ** c.beta


def chinchilla_loss_grid(N: np.ndarray, D: np.ndarray, fit="hoffmann") -> np.ndarray:
    """:func:`chinchilla_loss` over arrays (broadcast), for surfaces and curves."""
    c = _constants(fit)
    N, D = np.asarray(N, float), np.asarray(D, float)
    if np.any(N <= 0) or not np.all(np.isfinite(N)):
        raise ValidationError("N", "every value must be a positive finite number", "> 0")
    if np.any(D <= 0) or not np.all(np.isfinite(D)):
        raise ValidationError("D", "every value must be a positive finite number", "> 0")
    return c.E + c.A / N ** c.alpha + c.B / D ** c.beta


def optimum_exponents(fit="hoffmann") -> tuple[float, float]:
    """(a, b) with N_opt ∝ C^a and D_opt ∝ C^b: a = β/(α+β), b = α/(α+β) (Hoffmann Eq. 4)."""
    c = _constants(fit)
    return c.beta / (c.alpha + c.beta), c.alpha / (c.alpha + c.beta)


def chinchilla_optimum(C: float, fit="hoffmann") -> tuple[float, float]:
    """(N_opt, D_opt) minimising L(N, D) under 6·N·D = C (Hoffmann Eq. 4; Lagrange multipliers).

    G = (αA/(βB))^(1/(α+β)); N_opt = G·(C/6)^a; D_opt = (C/6)/N_opt, so 6·N_opt·D_opt = C exactly.
    E does not move the optimum.
    """
    c = _constants(fit)
    C = _positive(C, "C")
    a, _ = optimum_exponents(c)
    G = (c.alpha * c.A / (c.beta * c.B)) ** (1.0 / (c.alpha + c.beta))
    n_opt = G * (C / 6.0) ** a
    return n_opt, (C / 6.0) / n_opt


def chinchilla_frontier(C: np.ndarray, fit="hoffmann") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N_opt, D_opt, loss at the optimum) for every budget in ``C`` (vectorised Eq. 4)."""
    c = _constants(fit)
    C = np.asarray(C, float)
    if np.any(C <= 0) or not np.all(np.isfinite(C)):
        raise ValidationError("C", "every budget must be a positive finite number of FLOP", "> 0")
    a, _ = optimum_exponents(c)
    G = (c.alpha * c.A / (c.beta * c.B)) ** (1.0 / (c.alpha + c.beta))
    n = G * (C / 6.0) ** a
    d = (C / 6.0) / n
    return n, d, chinchilla_loss_grid(n, d, c)


def iso_flop_curve(C: float, fit="hoffmann", n_points: int = 80, span: float = 30.0) -> tuple[np.ndarray, np.ndarray]:
    """Loss against model size at a fixed budget C (D = C/(6N)), from N_opt/span to N_opt·span (Hoffmann Fig. 3)."""
    C = _positive(C, "C")
    span = require_number(span, "span", 1.0, 1e6, lo_open=True)
    if not isinstance(n_points, int) or n_points < 2:
        raise ValidationError("n_points", f"{n_points!r} is too few", "integer ≥ 2")
    n_opt, _ = chinchilla_optimum(C, fit)
    n = np.geomspace(n_opt / span, n_opt * span, n_points)
    return n, chinchilla_loss_grid(n, C / (6.0 * n), fit)


# --- Kaplan et al. 2020 -----------------------------------------------------------------------------

@dataclass(frozen=True)
class KaplanLaws:
    """Kaplan et al. 2020 Eqs. 1.1–1.3 and the compute-efficient allocation exponents (Hoffmann Table 2)."""

    alpha_n: float = 0.076
    n_c: float = 8.8e13          # non-embedding parameters
    alpha_d: float = 0.095
    d_c: float = 5.4e13          # tokens
    alpha_c: float = 0.050
    c_c_pf_days: float = 3.1e8   # PF-days
    a: float = 0.73              # N_opt ∝ C^0.73
    b: float = 0.27              # D_opt ∝ C^0.27
    source: str = ("Kaplan et al. 2020, arXiv 2001.08361, Eqs. 1.1–1.3 and §6; allocation exponents as "
                   "Hoffmann et al. 2022 Table 2 lists them (secondary transcriptions)")


KAPLAN = KaplanLaws()


def kaplan_loss_n(N: float) -> float:
    """L(N) = (N_c/N)^α_N for a model of N non-embedding parameters trained to convergence (Eq. 1.1)."""
    return (KAPLAN.n_c / _positive(N, "N")) ** KAPLAN.alpha_n


def kaplan_loss_d(D: float) -> float:
    """L(D) = (D_c/D)^α_D for a large model trained on D tokens with early stopping (Eq. 1.2)."""
    return (KAPLAN.d_c / _positive(D, "D")) ** KAPLAN.alpha_d


def kaplan_loss_c(C: float) -> float:
    """L(C_min) = (C_c/C_min)^α_C with C in FLOP converted to PF-days (Eq. 1.3)."""
    return (KAPLAN.c_c_pf_days / (_positive(C, "C") / PF_DAY)) ** KAPLAN.alpha_c


def kaplan_allocation(C: np.ndarray, anchor_c: float, anchor_n: float) -> tuple[np.ndarray, np.ndarray]:
    """Kaplan's recipe N ∝ C^0.73 drawn through one anchor run (its exponent only: the prefactor is the
    anchor's), with D = C/(6N). An illustration of the slope, not Kaplan's own constant."""
    anchor_c, anchor_n = _positive(anchor_c, "anchor_c"), _positive(anchor_n, "anchor_n")
    C = np.asarray(C, float)
    n = anchor_n * (C / anchor_c) ** KAPLAN.a
    return n, C / (6.0 * n)


def tokens_per_param_at_optimum(C: float, fit="hoffmann") -> float:
    """D_opt/N_opt = (C/6)^(b−a)/G²: constant only when α = β (so the printed fit drifts with C)."""
    n, d = chinchilla_optimum(C, fit)
    return d / n


__all__ = ["PF_DAY", "LawConstants", "FITS", "training_flops", "inference_flops_per_token", "chinchilla_loss",
           "chinchilla_loss_grid", "optimum_exponents", "chinchilla_optimum", "chinchilla_frontier", "iso_flop_curve",
           "KaplanLaws", "KAPLAN", "kaplan_loss_n", "kaplan_loss_d", "kaplan_loss_c", "kaplan_allocation",
           "tokens_per_param_at_optimum"]
