"""Training against inference: the one-off compute of a training run against the daily compute of serving it.

Training C = 6·N·D; serving ≈ 2·N FLOP per processed or generated token (Kaplan et al. 2020, §2.1,
Table 1), so cumulative inference after t days is 2·N·T·t for T tokens a day, and it overtakes
training on day 6·N·D / (2·N·T) = 3·D/T: the crossover depends only on the training tokens and the
daily traffic, not on the model's size. Attention FLOPs and batching overheads are left out of both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engines.compute.data import load_table
from engines.compute.scaling import inference_flops_per_token, training_flops
from engines.core.errors import require_number

DAYS_PER_YEAR = 365.0

SECONDS_PER_DAY = 86_400.0


def serving_traffic(traffic_per_s: float, prompt_tokens: int, output_tokens: int) -> tuple[float, int]:
    """The serving panel's traffic as this topic's knobs: (requests per second, tokens per request =
    prompt + output)."""
    return float(traffic_per_s), int(prompt_tokens + output_tokens)


def tokens_per_day(requests_per_s: float, tokens_per_request: float) -> float:
    """Tokens processed and generated a day at a steady ``requests_per_s``."""
    r = require_number(requests_per_s, "requests_per_s", 0.0)
    t = require_number(tokens_per_request, "tokens_per_request", 0.0)
    return r * t * SECONDS_PER_DAY


@dataclass(frozen=True)
class Demand:
    """Cumulative training and inference compute over days of serving."""

    params: float
    train_tokens: float
    tokens_per_day: float
    train_flop: float
    inference_flop_per_day: float
    days: np.ndarray
    inference_cumulative: np.ndarray
    crossover_days: float           # inf when nothing is served
    statements: tuple               # the companies' own dated statements on the split

    @property
    def cumulative_total(self) -> np.ndarray:
        """Training plus cumulative inference on each day."""
        return self.train_flop + self.inference_cumulative

    @property
    def crossover_years(self) -> float:
        return self.crossover_days / DAYS_PER_YEAR

    @property
    def inference_share_after(self) -> float:
        """Inference's share of all compute at the end of the horizon."""
        total = self.train_flop + self.inference_cumulative[-1]
        return float(self.inference_cumulative[-1] / total) if total > 0 else 0.0


def demand(params: float, train_tokens: float, tokens_per_day_value: float, horizon_days: float | None = None,
           n_points: int = 200) -> Demand:
    """Training compute of N = ``params`` on ``train_tokens`` against serving ``tokens_per_day_value`` a day."""
    c = training_flops(params, train_tokens)
    t = require_number(tokens_per_day_value, "tokens_per_day", 0.0)
    per_day = inference_flops_per_token(params) * t
    cross = c / per_day if per_day > 0 else float("inf")
    if horizon_days is None:
        horizon_days = min(max(2.0 * cross, 30.0), 3650.0) if per_day > 0 else 365.0
    horizon = require_number(horizon_days, "horizon_days", 0.0, 1e6, lo_open=True)
    days = np.linspace(0.0, horizon, n_points)
    return Demand(float(params), float(train_tokens), t, c, per_day, days, per_day * days, cross,
                  load_table("market.json")["demand_statements"])
