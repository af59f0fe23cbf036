"""The Chinchilla-form fit recovers known constants and refuses bad points by name."""
import math

import numpy as np
import pytest

from engines.compute.fit import Fit, fit_scaling_law
from engines.core.errors import ValidationError

# Besiroglu et al. 2024 refit (arXiv 2404.10102), notebook values.
TRUE = dict(E=1.8172, A=482.01, B=2085.43, alpha=0.3478, beta=0.3658)


def _points(noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = []
    for n in np.geomspace(4e7, 1.6e10, 7):
        for d in np.geomspace(1e9, 5e11, 7):
            loss = TRUE["E"] + TRUE["A"] / n ** TRUE["alpha"] + TRUE["B"] / d ** TRUE["beta"]
            out.append((float(n), float(d), float(loss * math.exp(rng.normal(0.0, noise)))))
    return out


def test_exact_points_give_the_constants_back():
    fit = fit_scaling_law(_points(0.0))
    for key, value in TRUE.items():
        assert getattr(fit, key) == pytest.approx(value, rel=1e-4), key
    assert fit.rmse_log < 1e-6


def test_noisy_points_keep_the_exponents_and_the_optimum_close():
    fit = fit_scaling_law(_points(0.005, seed=3))
    assert fit.E == pytest.approx(TRUE["E"], abs=0.05)
    assert fit.alpha == pytest.approx(TRUE["alpha"], abs=0.03)
    assert fit.beta == pytest.approx(TRUE["beta"], abs=0.03)
    assert fit.a == pytest.approx(TRUE["beta"] / (TRUE["alpha"] + TRUE["beta"]), abs=0.03)
    assert 0.002 < fit.rmse_log < 0.01     # the residual is the noise put in


def test_frontier_is_the_closed_form_and_spends_the_budget():
    fit = Fit(E=1.8172, A=482.01, B=2085.43, alpha=0.3478, beta=0.3658, huber=0.0, rmse_log=0.0, n_points=5)
    n_opt, d_opt = fit.optimum(5.76e23)
    # Hand-worked from Hoffmann Eq. 4 with these constants (reference sheet §1.4: 72.2B params, 1.33T tokens).
    assert n_opt == pytest.approx(72.2e9, rel=0.005)
    assert d_opt == pytest.approx(1.33e12, rel=0.005)
    assert 6 * n_opt * d_opt == pytest.approx(5.76e23)
    # The optimum beats its neighbours on the same iso-FLOP line.
    for k in (0.8, 1.25):
        assert fit.loss(n_opt, d_opt) < fit.loss(n_opt * k, d_opt / k)
    assert Fit.from_dict(fit.to_dict()) == fit


@pytest.mark.parametrize("points, field", [
    ([(1e6, 1e9, 3.0)] * 3, "points"),
    ("abc", "points"),
    ([(1e6, 1e9, 3.0), (2e6, 1e9, 2.9), (3e6, 2e9, 2.8), (4e6, 3e9, 2.7), (5e6, 4e9, -1.0)], "points[4].loss"),
    ([(1e6, 1e9, 3.0), (2e6, 1e9, 2.9), (0, 2e9, 2.8), (4e6, 3e9, 2.7), (5e6, 4e9, 2.0)], "points[2].N"),
    ([(1e6, float("nan"), 3.0), (2e6, 1e9, 2.9), (3e6, 2e9, 2.8), (4e6, 3e9, 2.7), (5e6, 4e9, 2.0)], "points[0].D"),
    ([(1e6, 1e9), (2e6, 1e9, 2.9), (3e6, 2e9, 2.8), (4e6, 3e9, 2.7), (5e6, 4e9, 2.0)], "points[0]"),
    ([(1e6, 1e9 * k, 3.0 - k / 10) for k in range(1, 7)], "points"),   # one model size only
])
def test_bad_points_name_the_field(points, field):
    with pytest.raises(ValidationError) as err:
        fit_scaling_law(points)
    assert err.value.field == field


def test_bad_compute_names_the_field():
    fit = Fit(E=1.8, A=400.0, B=400.0, alpha=0.34, beta=0.28, huber=0.0, rmse_log=0.0, n_points=5)
    with pytest.raises(ValidationError) as err:
        fit.optimum(-1.0)
    assert err.value.field == "compute"
