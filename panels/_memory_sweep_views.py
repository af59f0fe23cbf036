"""The memory panel's GPU-count sweep and traffic charts (mixed into ``MemoryCharts``, which supplies
the theme, pens and the change check)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from engines.core.scenario import STRATEGIES
from engines.memory import STRATEGY_SHORT
from explorer.ui.label_layer import range_end_for_label

SWEEP_POINTS = 160  # points drawn per sweep curve: log-spaced, plenty for a 1…1024 log axis
SWEEP_STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.SolidLine, Qt.DashDotDotLine)
SWEEP_SYMBOLS = ("o", "s", "t", "d", "x", "+")


def _nice_ceil(x: float) -> float:
    """The next 1, 2, 2.5 or 5 × 10^k at or above ``x``: axis ranges that rarely change re-render rarely."""
    e = 10.0 ** np.floor(np.log10(x))
    return next(m * e for m in (1, 2, 2.5, 5, 10) if m * e >= x * (1 - 1e-9))


class SweepAndTrafficCharts:
    """Per-GPU memory over 1…1024 GPUs, and the collective traffic per step."""

    def _draw_sweep(self) -> None:
        """Per-GPU memory over 1…1024 GPUs: the curves redraw only when the sweep changes (not on a
        GPU-count edit, which just moves the dotted marker)."""
        sw, strategy = self.sweep_result, self.scenario.strategy
        cap = sw.gpu_memory / 1e9
        p = self.sweep_plot
        if self._changed("sweep", (sw.totals.tobytes(), strategy, cap)):
            for row, s in enumerate(sw.strategies):
                ok = ~np.isnan(sw.totals[row])
                x, y = sw.n_gpus[ok], sw.totals[row][ok] / 1e9
                keep = np.unique(np.geomspace(1, max(len(x), 1), SWEEP_POINTS).astype(int) - 1) if len(x) else []
                x, y = x[keep], y[keep]
                color = self.theme.color(row if row != 3 else 7)
                line, marks = self.sweep_curves[STRATEGIES.index(s)]
                line.setData(x, y, pen=self._pen(color, 2.5 if s == strategy else 1.8, SWEEP_STYLES[row]))
                m = np.unique(np.geomspace(1, len(x), 8).astype(int) - 1) if len(x) else []
                marks.setData(x=np.log10(x[m]), y=np.log10(y[m]), symbol=SWEEP_SYMBOLS[row],  # log axes: a bare
                              brush=self._brush(color),  # scatter item is placed in log10 units itself
                              pen=self._pen(self.theme.fg, 1), size=9)
                label = self.sweep_legend.getLabel(line)
                if label is not None:
                    label.setText(f"{STRATEGY_SHORT[s]}{' ◀ yours' if s == strategy else ''}", color=self.theme.fg,
                                  size=f"{self.theme.point_size * 0.85:.1f}pt")
            self._fit_legend()
            pool = self._pools["sweep"]
            pool.begin()
            pool.line(np.log10(cap), 0, self._pen(self.theme.error, 2.5, Qt.DashLine))
            pool.text(f"GPU memory {cap:,.0f} GB", (np.log10(1024), np.log10(cap)), (1, 1), self._font(0.75),
                      self.theme.fg)
            pool.end()
            finite = sw.totals[np.isfinite(sw.totals)] / 1e9
            lo, hi = min(finite.min(), cap), max(finite.max(), cap)
            nice = [m * 10.0**e for e in range(-3, 7) for m in (1, 2, 3, 5)]
            ticks = [v for v in nice if lo / 1.5 <= v <= hi * 1.5]
            self._set_axes(p, "sweep", left=[(np.log10(v), f"{v:g}") for v in ticks],
                           bottom=[(np.log10(v), str(v)) for v in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)],
                           x_range=(-0.06, np.log10(1024) * 1.02), y_range=(np.log10(lo / 1.3), np.log10(hi * 1.4)))
        self.sweep_marker.setPos(np.log10(self.scenario.n_gpus))

    def _relabel(self, view: str) -> None:
        """Label spacing is worked out in pixels: a resized chart lays its labels out again."""
        self._drawn.pop(view, None)
        if not self.breakdowns:
            return
        if view == "bars":
            self._draw_bars()
        else:
            self.show_frame(self._frame)

    def _comm_resized(self, *_args) -> None:
        """The label room depends on the chart's width: redraw the chart after a resize."""
        self._drawn.pop("comm", None)
        if self.breakdowns and self.lower_tabs.currentWidget() is self.comm_plot:
            self._draw_comm()

    def _fit_legend(self) -> None:
        """As many legend columns as the chart's width holds (one row when the chart is wide, three at most)."""
        metrics = QFontMetrics(self._font(0.85))
        entry = max(metrics.horizontalAdvance(STRATEGY_SHORT[s]) for s in STRATEGIES) + 45
        entry += metrics.horizontalAdvance(" ◀ yours") / 3  # one entry in a row carries the mark
        cols = max(2, min(len(STRATEGIES), int(max(self.sweep_plot.width(), 300) // entry)))
        if cols != self.sweep_legend.columnCount:
            self.sweep_legend.setColumnCount(cols)
        self.sweep_legend.updateSize()

    def _draw_comm(self) -> None:
        shown = [s for s in STRATEGIES if self.breakdowns.get(s) is not None]
        comms = [self.breakdowns[s].comm for s in shown]
        if not self._changed("comm", (tuple(shown), tuple(comms))):
            return
        p, pool = self.comm_plot, self._pools["comm"]
        pool.begin()
        ys = list(range(len(shown)))[::-1]
        vals = [c.total_bytes / 1e9 for c in comms]
        fill, hatch = self._category_brushes("buffers", 0.8)
        pool.bar(x0=[0] * len(ys), y=ys, width=vals, height=0.6, brushes=[fill] * len(ys), hatches=[hatch] * len(ys),
                 pen=self._pen(self.theme.fg, 1))
        top = max(max(vals, default=0.0), 1e-9)
        metrics = QFontMetrics(self._font(0.72))
        width_px = max(p.getViewBox().width(), 200.0)
        x_max = top * 1.2
        for y, c, v in zip(ys, comms, vals):
            text = f"{v:,.1f} GB ({c.psi_multiple:.2f}Ψ), {c.seconds * 1e3:,.0f} ms, {c.links}"
            pool.text(text, (v + top * 0.01, y), (0, 0.5), self._font(0.72), self.theme.fg)
            x_max = max(x_max, range_end_for_label(v, 0.0, metrics.horizontalAdvance(text) + 16, width_px,
                                                   0.2 * width_px))   # the label must end inside the plot
        pool.end()
        self._set_axes(p, "comm", left=[(y, STRATEGY_SHORT[s]) for y, s in zip(ys, shown)],
                       x_range=(0, _nice_ceil(x_max)), y_range=(-0.6, len(ys) - 0.4))
