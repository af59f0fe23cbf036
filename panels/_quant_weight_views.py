"""The quantization panel's weight-side views: W8A8 with the three fixes, GPTQ & AWQ, and groups &
schemes. Each is a QWidget drawing the frozen ``engines.quant`` result it is handed."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from engines.quant.explore import LayerAnalysis
from engines.quant.study import FixesStudy
from explorer.ui.bar_chart import bar_chart
from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import log_axes, make_plot, pen, set_title
from panels._quant_views import Items, column, curve, rename, tidy

WONLY_TITLE = "Weight-only error on held-out tokens"


def _over(item: pg.PlotDataItem) -> pg.PlotDataItem:
    """A thin curve drawn above the thick original one, so the spikes do not hide it."""
    item.setZValue(2)
    return item


class FixesView(QWidget):
    """W8A8 with the three fixes: error bars, the smoothed channel maxima and the α sweep, under the
    ``header`` the panel hands it (the α slider it binds)."""

    def __init__(self, theme, header: QWidget) -> None:
        super().__init__()
        self.theme = theme
        self.page = self
        g = QGridLayout(self)
        g.addWidget(header, 0, 0, 1, 2)
        self.fix_plot = make_plot(theme, "Held-out relative output error, W8A8 per-tensor unless named",
                                  "", "relative error")
        self.dist_plot = make_plot(theme, "Per-channel max|x| the int8 scale must cover", "max|x| (log)",
                                   "input channel")
        log_axes(self.dist_plot, y=True)
        tidy(self.dist_plot, theme, legend="below")
        self.sq_plot = make_plot(theme, "SmoothQuant: error against α (migration strength)", "relative error", "α")
        # two columns stacked on their own, not rows shared: the bars' chart (tall, a row per fix) over
        # the text that reads it, beside the two line charts; shared rows summed both columns' tallest
        # and pushed the view past a 1280x800 presenter slide
        left, right = QVBoxLayout(), QVBoxLayout()
        left.addWidget(self.fix_plot, 1)
        self.fix_text = QLabel()
        self.fix_text.setWordWrap(True)
        left.addWidget(self.fix_text)
        right.addWidget(self.dist_plot, 1)
        right.addWidget(self.sq_plot, 1)
        g.addLayout(left, 1, 0)
        g.addLayout(right, 1, 1)
        g.setRowStretch(1, 1)
        # half the width each: in a narrower first column every bar's name took two lines, and the bars'
        # chart, a line per name, pushed the view past a projector's height
        g.setColumnStretch(0, 1)
        g.setColumnStretch(1, 1)
        self.result: FixesStudy | None = None
        self._curve = None               # the sweep drawn: a new α only moves the marker
        self.sq_items, self.dist_items = Items(self.sq_plot), Items(self.dist_plot)

    def show_result(self, s: FixesStudy | None) -> None:
        self.result, th = s, self.theme
        if s is None:
            bar_chart(self.fix_plot, th, [], [])
            self.sq_items.drop_all()
            self.dist_items.drop_all()
            self._curve = None
            self.fix_text.setText("The three fixes need activations: pick a pack layer.")
            return
        bar_chart(self.fix_plot, th, [b.label for b in s.bars], [b.error for b in s.bars], "{:.4f}")
        items = self.sq_items
        if self._curve != (s.sq_curve, s.naive_error, th.name, th.font_scale):
            self._curve = (s.sq_curve, s.naive_error, th.name, th.font_scale)
            xs, ys = zip(*s.sq_curve)
            curve(items, "sweep", xs, ys, lambda: pg.PlotDataItem(pen=pen(th.color(2), 3), symbol="o",
                                                                   symbolBrush=th.color(2)))
            naive = items.get("naive", lambda: pg.InfiniteLine(
                angle=0, pen=pen(th.color(5), 2, Qt.DashLine), label="",
                labelOpts={"color": th.fg, "position": 0.45,                 # above the line,
                           "anchors": [(0.5, 1), (0.5, 1)]}))                # where the curve dips
            naive.setPos(s.naive_error)
            naive.label.setFormat(f"naive per-tensor {s.naive_error:.4f}")
            best = items.get("best", lambda: pg.TextItem("", color=th.fg, anchor=(0.5, 0)))
            best.setText(f"lowest: α = {s.best[0]:.2f}, {s.best[1]:.4f}")
            best.setPos(*s.best)           # under the lowest point, in room kept below the curve for it
            top = max(max(ys), s.naive_error)
            self.sq_plot.setYRange(max(0.0, s.best[1] - 0.35 * (top - s.best[1])), top, padding=0.05)
        items.get("alpha", lambda: pg.InfiniteLine(angle=90, pen=pen(th.fg, 2, Qt.DotLine))).setPos(s.alpha)
        self.fix_text.setText(
            f"Decompose (LLM.int8) keeps {s.int8_fp16_fraction:.1%} of input columns in 16-bit; rotate spreads"
            f" each spike over all channels; smooth divides channel j by s_j = max|X_j|^α / max|W_j|^(1−α). "
            f"Best α on this layer: {s.best[0]:.2f} (error {s.best[1]:.4f}); naive per-tensor W8A8 "
            f"{s.naive_error:.4f}.")
        # One point per channel (1536 on minilm.l0.ffn_out), zigzagging over decades: Qt strokes a dashed
        # pen wider than one pixel through its dash stroker, 110-140 ms a paint here against 1-20 ms for
        # a one-pixel one, so the dashed and dotted curves are one pixel wide (their style still tells them apart).
        pv, items = s.preview, self.dist_items
        ch = np.arange(len(pv.original))
        curve(items, "original", ch, np.maximum(pv.original, 1e-6),
              lambda: pg.PlotDataItem(pen=pen(th.color(5), 2), name="original"))
        smoothed = curve(items, "smoothed", ch, np.maximum(pv.smoothed, 1e-6),
                         lambda: _over(pg.PlotDataItem(pen=pen(th.color(2), 1, Qt.DashLine), name="smoothed")))
        rename(self.dist_plot, smoothed, f"smoothed, α={pv.alpha:.2f}")
        curve(items, "rotated", ch, np.maximum(pv.rotated, 1e-6),       # dash-dot: a 1-px dotted line fades on a projector
              lambda: _over(pg.PlotDataItem(pen=pen(th.color(4), 1, Qt.DashDotLine), name="Hadamard-rotated")))

    def apply_theme(self, theme) -> None:
        self.theme, self._curve = theme, None
        self.sq_items.drop_all()         # made again in the new colours
        self.dist_items.drop_all()
        if self.result is not None:
            self.show_result(self.result)


class WeightView(QWidget):
    """GPTQ's column-by-column trace (one column per timeline frame), AWQ's α search, weight-only
    errors and the weight histogram."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.page = self
        g = QGridLayout(self)
        self.gptq_plot = make_plot(theme, "GPTQ, column by column: error left after feedback vs RTN",
                                   "‖column error‖", "processed column")
        tidy(self.gptq_plot, theme, legend="over")   # room kept above the bars
        # one row of short names: three stacked entries were taller than the chart a 1280x800 window
        # leaves it, and ran over the axis
        legend = self.gptq_plot.getPlotItem().legend
        legend.setColumnCount(3)
        legend.layout.setHorizontalSpacing(16)       # each name apart from the next entry's sample
        self.gptq_plot.getViewBox().sigResized.connect(self._plot_resized)
        self.gptq_text = LiveText()      # under its chart: one view with the numbers it explains
        self.gptq_text.reserve_lines(3)
        self.gptq_cell = column(self.gptq_plot, self.gptq_text)
        g.addWidget(self.gptq_cell, 0, 0)
        self.awq_plot = make_plot(theme, "AWQ: output MSE against α (s = mean|x|^α)", "MSE", "α")
        g.addWidget(self.awq_plot, 0, 1)
        self.wonly_plot = make_plot(theme, WONLY_TITLE, "", "relative error")
        g.addWidget(self.wonly_plot, 1, 0)
        self.hist_plot = make_plot(theme, "Weight histogram before and after", "count (log)", "weight value")
        log_axes(self.hist_plot, y=True)
        tidy(self.hist_plot, theme, legend="below")
        g.addWidget(self.hist_plot, 1, 1)
        self.analysis: LayerAnalysis | None = None
        self._gptq = None
        self._gptq_range = None
        self.hist_items, self.awq_items = Items(self.hist_plot), Items(self.awq_plot)

    def apply_theme(self, theme) -> None:
        """The GPTQ bars are re-made in the new colours by the next draw."""
        self.theme = theme
        self.hist_items.drop_all()
        self.awq_items.drop_all()
        if self._gptq is not None:
            for item in self._gptq:
                self.gptq_plot.removeItem(item)
            self._gptq, self._gptq_range = None, None
        if self.analysis is not None:
            self.show_result(self.analysis)

    def show_result(self, a: LayerAnalysis) -> None:
        self.analysis, th = a, self.theme
        bar_chart(self.wonly_plot, th, [f"{m.name} {m.bits_per_weight:.3g} b/w" for m in a.methods],
                  [m.error for m in a.methods], "{:.4f}")
        # the sample sizes the bars stand on, on the chart itself: a slide of it says how they were judged
        set_title(self.wonly_plot, WONLY_TITLE if not a.calib_tokens else (
            f"Weight-only error on {a.heldout_tokens:,} held-out tokens "
            f"({a.shape[1]:,} inputs, calibrated on {a.calib_tokens:,} tokens)"))
        h = a.weight_hist
        edges = np.asarray(h.edges)
        for name, counts, style, ci in (("original", h.original, Qt.SolidLine, 0), ("RTN", h.rtn, Qt.DashLine, 5),
                                        ("AWQ", h.awq, Qt.DotLine, 2)):
            if counts is None:
                self.hist_items.drop(name)
            else:
                curve(self.hist_items, name, edges, np.maximum(counts, 0.5),
                      lambda name=name, style=style, ci=ci: pg.PlotDataItem(
                          stepMode="center", pen=pen(th.color(ci), 2, style), name=name))
        if a.awq_curve:
            xs, ys = zip(*a.awq_curve)
            curve(self.awq_items, "curve", xs, ys, lambda: pg.PlotDataItem(
                pen=pen(th.color(2), 3), symbol="o", symbolBrush=th.color(2)))
            chosen = self.awq_items.get("chosen", lambda: pg.InfiniteLine(
                angle=90, pen=pen(th.fg, 2, Qt.DashLine), label="", labelOpts={"color": th.fg, "position": 0.85}))
            chosen.setPos(a.awq_alpha)
            chosen.label.setFormat(f"chosen α = {a.awq_alpha:.2f}")
        else:
            self.awq_items.drop_all()
        if a.gptq_trace:
            self.show_frame(len(a.gptq_trace) - 1)
        else:
            self.gptq_plot.clear()
            self._gptq = None
            self.gptq_text.setText("GPTQ and AWQ need calibration activations: pick a pack layer.")

    def show_frame(self, k: int) -> None:
        """The GPTQ trace up to processed column ``k`` (a timeline frame)."""
        a, th = self.analysis, self.theme
        trace = a.gptq_trace[:k + 1]
        p = self.gptq_plot
        if self._gptq is None:           # made once; frames only update them
            self._gptq = (Bars(x=[], height=[], width=0.4, brush=th.color(5), pen=pen(th.fg, 1),
                               name="RTN"),
                          Bars(x=[], height=[], width=0.4, brush=th.color(4), pen=pen(th.fg, 1),
                               name="GPTQ"),
                          pg.PlotDataItem([], [], pen=pen(th.color(2), 2, Qt.DashLine), symbol="t",
                                          symbolBrush=th.color(2), name="error pushed onward"))
            for item in self._gptq:                         # the legend reads left to right: RTN, GPTQ, pushed
                p.addItem(item)
            self._gptq[2].setZValue(5)                      # the pushed-error line over the bars, not hidden
        rtn, gptq, pushed = self._gptq
        xs = np.arange(len(trace))
        n = len(a.gptq_trace)
        rtn.setOpts(x=xs - 0.2, height=[t["rtn_error"] for t in trace])
        gptq.setOpts(x=xs + 0.2, height=[t["quant_error"] for t in trace])
        pushed.setData(xs, [t["pushed"] for t in trace])
        self.fit_gptq_range()
        t = trace[-1]
        # short: in a 1500×950 window with docks the longer text took a line too many and the tab scrolled
        self.gptq_text.setText(
            f"Column {k + 1}/{n} (input channel {t['column']}) quantized; its error (‖Δ‖ = {t['pushed']:.3g}, "
            f"dashed) goes onto the columns not yet quantized through the inverse Hessian. Bars: each column's "
            f"own error ‖w − q‖, RTN left, GPTQ right; GPTQ's may be larger, yet the layer's output error is lower.")

    def _plot_resized(self, *_args) -> None:
        self.fit_gptq_range()

    def fit_gptq_range(self) -> None:
        """The whole trace's range, with room above the bars for the legend (the bars fill the width,
        and the legend keeps its size in pixels: a short chart needs more of its range for it)."""
        a, p = self.analysis, self.gptq_plot
        if a is None or not a.gptq_trace or self._gptq is None:
            return
        n = len(a.gptq_trace)
        legend_px = p.getPlotItem().legend.boundingRect().height() + 16
        view_px = max(p.getViewBox().height(), 120.0)
        if self._gptq_range != (id(a), n, legend_px, view_px):
            self._gptq_range = (id(a), n, legend_px, view_px)
            p.setXRange(-1, n, padding=0)
            ymax = max(max(t["rtn_error"], t["quant_error"], t["pushed"]) for t in a.gptq_trace)
            p.setYRange(0, range_end_for_label(ymax * 1.05, 0.0, legend_px, view_px, 0.4 * view_px), padding=0)
            p.getViewBox().updateMatrix()


