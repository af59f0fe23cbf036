"""Training-memory panel: drive the real controls, check the engine state behind the view."""
from __future__ import annotations

import pytest

from engines import memory as mem
from engines.core.scenario import STRATEGIES
from panels.memory import MemoryPanel


def test_controls_drive_the_scenario_and_breakdown(make_panel, ctx):
    p = make_panel(MemoryPanel)
    p.strategy_combo.setCurrentIndex(p.strategy_combo.findData("zero2"))
    assert ctx.scenario.value.strategy == "zero2"
    p.gpus_spin.setValue(16)
    sc = ctx.scenario.value
    assert sc.n_gpus == 16
    expected = mem.breakdown(sc, "zero2")
    assert p.breakdowns["zero2"].total == pytest.approx(expected.total)
    assert f"{expected.total / 1e9:,.2f} GB" in p.verdict.text()
    assert ("fits" in p.verdict.text()) == expected.fits
    rows = {r["strategy"]: r for r in p.table()}
    assert set(rows) <= set(STRATEGIES) and rows["zero2"]["total_GB"] == pytest.approx(expected.total / 1e9, abs=1e-4)
    assert rows["zero3"]["smallest_fitting_gpus"] == mem.smallest_fitting_gpus(sc)["zero3"]


def test_fp32_accumulation_and_offload_change_bytes(make_panel, ctx):
    p = make_panel(MemoryPanel)
    before = p.breakdowns[ctx.scenario.value.strategy].grads
    p.fp32_acc.setChecked(True)
    assert p.breakdowns[ctx.scenario.value.strategy].grads == pytest.approx(3 * before)  # 2 + 4 bytes
    p.offload_opt.setChecked(True)
    assert ctx.scenario.value.offload_optimizer
    assert p.breakdowns[ctx.scenario.value.strategy].optimizer == 0


def test_timeline_shards_optimizer_then_grads_then_params(make_panel, ctx):
    p = make_panel(MemoryPanel)
    spec = p.timeline()
    assert spec.n_frames == len(p.frames) and [c[1] for c in spec.chapters][-1].startswith("ZeRO-3")
    p.show_frame(0)
    first = p.frames[0].bytes
    p.show_frame(spec.n_frames - 1)
    last = p.frames[-1].bytes
    dp = ctx.scenario.value.dp
    for cat in ("params", "grads", "optimizer"):
        assert last[cat] == pytest.approx(first[cat] / dp)
    assert f"× {dp} GPUs" in p.sharding_view.caption.text()


def test_bad_input_shown_inline(make_panel, ctx):
    p = make_panel(MemoryPanel)
    ctx.scenario.try_update(tp=8)
    p.gpus_spin.setValue(12)  # not a multiple of TP 8
    assert p.error.isVisible() and "n_gpus" in p.error.text()


def test_measured_mode_runs_in_the_worker(make_panel, qtbot):
    p = make_panel(MemoryPanel)
    p.measure_view.measure_button.click()
    assert p.jobs("measure").wait(120_000)
    assert p.measured is not None
    assert p.measure_view.table.rowCount() == 4
    for cat in ("params", "grads", "optimizer", "activations"):
        assert p.measured.ratio(cat) == pytest.approx(1.0, abs=0.10)
    assert "measured" in p.result()


def test_pytorch_check_shows_ours_beside_fsdp2(make_panel, ctx):
    from engines.core.models import ModelArch

    arch = ModelArch(label="tiny llama", layers=2, hidden=256, heads=8, kv_heads=2, ffn=512, vocab=1024)
    ctx.scenario.try_update(model="custom", arch=arch, n_gpus=8, tp=1, pp=1, strategy="zero3", seq_len=128,
                            micro_batch=2)
    p = make_panel(MemoryPanel)
    p.measure_view.check_button.click()
    assert p.settle()
    t = p.measure_view.table
    cells = {t.item(r, 0).text(): t.item(r, 2).text() for r in range(t.rowCount())}
    assert {"model states", "activations", "buffers", "total"} <= set(cells)
    fake = mem.fake_step(ctx.scenario.value)      # the same engine call: the view shows its number
    assert cells["model states"] == f"{fake.model_states / 1e9:,.3f} GB"
    assert "fake ranks" in p.measure_view.note.text()
    # the reasons sit beside the table, the widest gap's first (the total only sums the rest)
    gb = {t.item(r, 0).text(): abs(float(t.item(r, 1).text().split()[0].replace(",", ""))
                                   - float(t.item(r, 2).text().split()[0].replace(",", ""))) for r in range(t.rowCount())}
    picked = t.item(t.currentRow(), 0).text()
    assert picked != "total" and gb[picked] == max(v for k, v in gb.items() if k != "total")
    assert p.measure_view.reason.text().startswith(f"Why {picked} differs: ")
    t.setCurrentCell(0, 0)
    assert p.measure_view.reason.text().startswith("Why model states differs: ")
    assert t.item(0, 0).toolTip() in p.measure_view.reason.text()


