"""The memory panel's GPU-count sweep and traffic views. Drawing only: every number comes from the
``engines.memory.study.MemoryStudy`` the panel hands over with ``show_result``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QGraphicsItem

from engines.core.scenario import STRATEGIES
from engines.memory import STRATEGY_SHORT
from engines.memory.study import MemoryStudy
from explorer.ui.fast_items import Scatter
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.pool import ItemPool
from explorer.ui.widgets import RowLegend, cache_static, make_plot
from panels._memory_style import SMALL_LABEL, MemoryChart, _nice_ceil  # noqa: F401 (_nice_ceil: importable here)

SWEEP_POINTS = 160  # points drawn per sweep curve: log-spaced, plenty for a 1…1024 log axis
SWEEP_STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.SolidLine, Qt.DashDotDotLine)
SWEEP_SYMBOLS = ("o", "s", "t", "d", "x", "+")


class SweepView(MemoryChart):
    """Per-GPU memory over 1…1024 GPUs for every strategy (log–log), the scenario's count marked."""

    def __init__(self, theme) -> None:
        super().__init__(theme)
        self.plot = make_plot(theme, "Per-GPU memory against GPU count (log–log)", "GB per GPU", "GPUs")
        self.plot.setAccessibleName("Sweep of per-GPU memory over 1 to 1024 GPUs for every strategy")
        self.plot.setLogMode(x=True, y=True)
        self.curves: list[tuple[pg.PlotDataItem, Scatter]] = []  # (line, markers) per strategy
        self.legend = RowLegend(colCount=6, frame=False)
        for s in STRATEGIES:
            line, marks = pg.PlotDataItem(), Scatter()
            self.plot.addItem(line)
            self.plot.addItem(marks)
            self.legend.addItem(line, STRATEGY_SHORT[s])
            self.curves.append((line, marks))
            for item in (line.curve, line.scatter, marks):  # redrawn only when the sweep changes
                item.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.plot.getPlotItem().layout.addItem(self.legend, 5, 1)
        self.marker = pg.InfiniteLine(angle=90, movable=False)  # the scenario's GPU count
        self.plot.addItem(self.marker)
        self.here = pg.TextItem(anchor=(0, 1))                   # your strategy's bytes at that count
        self.here.setZValue(5)
        self._y_span = (0.0, 1.0)                                # the value axis shown, in log10 units
        self.plot.addItem(self.here)
        self.box.addWidget(self.plot)
        self.box.addWidget(self.setup)
        cache_static(self.plot)
        self.pool = ItemPool(self.plot)
        self.plot.getViewBox().sigResized.connect(lambda *_a: self._fit_legend())

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.marker.setPen(self._pen(theme.muted, 1.5, Qt.DotLine))
        self.legend.setLabelTextColor(theme.fg)
        self.legend.row_height = QFontMetrics(self._font(0.85)).height() * 1.15 + 10  # + the label margins
        self.plot.setMinimumHeight(int(theme.point_size * 14))   # title, axis and legend leave the data room
        self._fit_legend()

    def _fit_legend(self) -> None:
        """As many legend columns as the chart's width holds (one row when the chart is wide, three at most)."""
        metrics = QFontMetrics(self._font(0.85))
        entry = max(metrics.horizontalAdvance(STRATEGY_SHORT[s]) for s in STRATEGIES) + 45
        entry += metrics.horizontalAdvance(" ◀ yours") / 3  # one entry in a row carries the mark
        cols = max(2, min(len(STRATEGIES), int(max(self.plot.width(), 300) // entry)))
        if cols != self.legend.columnCount:
            self.legend.setColumnCount(cols)
        self.legend.updateSize()

    def show_result(self, study: MemoryStudy) -> None:
        """The curves redraw only when the sweep changes (not on a GPU-count edit, which just moves
        the dotted marker)."""
        sw, strategy = study.sweep, study.scenario.strategy
        self.show_setup(study.scenario)
        cap = sw.gpu_memory / 1e9
        if self._changed("sweep", (sw.totals.tobytes(), strategy, cap)):
            for row, s in enumerate(sw.strategies):
                ok = ~np.isnan(sw.totals[row])
                x, y = sw.n_gpus[ok], sw.totals[row][ok] / 1e9
                keep = np.unique(np.geomspace(1, max(len(x), 1), SWEEP_POINTS).astype(int) - 1) if len(x) else []
                x, y = x[keep], y[keep]
                color = self.theme.color(row if row != 3 else 7)
                line, marks = self.curves[STRATEGIES.index(s)]
                line.setData(x, y, pen=self._pen(color, 2.5 if s == strategy else 1.8, SWEEP_STYLES[row]))
                m = np.unique(np.geomspace(1, len(x), 8).astype(int) - 1) if len(x) else []
                marks.setData(x=np.log10(x[m]), y=np.log10(y[m]), symbol=SWEEP_SYMBOLS[row],  # log axes: a bare
                              brush=self._brush(color),  # scatter item is placed in log10 units itself
                              pen=self._pen(self.theme.fg, 1), size=9)
                label = self.legend.getLabel(line)
                if label is not None:
                    label.setText(f"{STRATEGY_SHORT[s]}{' ◀ yours' if s == strategy else ''}", color=self.theme.fg,
                                  size=f"{self.theme.point_size * 0.85:.1f}pt")
            self._fit_legend()
            pool = self.pool
            pool.begin()
            pool.line(np.log10(cap), 0, self._pen(self.theme.error, 2.5, Qt.DashLine))
            pool.text(f"GPU memory {cap:,.0f} GB", (np.log10(1024), np.log10(cap)), (1, 1), self._font(0.75),
                      self.theme.fg)
            pool.end()
            finite = sw.totals[np.isfinite(sw.totals)] / 1e9
            lo, hi = min(finite.min(), cap), max(finite.max(), cap)
            nice = [m * 10.0**e for e in range(-3, 7) for m in (1, 2, 3, 5)]
            ticks = [v for v in nice if lo / 1.5 <= v <= hi * 1.5]
            self._set_axes(self.plot, "sweep", left=[(np.log10(v), f"{v:g}") for v in ticks],
                           bottom=[(np.log10(v), str(v)) for v in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)],
                           x_range=(-0.06, np.log10(1024) * 1.05), y_range=(np.log10(lo / 1.3), np.log10(hi * 1.4)))
            self._y_span = (np.log10(lo / 1.3), np.log10(hi * 1.4))
        self.marker.setPos(np.log10(study.scenario.n_gpus))
        own = study.own.total / 1e9
        self.here.setText(f"{STRATEGY_SHORT[strategy]}: {own:,.0f} GB at {study.scenario.n_gpus:,} GPUs",
                          color=self.theme.fg)
        self.here.setFont(self._font(0.85))
        y = np.log10(max(own, 1e-9))
        low, high = self._y_span
        below = y > low + 0.75 * (high - low)         # near the top there is no room above the point
        self.here.setAnchor((0 if study.scenario.n_gpus <= 64 else 1, 0 if below else 1))   # it ends inside the chart
        self.here.setPos(np.log10(study.scenario.n_gpus), y)


class TrafficView(MemoryChart):
    """The data-parallel collective traffic per GPU per step of every strategy, with its time."""

    def __init__(self, theme) -> None:
        super().__init__(theme)
        self.study: MemoryStudy | None = None
        self._bar_plot("Data-parallel traffic per GPU per step", "", "GB sent per step",
                       "Communication bytes and time per step for every strategy")

    def _resized(self, *_args) -> None:
        """The label room depends on the chart's width: redraw the chart after a resize."""
        self._drawn.pop("comm", None)
        if self.study is not None and not self.isHidden():   # hidden: not the tab shown
            self.show_result(self.study)

    def show_result(self, study: MemoryStudy) -> None:
        self.study = study
        self.show_setup(study.scenario)
        by = study.by_strategy()
        shown = [s for s in STRATEGIES if by.get(s) is not None]
        comms = [by[s].comm for s in shown]
        if not self._changed("comm", (tuple(shown), tuple(comms))):
            return
        p, pool = self.plot, self.pool
        pool.begin()
        ys = list(range(len(shown)))[::-1]
        vals = [c.total_bytes / 1e9 for c in comms]
        fill, hatch = self._category_brushes("buffers", 0.8)
        pool.bar(x0=[0] * len(ys), y=ys, width=vals, height=0.6, brushes=[fill] * len(ys), hatches=[hatch] * len(ys),
                 pen=self._pen(self.theme.fg, 1))
        top = max(max(vals, default=0.0), 1e-9)
        row_px = p.getViewBox().height() / max(len(ys), 1)     # a short chart (a crowded window) keeps its
        scale = SMALL_LABEL if QFontMetrics(self._font(SMALL_LABEL)).height() <= 0.9 * row_px else 0.68  # rows apart
        metrics = QFontMetrics(self._font(scale))
        width_px = max(p.getViewBox().width(), 200.0)
        x_max = top * 1.2
        for y, c, v in zip(ys, comms, vals):
            text = f"{v:,.1f} GB ({c.psi_multiple:.2f}Ψ), {c.seconds * 1e3:,.0f} ms, {c.links}"
            pool.text(text, (v + top * 0.01, y), (0, 0.5), self._font(scale), self.theme.fg)
            x_max = max(x_max, range_end_for_label(v, 0.0, metrics.horizontalAdvance(text) + 16, width_px,
                                                   0.2 * width_px))   # the label must end inside the plot
        pool.end()
        self._set_axes(p, "comm", left=[(y, STRATEGY_SHORT[s]) for y, s in zip(ys, shown)],
                       x_range=(0, _nice_ceil(x_max)), y_range=(-0.6, len(ys) - 0.4))
