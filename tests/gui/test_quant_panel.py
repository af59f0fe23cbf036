"""The quantization panel driven through its real widgets (pack layers, slider, timeline, user files)."""
import pytest
import torch

from panels.quant import QuantPanel


@pytest.fixture
def panel(make_panel):
    p = make_panel(QuantPanel)
    p.layer_box.setCurrentText("minilm.l2.query")        # the smallest pack layer: fast
    assert p.settle(240_000), p.tasks.last_error
    assert p.jobs("kv").wait(60_000), p.jobs("kv").last_error
    return p


def test_analysis_of_a_pack_layer(panel):
    a = panel.analysis
    assert a is not None and a.name == "minilm.l2.query" and a.has_activations
    assert a.method("rtn").bits_per_weight == pytest.approx(4.25)
    assert {"rtn", "gptq", "awq", "nf4"} <= {m.method for m in a.methods}
    assert a.fix("llm_int8").error < a.fix("naive").error
    assert len(a.sq_curve) == 21 and len(a.awq_curve) == 20
    spec = panel.timeline()
    assert spec.n_frames == len(panel.steps) + len(a.gptq_trace) and len(spec.chapters) == 2
    for i in (0, 3, len(panel.steps), spec.n_frames - 1):
        panel.show_frame(i)
    assert "GPTQ" in panel.weights.gptq_text.text()
    shown = panel.weights.wonly_plot.getPlotItem()._bar_chart[0]          # the bar names as drawn
    assert len(shown) == len(a.methods) and "NF4 4.5 b/w" in shown
    rows = panel.table()
    assert any(r["section"] == "serving" for r in rows) and any(r["section"] == "kv" for r in rows)


def test_group_that_does_not_divide_falls_back_with_a_message(panel, qtbot):
    panel.layer_box.setCurrentText("smollm2.l20.q_proj")   # 576 inputs: 128 does not divide
    qtbot.waitUntil(lambda: "576" in panel.error.text(), timeout=60_000)   # the layer is read on the job slot
    assert "576" in panel.error.text() and panel.group_box.currentText() == "64"
    assert panel.params.group_size == 64
    panel.tasks.cancel()


def test_alpha_slider_and_kv_controls(panel):
    panel.tabs.setCurrentWidget(panel.fixes)                 # the slider is on the fixes tab
    panel.alpha_slider.slider.setValue(80)                    # drag to α = 0.80
    assert panel.preview.alpha == pytest.approx(0.8) and panel.params.sq_alpha == pytest.approx(0.8)
    assert panel.preview.error == pytest.approx(dict(panel.analysis.sq_curve)[0.8])
    assert "SmoothQuant α=0.80" in panel.fixes.fix_plot.getPlotItem()._bar_chart[0]
    panel.tabs.setCurrentWidget(panel.kv_view)
    panel.kv_view.bits_spin.setValue(2)              # the torch comparison runs off the GUI thread
    assert panel.params.kv_bits == 2 and panel.jobs("kv").wait(60_000)
    assert {r["bits"] for r in panel.kv_rows} == {2}
    k_token = next(r for r in panel.kv_rows if (r["tensor"], r["axis"]) == ("K", "token"))["relative_error"]
    assert f"K error {k_token:.3f}" in panel.kv_view.text.text()


def test_scenario_change_updates_serving(panel, ctx):
    before = panel.serving[0]["decode_tok_s"]
    ctx.scenario.try_update(gpu="h200")
    assert panel.serving[0]["decode_tok_s"] > before          # more HBM bandwidth


def test_every_format_and_column_of_the_serving_table_is_in_view(make_panel, qtbot):
    """The formats table has its own tab: every row and every column (bound, matmul, note) shows
    without scrolling at the panel width of a 1600-px window (it hid the last three sideways)."""
    from PySide6.QtWidgets import QTabWidget

    p = make_panel(QuantPanel, size=(1100, 860))
    tabs = p.findChildren(QTabWidget)[0]
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == "Formats for serving"))
    qtbot.wait(100)
    t = p.serving_view.table
    assert t.rowCount() == len(p.serving) == 6
    assert t.horizontalHeader().length() <= t.viewport().width() + 1
    assert t.verticalHeader().length() <= t.viewport().height() + 1