def test_gpu_count_edit_moves_the_marker_without_redrawing_the_sweep(make_panel, ctx):
    import numpy as np

    p = make_panel(MemoryPanel)
    line = p.sweep_view.curves[0][0]
    drawn = line.xData
    p.gpus_spin.setValue(128)
    assert line.xData is drawn  # the sweep over 1…1024 GPUs does not depend on the scenario's count
    assert p.sweep_view.marker.value() == pytest.approx(np.log10(128))
    ctx.scenario.update(seq_len=2048)
    assert line.xData is not drawn  # it does depend on the sequence length


def test_a_marker_move_blits_the_cached_sweep_lines_at_full_width(make_panel, ctx, qtbot, monkeypatch):
    """The sweep's lines are cached pixmaps (DeviceCoordinateCache); a GPU-count edit repaints the
    strip under the marker from them. With Qt's 10 MB QPixmapCache the twelve view-sized pixmaps of
    a 1600-px chart evicted each other and every edit re-rendered them (``explorer.app.size_pixmap_cache``)."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    p = make_panel(MemoryPanel, size=(1600, 1000))
    lines = {line.curve for line, _marks in p.sweep_view.curves}
    redrawn = []
    paint = pg.PlotCurveItem.paint

    def counting_paint(self, *args):
        if self in lines:
            redrawn.append(self)
        return paint(self, *args)

    monkeypatch.setattr(pg.PlotCurveItem, "paint", counting_paint)
    for _ in range(3):                                   # first paints fill the cache
        QApplication.processEvents()
        qtbot.wait(20)
    assert p.sweep_view.plot.width() > 1500
    for n in (128, 64, 128):
        redrawn.clear()
        before = p.sweep_view.marker.value()
        ctx.scenario.update(n_gpus=n)
        QApplication.processEvents()
        assert p.sweep_view.marker.value() != before          # the marker moved: its strip repainted
        assert redrawn == [], f"{len(redrawn)} sweep lines re-rendered for a marker move"


def test_sweep_markers_sit_on_their_curves_inside_the_log_log_view(make_panel):
    import numpy as np

    p = make_panel(MemoryPanel)
    (x_lo, x_hi), (y_lo, y_hi) = p.sweep_view.plot.getViewBox().viewRange()
    for line, marks in p.sweep_view.curves:
        mx, my = marks.data["x"], marks.data["y"]
        assert len(mx) >= 2
        assert np.all((x_lo <= mx) & (mx <= x_hi)) and np.all((y_lo <= my) & (my <= y_hi))
        lx, ly = line.getData()            # the curve as drawn (log10 units on log axes)
        assert np.allclose(np.interp(mx, lx, ly), my)


def test_the_marked_counts_label_stays_inside_the_sweep_chart(make_panel, ctx, qtbot):
    """Written above its point, the label of a line at the top of the chart was cut by the chart's
    edge (data parallelism's flat line, A1 step 4); there it is written below the point."""
    from PySide6.QtWidgets import QApplication

    p = make_panel(MemoryPanel, size=(1600, 1000))
    view = p.sweep_view
    view.plot.setFixedHeight(220)                  # a short chart, as in a lesson's three-row layout
    for strategy in ("dp", "fsdp"):
        ctx.scenario.update(n_gpus=64, strategy=strategy)
        QApplication.processEvents()
        qtbot.wait(20)
        box = view.plot.getViewBox()
        shown = box.mapSceneToView(view.here.mapRectToScene(view.here.boundingRect())).boundingRect()
        (_x_lo, _x_hi), (y_lo, y_hi) = box.viewRange()
        assert y_lo <= shown.top() and shown.bottom() <= y_hi, (strategy, shown, y_lo, y_hi)


def test_bar_labels_carry_each_strategys_total_and_verdict(make_panel, ctx):
    p = make_panel(MemoryPanel)
    ctx.scenario.update(n_gpus=128, strategy="zero2")
    texts = p.bars_view.pool.layer.texts()
    for s, b in p.breakdowns.items():
        if b is None:
            continue
        mine = "yours ▼\n" if s == "zero2" else ""
        assert f"{mine}{b.total / 1e9:,.1f}\n{'fits' if b.fits else 'too big'}" in texts
    assert any(t.startswith("GPU memory") for t in texts)


def test_offload_target_moves_the_offloaded_bytes_to_nvme(make_panel, ctx):
    p = make_panel(MemoryPanel)
    p.offload_opt.setChecked(True)
    on_cpu = p.breakdowns[ctx.scenario.value.strategy].cpu
    p.offload_to.setCurrentIndex(p.offload_to.findData("nvme"))
    assert ctx.scenario.value.offload_target == "nvme"
    b = p.breakdowns[ctx.scenario.value.strategy]
    assert b.cpu == 0 and b.nvme == pytest.approx(on_cpu)
    assert f"NVMe per GPU for offload: {b.nvme / 1e9:,.2f} GB" in p.verdict.text()
    ctx.scenario.update(offload_target="cpu")
    assert p.offload_to.currentData() == "cpu"                 # the combo follows the shared scenario


def test_lower_charts_share_one_tab_row_and_catch_up_when_shown(make_panel, ctx):
    """Sweep, traffic, step time, throughput and measured share the full-width lower row; a hidden
    chart skips edits and shows the current scenario as soon as its tab does."""
    import numpy as np

    p = make_panel(MemoryPanel)
    assert [p.lower_tabs.widget(i) for i in range(5)] == [p.sweep_view, p.traffic_view, p.time_view,
                                                          p.tput_view, p.measure_view]
    assert p.lower_tabs.currentWidget() is p.sweep_view
    p.lower_tabs.setCurrentWidget(p.traffic_view)
    ctx.scenario.update(n_gpus=256)
    assert p.sweep_view.marker.value() != pytest.approx(np.log10(256))       # hidden: not redrawn
    shown = p.traffic_view.pool.layer.texts()
    expected = p.breakdowns[ctx.scenario.value.strategy].comm
    assert any(f"{expected.total_bytes / 1e9:,.1f} GB" in t for t in shown)
    p.lower_tabs.setCurrentWidget(p.sweep_view)
    assert p.sweep_view.marker.value() == pytest.approx(np.log10(256))


@pytest.mark.parametrize("font_scale", [1.0, 1.8])
def test_chart_labels_stay_inside_their_charts_and_apart_at_presenter_sizes(make_panel, ctx, qtbot, font_scale):
    """Labels keep their size in pixels: at presenter fonts the range makes room for them (totals
    above the bars, shard labels right of the GPUs) and block labels shorten rather than run into
    the next stack's."""
    ctx.set_theme(font_scale=font_scale)
    try:
        p = make_panel(MemoryPanel, size=(1100, 1500))
        ctx.scenario.update(n_gpus=128)
        qtbot.wait(50)
        for name, view in (("bars", p.bars_view), ("shard", p.sharding_view)):
            layer = view.pool.layer
            view = layer.vb.rect().adjusted(-1, -1, 1, 1)
            boxes = layer.rects()
            assert boxes and all(view.contains(box) for box in boxes), (name, layer.texts())
        boxes = p.bars_view.pool.layer.rects()
        for i, a in enumerate(boxes):            # block, total and memory-line labels never overlap
            assert not any(a.intersects(b) for b in boxes[i + 1:]), p.bars_view.pool.layer.texts()[i]
    finally:
        ctx.set_theme(font_scale=1.0)


def test_fp32_accumulation_is_a_panel_parameter_both_ways(make_panel, ctx):
    from engines.memory.params import Params

    p = make_panel(MemoryPanel)
    grads = p.breakdowns[ctx.scenario.value.strategy].grads
    p.fp32_acc.setChecked(True)                         # the check box edits the params (one undo step)
    assert p.params == Params(fp32_grad_accum=True)
    ctx.scenario.undo_stack.undo()
    assert p.params == Params() and not p.fp32_acc.isChecked()
    assert p.breakdowns[ctx.scenario.value.strategy].grads == pytest.approx(grads)
    p.set_params(Params(fp32_grad_accum=True), record=False)   # a saved view: the box follows, bytes redrawn
    assert p.fp32_acc.isChecked() and p.breakdowns[ctx.scenario.value.strategy].grads == pytest.approx(3 * grads)


def test_tour_views_are_named(make_panel):
    """Tour steps focus and highlight these names (assets/tours/A1.json, A2.json)."""
    p = make_panel(MemoryPanel)
    views = p.views()
    assert {"bars", "sharding", "sweep", "traffic", "measured", "strategy", "gpus", "recompute", "offload",
            "verdict"} <= set(views)
    assert views["sweep"] is p.sweep_view and views["traffic"] is p.traffic_view and views["bars"] is p.bars_view
    assert p.sharding_view.plot.parentWidget() is views["sharding"] and \
        p.sharding_view.caption.parentWidget() is views["sharding"]
    assert views["time_bars"] is p.time_view.chart and views["measured"] is p.measure_view
    assert p.view_widget("fp32_grad_accum") is p.fp32_acc        # a parameter's control, through the binder


def test_a_tab_shown_with_a_new_scenario_draws_only_the_new_study(make_panel, ctx, monkeypatch):
    """A tour step switches the lower tab and then sets its scenario, all in one ``holding``: the
    chart shown is drawn once, for the new scenario (it was drawn for the last step's first)."""
    p = make_panel(MemoryPanel)
    p.lower_tabs.setCurrentWidget(p.traffic_view)
    drawn = []
    show = p.sweep_view.show_result
    monkeypatch.setattr(p.sweep_view, "show_result", lambda study: (drawn.append(study.scenario.n_gpus), show(study)))
    with p.holding():
        p.lower_tabs.setCurrentWidget(p.sweep_view)
        ctx.scenario.update(n_gpus=512)
    assert drawn == [512]
    p.lower_tabs.setCurrentWidget(p.traffic_view)
    p.lower_tabs.setCurrentWidget(p.sweep_view)            # no recompute on its way: the tab draws at once
    assert drawn == [512, 512]
