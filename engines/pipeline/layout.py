"""Tensor-parallel split steps of one transformer block, and the DP × TP × PP rank grid.

Tensor parallelism (Shoeybi et al., "Megatron-LM", arXiv 1909.08053 §3): the first GEMM of each
block is split by columns (attention: Q/K/V by heads; MLP: W1, so GeLU stays local), the second by
rows (attention output projection; MLP W2). Each block then needs one all-reduce in the forward
pass (operator f̄) and one in the backward pass (operator f): 2 all-reduces per layer forward,
4 forward + backward.

Sequence parallelism (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
Models", arXiv 2205.05198 §4.2.2): LayerNorm and dropout run on a 1/t slice of the sequence; the
all-reduce becomes g (all-gather forward, reduce-scatter backward) before the column GEMM and
ḡ (reduce-scatter forward, all-gather backward) after the row GEMM: 4 all-gathers and
4 reduce-scatters per layer forward + backward, the same bytes as TP's all-reduces because a ring
all-reduce is a reduce-scatter followed by an all-gather (Patarasuk & Yuan 2009).

Ring traffic per GPU for a tensor of S bytes over t GPUs: all-reduce 2(t−1)/t·S; all-gather and
reduce-scatter (t−1)/t·S each (NCCL performance notes).

Rank grid: Megatron-LM's default order "tp-cp-ep-dp-pp" (``megatron/core/parallel_state.py``), so
rank = tp_rank + tp·(dp_rank + dp·pp_rank): TP neighbours are adjacent ranks and land inside a node,
which is why TP is confined to the NVLink domain (Narayanan et al., arXiv 2104.04473 §3.3).
"""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require, require_int

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter")


@dataclass(frozen=True)
class TPStep:
    """One step of a tensor-parallel transformer block, as drawn in the TP view."""

    phase: str            # "forward" or "backward"
    region: str           # "attention" or "mlp"
    label: str            # short text on screen
    kind: str             # "replicated", "sequence-shard", "column", "row", "local" or "collective"
    shape_per_gpu: str    # the tensor each GPU holds after the step, e.g. "b × s × 4h/t"
    collective: str | None = None    # one of COLLECTIVES
    operator: str | None = None      # f, f̄, g or ḡ (Megatron / Korthikanti notation)
    bytes_per_gpu: float = 0.0       # ring traffic each GPU sends for this collective


def ring_bytes(collective: str, size_bytes: float, t: int) -> float:
    """Bytes each GPU sends in a ring collective over ``t`` GPUs for a tensor of ``size_bytes``."""
    if t <= 1:
        return 0.0
    factor = 2 * (t - 1) / t if collective == "all-reduce" else (t - 1) / t
    return factor * size_bytes


