"""The trading panel's knobs as data (one frozen value: every view is a state)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engines.core.params import param
from engines.trading.extraction import ExtractionParams
from engines.trading.lookahead import REMEDIES


def migrate_1(data: dict) -> dict:
    """Version 1 had H4's own device choice, ``ext_device``; the app's one choice (``--device``) decides now."""
    return {k: v for k, v in data.items() if k != "ext_device"}


@dataclass(frozen=True)
class Params(ExtractionParams):
    """H1 pricing, H2 costs and multiple testing, H3 look-ahead simulation; H4's fields come first
    (inherited from :class:`ExtractionParams`, so the extraction run takes them as they are)."""

    # H1: one document through a model
    prompt_tokens: int = param(117, 1, 20_000, label="Prompt", unit="tok", step=1,
                               tip="117 = one headline with the study's prompt in a real API call (LLT replication)")
    output_tokens: int = param(19, 1, 4_000, label="Output", unit="tok", step=1)
    gpu_hour_usd: float = param(2.0, 0.1, 50.0, label="GPU price (your assumption)", unit="$/GPU-h", step=0.1,
                                decimals=2, tip="No price source ships with the app: enter your own, dated.")
    api_in_usd_per_m: float = param(0.15, 0.0, 100.0, label="API input price", unit="$/M tok", step=0.01, decimals=2,
                                    tip="Default: gpt-4o-mini list price as third-party tables gave it "
                                        "(secondary, undated there): enter today's")
    api_out_usd_per_m: float = param(0.60, 0.0, 200.0, label="API output price", unit="$/M tok", step=0.01,
                                     decimals=2)
    # H2: the study read with costs and multiple testing
    cost_bp: float = param(10.0, 0.0, 30.0, label="Round-trip cost", unit="bp", step=0.5, decimals=1)
    turnover_pct: float = param(190.0, 0.0, 400.0, label="Daily turnover", unit="% of book", step=5,
                                tip="≈190 %/day in the study's cost section (secondary)")
    m_tests: int = param(1, 1, 10_000, label="Strategies tried", unit="tests",
                         tip="Bonferroni threshold for this many tests; HLZ counted 316 published factors")
    # H3: look-ahead simulation
    days_pre: int = param(500, 0, 5_000, label="Days before", unit="d", step=10)
    days_post: int = param(250, 20, 5_000, label="Days after", unit="d", step=10)
    n_stocks: int = param(50, 1, 500, label="Stocks", unit="", step=1)
    a_pre: float = param(0.08, 0.0, 0.5, label="Corr. before cutoff", step=0.005, decimals=3,
                         tip="Score–return correlation on days the model may remember (memorised outcomes)")
    a_post: float = param(0.02, 0.0, 0.5, label="Corr. after cutoff", step=0.005, decimals=3,
                          tip="Score–return correlation after the training cutoff: genuine skill, possibly 0")
    remedy: str = param("none", label="Remedy", choices=tuple(REMEDIES))
    mask_share: float = param(0.9, 0.0, 1.0, label="Masked share", unit="", step=0.05, decimals=2,
                              tip="Share of texts a re-identification test shows anonymous (≈0.9 in Entity Neutering)")
    n_prompts: int = param(1, 1, 10_000, label="Prompts tried", unit="", step=1,
                           tip="The backtest shown is the best of this many variants: deflated Sharpe and MinBTL")
    trials_var: float = param(0.5, 0.01, 5.0, label="Sharpe variance", unit="", step=0.01,
                              decimals=2, tip="Spread of the annual Sharpe ratios across the prompts tried (V in the DSR)")
    seed: int = param(1, 0, 1_000_000, label="Seed", step=1)

    version: ClassVar[int] = 2
    migrations: ClassVar[tuple] = (migrate_1,)
