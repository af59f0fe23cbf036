"""The self-hosting panel's knobs as one frozen value: traffic, prices chosen from the price file, how
the GPUs are paid for, people and fixed costs, and the operating what-ifs."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.core.params import ParamsBase, param
from engines.law.trees import Walk
from engines.selfhost.privacy import FIRST_TREE, load_privacy_trees
from engines.serving.batching import LatencyTarget

OWNERSHIP = {"rent": "Rent on demand", "commit": "Rent, committed", "own": "Buy and run"}


@dataclass(frozen=True)
class Params(ParamsBase):
    """Every assumption behind the comparison, editable and saved with the view."""

    traffic_per_s: float = param(20.0, 0.1, 2000, label="Average traffic", unit="req/s", step=0.1, decimals=1,
                                 tip="Requests per second averaged over the day")
    peak_to_average: float = param(2.0, 1.0, 6.0, label="Peak ÷ average", unit="×", step=0.1, decimals=1,
                                   tip="The busiest hour's rate over the day's average; the fleet is sized for it")
    prompt_tokens: int = param(512, 16, 4096, label="Prompt", unit="tok", step=16)
    output_tokens: int = param(128, 4, 2048, label="Output", unit="tok", step=4)
    ttft_target_s: float = param(2.0, 0.1, 20, label="Target p90 TTFT", unit="s", step=0.1, decimals=1)
    tpot_target_ms: float = param(100.0, 5, 500, label="Target p90 TPOT", unit="ms", step=5)
    max_utilisation_pct: float = param(80.0, 50, 98, label="Load replicas to at most", unit="% of saturation")
    efficiency_pct: float = param(50.0, 10, 100, label="Real ÷ modelled speed (η)", unit="%", step=1,
                                  tip="The serving engine's step times are roofline bounds; real kernels reach "
                                      "18–67 % of them in the serving lesson's H200 measurement")
    spares: int = param(1, 0, 8, label="Spare replicas", unit="", step=1,
                        tip="Kept for failures and rolling restarts")
    api: str = param("openai/gpt-4o-mini", None, 80, label="API to compare with")
    api_price_change_pct: float = param(0.0, -90, 100, label="API price change", unit="%", step=5,
                                        tip="What if the provider cuts (or raises) its price?")
    gpu_offer: str = param("", None, 80, label="GPU rental offer",
                           tip="Empty: the median-priced on-demand offer for the scenario's GPU in the price file")
    ownership: str = param("rent", label="GPUs", choices=tuple(OWNERSHIP))
    commit_discount_pct: float = param(30.0, 0, 72, label="Commitment discount", unit="%", step=1,
                                       tip="AWS Savings Plans advertise up to 66–72 % off on-demand; "
                                           "GPU-specific discounts are negotiated (your assumption)")
    life_years: float = param(4.0, 1, 8, label="Hardware life", unit="years", step=0.5, decimals=1,
                              tip="Hyperscalers depreciate servers over 5–6 years; Amazon cut some AI servers "
                                  "back to 5 in 2025. Accelerators age faster.")
    usd_per_kwh: float = param(0.12, 0.02, 0.60, label="Electricity", unit="$/kWh", step=0.01, decimals=2)
    pue: float = param(1.5, 1.0, 2.5, label="PUE", unit="", step=0.05, decimals=2,
                       tip="Facility power ÷ IT power (your assumption)")
    capital_rate_pct: float = param(0.0, 0, 20, label="Cost of capital", unit="%/yr", step=0.5, decimals=1)
    fte: float = param(0.5, 0, 10, label="Staff", unit="FTE", step=0.05, decimals=2,
                       tip="No published benchmark for staff per endpoint: your assumption")
    usd_per_fte_year: float = param(200_000.0, 0, 1_000_000, label="Loaded cost per FTE", unit="$/yr", step=5000)
    other_fixed_per_month: float = param(1000.0, 0, 1_000_000, label="Other fixed costs", unit="$/month", step=100,
                                         tip="Monitoring, storage, egress, evaluation runs, security tooling")
    growth_pct_per_month: float = param(5.0, 0, 50, label="Traffic growth", unit="%/month", step=0.5, decimals=1)
    upgrade_days: float = param(3.0, 0, 30, label="Upgrade overlap", unit="days", step=0.5, decimals=1,
                                tip="How long the old and new model run side by side")
    privacy_tree: str = param(FIRST_TREE, choices=tuple(load_privacy_trees()), label="Privacy tree")
    privacy_answers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        answers = self.privacy_answers
        if isinstance(answers, list):                       # a JSON round trip gives a list
            answers = tuple(answers)
        if not isinstance(answers, tuple):
            raise ValidationError("privacy_answers", f"expected a list of answer ids, got {type(answers).__name__}")
        object.__setattr__(self, "privacy_answers", answers)
        self.walk()                                         # refuses moves the walk cannot make

    def walk(self) -> Walk:
        """The privacy walk these parameters describe (its moves: answer ids and "continue")."""
        walk = Walk(self.privacy_tree, load_privacy_trees())
        try:
            walk.follow(self.privacy_answers)
        except ValidationError as exc:
            raise ValidationError("privacy_answers", str(exc).split(": ", 1)[1]) from None
        return walk

    @property
    def target(self) -> LatencyTarget:
        return LatencyTarget(self.ttft_target_s, self.tpot_target_ms / 1e3)

    @property
    def api_price_factor(self) -> float:
        return 1.0 + self.api_price_change_pct / 100.0
