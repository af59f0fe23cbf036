"""The quantization panel's first views (the worked example, the outliers), each a QWidget drawing the
frozen ``engines.quant`` result it is handed, and the drawing helpers the other views share."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
                               QWidget)

from engines.quant.explore import LayerAnalysis
from engines.quant.study import HeatProfile, LayerSetup
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import legend_below, log_axes, make_plot, no_si_prefix, pen, style_axis, style_legend

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


class Items:
    """One plot's items, made once per theme and updated in place (``setData``, ``setPos``): clearing the
    plot and making new items on every result cost the quant panel ~0.1 s of GUI thread per analysis
    (each new pyqtgraph item connects its signals and joins the legend)."""

    def __init__(self, plot) -> None:
        self.plot = plot
        self.made: dict = {}

    def get(self, key, make):
        """The item ``key``, made by ``make()`` and added to the plot the first time; shown."""
        item = self.made.get(key)
        if item is None:
            item = self.made[key] = make()
            self.plot.addItem(item)
        item.show()
        return item

    def drop(self, *keys) -> None:
        """Take these items off the plot (and its legend): the result has nothing for them."""
        for key in keys:
            item = self.made.pop(key, None)
            if item is not None:
                self.plot.removeItem(item)

    def drop_all(self) -> None:
        """A new theme, or a result with nothing to draw: the next draw makes the items again."""
        self.drop(*list(self.made))


def curve(items: Items, key, xs, ys, make) -> pg.PlotDataItem:
    """``items[key]`` (made by ``make()``) showing ``(xs, ys)``."""
    item = items.get(key, make)
    item.setData(xs, ys)
    return item


def rename(plot, item, name: str) -> None:
    """A legend entry's new text (an item made once keeps the name it was made with)."""
    legend = plot.getPlotItem().legend
    label = legend.getLabel(item) if legend is not None else None
    if label is not None and label.text != name:
        label.setText(name)


# --- layout helpers ----------------------------------------------------------------------------
def column(*widgets, parent: QWidget | None = None) -> QWidget:
    """``widgets`` stacked in one cell (the first takes the height left): a chart and its text as one
    view a tour can focus on, so the numbers stay with the picture (``parent``: fill it instead)."""
    cell = parent if parent is not None else QWidget()
    box = QVBoxLayout(cell)
    box.setContentsMargins(0, 0, 0, 0)
    for i, w in enumerate(widgets):
        box.addWidget(w, 1 if i == 0 else 0)
    return cell


def label(grid, row: int, col: int, span: int = 1) -> QLabel:
    text = QLabel()
    text.setWordWrap(True)
    grid.addWidget(text, row, col, 1, span)
    return text


class AffineView(QWidget):
    """The worked example: eight real weights on the integer grid, one step per timeline frame."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.page = self                 # the name the tab had when it was a page of a helper
        g = QGridLayout(self)
        self.text = LiveText()
        self.text.reserve_lines(5)
        g.addWidget(self.text, 0, 0)
        self.plot = make_plot(theme, "Eight real weights (row 0 of the tensor) on the integer grid", "value",
                              "weight index")
        g.addWidget(self.plot, 1, 0)
        g.setRowStretch(1, 1)
        self._items: dict | None = None
        self.steps: tuple = ()
        self.index = 0
        self._levels = (0, 0.0)           # how many levels are drawn, and their spacing in data units
        vb = self.plot.getViewBox()
        vb.sigResized.connect(self._thin_labels)
        vb.sigRangeChanged.connect(self._thin_labels)

    def show_result(self, setup: LayerSetup) -> None:
        """The worked example of ``setup`` (row 0 of its tensor), from its first step."""
        self.steps = setup.steps
        self.show_frame(0)

    def show_frame(self, k: int) -> None:
        """Step ``k`` of the worked example (a timeline frame)."""
        self.index = k
        self._draw(self.steps, k, self.theme)

    def apply_theme(self, theme) -> None:
        self.theme = theme
        if self.steps:
            self.show_frame(self.index)

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

    def _draw(self, steps, k: int, th) -> None:
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
        self._levels = (len(levels), abs(float(s["scale"])))
        self._thin_labels()
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


    def _thin_labels(self, *_args) -> None:
        """Name every level when the lines are far enough apart for their labels, else every k-th one
        (from q = qmin): sixteen 4-bit levels on a short chart wrote their names over each other."""
        n, step = self._levels
        if self._items is None or n == 0:
            return
        vb = self.plot.getViewBox()
        y0, y1 = vb.viewRange()[1]
        apart = step * vb.height() / (y1 - y0) if y1 > y0 else 0.0
        labels = self._items["labels"][:n]
        tall = max(label.textItem.boundingRect().height() for label in labels)
        every = max(1, math.ceil(tall / apart)) if apart > 0 else n
        for i, label in enumerate(labels):
            label.setVisible(i % every == 0)


class CollapseView(QWidget):
    """Per-tensor int8 codes of the ordinary channels with and without the outlier channels."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.plot = make_plot(theme, "One outlier destroys a tensor: per-tensor int8 codes of the"
                              " ordinary channels", "count (log)", "int8 code")
        log_axes(self.plot, y=True)
        tidy(self.plot, theme, legend="below")
        self.text = QLabel()
        self.text.setWordWrap(True)
        column(self.plot, self.text, parent=self)
        self.items = Items(self.plot)
        self.result: LayerAnalysis | None = None

    def show_result(self, a: LayerAnalysis | None) -> None:
        self.result = a
        th, items = self.theme, self.items
        if a is None or not a.collapse:
            items.drop_all()
            self.text.setText("Needs activations (pick a pack layer).")
            return
        c = a.collapse
        edges = np.arange(-127.5, 128.5, 1.0)
        curve(items, "without", edges, np.maximum(c["codes_without"], 0.5),
              lambda: pg.PlotDataItem(stepMode="center", pen=pen(th.color(4), 2), name="outlier channels removed"))
        curve(items, "with", edges, np.maximum(c["codes_with"], 0.5),
              lambda: pg.PlotDataItem(stepMode="center", pen=pen(th.color(5), 3, Qt.DashLine),
                                      name="with the outlier channels"))
        self.text.setText(
            f"Per-tensor int8 of the held-out activations. With outlier channels {c['outlier_channels']} in the "
            f"tensor, scale = {c['scale_with']:.4g} and the ordinary channels use only <b>{c['levels_with']}</b> of "
            f"255 levels; without them scale = {c['scale_without']:.4g} and they use <b>{c['levels_without']}</b>.")

    def apply_theme(self, theme) -> None:
        self.theme = theme
        self.items.drop_all()           # made again in the new colours
        if self.result is not None:
            self.show_result(self.result)


