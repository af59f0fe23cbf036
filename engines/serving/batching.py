"""Discrete-event simulation of one replica's batching under Poisson arrivals.

Static batching (a naive loop: a batch runs until its longest request ends) against
iteration-level "continuous" batching, where requests join and leave at every step (Yu et al.,
*Orca*, OSDI'22). Iteration times come from the roofline :class:`~engines.serving.replica.StepCost`.
Latency targets on time to first token and time per output token follow DistServe (Zhong et al.,
OSDI'24, arXiv 2401.09670). A finite run starts empty; :mod:`engines.serving.steady` turns runs into
steady-state figures.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

from engines.core.errors import ValidationError, require_int, require_number
from engines.serving.replica import StepCost

DISTRIBUTIONS = ("fixed", "uniform", "exponential")
MIN_RATE_PER_S = 1e-9
"""Slowest arrival rate: the arrival span (≈ n_requests / rate) then stays far inside float range."""
POLICIES = ("static", "continuous")
MAX_REQUESTS = 1_000_000
"""Longest run one simulation takes (about 30 s of CPU for continuous batching)."""


@dataclass(frozen=True)
class Workload:
    """Poisson arrivals at ``rate_per_s`` with prompt/output lengths drawn around their means.

    ``exponential`` lengths (clipped to 1…4× the mean) mimic chat traces whose outputs vary
    widely; ``uniform`` draws from 0.5…1.5× the mean; ``fixed`` uses the means.
    """

    rate_per_s: float
    n_requests: int = 300
    prompt_mean: int = 512
    output_mean: int = 128
    distribution: str = "exponential"
    seed: int = 0

    def __post_init__(self) -> None:
        require_number(self.rate_per_s, "rate_per_s", MIN_RATE_PER_S, 1e6)
        require_int(self.n_requests, "n_requests", 1, MAX_REQUESTS)
        require_int(self.prompt_mean, "prompt_mean", 1, 1_000_000)
        require_int(self.output_mean, "output_mean", 1, 1_000_000)
        if self.distribution not in DISTRIBUTIONS:
            raise ValidationError("distribution", f"{self.distribution!r} is not known", ", ".join(DISTRIBUTIONS))
        require_int(self.seed, "seed", 0)

    def sample(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Arrival times (s), prompt lengths and output lengths (tokens), reproducible from ``seed``.

        Each of the three comes from its own stream of ``seed``, so a run of more requests begins
        with exactly the requests of a shorter one: the steady-state check compares the two.
        """
        gaps, prompts, outputs = (np.random.default_rng(s) for s in np.random.SeedSequence(self.seed).spawn(3))
        arrivals = np.cumsum(gaps.exponential(1.0 / self.rate_per_s, self.n_requests))
        return arrivals, self._lengths(prompts, self.prompt_mean), self._lengths(outputs, self.output_mean)

    def _lengths(self, rng: np.random.Generator, mean: int) -> np.ndarray:
        n = self.n_requests
        if self.distribution == "fixed":
            return np.full(n, mean, dtype=np.int64)
        if self.distribution == "uniform":
            x = rng.uniform(0.5 * mean, 1.5 * mean, n)
        else:
            x = rng.exponential(mean, n)
        return np.clip(np.rint(x), 1, 4 * mean).astype(np.int64)


@dataclass(frozen=True)
class SimResult:
    """Per-request times (s) and the percentiles a serving benchmark reports."""

    policy: str
    max_batch: int
    arrival: np.ndarray
    start: np.ndarray          # admitted into a batch
    first_token: np.ndarray
    finish: np.ndarray
    slot: np.ndarray           # batch slot the request occupied (for the timeline)
    prompt: np.ndarray
    output: np.ndarray
    iterations: int

    @property
    def makespan(self) -> float:
        return float(self.finish.max() - self.arrival.min())

    @property
    def throughput_tokens_per_s(self) -> float:
        """Output tokens per second over the whole simulated span."""
        return float(self.output.sum()) / self.makespan

    @property
    def ttft(self) -> np.ndarray:
        return self.first_token - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        """Time per output token after the first (requests with one output token are left out)."""
        many = self.output > 1
        return (self.finish[many] - self.first_token[many]) / (self.output[many] - 1)

    @property
    def latency(self) -> np.ndarray:
        return self.finish - self.arrival

    def percentile(self, metric: str, q: float) -> float:
        values = {"ttft": self.ttft, "tpot": self.tpot, "latency": self.latency}[metric]
        return float(np.percentile(values, q)) if values.size else 0.0

    def summary(self) -> dict:
        out = {"policy": self.policy, "max_batch": self.max_batch, "requests": int(self.arrival.size),
               "throughput_tokens_per_s": self.throughput_tokens_per_s, "iterations": self.iterations}
        for metric in ("ttft", "tpot", "latency"):
            for q in (50, 90, 99):
                out[f"{metric}_p{q}_s"] = self.percentile(metric, q)
        return out