def tp_layer_steps(tp: int, sequence_parallel: bool = False, hidden: int = 4096, ffn: int = 16384,
                   seq_len: int = 4096, micro_batch: int = 1, bytes_per_value: int = 2,
                   backward: bool = True) -> list[TPStep]:
    """The forward (and backward) steps of one transformer block split across ``tp`` GPUs."""
    t = require_int(tp, "tp", 1, 1024)
    require(not sequence_parallel or t > 1, "sequence_parallel", "sequence parallelism needs TP > 1",
            "off when tp = 1")
    h = require_int(hidden, "hidden", 1)
    f = require_int(ffn, "ffn", 1)
    s = require_int(seq_len, "seq_len", 1)
    b = require_int(micro_batch, "micro_batch", 1)
    activation = b * s * h * require_int(bytes_per_value, "bytes_per_value", 1, 8)
    full = "b × s × h"
    shard = "b × s/t × h"
    inp = shard if sequence_parallel else full

    def comm(phase: str, region: str, op: str) -> TPStep:
        coll = {("forward", "f"): None, ("forward", "f̄"): "all-reduce",
                ("backward", "f"): "all-reduce", ("backward", "f̄"): None,
                ("forward", "g"): "all-gather", ("forward", "ḡ"): "reduce-scatter",
                ("backward", "g"): "reduce-scatter", ("backward", "ḡ"): "all-gather"}[(phase, op)]
        after = {"all-reduce": full, "all-gather": full, "reduce-scatter": shard, None: full}[coll]
        text = f"{op}: {coll}" if coll else f"{op}: identity"
        return TPStep(phase, region, text, "collective" if coll else "local", after, coll, op,
                      ring_bytes(coll, activation, t) if coll and t > 1 else 0.0)

    enter, leave = ("g", "ḡ") if sequence_parallel else ("f", "f̄")
    norm_kind = "sequence-shard" if sequence_parallel else "replicated"
    fwd: list[TPStep] = []
    for region, first, act, second in (
            ("attention", "Q, K, V columns (heads/t per GPU)", "self-attention on own heads",
             "output projection rows → partial sums"),
            ("mlp", "W1 columns", "GeLU / SwiGLU locally", "W2 rows → partial sums")):
        fwd.append(TPStep("forward", region, "LayerNorm" + (" on s/t tokens" if sequence_parallel else " (replicated)"),
                          norm_kind, inp))
        fwd.append(comm("forward", region, enter))
        width = "b × s × (heads/t)·d" if region == "attention" else f"b × s × {f}/t"
        fwd.append(TPStep("forward", region, first, "column", width))
        fwd.append(TPStep("forward", region, act, "local", width))
        fwd.append(TPStep("forward", region, second, "row", f"{full} (partial)"))
        fwd.append(comm("forward", region, leave))
        fwd.append(TPStep("forward", region, "dropout + residual" + (" on s/t tokens" if sequence_parallel else ""),
                          norm_kind, inp))
    if not backward:
        return fwd
    bwd: list[TPStep] = []
    for region in ("mlp", "attention"):
        bwd.append(comm("backward", region, leave))
        bwd.append(TPStep("backward", region, "row GEMM backward (weight grad local)", "row", f"{full} (grad)"))
        bwd.append(TPStep("backward", region, "column GEMM backward → partial input grads", "column",
                          f"{full} (partial grad)"))
        bwd.append(comm("backward", region, enter))
    return fwd + bwd


def collective_counts(steps: list[TPStep]) -> dict[str, dict[str, int]]:
    """How many of each collective the steps contain, per phase."""
    out = {ph: {c: 0 for c in COLLECTIVES} for ph in ("forward", "backward")}
    for st in steps:
        if st.collective:
            out[st.phase][st.collective] += 1
    return out