def test_user_files(panel, tmp_path):
    from safetensors.torch import save_file

    save_file({"proj.weight": torch.randn(16, 64)}, str(tmp_path / "w.safetensors"))
    panel.load_user_file(str(tmp_path / "w.safetensors"), "proj.weight")
    assert panel.settle(120_000)
    assert panel.analysis.shape == (16, 64) and not panel.analysis.has_activations
    assert panel.params.tensor.startswith("file:") and panel.layer_box.currentText() == "proj.weight (w.safetensors)"
    (tmp_path / "bad.npy").write_bytes(b"not an npy file")
    panel.load_user_file(str(tmp_path / "bad.npy"), "array")
    assert panel.error.isVisible() and "file" in panel.error.text()


@pytest.mark.parametrize("font_scale", [1.0, 1.8])
def test_bar_chart_names_and_values_are_whole_and_apart(make_panel, ctx, qtbot, font_scale):
    """Each bar's name sits whole on the left axis (a long one wraps, and its rows are far enough
    apart for its lines) and each value label ends inside its chart, at projector text sizes too: the
    names under vertical bars ran into each other."""
    from PySide6.QtGui import QFontMetricsF
    from PySide6.QtWidgets import QTabWidget

    ctx.set_theme(font_scale=font_scale)
    try:
        p = make_panel(QuantPanel, size=(1000, 900))
        p.layer_box.setCurrentText("minilm.l2.query")
        assert p.settle(300_000)
        tabs = p.findChildren(QTabWidget)[0]
        charts = {p.fixes.fix_plot, p.weights.wonly_plot, p.groups.scheme_plot, p.kv_view.plot}
        checked = set()
        for i in range(tabs.count()):
            tabs.setCurrentIndex(i)
            qtbot.wait(300)
            for plot in (c for c in charts if c.isVisible()):
                pi = plot.getPlotItem()
                axis = pi.getAxis("left")
                names = [text for _pos, text in axis._tickLevels[0]]
                metrics = QFontMetricsF(axis.style["tickFont"])
                widest = max(metrics.horizontalAdvance(line) for name in names for line in name.split("\n"))
                assert axis.width() >= widest + axis.style["tickTextOffset"][0], names
                lines = [name.count("\n") + 1 for name in names]       # rows evenly spaced, names centred:
                row = pi.getViewBox().height() / len(names)               # neighbours apart, the ends inside
                assert all(row >= (a + b) / 2 * metrics.height() for a, b in zip(lines, lines[1:])), names
                assert 0.6 * row >= max(lines[0], lines[-1]) / 2 * metrics.height(), names
                layer = pi._label_layer
                view = layer.vb.rect().adjusted(-1, -1, 1, 1)
                assert len(layer.rects()) == len(names)
                assert all(view.contains(box) for box in layer.rects()), [(t, b.left(), b.right(), b.top(), b.bottom(), view.width(), view.height()) for t, b in zip(layer.texts(), layer.rects())]
                assert plot.width() >= pi.width() - 1          # the chart is not wider than its widget
                checked.add(plot)
        assert checked == charts
    finally:
        ctx.set_theme(font_scale=1.0)


