"""The quantization panel's tabs (each builds its page and draws the engine results it is handed),
and their drawing helpers: labelled bar charts and step histograms."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
                               QWidget)

from engines.quant.params import PROFILE_SITES
from explorer.ui.fast_items import Bars
from explorer.ui.bar_chart import bar_chart
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import legend_below, log_axes, make_plot, no_si_prefix, pen, style_legend

def tidy(plot, theme, legend: str | None = None):
    """No SI-prefix rescaling of axes (values are read as printed); optional readable legend,
    ``"below"`` the chart (curves that fill the view) or ``"over"`` it (top right)."""
    for name in ("left", "bottom"):
        no_si_prefix(plot.getAxis(name))
    if legend == "below":
        style_legend(legend_below(plot, most=3), theme)
    elif legend == "over":
        style_legend(plot.addLegend(offset=(-10, 10), pen=pen(theme.grid, 1)), theme)
    elif legend is not None:
        raise ValueError(f"legend must be 'below', 'over' or None, not {legend!r}")
    return plot


def step_hist(plot, edges, counts, color: str, name: str, style=Qt.SolidLine, width: float = 2.0):
    item = pg.PlotDataItem(edges, counts, stepMode="center", pen=pen(color, width, style), name=name)
    plot.addItem(item)
    return item


# --- the tabs: each builds its page and draws engine results it is handed -----------------------
def _page(tabs, title: str) -> QGridLayout:
    page = QWidget()
    grid = QGridLayout(page)
    tabs.addTab(page, title)
    return grid


def _column(grid, row: int, col: int, *widgets) -> QWidget:
    """``widgets`` stacked in one cell (the first takes the height left): a chart and its text as one
    view a tour can focus on, so the numbers stay with the picture."""
    cell = QWidget()
    box = QVBoxLayout(cell)
    box.setContentsMargins(0, 0, 0, 0)
    for i, w in enumerate(widgets):
        box.addWidget(w, 1 if i == 0 else 0)
    grid.addWidget(cell, row, col)
    return cell


def _label(grid, row: int, col: int, span: int = 1) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    grid.addWidget(label, row, col, 1, span)
    return label


class AffineView:
    """The worked example: eight real weights on the integer grid, one step per timeline frame."""

    def __init__(self, tabs, theme) -> None:
        g = _page(tabs, "Affine mapping")
        self.page = g.parentWidget()
        self.text = LiveText()
        self.text.reserve_lines(5)
        g.addWidget(self.text, 0, 0)
        self.plot = make_plot(theme, "Eight real weights (row 0 of the tensor) on the integer grid", "value",
                              "weight index")
        g.addWidget(self.plot, 1, 0)
        g.setRowStretch(1, 1)
        self._items: dict | None = None

    def _made(self) -> dict:
        """The plot items, made once: a frame only moves them (per-frame work < 5 ms)."""
        if self._items is None:
            p = self.plot
            items = {"lines": [], "labels": [],
                     "x": pg.ScatterPlotItem(symbol="o", size=14, name="x (original)"),
                     "xhat": pg.ScatterPlotItem(symbol="s", size=12),
                     "links": pg.PlotDataItem([], [], connect="pairs")}
            for key in ("links", "x", "xhat"):
                p.addItem(items[key])
            p.setXRange(-0.5, 8.6, padding=0)          # room for the "q=…" level labels right of weight 7
            self._items = items
        return self._items

    def draw(self, steps, k: int, th) -> None:
        if not steps:
            return
        s = steps[k]
        items = self._made()
        xs = np.arange(len(s["values"]), dtype=float)
        levels = [(q, s["scale"] * (q - s["zero"])) for q in range(int(s["qmin"]), int(s["qmax"]) + 1)]
        while len(items["lines"]) < len(levels):            # integer grid: every level x′ = scale·(q − zero)
            line, label = pg.InfiniteLine(angle=0), pg.TextItem("", anchor=(0, 0.5))
            self.plot.addItem(line)
            self.plot.addItem(label)
            items["lines"].append(line)
            items["labels"].append(label)
        for i, (line, label) in enumerate(zip(items["lines"], items["labels"])):
            on = i < len(levels)
            line.setVisible(on)
            label.setVisible(on)
            if on:
                q, level = levels[i]
                line.setPos(level)
                line.setPen(pen(th.grid, 1, Qt.DashLine))
                label.setText(f"q={q}", color=th.muted)
                label.setPos(len(xs) - 0.3, level)
        items["x"].setData(xs, s["values"], brush=th.color(4), pen=pen(th.fg, 1))
        order = [st["step"] for st in steps]
        shown_hat = order.index(s["step"]) >= order.index("dequant")
        items["xhat"].setVisible(shown_hat)
        items["links"].setVisible(shown_hat)
        if shown_hat:
            items["xhat"].setData(xs, s["dequant"], brush=th.color(5), pen=pen(th.fg, 1))
            items["links"].setData(np.repeat(xs, 2), np.column_stack([s["values"], s["dequant"]]).ravel(),
                                   pen=pen(th.fg, 1.5, Qt.DotLine))
        row = s["row"]
        shown = "" if row is None else "  ".join(f"{v:.3g}" for v in row)
        codes = "  ".join(str(int(c)) for c in s["codes"])
        self.text.setText(
            f"<span style='font-size:{th.point_size * 1.4:.0f}pt'><b>Step {k + 1}/{len(steps)}:</b> "
            f"{s['text']}</span><br>x = {'  '.join(f'{v:.3g}' for v in s['values'])}<br>"
            + (f"→ {shown}<br>" if shown else "")
            + f"codes q = {codes} &nbsp; (● original x, ■ de-quantized x′; dashed lines: the "
              f"{int(s['qmax'] - s['qmin'] + 1)} levels)")


class OutlierView:
    """The activation heat-map of one site (pack or live) and the per-tensor int8 collapse."""

    def __init__(self, tabs, theme, live_bar) -> None:
        g = _page(tabs, "Outliers")
        self.page = g.parentWidget()
        row = QHBoxLayout()
        self.model_box = QComboBox()
        self.model_box.setAccessibleName("Model for the activation profile")
        self.site_box = QComboBox()
        self.site_box.setAccessibleName("Linear-input site")
        self.live_text = QLineEdit()
        self.live_text.setPlaceholderText("Type text, then capture live activations (needs pip install .[models])")
        self.live_button = QPushButton("Capture live")
        row.addWidget(QLabel("Profile:"))
        row.addWidget(self.model_box)
        row.addWidget(self.site_box)
        row.addWidget(self.live_text, 2)
        row.addWidget(self.live_button)
        g.addLayout(row, 0, 0, 1, 2)
        self.live_bar = live_bar            # its own row, shown once a capture starts: the controls' row
        live_bar.hide()                     # must stay narrow enough for a projector at presenter size
        g.addWidget(live_bar, 3, 0, 1, 2)
        self.heat_plot = make_plot(theme, "log₁₀ max|x| per input channel, block after block", "block",
                                   "input channel")
        self.heat_img = pg.ImageItem()
        self.heat_plot.addItem(self.heat_img)
        self.heat_bar = pg.ColorBarItem(colorMap=pg.colormap.get("cividis"), label="log₁₀ max|x|", interactive=False)
        self.heat_bar.setImageItem(self.heat_img, insert_in=self.heat_plot.getPlotItem())
        self.heat_text = QLabel()
        self.heat_text.setWordWrap(True)
        self.heat_cell = _column(g, 1, 0, self.heat_plot, self.heat_text)
        self.collapse_plot = make_plot(theme, "One outlier destroys a tensor: per-tensor int8 codes of the"
                                       " ordinary channels", "count (log)", "int8 code")
        log_axes(self.collapse_plot, y=True)
        tidy(self.collapse_plot, theme, legend="below")
        self.collapse_text = QLabel()
        self.collapse_text.setWordWrap(True)
        self.collapse_cell = _column(g, 1, 1, self.collapse_plot, self.collapse_text)
        g.setRowStretch(1, 1)

    def draw_heatmap(self, h, model: str, site: str) -> None:
        if h is None:
            self.heat_text.setText(f"{model} has no {PROFILE_SITES[site]} profile in the pack.")
            self.heat_img.clear()
            return
        self.heat_img.setImage(h.log_max.T, autoLevels=False)        # x = channel, y = block
        self.heat_bar.setLevels(h.levels)
        live_note = "" if h.live_tokens is None else f" (live: your text, {h.live_tokens} tokens)"
        self.heat_text.setText(
            f"<b>{h.model} · {h.site_label}</b>{live_note}: bright vertical lines are outlier channels that"
            f" recur block after block. Top channel per block most often: "
            + ", ".join(f"ch {c} ({n}×)" for c, n in h.common)
            + f". Largest max/median: block {h.worst_block}, channel {h.worst_channel}, {h.worst_ratio:,.0f}× the "
              "median.")

    def draw_collapse(self, a, th) -> None:
        p = self.collapse_plot
        p.clear()
        if a is None or not a.collapse:
            self.collapse_text.setText("Needs activations (pick a pack layer).")
            return
        c = a.collapse
        edges = np.arange(-127.5, 128.5, 1.0)
        step_hist(p, edges, np.maximum(c["codes_without"], 0.5), th.color(4), "outlier channels removed")
        step_hist(p, edges, np.maximum(c["codes_with"], 0.5), th.color(5), "with the outlier channels",
                  Qt.DashLine, 3)
        self.collapse_text.setText(
            f"Per-tensor int8 of the held-out activations. With outlier channels {c['outlier_channels']} in the "
            f"tensor, scale = {c['scale_with']:.4g} and the ordinary channels use only <b>{c['levels_with']}</b> of "
            f"255 levels; without them scale = {c['scale_without']:.4g} and they use <b>{c['levels_without']}</b>.")


def fix_bars(a, alpha: float, error: float | None) -> tuple[list[str], list[float]]:
    """The W8A8 bars, the SmoothQuant one at ``alpha`` (its sweep ``error``, or the analysed one)."""
    names = [k for k in a.w8a8 if not k.startswith("_")]
    labels = [f"SmoothQuant α={alpha:.2f}" if k.startswith("SmoothQuant") else k for k in names]
    values = [error if k.startswith("SmoothQuant") and error is not None else a.w8a8[k] for k in names]
    return labels, values


class FixesView:
    """W8A8 with the three fixes: error bars, the smoothed channel maxima and the α sweep."""

    def __init__(self, tabs, theme, alpha_slider) -> None:
        g = _page(tabs, "Three fixes (W8A8)")
        self.page = g.parentWidget()
        self.alpha_slider = alpha_slider
        g.addWidget(alpha_slider, 0, 0, 1, 2)
        self.fix_plot = make_plot(theme, "Held-out relative output error, W8A8 per-tensor unless named",
                                  "", "relative error")
        g.addWidget(self.fix_plot, 1, 0)
        self.dist_plot = make_plot(theme, "Per-channel max|x| the int8 scale must cover", "max|x| (log)",
                                   "input channel")
        log_axes(self.dist_plot, y=True)
        tidy(self.dist_plot, theme, legend="below")
        g.addWidget(self.dist_plot, 1, 1)
        self.sq_plot = make_plot(theme, "SmoothQuant: error against α (migration strength)", "relative error", "α")
        g.addWidget(self.sq_plot, 2, 0)
        self.fix_text = _label(g, 2, 1)
        g.setRowStretch(1, 1)
        g.setRowStretch(2, 1)
        self.alpha_marker = None

    def draw(self, a, alpha: float, best, th) -> None:
        if a is None or not a.w8a8:
            bar_chart(self.fix_plot, th, [], [])
            self.sq_plot.clear()
            self.dist_plot.clear()
            self.alpha_marker = None
            self.fix_text.setText("The three fixes need activations: pick a pack layer.")
            return
        bar_chart(self.fix_plot, th, *fix_bars(a, alpha, dict(a.sq_curve).get(round(alpha, 2))), "{:.4f}")
        self.sq_plot.clear()
        xs, ys = zip(*a.sq_curve)
        self.sq_plot.plot(xs, ys, pen=pen(th.color(2), 3), symbol="o", symbolBrush=th.color(2))
        self.sq_plot.addItem(pg.InfiniteLine(pos=a.w8a8["naive per-tensor W8A8"], angle=0,
                                             pen=pen(th.color(5), 2, Qt.DashLine), label="naive per-tensor",
                                             labelOpts={"color": th.fg, "position": 0.45,          # above the line, where
                                                        "anchors": [(0.5, 1), (0.5, 1)]}))  # the curve dips
        self.alpha_marker = pg.InfiniteLine(pos=alpha, angle=90, pen=pen(th.fg, 2, Qt.DotLine))
        self.sq_plot.addItem(self.alpha_marker)
        self.fix_text.setText(
            f"Decompose (LLM.int8) keeps {a.w8a8['_int8_fp16_fraction']:.1%} of input columns in fp16; rotate spreads"
            f" each spike over all channels; smooth divides channel j by s_j = max|X_j|^α / max|W_j|^(1−α). "
            f"Best α on this layer: {best[0]:.2f} (error {best[1]:.4f}); naive per-tensor W8A8 "
            f"{a.w8a8['naive per-tensor W8A8']:.4f}.")

    def preview(self, a, pv, th) -> None:
        """The smoothed activation maxima at the slider's α, and its bar when the sweep has it."""
        if pv is None:
            return
        p = self.dist_plot
        p.clear()
        ch = np.arange(len(pv.original))
        p.plot(ch, np.maximum(pv.original, 1e-6), pen=pen(th.color(5), 2), name="original")
        p.plot(ch, np.maximum(pv.smoothed, 1e-6), pen=pen(th.color(2), 2, Qt.DashLine),
               name=f"smoothed, α={pv.alpha:.2f}")
        p.plot(ch, np.maximum(pv.rotated, 1e-6), pen=pen(th.color(4), 2, Qt.DotLine), name="Hadamard-rotated")
        if self.alpha_marker is not None:
            self.alpha_marker.setPos(pv.alpha)
            if pv.error is not None:
                bar_chart(self.fix_plot, th, *fix_bars(a, pv.alpha, pv.error), "{:.4f}")


