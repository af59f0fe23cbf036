"""The training-memory view's computation, Qt-free: knobs, one study per edit, timeline frames,
measurement rows, labels and the compatibility modules."""
from __future__ import annotations

import pytest

from engines import memory as mem
from engines.core.errors import Cancelled, ValidationError
from engines.memory.fsdp_probe import FsdpProbeResult, RankBytes
from engines.memory.measure import ComparisonRow
from engines.memory.params import Params
from engines.memory.study import FRAME_CATEGORIES, memory_study
from engines.core.scenario import STRATEGIES, Scenario


def test_params_declare_todays_default_and_validate():
    p = Params()
    assert p.fp32_grad_accum is False and p.options == mem.Options()
    assert Params(**p.to_dict()) == p and Params.from_dict({"fp32_grad_accum": True}).options.fp32_grad_accum
    with pytest.raises(ValidationError, match="fp32_grad_accum"):
        Params(fp32_grad_accum="false")
    with pytest.raises(ValidationError, match="nope"):
        Params.from_dict({"nope": 1})


def test_study_holds_every_strategys_breakdown_and_the_sweep():
    sc = Scenario().with_changes(n_gpus=64, strategy="zero2")
    study = memory_study(sc, Params(fp32_grad_accum=True).options)
    opts = mem.Options(fp32_grad_accum=True)
    assert study.strategies == STRATEGIES and study.own == mem.breakdown(sc, "zero2", opts)
    for s, b in study.by_strategy().items():
        assert b is not None and b.total == pytest.approx(mem.breakdown(sc, s, opts).total)
    assert study.sweep.smallest_fit == mem.sweep(sc, STRATEGIES, 1024, opts).smallest_fit
    frames, chapters = mem.zero_timeline(sc, options=opts)
    assert list(study.frames) == frames and list(study.chapters) == chapters


def test_a_strategy_that_does_not_apply_is_none_and_the_own_one_raises():
    sc = Scenario().with_changes(n_gpus=24, gpus_per_node=16, tp=1, pp=1)   # DP 24: not whole nodes of 16
    study = memory_study(sc)
    assert study.by_strategy()["fsdp-hybrid"] is None and study.own is not None
    with pytest.raises(ValidationError, match="n_gpus"):
        memory_study(sc.with_changes(strategy="fsdp-hybrid"))


def test_the_sweep_is_reused_when_only_the_gpu_count_changes():
    first = memory_study(Scenario().with_changes(n_gpus=64))
    moved = memory_study(first.scenario.with_changes(n_gpus=128), previous=first)
    assert moved.sweep is first.sweep and moved.own.n_gpus == 128
    longer = memory_study(moved.scenario.with_changes(seq_len=2048), previous=moved)
    assert longer.sweep is not moved.sweep
    other_knob = memory_study(moved.scenario, Params(fp32_grad_accum=True).options, previous=moved)
    assert other_knob.sweep is not moved.sweep


@pytest.mark.parametrize("strategy, stage", [("dp", 0), ("zero1", 1), ("zero2", 2), ("zero3", 3), ("fsdp", 3)])
def test_the_timeline_opens_at_the_end_of_the_scenarios_own_stage(strategy, stage):
    study = memory_study(Scenario().with_changes(strategy=strategy, n_gpus=64))
    expected = len(study.frames) - 1 if stage == 3 else study.chapters[stage + 1][0] - 1
    assert study.default_frame == expected
    assert study.frames[study.default_frame].stage_label == mem.STRATEGY_LABELS[mem.TIMELINE_STAGES[stage]]


def test_shard_blocks_keep_one_nth_of_what_is_being_split():
    study = memory_study(Scenario().with_changes(n_gpus=64))
    dp, full = study.scenario.dp, study.frames[0].bytes
    first = study.shard_blocks(0)
    assert [b.category for b in first] == list(FRAME_CATEGORIES)
    assert all(not b.sharding and b.kept == b.total == full[b.category] for b in first)
    for b in study.shard_blocks(len(study.frames) - 1):
        if b.category not in mem.SHARD_ORDER:      # activations, buffers, reserve: never split
            assert not b.sharding and b.kept == b.total
        else:
            assert b.sharding and b.split == 1.0
            assert b.kept == pytest.approx(full[b.category] / dp) and b.total == pytest.approx(b.kept)


def test_table_and_json_rows_come_from_the_breakdowns():
    sc = Scenario().with_changes(n_gpus=64)
    study = memory_study(sc)
    rows = {r["strategy"]: r for r in study.table()}
    b = mem.breakdown(sc, "zero3")
    assert rows["zero3"]["total_GB"] == round(b.total / 1e9, 4) and rows["zero3"]["fits"] == b.fits
    assert rows["zero3"]["smallest_fitting_gpus"] == mem.smallest_fitting_gpus(sc)["zero3"]
    assert study.per_strategy()["zero3"]["comm_bytes"] == b.comm.total_bytes