def test_named_views_and_a_views_tab_survive_the_timeline(panel, qtbot):
    """Tours focus the panel's named views; a view's own tab is not replaced by the frame the same view
    sets (frame 0 belongs to *Affine mapping*), nor by a redraw of the frame already shown."""
    views = panel.views()
    assert {"affine", "heatmap", "collapse", "fixes", "gptq_trace", "weight_errors", "group_bits", "schemes",
            "formats_table", "summary"} <= set(views)
    assert panel.outliers.heat_text.parentWidget() is views["heatmap"]          # the numbers stay with the chart
    assert panel.weights.gptq_text.parentWidget() is views["gptq_trace"]
    assert "Calibration: 394 tokens" in panel.summary.text()
    panel.show_frame(len(panel.steps))                   # a GPTQ frame: its tab comes forward
    assert panel.tabs.tabText(panel.tabs.currentIndex()) == "GPTQ && AWQ"
    panel.set_inner_tabs(("Formats for serving",))
    panel.show_frame(0)                                  # the view's own timeline reset: the tab stays
    assert panel.inner_tabs() == ("Formats for serving",)
    qtbot.wait(10)
    panel.show_frame(0)                                  # the same frame redrawn (a result arriving): stays
    assert panel.inner_tabs() == ("Formats for serving",)
    panel.show_frame(3)                                  # the user moves the timeline: its tab comes forward
    assert panel.inner_tabs() == ("Affine mapping",)


def test_a_theme_change_redraws_each_view_in_its_colours(panel, ctx):
    """Each view keeps its result and redraws it for the new theme: the worked example stays on its
    step, the GPTQ bars are re-made in the new palette, the KV sentence keeps the scenario's memory."""
    panel.show_frame(3)
    step = panel.affine.text.text()
    kv_text = panel.kv_view.text.text()
    old = panel.weights._gptq[1].opts["brush"]
    ctx.set_theme(name="dark")
    try:
        th = panel.theme
        assert th.name == "dark" and panel.affine.theme is th and panel.fixes.theme is th
        assert panel.affine.text.text() == step and "Step 4/" in step
        bars = panel.weights._gptq[1].opts["brush"]
        assert bars is not old and bars == th.color(4)
        assert panel.kv_view.text.text() == kv_text and "GB" in kv_text
    finally:
        ctx.set_theme(name="light")


def test_selftest_and_the_export_carry_the_typed_entries(make_panel):
    import json

    p = make_panel(QuantPanel)
    p.selftest()
    out = json.loads(json.dumps(p.result()))
    methods = {m["method"]: m for m in out["analysis"]["methods"]}
    assert methods["nf4"]["block_size"] == 64 and methods["rtn"]["bits"] == p.params.bits
    assert {f["method"] for f in out["analysis"]["fixes"]} == {"naive", "per_channel", "smoothquant", "rotation",
                                                              "llm_int8"}
    w8a8 = [r for r in p.table() if r["section"] == "W8A8"]
    assert [r["item"] for r in w8a8] == [f.label for f in p.analysis.fixes] and len(w8a8) == 5


def test_analysis_uses_the_alpha_its_job_started_with(panel, monkeypatch):
    """A reopened view (tensor and α together) is analysed at the view's α even when α is edited
    while its layer is still being read; the later edit stays the one the fixes view draws."""
    import threading
    from dataclasses import replace

    import panels.quant as quant

    gate, read = threading.Event(), quant.setup_layer
    monkeypatch.setattr(quant, "setup_layer", lambda p, files=None: gate.wait(60) and read(p, files))
    panel.set_params(replace(panel.params, tensor="minilm.l2.ffn_in", sq_alpha=0.45), record=False)
    assert panel.tasks.running                        # the layer read is on the job slot, held by the gate
    assert panel.update_params(sq_alpha=0.7) is None  # edited while the job runs
    gate.set()
    assert panel.settle(240_000), panel.tasks.last_error
    a = panel.analysis
    assert a.name == "minilm.l2.ffn_in" and a.fix("smoothquant").alpha == pytest.approx(0.45)
    assert panel.params.sq_alpha == pytest.approx(0.7) and panel.preview.alpha == pytest.approx(0.7)