class WeightView:
    """GPTQ's column-by-column trace, AWQ's α search, weight-only errors and the weight histogram."""

    def __init__(self, tabs, theme) -> None:
        g = _page(tabs, "GPTQ && AWQ")
        self.page = g.parentWidget()
        self.gptq_plot = make_plot(theme, "GPTQ, column by column: error left after feedback vs RTN",
                                   "‖column error‖", "processed column")
        tidy(self.gptq_plot, theme, legend="over")   # room kept above the bars
        self.gptq_plot.getViewBox().sigResized.connect(lambda *_a: self.fit_gptq_range())
        self.gptq_text = LiveText()      # under its chart: one view with the numbers it explains
        self.gptq_text.reserve_lines(5)
        self.gptq_cell = _column(g, 0, 0, self.gptq_plot, self.gptq_text)
        self.awq_plot = make_plot(theme, "AWQ: output MSE against α (s = mean|x|^α)", "MSE", "α")
        g.addWidget(self.awq_plot, 0, 1)
        self.wonly_plot = make_plot(theme, "Weight-only error on held-out tokens", "", "relative error")
        g.addWidget(self.wonly_plot, 1, 0)
        self.hist_plot = make_plot(theme, "Weight histogram before and after", "count (log)", "weight value")
        log_axes(self.hist_plot, y=True)
        tidy(self.hist_plot, theme, legend="below")
        g.addWidget(self.hist_plot, 1, 1)
        self.analysis = None
        self._gptq = None
        self._gptq_range = None

    def restyle(self) -> None:
        """The GPTQ bars are re-made in the new colours by the next draw."""
        if self._gptq is not None:
            for item in self._gptq:
                self.gptq_plot.removeItem(item)
            self._gptq, self._gptq_range = None, None

    def draw(self, a, th) -> None:
        self.analysis = a
        labels = list(a.weight_only)
        bar_chart(self.wonly_plot, th, [f"{k.split(' (')[0]} {a.bpw[k]:.3g} b/w" for k in labels],
                  [a.weight_only[k] for k in labels], "{:.4f}")
        hp = self.hist_plot
        hp.clear()
        edges = np.asarray(a.weight_hist["edges"])
        styles = {"original": (Qt.SolidLine, 0), "RTN": (Qt.DashLine, 5), "AWQ": (Qt.DotLine, 2)}
        for name, (style, ci) in styles.items():
            if name in a.weight_hist:
                step_hist(hp, edges, np.maximum(a.weight_hist[name], 0.5), th.color(ci), name, style)
        self.awq_plot.clear()
        if a.awq_curve:
            xs, ys = zip(*a.awq_curve)
            self.awq_plot.plot(xs, ys, pen=pen(th.color(2), 3), symbol="o", symbolBrush=th.color(2))
            self.awq_plot.addItem(pg.InfiniteLine(pos=a.awq_alpha, angle=90, pen=pen(th.fg, 2, Qt.DashLine),
                                                  label=f"chosen α = {a.awq_alpha:.2f}",
                                                  labelOpts={"color": th.fg, "position": 0.85}))
        if a.gptq_trace:
            self.draw_gptq(len(a.gptq_trace) - 1, th)
        else:
            self.gptq_plot.clear()
            self._gptq = None
            self.gptq_text.setText("GPTQ and AWQ need calibration activations: pick a pack layer.")

    def draw_gptq(self, k: int, th) -> None:
        a = self.analysis
        trace = a.gptq_trace[:k + 1]
        p = self.gptq_plot
        if self._gptq is None:           # made once; frames only update them
            self._gptq = (Bars(x=[], height=[], width=0.4, brush=th.color(5), pen=pen(th.fg, 1),
                               name="RTN column error"),
                          Bars(x=[], height=[], width=0.4, brush=th.color(4), pen=pen(th.fg, 1),
                               name="GPTQ column error"),
                          p.plot([], [], pen=pen(th.color(2), 2, Qt.DashLine), symbol="t", symbolBrush=th.color(2),
                                 name="error pushed onto later columns"))
            p.addItem(self._gptq[0])
            p.addItem(self._gptq[1])
            self._gptq[2].setZValue(5)                      # the pushed-error line over the bars, not hidden
        rtn, gptq, pushed = self._gptq
        xs = np.arange(len(trace))
        n = len(a.gptq_trace)
        rtn.setOpts(x=xs - 0.2, height=[t["rtn_error"] for t in trace])
        gptq.setOpts(x=xs + 0.2, height=[t["quant_error"] for t in trace])
        pushed.setData(xs, [t["pushed"] for t in trace])
        self.fit_gptq_range()
        t = trace[-1]
        self.gptq_text.setText(
            f"Column {k + 1}/{n} (input channel {t['column']}): GPTQ quantizes the column, then spreads its error "
            f"(‖Δ‖ = {t['pushed']:.3g}) onto the columns not yet quantized through the inverse Hessian of the "
            f"calibration inputs, so they absorb it. Left bars (RTN) vs right bars (GPTQ): the column's own error "
            f"‖w − q‖; GPTQ's per-column error may even be larger, yet the layer output error is lower.")

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