def test_links_name_where_the_traffic_goes():
    assert mem.Communication(1.0, 0.0, 1.0, 2.0).links == "NVLink"
    assert mem.Communication(0.0, 1.0, 1.0, 2.0).links == "network"
    assert mem.Communication(1.0, 1.0, 1.0, 2.0).links == "NVLink + network"


def test_measurement_and_fsdp_rows_compare_analytic_and_measured():
    row = ComparisonRow("params", None, 100.0, 103.0, "why")
    assert row.diff_pct == pytest.approx(3.0)
    result = FsdpProbeResult(2, True, 1000, [RankBytes(r, 2010, 2000, 4000, 2000.0, 2000.0, 4000.0) for r in (0, 1)],
                             1.0, True, "")
    rows = result.rows()
    assert [(r.rank, r.category) for r in rows] == [(r, c) for r in (0, 1) for c in ("params", "grads", "optimizer")]
    assert rows[0].diff_pct == pytest.approx(0.5) and rows[1].diff_pct == 0


def test_measurement_cancel_is_the_engines_cancel():
    from engines.memory.measure import MeasurementCancelled

    assert issubclass(MeasurementCancelled, Cancelled)


def test_one_source_of_strategy_names():
    for names in (mem.STRATEGY_LABELS, mem.STRATEGY_SHORT, *mem.STRATEGY_TICKS):
        assert set(names) == set(STRATEGIES)
    assert mem.breakdown(Scenario(), "zero1").label == mem.STRATEGY_LABELS["zero1"]


def test_package_reexports_the_analytic_functions():
    assert mem.per_stage_memory is mem.analytic.per_stage_memory


def test_step_time_study_prices_every_strategy_with_the_bars_verdict():
    from engines.memory.step_time import step_time, time_verdict
    from engines.memory.study import step_time_study

    sc = Scenario().with_changes(n_gpus=64, strategy="zero1")
    study, knobs = memory_study(sc), Params(efficiency=0.6).time_knobs
    r = step_time_study(study, knobs)
    by = study.by_strategy()
    assert r.shown == tuple(s for s in STRATEGIES if by[s] is not None) and "zero1" in r.shown
    for s, st, fits in zip(r.shown, r.times, r.fits):
        assert st.total == pytest.approx(step_time(sc, s, knobs).total) and fits == by[s].fits
        assert st.dp_comm_hidden == pytest.approx(st.dp_comm_total - st.dp_comm) and st.dp_comm_hidden >= 0
    assert r.own.strategy == "zero1" and r.verdict == time_verdict(dict(zip(r.shown, r.times)),
                                                                   dict(zip(r.shown, r.fits)), "zero1")
    again = step_time_study(memory_study(sc, Params(fp32_grad_accum=True).options), knobs, previous=r)
    assert again.times[0] is r.times[0]                       # same scenario and knobs: times reused
    slower = step_time_study(study, Params(efficiency=0.3).time_knobs, previous=r)
    assert slower.own.total > r.own.total                      # new knobs: priced again


def test_throughput_study_marks_where_each_strategy_fits_and_reuses_its_sweep():
    from engines.memory.step_time import throughput_sweep
    from engines.memory.study import throughput_study

    sc = Scenario().with_changes(n_gpus=64)
    study, knobs = memory_study(sc), Params().time_knobs
    r = throughput_study(study, knobs)
    sw = throughput_sweep(sc, knobs)
    assert r.per_gpu.shape == sw.per_gpu.shape and r.n_gpus == 64
    for row, s in enumerate(sw.strategies):
        assert (r.fits[row] == study.fits_at(s, sw.n_gpus)).all()
    assert r.fits.any() and not r.fits.all()                   # some counts are too few for some strategies
    moved = throughput_study(memory_study(sc.with_changes(n_gpus=128), previous=study), knobs, previous=r)
    assert moved.sweep is r.sweep and moved.n_gpus == 128       # only the marker moves
    longer = throughput_study(memory_study(sc.with_changes(seq_len=2048)), knobs, previous=r)
    assert longer.sweep is not r.sweep and not (longer.per_gpu[0] == r.per_gpu[0]).all()


def test_the_export_carries_the_own_breakdown_the_step_and_what_was_measured():
    from engines.memory.study import memory_export

    sc = Scenario().with_changes(n_gpus=64, strategy="zero3")
    study, knobs = memory_study(sc), Params().time_knobs
    out = memory_export(study, knobs)
    assert out["total"] == study.own.total and out["fits"] == study.own.fits
    assert out["per_strategy"] == study.per_strategy() and out["smallest_fit"] == study.sweep.smallest_fit
    assert out["step_time"]["total"] == pytest.approx(mem.step_time(sc, None, knobs).total)
    assert "measured" not in out and "fsdp" not in out and "step_measured" not in out
    probe = FsdpProbeResult(2, True, 100, [RankBytes(0, 200, 200, 400, 200.0, 200.0, 400.0)], 1.0, False, "n")
    assert memory_export(study, knobs, fsdp=probe)["fsdp"]["param_count"] == 100
