"""engines.pipeline as a topic package: its Params, and what the panel shows computed Qt-free."""
from __future__ import annotations

import pytest

from engines.core.errors import Cancelled, ValidationError
from engines.core.params import defaults_of
from engines.pipeline import (KINDS, Costs, Params, ScheduleRequest, backward_split, chunks_for, compare_schedules,
                              in_ms, layout_study, schedule, schedule_request, simulate, timeline_marks, tp_study)
from engines.core.scenario import Scenario


def test_params_defaults_ranges_and_round_trip():
    p = Params()
    assert (p.left_kind, p.right_kind, p.v, p.t_f, p.t_b, p.w_share_pct, p.t_comm, p.hidden) == \
        ("1f1b", "interleaved-1f1b", 2, 1.0, 2.0, 50, 0.0, 256)
    assert Params(**defaults_of(Params)) == p and Params.from_dict(p.to_dict()) == p
    assert Params.spec("left_kind")["choices"] == KINDS
    for bad in ({"v": 1}, {"t_b": 9.0}, {"left_kind": "nope"}, {"w_share_pct": 95}, {"hidden": 8}):
        with pytest.raises(ValidationError, match=next(iter(bad))):
            Params(**bad)


def test_chunks_and_backward_split():
    assert [chunks_for(k, 4) for k in KINDS] == [1, 1, 4, 1, 2]
    assert backward_split(2.0, 25) == pytest.approx((1.5, 0.5))
    c = Costs.of(Params(t_b=3.0, w_share_pct=40))
    assert (c.t_i, c.t_w) == pytest.approx((1.8, 1.2))


def test_compare_schedules_matches_the_direct_engine_calls():
    req = schedule_request(Params(), pp=4, grad_accum=8, layers=32)
    assert req.ops() == 4 * 8 * 2 and req == schedule_request(Params(), 4, 8, 32)   # equal inputs, equal requests
    left, right = compare_schedules(req).sides
    assert left.kind == "1f1b" and left.chunks == 1 and left.error is None
    assert left.sim.bubble_over_ideal == pytest.approx(3 / 8) and left.sim.peak_in_flight == [4, 3, 2, 1]
    direct = simulate(schedule("interleaved-1f1b", 4, 8, 2), t_f=0.5, t_b=1.0, t_i=0.5, t_w=0.5)
    assert right.sim.makespan == pytest.approx(direct.makespan)
    assert right.formulas and right.formulas[0].value == pytest.approx(3 / 16)


def test_an_invalid_side_carries_its_reason_and_the_other_still_runs():
    sides = compare_schedules(schedule_request(Params(), pp=4, grad_accum=6, layers=32)).sides
    assert sides[0].sim is not None and sides[1].sim is None and "multiple" in sides[1].error
    too_few_layers = compare_schedules(schedule_request(Params(), pp=4, grad_accum=8, layers=6)).sides
    assert too_few_layers[0].sim is not None and "layers" in too_few_layers[1].error


def test_compare_schedules_can_be_cancelled():
    req = ScheduleRequest(("1f1b", "gpipe"), 2, 4, 2, 8, Costs.of(Params()))
    with pytest.raises(Cancelled):
        compare_schedules(req, cancelled=lambda: True)


def test_timeline_marks_and_milliseconds():
    sim = simulate(schedule("1f1b", 2, 4))
    first_b, last_f = timeline_marks(sim)
    assert 0 < first_b <= last_f < sim.makespan
    ms = in_ms(sim)
    assert ms.makespan == pytest.approx(sim.makespan * 1e3) and ms.ops[-1].end == pytest.approx(sim.ops[-1].end * 1e3)
    assert ms.in_flight[0][1][0] == pytest.approx(sim.in_flight[0][1][0] * 1e3)


def test_tp_and_layout_studies_of_a_scenario():
    sc = Scenario().with_changes(n_gpus=64, tp=8, pp=4, grad_accum=8)
    tp = tp_study(sc)
    assert dict(tp.forward)["all-reduce"] == 2 and dict(tp.backward)["all-reduce"] == 2
    assert tp.bytes_per_gpu == pytest.approx(sum(s.bytes_per_gpu for s in tp.steps)) and tp.bytes_per_gpu > 0
    lay = layout_study(sc)
    assert lay.layout.summary()["tp"]["intra_node"] == 8 and lay.memory_error is None
    assert len(lay.stage_memory) == 4 and len(lay.parts_gb) == 5
    assert lay.totals_gb == pytest.approx([st.total / 1e9 for st in lay.stage_memory])
    assert lay.gpu_memory_gb > 0 and lay.nvlink_gbps > 0


def test_studies_carry_the_scenario_values_their_captions_name():
    """The TP and layout pages draw a study alone: the t, SP, model and network they name come with it."""
    sc = Scenario(n_gpus=64, tp=4, pp=2, sequence_parallel=True, internode_gbps=25.0)
    tp = tp_study(sc)
    assert (tp.tp, tp.sequence_parallel, tp.model_label) == (4, True, sc.arch.label)
    grid = layout_study(sc)
    assert grid.internode_gbps == 25.0 and (grid.layout.dp, grid.layout.tp, grid.layout.pp) == (8, 4, 2)