def test_kv_channel_chart_keeps_its_item_and_shows_the_new_block(panel):
    import numpy as np

    from explorer.ui.fast_items import Bars

    view = panel.kv_view
    panel.tabs.setCurrentWidget(view)                  # its block box is on the KV tab
    items = [i for i in view.chan_plot.getPlotItem().items if isinstance(i, Bars)]
    assert len(items) == 1 and np.array_equal(items[0].opts["height"], view.result.channel_max)
    before = np.array(view.result.channel_max)
    view.block_box.setCurrentIndex((view.block_box.currentIndex() + 1) % view.block_box.count())
    assert panel.jobs("kv").wait(60_000), panel.jobs("kv").last_error
    assert not np.array_equal(view.result.channel_max, before)              # another block's keys
    now = [i for i in view.chan_plot.getPlotItem().items if isinstance(i, Bars)]
    assert now == items and np.array_equal(items[0].opts["height"], view.result.channel_max)


def test_a_tour_step_on_a_new_layer_never_shows_the_affine_tab_in_between(window, qtbot):
    """B3 step 3 reads a new layer on the GPTQ tab: the layer's first result resets the timeline to the
    affine frames, and the tab a view asked for must hold until its results are drawn (it flashed the
    affine tab for a paint before, a wrong picture and a wasted layout)."""
    from explorer.lessons import lesson_tour

    tour = lesson_tour("B3")
    assert window.tour.start(tour, 1)
    panel = window.current_panel()
    panel.settle()
    shown = []
    panel.tabs.currentChanged.connect(lambda i: shown.append(panel.tabs.tabText(i)))
    assert window.tour.go(2)
    assert panel.settle()
    qtbot.wait(50)
    assert "Affine mapping" not in shown, shown
    assert panel.inner_tabs()[0] == "GPTQ & AWQ"


def test_a_result_draws_only_the_tab_shown_and_the_rest_when_shown(panel, qtbot):
    """A new analysis lands in four views on four tabs; the ones not showing draw when their tab is
    picked (each drawn one cost the result's turn of the event loop milliseconds nobody saw)."""
    panel.tabs.setCurrentWidget(panel.affine)
    assert panel.weights.analysis is panel.analysis
    panel.bits_spin.setValue(3)
    qtbot.waitUntil(lambda: panel.analysis is not None and panel.analysis.bits == 3, timeout=240_000)
    assert panel.weights.analysis.bits == 4                  # its tab is not showing: not drawn yet
    panel.tabs.setCurrentWidget(panel.weights)
    assert panel.weights.analysis is panel.analysis          # drawn as its tab shows
    panel.bits_spin.setValue(4)
    qtbot.waitUntil(lambda: panel.analysis.bits == 4, timeout=240_000)
    assert panel.weights.analysis.bits == 4                  # showing: drawn with the result
    panel.tabs.setCurrentWidget(panel.affine)
    panel.bits_spin.setValue(3)
    assert panel.settle(240_000)
    assert panel.weights.analysis is panel.analysis          # settle() draws what waits


def test_refilling_the_serving_table_in_view_sizes_its_rows_once(make_panel, ctx, qtbot):
    """Rows follow their wrapped text, but a refill in view sizes them once, after the last cell: sized
    at every cell set, B1's last step spent 28 ms of one turn filling 120 cells."""
    from PySide6.QtWidgets import QHeaderView, QTabWidget

    p = make_panel(QuantPanel, size=(1100, 860))
    assert p.settle(240_000), p.tasks.last_error       # its first results shown (they pick the tab)
    tabs = p.findChildren(QTabWidget)[0]
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == "Formats for serving"))
    qtbot.wait(100)
    from engines.quant.study import serving_study

    view, rows = p.serving_view, p.serving_view.table.verticalHeader()
    heights = [rows.sectionSize(r) for r in range(rows.count())]
    modes = []                                   # how the rows were sized as each cell was set
    view.table.model().dataChanged.connect(lambda *_a: modes.append(rows.sectionResizeMode(0)))
    assert view.isVisible()
    view.show_result(serving_study(ctx.scenario.value))
    assert len(modes) >= view.table.rowCount() and QHeaderView.ResizeToContents not in modes
    assert rows.sectionResizeMode(0) == QHeaderView.ResizeToContents          # rows still follow the text
    assert [rows.sectionSize(r) for r in range(rows.count())] == heights      # the same text, the same rows