def verify_tp_split(tp: int, hidden: int = 32, ffn: int = 64, heads: int = 4, tokens: int = 6,
                    seed: int = 0) -> dict[str, float]:
    """Numerically check the column-then-row split: the sum of the t partial outputs (the
    all-reduce) equals the unsplit block. Returns the max abs error for the MLP and the attention."""
    import numpy as np

    t = require_int(tp, "tp", 1, 64)
    require(ffn % t == 0, "tp", f"TP {t} does not divide ffn {ffn}", "a divisor of ffn")
    require(heads % t == 0, "tp", f"TP {t} does not divide {heads} heads", "a divisor of the head count")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, hidden))
    w1 = rng.standard_normal((hidden, ffn)) / hidden ** 0.5
    w2 = rng.standard_normal((ffn, hidden)) / ffn ** 0.5

    def gelu(z):
        return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))

    full_mlp = gelu(x @ w1) @ w2
    cols = np.split(np.arange(ffn), t)
    split_mlp = sum(gelu(x @ w1[:, c]) @ w2[c, :] for c in cols)  # all-reduce = sum of partials

    d = hidden // heads
    wq, wk, wv, wo = (rng.standard_normal((hidden, hidden)) / hidden ** 0.5 for _ in range(4))

    def attend(head_ids):
        cols_h = np.concatenate([np.arange(i * d, (i + 1) * d) for i in head_ids])
        out = np.zeros((tokens, hidden))
        for i in head_ids:
            sl = slice(i * d, (i + 1) * d)
            q, k, v = x @ wq[:, sl], x @ wk[:, sl], x @ wv[:, sl]
            a = q @ k.T / np.sqrt(d)
            a = np.exp(a - a.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            out[:, sl] = a @ v
        return out[:, cols_h] @ wo[cols_h, :]

    full_attn = attend(range(heads))
    per = heads // t
    split_attn = sum(attend(range(g * per, (g + 1) * per)) for g in range(t))
    return {"mlp": float(np.abs(full_mlp - split_mlp).max()), "attention": float(np.abs(full_attn - split_attn).max())}


# ---------------------------------------------------------------------------------------------
# 3D layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankPlace:
    rank: int
    node: int
    tp_rank: int
    dp_rank: int
    pp_rank: int


@dataclass(frozen=True)
class Group:
    """A communication group: its members and whether they share a node (NVLink) or not."""

    kind: str              # "tp", "dp" or "pp"
    members: tuple[int, ...]
    intra_node: bool

    @property
    def link(self) -> str:
        return "NVLink (inside a node)" if self.intra_node else "network (across nodes)"


@dataclass(frozen=True)
class Layout3D:
    n_gpus: int
    tp: int
    pp: int
    dp: int
    gpus_per_node: int
    ranks: tuple[RankPlace, ...]
    groups: tuple[Group, ...]

    @property
    def n_nodes(self) -> int:
        return -(-self.n_gpus // self.gpus_per_node)

    def place(self, tp_rank: int, dp_rank: int, pp_rank: int) -> RankPlace:
        return self.ranks[tp_rank + self.tp * (dp_rank + self.dp * pp_rank)]

    def summary(self) -> dict[str, dict[str, int]]:
        """Per group kind: how many groups, and how many stay inside one node."""
        out: dict[str, dict[str, int]] = {}
        for kind in ("tp", "dp", "pp"):
            gs = [g for g in self.groups if g.kind == kind]
            out[kind] = {"groups": len(gs), "size": len(gs[0].members) if gs else 0,
                         "intra_node": sum(g.intra_node for g in gs)}
        return out


def rank_grid(n_gpus: int, tp: int, pp: int, gpus_per_node: int = 8) -> Layout3D:
    """Place every rank on (tp, dp, pp) coordinates in Megatron's order and list its groups."""
    n = require_int(n_gpus, "n_gpus", 1, 1_000_000)
    t = require_int(tp, "tp", 1, 1024)
    p = require_int(pp, "pp", 1, 1024)
    g = require_int(gpus_per_node, "gpus_per_node", 1, 64)
    require(n % (t * p) == 0, "n_gpus", f"{n} GPUs cannot be split into TP {t} × PP {p}", "a multiple of tp × pp")
    dp = n // (t * p)
    places = []
    for rank in range(n):
        places.append(RankPlace(rank, rank // g, rank % t, (rank // t) % dp, rank // (t * dp)))

    def group(kind: str, members: list[int]) -> Group:
        return Group(kind, tuple(members), len({m // g for m in members}) == 1)

    groups = []
    for pr in range(p):
        for dr in range(dp):
            groups.append(group("tp", [tr + t * (dr + dp * pr) for tr in range(t)]))
    for pr in range(p):
        for tr in range(t):
            groups.append(group("dp", [tr + t * (dr + dp * pr) for dr in range(dp)]))
    for dr in range(dp):
        for tr in range(t):
            groups.append(group("pp", [tr + t * (dr + dp * pr) for pr in range(p)]))
    return Layout3D(n, t, p, dp, g, tuple(places), tuple(groups))


def layout_from_scenario(scenario) -> Layout3D:
    """The grid for the scenario's GPU count, TP, PP and node size."""
    return rank_grid(scenario.n_gpus, scenario.tp, scenario.pp, scenario.gpus_per_node)