class GroupsView:
    """Bits per weight against error over group sizes, and the W4A16 / W8A8 / W4A4 schemes."""

    def __init__(self, tabs, theme) -> None:
        g = _page(tabs, "Groups && schemes")
        self.page = g.parentWidget()
        self.group_plot = make_plot(theme, "Group size: bits per weight against error (RTN)", "relative error",
                                    "bits per weight")
        g.addWidget(self.group_plot, 0, 0)
        self.scheme_plot = make_plot(theme, "W4A16 / W8A8 / W4A4 on this layer", "", "relative error")
        g.addWidget(self.scheme_plot, 0, 1)

    def draw(self, a, th) -> None:
        sweep = a.group_sweep
        gp = self.group_plot
        gp.clear()
        gp.plot([r["bpw"] for r in sweep], [r["error"] for r in sweep], pen=pen(th.color(4), 2), symbol="s",
                symbolBrush=th.color(4), symbolSize=12)
        for r in sweep:
            t = pg.TextItem(f"g{r['group']}", color=th.fg, anchor=(0, 1))
            t.setPos(r["bpw"], r["error"])
            gp.addItem(t)
        if sweep:   # room above and to the right of the points for their labels
            xs, ys = [r["bpw"] for r in sweep], [r["error"] for r in sweep]
            x_span, y_span = max(xs) - min(xs) or 1.0, max(ys) - min(ys) or max(ys) or 1.0
            gp.setRange(xRange=(min(xs), max(xs) + 0.18 * x_span), yRange=(min(ys), max(ys) + 0.15 * y_span))
        bar_chart(self.scheme_plot, th, [r["scheme"] for r in a.schemes],
                  [r["relative_error"] for r in a.schemes], "{:.3f}")