class GroupsView(QWidget):
    """Bits per weight against error over group sizes, and the W4A16 / W8A8 / W4A4 schemes."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.page = self
        g = QGridLayout(self)
        self.group_plot = make_plot(theme, "Group size: bits per weight against error (RTN)", "relative error",
                                    "bits per weight")
        g.addWidget(self.group_plot, 0, 0)
        self.scheme_plot = make_plot(theme, "W4A16 / W8A8 / W4A4 on this layer", "", "relative error")
        g.addWidget(self.scheme_plot, 0, 1)
        self.result: LayerAnalysis | None = None
        self.items = Items(self.group_plot)

    def apply_theme(self, theme) -> None:
        self.theme = theme
        self.items.drop_all()            # made again in the new colours
        if self.result is not None:
            self.show_result(self.result)

    def show_result(self, a: LayerAnalysis) -> None:
        self.result, th = a, self.theme
        sweep = a.group_sweep
        gp, items = self.group_plot, self.items
        set_title(gp, f"Group size, {a.bits}-bit RTN: bits per weight against error")   # the b of b + 32/g
        curve(items, "sweep", [r["bpw"] for r in sweep], [r["error"] for r in sweep], lambda: pg.PlotDataItem(
            pen=pen(th.color(4), 2), symbol="s", symbolBrush=th.color(4), symbolSize=12))
        for i, r in enumerate(sweep):
            t = items.get(("group", i), lambda: pg.TextItem("", color=th.fg, anchor=(0, 1)))
            # the figures the tour cites; a scale alone (no zero) on the same line, so labels stay two lines high
            t.setText(f"g{r['group']}: {r['bpw']:.3g} bits ({r['bpw_scale_only']:.4g} scale only)\n"
                      f"error {r['error']:.4f}")
            t.setAnchor((1, 1) if len(sweep) > 1 and r['bpw'] == max(q['bpw'] for q in sweep) else (0, 1))   # rightmost reads left
            t.setPos(r["bpw"], r["error"])
        items.drop(*[k for k in items.made if k[0] == "group" and k[1] >= len(sweep)])
        if sweep:   # room above and to the right of the points for their labels
            xs, ys = [r["bpw"] for r in sweep], [r["error"] for r in sweep]
            x_span, y_span = max(xs) - min(xs) or 1.0, max(ys) - min(ys) or max(ys) or 1.0
            gp.setRange(xRange=(min(xs), max(xs) + 0.18 * x_span), yRange=(min(ys), max(ys) + 0.25 * y_span))
        bar_chart(self.scheme_plot, th, [r["scheme"] for r in a.schemes],
                  [r["relative_error"] for r in a.schemes], "{:.4f}")   # four digits, as the fixes' bars
