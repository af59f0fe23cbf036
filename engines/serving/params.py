"""The serving panel's knobs as data, and the workloads they describe."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.params import ParamsBase, param
from engines.serving.batching import LatencyTarget, Workload

TIMELINE_REQUESTS = 48
"""Requests in the animated batching timeline: few enough to see each one."""


@dataclass(frozen=True)
class Params(ParamsBase):
    """Traffic, request lengths, latency target and headroom for one serving view."""

    arrivals_per_s: float = param(4.0, 0.1, 200, label="Arrivals", unit="req/s", step=0.1, decimals=1,
                                  tip="Poisson arrival rate of the animated timeline (its first 48 requests)")
    prompt_tokens: int = param(512, 16, 4096, label="Prompt", unit="tok", step=16)
    output_tokens: int = param(128, 4, 2048, label="Output", unit="tok", step=4)
    traffic_per_s: float = param(100.0, 1, 5000, label="Traffic to size for", unit="req/s")
    ttft_target_s: float = param(2.0, 0.1, 20, label="Target p90 TTFT", unit="s", step=0.1, decimals=1)
    tpot_target_ms: float = param(100.0, 5, 500, label="Target p90 TPOT", unit="ms", step=5)
    max_utilisation_pct: float = param(80.0, 50, 98, label="Load replicas to at most", unit="% of saturation",
                                       tip="Headroom: latency grows like 1/(1 − ρ) as utilisation ρ nears 1 "
                                           "(Kingman 1961), and real traffic has bursts a Poisson model lacks.")

    @property
    def target(self) -> LatencyTarget:
        return LatencyTarget(self.ttft_target_s, self.tpot_target_ms / 1e3)


def workload(params: Params, serve_context: int, rate_per_s: float, n_requests: int = 1, seed: int = 0) -> Workload:
    """The params' request lengths, cut so a request fits the context: prompt ≤ context/2 and
    output ≤ a quarter of what the prompt leaves."""
    prompt = int(min(params.prompt_tokens, max(1, serve_context // 2)))
    output = int(min(params.output_tokens, max(1, (serve_context - prompt) // 4)))
    return Workload(rate_per_s=rate_per_s, n_requests=n_requests, prompt_mean=prompt, output_mean=max(1, output),
                    seed=seed)


def timeline_workload(params: Params, serve_context: int) -> Workload:
    return workload(params, serve_context, params.arrivals_per_s, TIMELINE_REQUESTS, seed=5)


def study_workload(params: Params, serve_context: int) -> Workload:
    return workload(params, serve_context, 1.0, seed=1)
