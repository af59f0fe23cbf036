"""Fit the Chinchilla parametric loss L(N, D) = E + A/N^α + B/D^β to measured (N, D, loss) points.

The method is Hoffmann et al. 2022 (*Training Compute-Optimal Large Language Models*, arXiv 2203.15556,
§3.3 and Appendix D.2): write A = e^a, B = e^b, E = e^e, predict log-loss as
LSE(a − α·log N, b − β·log D, e), minimise the Huber loss (δ = 1e-3) of its error against the measured
log-loss with L-BFGS, started from a grid of initialisations, and keep the best. Besiroglu et al. 2024
(*Chinchilla Scaling: A replication attempt*, arXiv 2404.10102) refit the same form and found Hoffmann's
optimiser stopped early and that the printed rounded constants move the optimum a lot; so this fit runs
L-BFGS to tight tolerances and keeps the constants unrounded. Their standard errors on A and B were large
(A = 482 ± 125, B = 2085 ± 1293): A and B trade off against α and β, and a fit to few points inherits that.

The compute-optimal frontier of a fit is Hoffmann Eq. 4 in closed form (``engines.compute.scaling``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np

from engines.compute.scaling import chinchilla_frontier, chinchilla_optimum, optimum_exponents
from engines.core.errors import ValidationError, require_number
from engines.core.threads import torch_threads

HUBER_DELTA = 1e-3          # Hoffmann et al. 2022, App. D.2; Besiroglu et al. 2024 keep it
MIN_POINTS = 5              # five free constants
MAX_POINTS = 100_000

# Hoffmann et al. 2022, App. D.2: α, β ∈ {0, 0.5, …, 2}, e ∈ {−1, −0.5, …, 1}, a, b ∈ {0, 5, …, 25}.
GRID_ALPHA = (0.0, 0.5, 1.0, 1.5, 2.0)
GRID_E = (-1.0, -0.5, 0.0, 0.5, 1.0)
GRID_AB = (0.0, 5.0, 10.0, 15.0, 20.0, 25.0)
N_REFINED = 8              # L-BFGS runs from the best starts of the grid (the rest start far worse)


@dataclass(frozen=True)
class Fit:
    """Fitted constants of L = E + A/N^α + B/D^β with how well they fit (unrounded)."""

    E: float
    A: float
    B: float
    alpha: float
    beta: float
    huber: float        # mean Huber loss of the log-loss residuals at the optimum
    rmse_log: float     # root-mean-square residual of log-loss (≈ relative error of the loss)
    n_points: int

    def loss(self, n_params: float, tokens: float) -> float:
        """Predicted loss at model size ``n_params`` and ``tokens`` seen."""
        return self.E + self.A / n_params ** self.alpha + self.B / tokens ** self.beta

    @property
    def a(self) -> float:
        """N_opt ∝ C^a, a = β/(α+β) (Hoffmann Eq. 4)."""
        return optimum_exponents(self)[0]

    @property
    def b(self) -> float:
        """D_opt ∝ C^b, b = α/(α+β) = 1 − a."""
        return optimum_exponents(self)[1]

    def optimum(self, compute: float) -> tuple[float, float]:
        """(N_opt, D_opt) minimising the fitted loss at C = 6·N·D FLOPs (Hoffmann Eq. 4)."""
        return chinchilla_optimum(require_number(compute, "compute", 0.0, lo_open=True), self)

    def frontier(self, computes: Sequence[float]) -> list[tuple[float, float, float, float]]:
        """(C, N_opt, D_opt, loss at the optimum) for each compute budget."""
        c = np.asarray(computes, dtype=float)
        n, d, loss = chinchilla_frontier(c, self)
        return [tuple(float(v) for v in row) for row in zip(c, n, d, loss)]

    def to_dict(self) -> dict:
        return {"E": self.E, "A": self.A, "B": self.B, "alpha": self.alpha, "beta": self.beta,
                "huber": self.huber, "rmse_log": self.rmse_log, "n_points": self.n_points}

    @classmethod
    def from_dict(cls, data: object) -> "Fit":
        if not isinstance(data, dict):
            raise ValidationError("fit", f"expected an object, got {type(data).__name__}")
        try:
            return cls(E=require_number(data["E"], "fit.E", 0.0), A=require_number(data["A"], "fit.A", 0.0),
                       B=require_number(data["B"], "fit.B", 0.0),
                       alpha=require_number(data["alpha"], "fit.alpha", 0.0, lo_open=True),
                       beta=require_number(data["beta"], "fit.beta", 0.0, lo_open=True),
                       huber=require_number(data["huber"], "fit.huber", 0.0),
                       rmse_log=require_number(data["rmse_log"], "fit.rmse_log", 0.0),
                       n_points=int(require_number(data["n_points"], "fit.n_points", MIN_POINTS)))
        except KeyError as exc:
            raise ValidationError(f"fit.{exc.args[0]}", "missing") from None


def _check_points(points: object) -> np.ndarray:
    """Points as an (n, 3) float array of N, D, loss, each finite and positive; errors name the field."""
    if isinstance(points, (str, bytes)) or not isinstance(points, (Sequence, np.ndarray)):
        raise ValidationError("points", f"expected a sequence of (N, D, loss), got {type(points).__name__}")
    if not MIN_POINTS <= len(points) <= MAX_POINTS:
        raise ValidationError("points", f"{len(points)} points given", f"{MIN_POINTS}…{MAX_POINTS} points")
    rows = []
    for i, p in enumerate(points):
        if isinstance(p, (str, bytes)) or not isinstance(p, (Sequence, np.ndarray)) or len(p) != 3:
            raise ValidationError(f"points[{i}]", f"expected (N, D, loss), got {p!r}")
        rows.append(tuple(require_number(v, f"points[{i}].{name}", 0.0, lo_open=True)
                          for v, name in zip(p, ("N", "D", "loss"))))
    arr = np.asarray(rows, dtype=float)
    if len(np.unique(arr[:, 0])) < 2:
        raise ValidationError("points", "all points share one model size: α cannot be fitted", "≥ 2 sizes N")
    if len(np.unique(arr[:, 1])) < 2:
        raise ValidationError("points", "all points share one token count: β cannot be fitted", "≥ 2 token counts D")
    return arr


def _objective(theta, log_n, log_d, log_l, delta: float):
    """Mean Huber loss of LSE(a − α log N, b − β log D, e) − log L; theta = (a, b, e, α, β), torch."""
    import torch

    a, b, e, alpha, beta = theta[..., 0:1], theta[..., 1:2], theta[..., 2:3], theta[..., 3:4], theta[..., 4:5]
    pred = torch.logsumexp(torch.stack([a - alpha * log_n, b - beta * log_d, e.expand_as(a - alpha * log_n)]), 0)
    r = pred - log_l
    huber = torch.where(r.abs() <= delta, 0.5 * r * r, delta * (r.abs() - 0.5 * delta))
    return huber.mean(-1)


def fit_scaling_law(points: Sequence[Sequence[float]], delta: float = HUBER_DELTA) -> Fit:
    """Fit E, A, B, α, β to ``points`` of (N, D, loss) as Hoffmann et al. 2022 did (see module doc)."""
    import torch

    arr = _check_points(points)
    delta = require_number(delta, "delta", 0.0, 1.0, lo_open=True)
    with torch.random.fork_rng(devices=[]), torch_threads(1):
        log_n, log_d, log_l = (torch.tensor(np.log(arr[:, k]), dtype=torch.float64) for k in range(3))
        grid = torch.tensor([(a, b, e, al, be) for al, be, e, a, b in
                             product(GRID_ALPHA, GRID_ALPHA, GRID_E, GRID_AB, GRID_AB)], dtype=torch.float64)
        with torch.no_grad():
            start_losses = _objective(grid, log_n, log_d, log_l, delta)
        order = torch.argsort(start_losses)[:N_REFINED]
        best_theta, best_val = None, math.inf
        for idx in order.tolist():
            theta = grid[idx].clone().requires_grad_(True)
            opt = torch.optim.LBFGS([theta], lr=1.0, max_iter=200, max_eval=250, tolerance_grad=1e-14, tolerance_change=1e-16,
                                    history_size=50, line_search_fn="strong_wolfe")

            def closure():
                opt.zero_grad()
                val = _objective(theta, log_n, log_d, log_l, delta)
                val.backward()
                return val

            opt.step(closure)
            with torch.no_grad():
                val = float(_objective(theta, log_n, log_d, log_l, delta))
            if math.isfinite(val) and val < best_val and float(theta[3].detach()) > 0 and float(theta[4].detach()) > 0:
                best_val, best_theta = val, theta.detach().clone()
        if best_theta is None:
            raise ValidationError("points", "no start of the grid reached positive exponents α, β",
                                  "losses that fall with N and D")
        a, b, e, alpha, beta = (float(x) for x in best_theta)
        with torch.no_grad():
            pred = torch.logsumexp(torch.stack([a - alpha * log_n, b - beta * log_d,
                                                torch.full_like(log_n, e)]), 0)
            rmse = float(torch.sqrt(torch.mean((pred - log_l) ** 2)))
    return Fit(E=math.exp(e), A=math.exp(a), B=math.exp(b), alpha=alpha, beta=beta, huber=best_val,
               rmse_log=rmse, n_points=len(arr))