class OutlierView(QWidget):
    """The activation heat-map of one site (pack or live), with the per-tensor int8 collapse beside it.
    Emits ``capture_requested(text)`` when the user asks for a live capture of the text typed."""

    capture_requested = Signal(str)

    def __init__(self, theme, live_bar: QWidget) -> None:
        super().__init__()
        self.page = self
        g = QGridLayout(self)
        row = QHBoxLayout()
        self.model_box = QComboBox()
        self.model_box.setAccessibleName("Model for the activation profile")
        self.site_box = QComboBox()
        self.site_box.setAccessibleName("Linear-input site")
        self.live_text = QLineEdit()
        self.live_text.setPlaceholderText("Type text, then capture live activations (needs pip install .[models])")
        self.live_button = QPushButton("Capture live")
        self.live_button.clicked.connect(self._request_capture)
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
        self.heat_cell = column(self.heat_plot, self.heat_text)
        g.addWidget(self.heat_cell, 1, 0)
        self.collapse = CollapseView(theme)
        self.collapse_cell, self.collapse_plot, self.collapse_text = self.collapse, self.collapse.plot, self.collapse.text
        g.addWidget(self.collapse, 1, 1)
        g.setRowStretch(1, 1)

    def _request_capture(self) -> None:
        self.capture_requested.emit(self.live_text.text())

    def show_missing(self, model: str, site_label: str) -> None:
        """``model`` has no profile of that site in the pack."""
        self.heat_text.setText(f"{model} has no {site_label} profile in the pack.")
        self.heat_img.clear()

    def show_result(self, h: HeatProfile) -> None:
        self.heat_img.setImage(h.log_max.T, autoLevels=False)        # x = channel, y = block
        self.heat_bar.setLevels(h.levels)
        live_note = "" if h.live_tokens is None else f" (live: your text, {h.live_tokens} tokens)"
        self.heat_text.setText(
            f"<b>{h.model} · {h.site_label}</b>{live_note}: bright vertical lines are outlier channels that"
            f" recur block after block. Top channel per block most often: "
            + ", ".join(f"ch {c} ({n}×)" for c, n in h.common)
            + f". Largest max/median: block {h.worst_block}, channel {h.worst_channel}, {h.worst_ratio:,.0f}× the "
              "median.")

    def apply_theme(self, theme) -> None:
        """The colour bar: its title (left), its scale (right) and its frame in the theme's colours."""
        for side in ("left", "right", "top", "bottom"):
            style_axis(self.heat_bar.getAxis(side), theme)
        scale = self.heat_bar.getAxis("right")            # room for the scale's text at any text size
        scale.setWidth(int(QFontMetrics(scale.style["tickFont"]).horizontalAdvance("0.00") + 12))
        self.collapse.apply_theme(theme)


class SummaryView(QLabel):
    """The layer's errors at these bits in one paragraph: the set-up at once, then the analysis."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)

    def show_setup(self, setup: LayerSetup) -> None:
        self.setText(setup.inputs.summary() + " — analysing…")

    def show_result(self, a: LayerAnalysis) -> None:
        text = f"<b>{a.name}</b>: weight {a.shape}; GPTQ/AWQ on the first {a.rows_used} output rows. "
        if a.has_activations:
            m = {k: a.method(k).error for k in ("rtn", "gptq", "gptq_act_order", "awq")}
            text += (f"{a.bits}-bit, group {a.group_size or 'per row'}: RTN error {m['rtn']:.4f}, "
                     f"GPTQ {m['gptq']:.4f} (act-order {m['gptq_act_order']:.4f}), "
                     f"AWQ {m['awq']:.4f} (α = {a.awq_alpha:.2f}); lowest at {a.bits} bits: {a.lowest().name}.")
            if a.calib_tokens:
                text += (f" Calibration: {a.calib_tokens:,} tokens; errors measured on {a.heldout_tokens:,} "
                         "held-out tokens.")
        else:
            text += "No activations: weight-only errors ‖W−Ŵ‖/‖W‖; GPTQ, AWQ and the W8A8 fixes need a pack layer."
        self.setText(text)
