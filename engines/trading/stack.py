"""Where a language model fits a trading stack (lesson H1): the stages' clocks against one model call.

The LLM's time and cost per document come from the serving engine (:func:`engines.serving.step_cost`,
a roofline: max(FLOPs/peak, bytes/bandwidth) per step, so an ideal lower bound on time): prefill of the
prompt, then one decode step per output token. Latency is one document alone (batch 1); cost is a full
batch of ``serve_batch`` documents on the replica's GPUs at a user-entered price per GPU-hour.
An API's cost per document is n_in·p_in + n_out·p_out.

Clocks (seconds; sources):
- Chicago–New York round trip 13 ms over the 2010 fibre and about 8.1 ms over later microwave links:
  Budish, Cramton & Shim, "The High-Frequency Trading Arms Race", QJE 130(4):1547–1621, 2015 (the
  microwave figure as quoted by a third party). A feed handler or an order decision slower than the
  8.1 ms round trip loses the race it exists for; that is the budget of ingestion and execution here.
- Pre-trade controls sit on every order's path (Commission Delegated Regulation (EU) 2017/589 "RTS 6",
  Art 15), so they share the order path's budget; post-trade and end-of-day risk reviews are slower.
- Extraction, signal research and portfolio construction run from seconds to months (our summary of
  the stack; our own summary).
Default token counts: one headline with the study's prompt used 117 prompt and 19 completion tokens in
a real API call (the replication notebook of GitHub ``thomashillenbrand/p05_lopez-lira_tang_2023``).
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require_int, require_number
from engines.serving import replica_memory, step_cost

BCS_FIBRE_RTT_S = 13e-3
BCS_MICROWAVE_RTT_S = 8.1e-3
DOCS_PRICED = 1_000_000


@dataclass(frozen=True)
class Stage:
    key: str
    label: str
    fastest_s: float     # the shortest clock the stage works on
    slowest_s: float     # the longest
    fit: str             # what a language model can do here (our words)
    source: str
    model_fits: bool = True   # whether a model may do the stage's work at all, whatever its speed (the ``fit`` line)


STAGES: tuple[Stage, ...] = (
    Stage("ingestion", "Data ingestion", 1e-6, BCS_MICROWAVE_RTT_S,
          "Plumbing: feeds arrive in a speed race a model call cannot join.",
          "Budish, Cramton & Shim, QJE 2015: Chicago–NY 8.1 ms microwave round trip", False),
    Stage("extraction", "Extraction (text → fields)", 1.0, 86_400.0,
          "The core fit: read news, filings and transcripts into entity, event, direction, numbers.",
          "Our summary; the tradable window in Lopez-Lira & Tang is the next day"),
    Stage("research", "Signal research", 86_400.0, 3.0e7,
          "A research assistant for code and hypotheses, under human review.",
          "Our summary: offline backtests over months of history"),
    Stage("portfolio", "Portfolio construction", 86_400.0, 2.6e6,
          "No: optimisation and constraints belong to deterministic numeric code.",
          "Our summary: daily to monthly rebalancing", False),
    Stage("risk", "Risk controls", 1e-6, 86_400.0,
          "Pre-trade checks on the order path are out of reach; summarising text risk at end of day is not.",
          "RTS 6 (Reg. (EU) 2017/589) Art 15–17: pre-trade, real-time and post-trade controls"),
    Stage("execution", "Execution", 1e-6, BCS_MICROWAVE_RTT_S,
          "Ruled out: too slow for the order path, and not deterministic.",
          "Budish, Cramton & Shim, QJE 2015", False),
)


@dataclass(frozen=True)
class StageVerdict:
    stage: Stage
    verdict: str          # "too slow", "slow end only", "fast enough"
    ratio_to_fastest: float


@dataclass(frozen=True)
class StackPricing:
    model_label: str
    gpu: str
    n_gpus: int
    batch: int
    prompt_tokens: int
    output_tokens: int
    latency_s: float              # one document, batch 1: prefill + output decode steps
    batch_seconds: float          # a batch of ``batch`` documents
    gpu_seconds_per_doc: float
    self_hosted_usd_per_doc: float
    self_hosted_usd_per_million: float
    api_usd_per_doc: float
    api_usd_per_million: float
    docs_per_gpu_hour: float
    gpu_hour_usd: float
    api_in_usd_per_m: float
    api_out_usd_per_m: float
    verdicts: tuple[StageVerdict, ...]
    ratio_to_microwave: float     # latency ÷ 8.1 ms

    def rows(self) -> list[dict]:
        return [{"stage": v.stage.label, "fastest_s": v.stage.fastest_s, "slowest_s": v.stage.slowest_s,
                 "verdict": v.verdict, "llm_latency_s": self.latency_s} for v in self.verdicts]


def verdict(latency_s: float, stage: Stage) -> StageVerdict:
    """Too slow when one call outlasts the stage's slowest clock; slow end only when it outlasts
    the fastest; fast enough otherwise."""
    lat = require_number(latency_s, "latency_s", 0, lo_open=True)
    word = "too slow" if lat > stage.slowest_s else "slow end only" if lat > stage.fastest_s else "fast enough"
    return StageVerdict(stage, word, lat / stage.fastest_s)


def price_stack(scenario, prompt_tokens: int = 117, output_tokens: int = 19, gpu_hour_usd: float = 2.0,
                api_in_usd_per_m: float = 0.15, api_out_usd_per_m: float = 0.60) -> StackPricing:
    """Latency and cost per document of the scenario's model and GPU (serving roofline), beside an API price."""
    p = require_int(prompt_tokens, "prompt_tokens", 1, 1_000_000)
    o = require_int(output_tokens, "output_tokens", 1, 100_000)
    hour = require_number(gpu_hour_usd, "gpu_hour_usd", 0, 1000)
    pin = require_number(api_in_usd_per_m, "api_in_usd_per_m", 0, 1000)
    pout = require_number(api_out_usd_per_m, "api_out_usd_per_m", 0, 1000)
    n = replica_memory(scenario).gpus_needed
    cost = step_cost(scenario, n)
    b = scenario.serve_batch
    mid = p + o / 2                                   # mean context a decode step attends
    latency = cost.prefill(p, 1) + o * cost.decode_step(1, mid)
    batch_s = cost.prefill(p, b) + o * cost.decode_step(b, mid)
    gpu_s = batch_s * n / b
    usd = gpu_s * hour / 3600
    api = (p * pin + o * pout) / 1e6
    return StackPricing(
        model_label=scenario.arch.label, gpu=scenario.gpu, n_gpus=n, batch=b, prompt_tokens=p, output_tokens=o,
        latency_s=latency, batch_seconds=batch_s, gpu_seconds_per_doc=gpu_s, self_hosted_usd_per_doc=usd,
        self_hosted_usd_per_million=usd * DOCS_PRICED, api_usd_per_doc=api, api_usd_per_million=api * DOCS_PRICED,
        docs_per_gpu_hour=3600 / gpu_s, gpu_hour_usd=hour, api_in_usd_per_m=pin, api_out_usd_per_m=pout,
        verdicts=tuple(verdict(latency, s) for s in STAGES), ratio_to_microwave=latency / BCS_MICROWAVE_RTT_S)
