"""Pipeline-parallel schedules (per-rank action orders) and a dependency-driven simulator.

Schedules (p pipeline ranks, m micro-batches, v model chunks per rank):

* ``gpipe`` – all forwards, then all backwards (Huang et al., "GPipe", NeurIPS'19, arXiv 1811.06965).
* ``1f1b`` – PipeDream-Flush: rank r runs min(m, p−r) warm-up forwards, then (B, F) pairs, then
  drains (Narayanan et al., "PipeDream-2BW", arXiv 2006.09503; the order torch's
  ``Schedule1F1B._step_microbatches`` executes).
* ``interleaved-1f1b`` – v chunks per rank, model stage s on rank s mod p; rank r warms up with
  (v−1)·p + 2(p−1−r) chunk forwards, then alternates F and B, depth first (Narayanan et al.,
  "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21,
  arXiv 2104.04473 §2.2; Megatron-LM ``forward_backward_pipelining_with_interleaving``).
* ``zb-h1`` – the backward split into I (input gradient, on the critical path) and W (weight
  gradient, deferrable); rank r defers its first r weight passes to the end, filling the drain
  bubble at 1F1B's peak memory (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24,
  arXiv 2401.10241 §3.1; Megatron-DeepSpeed ``ZeroBubbleH1Pipeline``).
* ``zb-v`` – two chunks per rank in a V: rank r holds stages r and 2p−1−r, so the last stage sits
  on rank 0 next to the first; with T_F = T_B = T_W the bubble is zero beyond the fill, at 1F1B's
  peak memory (Qi et al. §6; the handcrafted order of torch's ``ScheduleZBVZeroBubble``).

Bubble formulas (both denominators, see :func:`bubble_formulas`): GPipe reports bubble over
*total* time (p−1)/(m+p−1); Megatron reports bubble over *ideal* time (p−1)/m, and (p−1)/(v·m)
interleaved; Zero Bubble gives bubble *time* (p−1)(T_F+T_B+T_W) for 1F1B and
(p−1)(T_F+T_B−T_W) for ZB-H1.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

from engines.core.errors import ValidationError, require, require_choice, require_int, require_number

KINDS = ("gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-v")
OPS = ("F", "B", "I", "W")
MAX_STAGES = 64
MAX_MICROBATCHES = 512
MAX_CHUNKS = 16
MAX_SECONDS = 1e12
"""Longest op duration or time stamp (s, ~31,700 years): makespans and bubble ratios stay finite."""


@dataclass(frozen=True, order=True)
class Action:
    """One unit of work on a rank: ``op`` of model stage ``stage`` for micro-batch ``microbatch``."""

    stage: int
    op: str
    microbatch: int

    def __str__(self) -> str:  # torch's notation, e.g. "2F5"
        return f"{self.stage}{self.op}{self.microbatch}"


def schedule(kind: str, stages: int, microbatches: int, chunks: int = 1) -> list[list[Action]]:
    """Per-rank action orders: one list per pipeline rank (``stages`` = p ranks, p·chunks model stages).

    Raises :class:`ValidationError` naming the rule for invalid combinations.
    """
    require_choice(kind, "kind", KINDS)
    p = require_int(stages, "stages", 1, MAX_STAGES)
    m = require_int(microbatches, "microbatches", 1, MAX_MICROBATCHES)
    v = require_int(chunks, "chunks", 1, MAX_CHUNKS)
    if kind == "interleaved-1f1b":
        require(v >= 2, "chunks", f"interleaving needs at least 2 chunks per rank, got {v} (use 1f1b)",
                f"2…{MAX_CHUNKS}")
        require(m % p == 0, "microbatches",
                f"interleaved 1F1B needs m to be a multiple of p (Megatron-LM rule); m={m}, p={p}",
                f"a multiple of {p}")
        return [_interleaved_rank(r, p, m, v) for r in range(p)]
    if kind == "zb-v":
        require(v == 2, "chunks", f"ZB-V runs exactly 2 chunks per rank (a V), got {v}", "2")
        return [_zb_v_rank(r, p, m) for r in range(p)]
    require(v == 1, "chunks", f"{kind} runs one model chunk per rank, got {v}", "1")
    if kind == "gpipe":
        return [[Action(r, "F", i) for i in range(m)] + [Action(r, "B", i) for i in range(m)] for r in range(p)]
    if kind == "1f1b":   # m < p runs too: every forward is warm-up (Megatron: min(p − r − 1, m))
        return [_one_f_one_b_rank(r, p, m) for r in range(p)]
    require(m >= p, "stages",
            f"{kind} needs at least as many micro-batches as stages (p ≤ m); p={p}, m={m}",
            f"1…{m} for m={m}, or raise microbatches to ≥ {p}")
    return [_zb_h1_rank(r, p, m) for r in range(p)]


def _one_f_one_b_rank(r: int, p: int, m: int) -> list[Action]:
    """min(m, p−r) warm-up forwards, then (B, F) pairs, then the remaining backwards."""
    warm = min(m, p - r)
    acts = [Action(r, "F", i) for i in range(warm)]
    nxt = warm
    for b in range(m):
        acts.append(Action(r, "B", b))
        if nxt < m:
            acts.append(Action(r, "F", nxt))
            nxt += 1
    return acts


def _zb_h1_rank(r: int, p: int, m: int) -> list[Action]:
    """ZB-H1 on rank r: p−r−1 forwards; r (F, I) pairs with W deferred; (F, I, W) steady state;
    (I, W) drain; finally the r deferred W passes fill the end bubble."""
    acts = [Action(r, "F", i) for i in range(p - r - 1)]
    f, b, w = p - r - 1, 0, 0
    for _ in range(r):  # FB section: weight passes postponed
        acts += [Action(r, "F", f), Action(r, "I", b)]
        f, b = f + 1, b + 1
    while f < m:  # FBW section
        acts += [Action(r, "F", f), Action(r, "I", b), Action(r, "W", w)]
        f, b, w = f + 1, b + 1, w + 1
    while b < m:  # BW section
        acts += [Action(r, "I", b), Action(r, "W", w)]
        b, w = b + 1, w + 1
    acts += [Action(r, "W", i) for i in range(w, m)]
    return acts


def _zb_v_rank(r: int, p: int, m: int) -> list[Action]:
    """ZB-V on rank r (chunks c0 = stage r, c1 = stage 2p−1−r): 2(p−r)−1 c0 forwards; r (c1 F,
    c0 F) pairs; p−r (c1 F, I, W); steady (c0 F, I, W, c1 F, I, W); drain r (c0 I, c1 I) and p−r
    (c0 I, W); then the postponed W's. Planned for max(m, 2p−1) micro-batches, extra ones dropped."""
    n = max(m, 2 * p - 1)
    c0, c1 = r, 2 * p - 1 - r
    acts: list[Action] = []
    f0 = f1 = b0 = b1 = 0
    for _ in range(2 * (p - r) - 1):
        acts.append(Action(c0, "F", f0))
        f0 += 1
    for _ in range(r):
        acts += [Action(c1, "F", f1), Action(c0, "F", f0)]
        f0, f1 = f0 + 1, f1 + 1
    for _ in range(p - r):
        acts += [Action(c1, "F", f1), Action(c1, "I", b1), Action(c1, "W", b1)]
        f1, b1 = f1 + 1, b1 + 1
    while f1 < f0 or f0 < n:
        if f0 < n:
            acts.append(Action(c0, "F", f0))
            f0 += 1
        acts += [Action(c0, "I", b0), Action(c0, "W", b0), Action(c1, "F", f1), Action(c1, "I", b1),
                 Action(c1, "W", b1)]
        b0, f1, b1 = b0 + 1, f1 + 1, b1 + 1
    w0, w1 = b0, b1
    for _ in range(r):
        acts += [Action(c0, "I", b0), Action(c1, "I", b1)]
        b0, b1 = b0 + 1, b1 + 1
    for _ in range(p - r):
        acts += [Action(c0, "I", b0), Action(c0, "W", w0)]
        b0, w0 = b0 + 1, w0 + 1
    acts += [Action(c1, "W", i) for i in range(w1, b1)]
    acts += [Action(c0, "W", i) for i in range(w0, b0)]
    return [a for a in acts if a.microbatch < m]


