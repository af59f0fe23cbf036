"""The memory panel's time views: step time per strategy, the FSDP wrapping/prefetch controls and
throughput over GPU count, each checked against the engine behind it."""
from __future__ import annotations

import numpy as np
import pytest

from engines.core.scenario import STRATEGIES
from engines.memory import breakdown
from engines.memory.params import Params
from engines.memory.step_time import step_time, throughput_sweep
from panels.memory import MemoryPanel


def test_step_time_tab_shows_the_engines_step_for_every_strategy(make_panel, ctx):
    p = make_panel(MemoryPanel)
    p.lower_tabs.setCurrentWidget(p.time_view)
    sc = ctx.scenario.value
    own = step_time(sc, sc.strategy, p.params.time_knobs)
    assert f"{own.total:,.3f} s per step" in p.time_view.readout.text()
    assert f"{own.tokens_per_second:,.0f} tokens/s" in p.time_view.readout.text()
    texts = p.time_view.pool.layer.texts()
    for s in STRATEGIES:
        st = step_time(sc, s, p.params.time_knobs)
        assert any(t.startswith(f"{st.total:,.2f} s") for t in texts), s
    ctx.scenario.update(n_gpus=128)               # an edit while the tab shows redraws it
    assert f"{step_time(ctx.scenario.value).total:,.3f} s per step" in p.time_view.readout.text()


def test_wrapping_and_prefetch_controls_are_params_that_move_time_and_memory(make_panel, ctx):
    ctx.scenario.update(strategy="fsdp")
    p = make_panel(MemoryPanel)
    p.lower_tabs.setCurrentWidget(p.time_view)
    before_time = p.times.by_strategy()["fsdp"].total
    before_buf = p.breakdowns["fsdp"].buffers
    p.wrap_combo.setCurrentText("whole stage")
    assert p.params.wrap_blocks == 0
    sc = ctx.scenario.value
    whole = step_time(sc, "fsdp", Params(wrap_blocks=0).time_knobs)
    assert p.times.by_strategy()["fsdp"].total == pytest.approx(whole.total)
    assert p.times.by_strategy()["fsdp"].total > before_time
    assert p.breakdowns["fsdp"].buffers == pytest.approx(breakdown(sc, "fsdp", Params(wrap_blocks=0).options).buffers)
    assert p.breakdowns["fsdp"].buffers > before_buf
    p.wrap_combo.setCurrentText("1 block")
    p.bwd_prefetch.setChecked(False)
    assert p.params.backward_prefetch is False and p.times.by_strategy()["fsdp"].total > before_time
    p.coll_combo.setCurrentText("hierarchical")
    assert p.params.collective == "hierarchical"
    p.eff_slider.setValue(0.8)
    assert p.params.efficiency == pytest.approx(0.8)


def test_throughput_tab_draws_tokens_per_gpu_solid_only_where_it_fits(make_panel, ctx):
    p = make_panel(MemoryPanel)
    p.lower_tabs.setCurrentWidget(p.tput_view)
    sc = ctx.scenario.value
    sw = throughput_sweep(sc, p.params.time_knobs)
    for row, s in enumerate(STRATEGIES):
        fit, over, _marks = p.tput_view.curves[row]
        x, y = over.getData()
        ok = np.isfinite(sw.per_gpu[row])
        assert np.allclose(y, sw.per_gpu[row][ok])
        _fx, fy = fit.getData()
        fits = p.sweep_result.totals[row, sw.n_gpus - 1] <= p.sweep_result.gpu_memory
        assert np.array_equal(np.isfinite(fy), fits & ok)
    assert p.tput_view.marker.value() == pytest.approx(np.log10(sc.n_gpus))
    at = list(sw.n_gpus).index(sc.n_gpus)              # the key gives each curve's height at the marker
    label = p.tput_view.legend.getLabel(p.tput_view.curves[0][0]).text
    assert f": {sw.per_gpu[0][at]:,.0f}" in label
    ctx.scenario.update(n_gpus=int(sw.n_gpus[at + 1]))  # a count edit moves the figures with the marker
    label = p.tput_view.legend.getLabel(p.tput_view.curves[0][0]).text
    assert f": {sw.per_gpu[0][at + 1]:,.0f}" in label


def test_step_time_readout_gives_the_offload_time_left_exposed(make_panel, ctx):
    ctx.scenario.update(n_gpus=8, offload_optimizer=True)
    p = make_panel(MemoryPanel)
    p.lower_tabs.setCurrentWidget(p.time_view)
    own = step_time(ctx.scenario.value, ctx.scenario.value.strategy, p.params.time_knobs)
    assert own.offload_total > 0
    assert f"offload traffic exposed {own.offload:,.2f} s" in p.time_view.readout.text()


def test_timed_real_steps_fill_the_measured_table_against_the_model(make_panel, ctx):
    from engines.memory.step_measure import StepTimeConfig, StepTimingCheck, measure_step_time

    p = make_panel(MemoryPanel)
    r = measure_step_time(ctx.scenario.value, "cpu", StepTimeConfig(hidden=64, head_dim=32, layers=2, vocab=256,
                                                                    seq_len=32, micro_batch=2, repeats=1))
    p._show_step_timing(StepTimingCheck(r, p.params.efficiency))
    t = p.measure_view.table
    cells = [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]
    assert cells[0][:3] == ["backward ÷ forward", "2.00", f"{r.backward_ratio:.2f}"]
    assert cells[1][1:3] == [f"{r.recompute_ratio_model:.3f}", f"{r.recompute_ratio:.3f}"]
    assert cells[3][1] == f"{p.params.efficiency:.3f} (set)"
    assert f"{r.forward * 1e3:,.1f} ms" in p.measure_view.note.text()
    out = p.result()
    assert out["step_measured"]["forward"] == r.forward
    assert out["step_time"]["total"] == pytest.approx(step_time(ctx.scenario.value, None, p.params.time_knobs).total)