def simulate_batching(cost: StepCost, workload: Workload, policy: str, max_batch: int,
                      kv_capacity_tokens: int | None = None) -> SimResult:
    """Discrete-event simulation of one replica under ``workload``.

    ``static``: when idle, take up to ``max_batch`` queued requests, prefill them padded to the
    longest prompt, then decode every slot until the longest output is done; nobody joins
    mid-batch. ``continuous`` (Orca's iteration-level scheduling): before every iteration, admit
    queued requests while a slot and KV room (prompt + output reserved, as Orca does) are free;
    newcomers are prefilled inside that iteration, every running request gains one token, and
    finished requests leave at once. Iteration time comes from the roofline :class:`StepCost`.
    """
    if policy not in POLICIES:
        raise ValidationError("policy", f"{policy!r} is not known", ", ".join(POLICIES))
    max_batch = require_int(max_batch, "max_batch", 1, 100_000)
    arrival, prompt, output = workload.sample()
    cap = float("inf") if kv_capacity_tokens is None else require_int(kv_capacity_tokens, "kv_capacity_tokens", 1)
    need = prompt + output
    if np.any(need > cap):
        raise ValidationError("kv_capacity_tokens", f"a request of {int(need.max())} tokens exceeds the KV room "
                              f"of {int(cap)} tokens", "more GPUs, fewer KV bits or shorter requests")
    run = _simulate_static if policy == "static" else _simulate_continuous
    start, first, finish, slot, iters = run(cost, arrival, prompt, output, max_batch, cap)
    return SimResult(policy=policy, max_batch=max_batch, arrival=arrival, start=start, first_token=first,
                     finish=finish, slot=slot, prompt=prompt, output=output, iterations=iters)


def _step_times(cost: StepCost, batch: int, contexts: np.ndarray) -> np.ndarray:
    """Vectorized :meth:`StepCost.decode_step` over an array of contexts."""
    compute = (cost.flops_per_token * batch + cost.attn_flops_per_pair * batch * contexts) / (cost.n_gpus * cost.peak_flops)
    memory = (cost.weight_bytes + cost.kv_bytes_per_token * batch * contexts) / (cost.n_gpus * cost.bandwidth)
    return np.maximum(compute, memory) + cost.step_overhead_s


def _simulate_static(cost, arrival, prompt, output, max_batch, cap):
    n = arrival.size
    start, first, finish, slot = (np.zeros(n) for _ in range(4))
    t, i, iters = 0.0, 0, 0
    while i < n:
        t = max(t, arrival[i])
        j = int(np.searchsorted(arrival, t, side="right"))
        b = max(1, min(j - i, max_batch))
        p_max, o_max = int(prompt[i:i + b].max()), int(output[i:i + b].max())
        while b > 1 and b * (p_max + o_max) > cap:        # padded reservation must fit the KV room
            b -= 1
            p_max, o_max = int(prompt[i:i + b].max()), int(output[i:i + b].max())
        idx = np.arange(i, i + b)
        t_first = t + cost.prefill(p_max, b)
        steps = np.cumsum(_step_times(cost, b, p_max + np.arange(1, o_max))) + t_first
        start[idx], first[idx], slot[idx] = t, t_first, np.arange(b)
        finish[idx] = np.where(output[idx] > 1, steps[np.maximum(output[idx] - 2, 0)] if steps.size else t_first,
                               t_first)
        t = steps[-1] if steps.size else t_first
        iters += o_max
        i += b
    return start, first, finish, slot, iters