def _interleaved_rank(r: int, p: int, m: int, v: int) -> list[Action]:
    """Megatron's interleaved order: the k-th forward is chunk (k // p) mod v, micro-batch
    (k // (p·v))·p + k mod p; backwards walk the chunks in reverse. Warm-up is capped at m·v as in
    torch's ``ScheduleInterleaved1F1B``: at m = p Megatron instead runs every forward first (its
    ``num_warmup_microbatches = total_num_microbatches``); both orders are valid, with the same bubble."""
    total = m * v
    warm = min((v - 1) * p + 2 * (p - 1 - r), total)

    def fwd(k: int) -> Action:
        chunk = (k // p) % v
        return Action(chunk * p + r, "F", (k // (p * v)) * p + k % p)

    def bwd(k: int) -> Action:
        chunk = v - 1 - (k // p) % v
        return Action(chunk * p + r, "B", (k // (p * v)) * p + k % p)

    acts = [fwd(k) for k in range(warm)]
    for i in range(total - warm):
        acts += [fwd(warm + i), bwd(i)]
    acts += [bwd(k) for k in range(total - warm, total)]
    return acts


def stage_to_rank(ranks: list[list[Action]]) -> dict[int, int]:
    """Which rank runs each model stage, read from the orders (one rank per stage)."""
    where: dict[int, int] = {}
    for r, acts in enumerate(ranks):
        for a in acts:
            if where.setdefault(a.stage, r) != r:
                raise ValidationError("ranks", f"stage {a.stage} appears on ranks {where[a.stage]} and {r}",
                                      "each model stage on exactly one rank")
    return where


def check_orders(ranks: list[list[Action]]) -> tuple[int, int]:
    """Validate that every (stage, micro-batch) has one F and one backward (B, or I then W).

    Returns (number of model stages, number of micro-batches).
    """
    require(isinstance(ranks, (list, tuple)) and len(ranks) > 0, "ranks", "need at least one rank",
            "a list of per-rank action lists")
    seen: dict[tuple[int, int, str], int] = {}
    for acts in ranks:
        if not isinstance(acts, (list, tuple)):
            raise ValidationError("ranks", f"a rank's orders must be a list, got {acts!r}", "a list of Actions")
        for a in acts:  # plain ifs: building messages eagerly would dominate the run time
            if not isinstance(a, Action):
                raise ValidationError("ranks", f"{a!r} is not an Action", "engines.pipeline.Action")
            if type(a.stage) is not int or type(a.microbatch) is not int or a.stage < 0 or a.microbatch < 0:
                raise ValidationError("ranks", f"{a!r}: stage and micro-batch must be integers ≥ 0", "integers ≥ 0")
            if a.op not in OPS:
                raise ValidationError("ranks", f"unknown op {a.op!r} in {a}", ", ".join(OPS))
            key = (a.stage, a.microbatch, a.op)
            if key in seen:
                raise ValidationError("ranks", f"{a} appears twice", "each action once")
            seen[key] = 1
    require(bool(seen), "ranks", "no actions to run", "at least one F and its backward")
    stage_to_rank(ranks)
    n_stages = 1 + max(s for s, _, _ in seen)
    n_mb = 1 + max(mb for _, mb, _ in seen)
    for s in range(n_stages):
        for mb in range(n_mb):
            has = {op for op in OPS if (s, mb, op) in seen}
            if has not in ({"F", "B"}, {"F", "I", "W"}):
                raise ValidationError("ranks", f"stage {s} micro-batch {mb} needs one F and one B, or an F, "
                                      f"an I and a W; has {sorted(has)}", "F + B, or F + I + W")
    return n_stages, n_mb


# ---------------------------------------------------------------------------------------------
# Simulation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimedOp:
    """An action placed in time on its rank."""

    rank: int
    action: Action
    start: float
    end: float


@dataclass
class Simulation:
    """Result of :func:`simulate`: every op's start/end, bubble under both definitions, memory.

    ``bubble_fraction`` is idle over total rank-time (GPipe's denominator);
    ``bubble_over_ideal`` is idle over busy time (Megatron's t_pb / t_id).
    ``in_flight[r]`` is a step function [(time, count), ...]: micro-batch-chunks whose forward
    has started and whose backward (B, or W when split) has not finished.
    """

    ops: list[TimedOp]
    makespan: float
    busy: list[float]
    bubble_fraction: float
    bubble_over_ideal: float
    in_flight: list[list[tuple[float, int]]]
    peak_in_flight: list[int]
    costs: dict[str, float] = field(default_factory=dict)

    @property
    def n_ranks(self) -> int:
        return len(self.busy)

    def in_flight_at(self, rank: int, t: float) -> int:
        """In-flight count on ``rank`` at time ``t`` (the step function evaluated)."""
        count = 0
        for time, c in self.in_flight[rank]:
            if time > t:
                break
            count = c
        return count

    def rows(self) -> list[dict]:
        """Flat rows for CSV export."""
        return [{"rank": o.rank, "action": str(o.action), "op": o.action.op, "stage": o.action.stage,
                 "microbatch": o.action.microbatch, "start": o.start, "end": o.end} for o in self.ops]


def op_costs(t_f: float = 1.0, t_b: float = 2.0, t_i: float | None = None, t_w: float | None = None) -> dict[str, float]:
    """Per-op durations. Unless given, the split backward halves B: I = W = t_b / 2."""
    t_f = require_number(t_f, "t_f", 0, MAX_SECONDS, lo_open=True)
    t_b = require_number(t_b, "t_b", 0, MAX_SECONDS, lo_open=True)
    if t_i is None and t_w is None:
        t_i = t_w = t_b / 2
    elif t_i is None:
        t_w = require_number(t_w, "t_w", 0, MAX_SECONDS, lo_open=True)
        t_i = t_b - t_w
        require(t_i > 0, "t_w", f"t_w {t_w:g} leaves no input-gradient time out of t_b {t_b:g}", f"< {t_b:g}")
    elif t_w is None:
        t_i = require_number(t_i, "t_i", 0, MAX_SECONDS, lo_open=True)
        t_w = t_b - t_i
        require(t_w > 0, "t_i", f"t_i {t_i:g} leaves no weight-gradient time out of t_b {t_b:g}", f"< {t_b:g}")
    t_i = require_number(t_i, "t_i", 0, MAX_SECONDS, lo_open=True)
    t_w = require_number(t_w, "t_w", 0, MAX_SECONDS, lo_open=True)
    return {"F": t_f, "B": t_b, "I": t_i, "W": t_w}


def simulate(ranks: list[list[Action]], t_f: float = 1.0, t_b: float = 2.0, t_i: float | None = None,
             t_w: float | None = None, t_comm: float = 0.0) -> Simulation:
    """Run the orders: each rank executes its list strictly in sequence, each op starting as soon
    as the rank is free and its inputs have arrived.

    Dependencies: F(s, mb) after F(s−1, mb); B/I(s, mb) after F(s, mb) and after B/I(s+1, mb);
    W(s, mb) after I(s, mb). ``t_comm`` is added when the producer is on another rank. Costs are
    per action (per chunk when v > 1). A deadlocking order raises :class:`ValidationError`.
    """
    costs = op_costs(t_f, t_b, t_i, t_w)
    t_comm = require_number(t_comm, "t_comm", 0, MAX_SECONDS)
    n_stages, _ = check_orders(ranks)
    where = stage_to_rank(ranks)
    done: dict[tuple[int, str, int], float] = {}  # (stage, kind, mb) -> end time; kind F or G (grad)
    pos = [0] * len(ranks)
    free = [0.0] * len(ranks)
    ops: list[TimedOp] = []
    remaining = sum(len(a) for a in ranks)

    def arrival(stage: int, kind: str, mb: int, rank: int) -> float | None:
        t = done.get((stage, kind, mb))
        if t is None:
            return None
        return t + (t_comm if where[stage] != rank else 0.0)

    while remaining:
        progressed = False
        for r, acts in enumerate(ranks):
            while pos[r] < len(acts):
                a = acts[pos[r]]
                deps: list[float | None] = []
                if a.op == "F":
                    if a.stage > 0:
                        deps.append(arrival(a.stage - 1, "F", a.microbatch, r))
                elif a.op in ("B", "I"):
                    deps.append(done.get((a.stage, "F", a.microbatch)))
                    if a.stage < n_stages - 1:
                        deps.append(arrival(a.stage + 1, "G", a.microbatch, r))
                else:  # W
                    deps.append(done.get((a.stage, "I", a.microbatch)))
                if any(d is None for d in deps):
                    break
                start = max([free[r], *deps])  # type: ignore[list-item]
                end = start + costs[a.op]
                ops.append(TimedOp(r, a, start, end))
                free[r] = end
                done[(a.stage, a.op, a.microbatch)] = end
                if a.op in ("B", "I"):
                    done[(a.stage, "G", a.microbatch)] = end
                pos[r] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            stuck = ", ".join(f"rank {r}: {acts[pos[r]]}" for r, acts in enumerate(ranks) if pos[r] < len(acts))
            raise ValidationError("ranks", f"the orders deadlock (waiting: {stuck})", "a dependency-respecting order")
    return _summarise(ops, len(ranks), costs)


def _summarise(ops: list[TimedOp], n_ranks: int, costs: dict[str, float]) -> Simulation:
    """Makespan, bubble (both denominators) and in-flight curves from placed ops."""
    ops = sorted(ops, key=lambda o: (o.rank, o.start))
    t0 = min(o.start for o in ops)
    makespan = max(o.end for o in ops) - t0
    busy = [0.0] * n_ranks
    split = {(o.action.stage, o.action.microbatch) for o in ops if o.action.op == "W"}
    events: list[list[tuple[float, int]]] = [[] for _ in range(n_ranks)]
    for o in ops:
        busy[o.rank] += o.end - o.start
        key = (o.action.stage, o.action.microbatch)
        if o.action.op == "F":
            events[o.rank].append((o.start - t0, +1))
        elif o.action.op == "B" or (o.action.op == "W" and key in split):
            events[o.rank].append((o.end - t0, -1))
    in_flight, peaks = [], []
    for ev in events:
        ev.sort(key=lambda e: (e[0], e[1]))  # frees before allocations at equal times
        steps, count, peak = [(0.0, 0)], 0, 0
        for t, d in ev:
            count += d
            peak = max(peak, count)
            if steps[-1][0] == t:
                steps[-1] = (t, count)
            else:
                steps.append((t, count))
        in_flight.append(steps)
        peaks.append(peak)
    total = makespan * n_ranks
    idle = total - sum(busy)
    return Simulation(ops=ops, makespan=makespan, busy=busy,
                      bubble_fraction=idle / total if total > 0 else 0.0,
                      bubble_over_ideal=idle / sum(busy) if sum(busy) > 0 else 0.0,
                      in_flight=in_flight, peak_in_flight=peaks, costs=dict(costs))


def timed_from_measurements(ops: list[TimedOp], n_ranks: int) -> Simulation:
    """Summarise measured ops (e.g. from the executed mode) exactly like a simulation."""
    n_ranks = require_int(n_ranks, "n_ranks", 1, MAX_STAGES)
    require(isinstance(ops, (list, tuple)), "ops", f"expected a list of TimedOp, got {type(ops).__name__}",
            "a list of TimedOp")
    require(len(ops) > 0, "ops", "no measured ops", "at least one")
    for o in ops:
        require(isinstance(o, TimedOp) and isinstance(o.action, Action), "ops", f"expected a TimedOp, got {o!r}",
                "a list of TimedOp")
        require(not isinstance(o.rank, bool) and isinstance(o.rank, Integral) and 0 <= o.rank < n_ranks, "ops",
                f"op {o.action} is on rank {o.rank!r}, outside the {n_ranks} ranks", f"rank 0…{n_ranks - 1}")
        start = require_number(o.start, "ops", -MAX_SECONDS, MAX_SECONDS)
        end = require_number(o.end, "ops", -MAX_SECONDS, MAX_SECONDS)
        require(end >= start, "ops", f"op {o.action} on rank {o.rank} ends ({end:g}) before it starts ({start:g})",
                "end ≥ start")
    return _summarise(list(ops), n_ranks, {})


# ---------------------------------------------------------------------------------------------
# Published formulas
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BubbleFormula:
    """A published bubble expression, its value for the given (p, m, v, costs) and its source."""

    name: str
    expression: str
    value: float
    denominator: str  # "ideal", "total" or "time"
    source: str


def bubble_formulas(kind: str, p: int, m: int, v: int = 1, t_f: float = 1.0, t_b: float = 2.0,
                    t_w: float | None = None) -> list[BubbleFormula]:
    """The paper formulas for ``kind`` (uniform per-stage costs; t_b is the full backward).

    GPipe (arXiv 1811.06965): (p−1)/(m+p−1) of total time. Megatron (arXiv 2104.04473 §2.2):
    (p−1)/m of ideal time, (p−1)/(v·m) interleaved. Zero Bubble (arXiv 2401.10241 §2–3): bubble
    time (p−1)(T_F+T_B+T_W) for 1F1B and (p−1)(T_F+T_B−T_W) for ZB-H1 (T_B = input-gradient part).
    """
    require_choice(kind, "kind", KINDS)
    p = require_int(p, "p", 1, MAX_STAGES)
    m = require_int(m, "m", 1, MAX_MICROBATCHES)
    v = require_int(v, "v", 1, MAX_CHUNKS)
    costs = op_costs(t_f, t_b, None, t_w)
    eff_v = v if kind == "interleaved-1f1b" else 1
    ideal = (p - 1) / (eff_v * m)
    out = [
        BubbleFormula("Megatron: bubble / ideal", "(p−1)/(v·m)" if eff_v > 1 else "(p−1)/m", ideal, "ideal",
                      "Narayanan et al. SC'21, arXiv 2104.04473"),
        BubbleFormula("GPipe: bubble / total", "x/(1+x) = (p−1)/(v·m+p−1)" if eff_v > 1 else "(p−1)/(m+p−1)",
                      ideal / (1 + ideal), "total", "Huang et al. NeurIPS'19, arXiv 1811.06965"),
    ]
    if kind == "zb-v":
        return [BubbleFormula("ZB-V: bubble beyond the fill", "≈ 0 when T_F = T_B = T_W", 0.0, "time",
                              "Qi et al. ICLR'24, arXiv 2401.10241 §6")]
    if kind == "zb-h1":
        tf, ti, tw = costs["F"], costs["I"], costs["W"]
        # The paper assumes T_W ≤ T_B; a heavier W cannot hide the last rank's wait for its first
        # forward, (p−1)·T_F, so that is the floor (the simulation shows it).
        zb_time = (p - 1) * (tf + max(0.0, ti - tw))
        busy = m * (tf + ti + tw)
        out = [
            BubbleFormula("ZB-H1 bubble time", "(p−1)(T_F+T_B−T_W), at least (p−1)·T_F", zb_time, "time",
                          "Qi et al. ICLR'24, arXiv 2401.10241"),
            BubbleFormula("ZB-H1: bubble / ideal", "(p−1)(T_F+T_B−T_W) / m(T_F+T_B+T_W)", zb_time / busy, "ideal",
                          "Qi et al. ICLR'24, arXiv 2401.10241"),
            BubbleFormula("1F1B for comparison: bubble / ideal", "(p−1)/m", (p - 1) / m, "ideal",
                          "Narayanan et al. SC'21, arXiv 2104.04473"),
        ]
    return out


def check_layers(layers: int, stages: int, chunks: int = 1) -> list[int]:
    """Layers per model stage when ``layers`` are cut into p·v stages (the first stages take the
    remainder). Every stage needs at least one layer."""
    layers = require_int(layers, "layers", 1)
    n = require_int(stages, "stages", 1, MAX_STAGES) * require_int(chunks, "chunks", 1, MAX_CHUNKS)
    require(n <= layers, "chunks" if chunks > 1 else "stages",
            f"{n} model stages (p·v) but only {layers} layers", f"p·v ≤ {layers}")
    base, extra = divmod(layers, n)
    return [base + (1 if s < extra else 0) for s in range(n)]
