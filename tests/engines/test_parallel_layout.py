"""Tensor-parallel split steps and the 3D rank grid."""
from __future__ import annotations

import pytest

from engines.core.errors import ValidationError
from engines.pipeline.layout import collective_counts, rank_grid, ring_bytes, tp_layer_steps, verify_tp_split


def test_tp_has_two_all_reduces_forward_four_total():
    """Shoeybi et al. 2019 §3: f̄ in the forward of each of attention and MLP; f in the backward."""
    counts = collective_counts(tp_layer_steps(8))
    assert counts["forward"] == {"all-reduce": 2, "all-gather": 0, "reduce-scatter": 0}
    assert counts["backward"]["all-reduce"] == 2
    ops = [s.operator for s in tp_layer_steps(8, backward=False) if s.collective]
    assert ops == ["f̄", "f̄"]


def test_sequence_parallel_swaps_all_reduce_for_gather_and_scatter():
    """Korthikanti et al. 2022 §4.2.2: 4 all-gathers + 4 reduce-scatters per layer forward + backward."""
    counts = collective_counts(tp_layer_steps(4, sequence_parallel=True))
    total = {c: counts["forward"][c] + counts["backward"][c] for c in counts["forward"]}
    assert total == {"all-reduce": 0, "all-gather": 4, "reduce-scatter": 4}
    assert counts["forward"]["all-gather"] == 2 and counts["forward"]["reduce-scatter"] == 2


def test_sequence_parallel_moves_the_same_bytes_as_tp():
    kw = dict(hidden=4096, seq_len=2048, micro_batch=2)
    tp = sum(s.bytes_per_gpu for s in tp_layer_steps(8, **kw))
    sp = sum(s.bytes_per_gpu for s in tp_layer_steps(8, sequence_parallel=True, **kw))
    assert tp == pytest.approx(sp)
    # one forward all-reduce of b·s·h bf16 values: 2(t−1)/t × 2·2048·4096·2 bytes
    ar = [s for s in tp_layer_steps(8, backward=False, **kw) if s.collective][0]
    assert ar.bytes_per_gpu == pytest.approx(2 * 7 / 8 * 2 * 2048 * 4096 * 2)


def test_ring_bytes():
    assert ring_bytes("all-reduce", 100.0, 4) == pytest.approx(150.0)
    assert ring_bytes("all-gather", 100.0, 4) == pytest.approx(75.0)
    assert ring_bytes("all-reduce", 100.0, 1) == 0.0


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_column_then_row_split_is_exact(tp):
    err = verify_tp_split(tp)
    assert err["mlp"] < 1e-12 and err["attention"] < 1e-12


def test_split_rejects_non_divisors():
    with pytest.raises(ValidationError):
        verify_tp_split(3, heads=4)
    with pytest.raises(ValidationError):
        tp_layer_steps(1, sequence_parallel=True)


def test_rank_grid_megatron_order_and_links():
    """64 GPUs, TP 8, PP 4 → DP 2; 8 GPUs a node: every TP group inside a node, DP/PP across."""
    lay = rank_grid(64, tp=8, pp=4, gpus_per_node=8)
    assert lay.dp == 2 and lay.n_nodes == 8
    assert lay.place(3, 1, 2).rank == 3 + 8 * (1 + 2 * 2)
    s = lay.summary()
    assert s["tp"] == {"groups": 8, "size": 8, "intra_node": 8}
    assert s["dp"] == {"groups": 32, "size": 2, "intra_node": 0}
    assert s["pp"] == {"groups": 16, "size": 4, "intra_node": 0}
    members = sorted(m for g in lay.groups if g.kind == "pp" for m in g.members)
    assert members == list(range(64))  # every rank is in exactly one PP group


def test_rank_grid_small_dp_inside_node():
    lay = rank_grid(16, tp=2, pp=2, gpus_per_node=8)
    s = lay.summary()
    assert s["dp"]["intra_node"] == s["dp"]["groups"] == 4  # DP 4 × TP 2 = 8 ranks share a node
    assert s["pp"]["intra_node"] == 0


def test_rank_grid_validation():
    with pytest.raises(ValidationError) as err:
        rank_grid(12, tp=8, pp=1)
    assert err.value.field == "n_gpus"