def _simulate_continuous(cost, arrival, prompt, output, max_batch, cap):
    """Event loop in plain floats: every running request gains one token per iteration, so its context
    and remaining tokens follow from the iteration count alone (``ctx_sum = K + batch × it``) and
    finishes come off a heap; no per-iteration array work on the batch."""
    n = arrival.size
    start, first, finish, slot = (np.zeros(n) for _ in range(4))
    arr, pro, out = arrival.tolist(), prompt.tolist(), output.tolist()
    per_token_c = cost.flops_per_token / (cost.n_gpus * cost.peak_flops)
    per_pair_c = cost.attn_flops_per_pair / (cost.n_gpus * cost.peak_flops)
    weights_m = cost.weight_bytes / (cost.n_gpus * cost.bandwidth)
    per_kv_m = cost.kv_bytes_per_token / (cost.n_gpus * cost.bandwidth)
    overhead = cost.step_overhead_s
    waiting: deque[int] = deque()
    ends: list[tuple[int, int, int]] = []      # heap of (iteration it finishes at, join order, request)
    joined_at = [0] * n
    free_slots = list(range(max_batch - 1, -1, -1))
    reserved = 0.0
    batch, k_sum = 0, 0.0                       # running requests; Σ (prompt + 1 − iteration joined)
    t, it, nxt, done, order = 0.0, 0, 0, 0, 0
    while done < n:
        while nxt < n and arr[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        joined = []
        while waiting and free_slots and reserved + pro[waiting[0]] + out[waiting[0]] <= cap:
            r = waiting.popleft()
            reserved += pro[r] + out[r]
            joined.append(r)
            start[r], slot[r] = t, free_slots.pop()
        if batch == 0 and not joined:
            t = arr[nxt]
            continue
        ctx_sum = k_sum + batch * it
        if joined:                                       # one iteration: prefill newcomers + one decode step
            p_sum = float(sum(pro[r] for r in joined))
            pairs = sum(pro[r] * (pro[r] + 1) / 2 for r in joined) + ctx_sum
            t += max(per_token_c * (p_sum + batch) + per_pair_c * pairs,
                     weights_m + per_kv_m * (p_sum + ctx_sum)) + overhead
            it += 1
            for r in joined:
                first[r] = t
                joined_at[r] = it
                k_sum += pro[r] + 1 - it
                heapq.heappush(ends, (it + out[r] - 1, order, r))
                order += 1
            batch += len(joined)
        else:                                            # pure decode: fast-forward until a finish or a join
            k = ends[0][0] - it
            join_at = arr[nxt] if (not waiting and free_slots and nxt < n) else None
            if k > 16:
                times = np.cumsum(_step_times(cost, batch, ctx_sum / batch + np.arange(k)))
                if join_at is not None:                  # the next arrival joins after the step it lands in
                    k = min(k, int(np.searchsorted(t + times, join_at, side="left")) + 1)
                t += float(times[k - 1])
            else:
                elapsed, steps = 0.0, 0
                while steps < k:
                    c = ctx_sum + batch * steps
                    elapsed += max(per_token_c * batch + per_pair_c * c, weights_m + per_kv_m * c) + overhead
                    steps += 1
                    if join_at is not None and t + elapsed >= join_at:
                        break
                k = steps
                t += elapsed
            it += k
        while ends and ends[0][0] <= it:
            _, _, r = heapq.heappop(ends)
            finish[r] = t
            free_slots.append(int(slot[r]))
            reserved -= pro[r] + out[r]
            k_sum -= pro[r] + 1 - joined_at[r]
            batch -= 1
            done += 1
    return start, first, finish, slot, it


@dataclass(frozen=True)
class LatencyTarget:
    """Service-level objective on the 90th percentiles of TTFT and TPOT (DistServe-style)."""

    ttft_p90_s: float = 2.0
    tpot_p90_s: float = 0.10

    def __post_init__(self) -> None:
        require_number(self.ttft_p90_s, "ttft_p90_s", 0, 3600, lo_open=True)
        require_number(self.tpot_p90_s, "tpot_p90_s", 0, 60, lo_open=True)

    def met_by(self, result) -> bool:
        """Whether a finite run (:class:`SimResult`) or a steady state (``SteadyState``) meets both p90s."""
        if hasattr(result, "meets"):
            return result.meets(self)
        return result.percentile("ttft", 90) <= self.ttft_p90_s and result.percentile("tpot", 90) <= self.tpot_p90_s


