"""The memory panel's time views: a stacked time bar per strategy with the step-time verdict, and
throughput against GPU count with the memory verdict on each point. Drawing only: every number comes
from the ``engines.memory.study`` result the panel hands over with ``show_result``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics
from PySide6.QtWidgets import QDoubleSpinBox, QGraphicsItem, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from engines.core.scenario import STRATEGIES
from engines.memory import STRATEGY_SHORT
from engines.memory.params import Params
from engines.memory.step_time import PART_LETTERS, PARTS
from engines.memory.study import StepTimeStudy, ThroughputStudy
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.ui.pool import ItemPool
from explorer.ui.widgets import RowLegend, cache_static, make_plot, style_legend
from panels._memory_style import MemoryChart, _nice_ceil

PART_COLOR = {"compute": 4, "recompute": 1, "bubble": 7, "tp_comm": 5, "dp_comm": 0, "offload": 6, "optimizer": 2}
PART_PATTERN = {"compute": Qt.NoBrush, "recompute": Qt.Dense6Pattern, "bubble": Qt.Dense7Pattern,
                "tp_comm": Qt.HorPattern, "dp_comm": Qt.BDiagPattern, "offload": Qt.CrossPattern,
                "optimizer": Qt.FDiagPattern}
PART_SHORT = {"compute": "compute", "recompute": "recompute", "bubble": "bubble", "tp_comm": "TP comm",
              "dp_comm": "DP/ZeRO comm", "offload": "offload", "optimizer": "optimizer step"}
LABEL_SCALE = 0.8     # labels on the bars against the text size: ≥ 2.2 % of the screen's height in presenter mode
WRAP_LABELS = {1: "1 block", 2: "2 blocks", 4: "4 blocks", 8: "8 blocks", 0: "whole stage"}
COLLECTIVE_LABELS = {"ring": "flat ring", "hierarchical": "hierarchical"}
LINE_STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.SolidLine, Qt.DashDotDotLine)
SYMBOLS = ("o", "s", "t", "d", "x", "+")


def _rate(x: float) -> str:
    return f"{x / 1e6:,.2f} M" if x >= 1e6 else f"{x / 1e3:,.1f} k"


def param_spin(name: str) -> QDoubleSpinBox:
    """A spin box with the label, range, step and unit ``Params`` declares for ``name``."""
    m = Params.spec(name)
    box = QDoubleSpinBox()
    box.setRange(m["lo"], m["hi"])
    box.setDecimals(m["decimals"])
    box.setSingleStep(m["step"])
    box.setPrefix(m["label"] + ": ")
    box.setSuffix(" " + m["unit"])
    box.setValue(getattr(Params(), name))
    box.setKeyboardTracking(False)
    box.setToolTip(m["tip"])
    box.setAccessibleName(m["label"])
    return box


class StepTimeView(MemoryChart):
    """Seconds per optimizer step of every strategy, part by part, and the readout of your own.
    ``rates`` are the offload-rate controls the panel binds; they show only while offload is on."""

    def __init__(self, theme, rates: tuple[QWidget, ...] = ()) -> None:
        super().__init__(theme)
        self.offload_rates = QWidget()
        row = QHBoxLayout(self.offload_rates)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Offload rates:"))
        for w in rates:
            row.addWidget(w)
        row.addStretch(1)
        self.readout = LiveText(min_lines=3)
        self.readout.setAccessibleName("Step time of your strategy")
        self.plot = make_plot(theme, "Seconds per optimizer step by strategy", "", "seconds per step")
        self.plot.setAccessibleName("Stacked step time for every strategy")
        self.plot.setMouseEnabled(x=False, y=False)
        self.box.setContentsMargins(2, 2, 2, 0)     # the page sits in a row that must fit a projector at 1080p
        self.box.setSpacing(2)
        self.box.addWidget(self.offload_rates)
        self.box.addWidget(self.readout)
        self.chart = QWidget()          # the chart and its set-up line: what a tour step focuses on
        chart_box = QVBoxLayout(self.chart)
        chart_box.setContentsMargins(0, 0, 0, 0)
        chart_box.setSpacing(2)
        chart_box.addWidget(self.plot, 1)
        chart_box.addWidget(self.setup)
        self.box.addWidget(self.chart, 1)
        # the letters' key inside the chart: a tour step that shows only the chart still says what C, R, D mean
        self.key = RowLegend(colCount=4, frame=False)
        self.key_samples = {part: pg.BarGraphItem(x=[0], height=[1], width=1) for part in PARTS}
        for part in PARTS:
            self.key.addItem(self.key_samples[part], f"{PART_LETTERS[part]} {PART_SHORT[part]}")
        self.plot.getPlotItem().layout.addItem(self.key, 5, 1)
        cache_static(self.plot)
        self.pool = ItemPool(self.plot)
        self.result: StepTimeStudy | None = None
        self.plot.getViewBox().sigResized.connect(self._resized)

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.readout.reset_height()
        self.plot.setMinimumHeight(max(int(theme.point_size * 8.5), 130))  # title, axis and key leave the data room
        for part, sample in self.key_samples.items():
            sample.setOpts(brush=self._part_brushes(part)[0], pen=self._pen(theme.fg, 1))
        style_legend(self.key, theme)
        self._fit_key()

    def _fit_key(self) -> None:
        """The key in one row where the chart is wide enough: two rows took the bars' room in a
        1280×800 window, where the tab under the memory charts is short."""
        # fit_columns allows 45 px beside each label; pyqtgraph's sample and spacing take ~25 px more
        self.key.fit_columns(self.plot.width() - 60 - 25 * len(PARTS), self.key.text_font, most=len(PARTS))

    def show_offload_rates(self, shown: bool) -> None:
        """Only offload reads the rates: the panel shows them while the scenario offloads."""
        self.offload_rates.setVisible(shown)

    def _resized(self, *_args) -> None:
        self._fit_key()
        self._drawn.pop("time", None)
        if self.result is not None and not self.isHidden():   # hidden: not the tab shown
            self.show_result(self.result)

    def _part_brushes(self, part: str) -> tuple[QBrush, QBrush]:
        key = ("time-brush", part, self.theme.name)
        if key not in self._style_cache:
            c = QColor(self.theme.color(PART_COLOR[part]))
            c.setAlphaF(0.9)
            overlay = QColor(self.theme.fg)
            overlay.setAlphaF(0.45)
            self._style_cache[key] = (QBrush(c), QBrush(overlay, PART_PATTERN[part]))
        return self._style_cache[key]

    def show_result(self, r: StepTimeStudy) -> None:
        self.result = r
        self.show_setup(r.scenario)
        shown, times = r.shown, r.times
        if not shown or not self._changed("time", (shown, times, r.fits, r.strategy)):
            return
        self._show_text(r)
        p, pool = self.plot, self.pool
        pool.begin()
        ys = list(range(len(shown)))[::-1]
        blocks = {"x0": [], "y": [], "width": [], "fill": [], "hatch": []}
        top = max(st.total for st in times)
        metrics = QFontMetrics(self._font(LABEL_SCALE))
        px_per_s = max(p.getViewBox().width(), 200.0) / (top * 1.6)
        for y, st in zip(ys, times):
            x = 0.0
            for part in PARTS:
                w = getattr(st, part)
                if w <= 0:
                    continue
                fill, hatch = self._part_brushes(part)
                for key, val in (("x0", x), ("y", y), ("width", w), ("fill", fill), ("hatch", hatch)):
                    blocks[key].append(val)
                label = next((t for t in (f"{PART_LETTERS[part]} {w:,.2f}", PART_LETTERS[part])
                              if w * px_per_s > metrics.horizontalAdvance(t) + 8), None)
                if label:
                    pool.text(label, (x + w / 2, y), (0.5, 0.5), self._font(LABEL_SCALE), self.theme.fg)
                x += w
        pool.bar(x0=blocks["x0"], y=blocks["y"], width=blocks["width"], height=0.6, brushes=blocks["fill"],
                 hatches=blocks["hatch"], pen=self._pen(self.theme.fg, 1))
        width_px = max(p.getViewBox().width(), 200.0)
        x_max = top * 1.15
        label_metrics = QFontMetrics(self._font(LABEL_SCALE))
        for y, s, st, fits in zip(ys, shown, times, r.fits):
            text = (f"{st.total:,.2f} s · {_rate(st.tokens_per_second)}tok/s · MFU {st.mfu * 100:.0f}% · "
                    f"{'fits' if fits else 'too big'}{' ◀ yours' if s == r.strategy else ''}")
            start = st.total + top * 0.01           # the label's left end: the range leaves it room from there
            pool.text(text, (start, y), (0, 0.5), self._font(LABEL_SCALE), self.theme.fg)
            x_max = max(x_max, range_end_for_label(start, 0.0, label_metrics.horizontalAdvance(text) + 16,
                                                   width_px, 0.2 * width_px))
        pool.end()
        self._set_axes(p, "time", left=[(y, STRATEGY_SHORT[s]) for y, s in zip(ys, shown)],
                       x_range=(0, x_max), y_range=(-0.6, len(ys) - 0.4))

    def _show_text(self, r: StepTimeStudy) -> None:
        st, verdict = r.own, r.verdict
        if verdict.fastest_fitting is None:
            compare = "No strategy fits in GPU memory at this count."
        elif verdict.fastest_fitting == st.strategy:
            compare = f"{STRATEGY_SHORT[st.strategy]} is the fastest strategy that fits here."
        else:
            word = "slower" if verdict.slower_pct >= 0 else "faster"
            fits_own = "fits but" if r.own_fits else "does not fit and"
            compare = (f"{STRATEGY_SHORT[st.strategy]} {fits_own} is {abs(verdict.slower_pct):.0f}% {word} than "
                       f"{STRATEGY_SHORT[verdict.fastest_fitting]}, the fastest that fits.")
        pcie = f"; PCIe {st.pcie_bytes / 1e9:,.1f} GB" if st.pcie_bytes else ""
        nvme = f"; NVMe {st.nvme_bytes / 1e9:,.1f} GB" if st.nvme_bytes else ""
        # the O block is often too thin on the bars to carry its number
        exposed = f"; offload traffic exposed {st.offload:,.2f} s" if st.offload_total else ""
        self.readout.setText(
            f"<b>{STRATEGY_SHORT[st.strategy]}: "
            f"{st.total:,.3f} s per step → {st.tokens_per_second:,.0f} tokens/s, MFU {st.mfu * 100:.1f}% "
            f"(HFU {st.hfu * 100:.1f}%)</b>. {compare}<br>Global batch {st.global_batch:,} sequences "
            f"({st.global_tokens:,} tokens); DP traffic {st.comm_bytes / 1e9:,.2f} GB per step, "
            f"{st.comm_bytes_per_sample / 1e6:,.1f} MB per sequence, {st.dp_comm_hidden:,.2f} s of it hidden behind "
            f"compute (not drawn){pcie}{nvme}{exposed}." + (" <i>(notes: hover)</i>" if st.notes else "")
            )
        self.readout.setToolTip("; ".join(st.notes))

class ThroughputView(MemoryChart):
    """Tokens/s per GPU over GPU counts for every strategy: solid where it fits in memory, dotted
    where it does not; the scenario's count marked."""

    def __init__(self, theme) -> None:
        super().__init__(theme)
        self.plot = make_plot(theme, "Throughput per GPU against GPU count; solid = fits in memory, dotted = does "
                                     "not", "tokens / s per GPU", "GPUs")
        self.plot.setAccessibleName("Tokens per second per GPU over GPU count for every strategy, solid where it fits")
        self.plot.setLogMode(x=True, y=False)
        self.legend = RowLegend(colCount=6, frame=False)
        self.curves: list[tuple[pg.PlotDataItem, pg.PlotDataItem, pg.ScatterPlotItem]] = []
        for s in STRATEGIES:
            fit, over, marks = pg.PlotDataItem(), pg.PlotDataItem(), pg.ScatterPlotItem()
            for item in (fit, over, marks):
                self.plot.addItem(item)
            self.legend.addItem(fit, STRATEGY_SHORT[s])
            self.curves.append((fit, over, marks))
            for item in (fit.curve, over.curve):
                item.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.plot.getPlotItem().layout.addItem(self.legend, 5, 1)
        self.marker = pg.InfiniteLine(angle=90, movable=False)
        self.plot.addItem(self.marker)
        self.box.addWidget(self.plot)
        self.box.addWidget(self.setup)
        cache_static(self.plot)

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.plot.setMinimumHeight(max(int(theme.point_size * 11), 130))
        self.legend.setLabelTextColor(theme.fg)
        self.legend.row_height = QFontMetrics(self._font(0.85)).height() * 1.15 + 10
        self.legend.setColumnCount(3)   # two rows: fits beside the long "◀ yours" entry at any width
        self.legend.updateSize()

    def show_result(self, r: ThroughputStudy, scenario=None) -> None:
        """The curves redraw when the sweep or your strategy changes; a GPU-count edit moves the marker.
        ``scenario`` (the study's) is named under the chart."""
        if scenario is not None:
            self.show_setup(scenario)
        if self._changed("tput", r.key):   # the sweep and your strategy (its scenario, less the count)
            self._draw(r)
        if self._changed("tput-count", (r.key, r.n_gpus)):
            self._name_curves(r)
        self.marker.setPos(np.log10(r.n_gpus))

    def _name_curves(self, r: ThroughputStudy) -> None:
        """Each key entry names its strategy and its tokens/s per GPU at the marked count: the curves'
        heights as figures a slide can cite."""
        at = np.flatnonzero(r.sweep.n_gpus == r.n_gpus)
        for row, s in enumerate(r.sweep.strategies):
            label = self.legend.getLabel(self.curves[row][0])
            if label is None:
                continue
            v = r.per_gpu[row][at[0]] if at.size else np.nan
            value = f": {v:,.0f}" if np.isfinite(v) else ""
            label.setText(f"{STRATEGY_SHORT[s]}{value}{' ◀ yours' if s == r.strategy else ''}", color=self.theme.fg,
                          size=f"{self.theme.point_size * 0.85:.1f}pt")

    def _draw(self, r: ThroughputStudy) -> None:
        sw, own = r.sweep, r.strategy
        finite = []
        for row, s in enumerate(sw.strategies):
            fit, over, marks = self.curves[row]
            y = r.per_gpu[row]
            ok = np.isfinite(y)
            fits = ok & r.fits[row]
            color = self.theme.color(row if row != 3 else 7)
            width = 2.5 if s == own else 1.8
            # the whole curve dotted, the counts where the strategy fits drawn over it in its own line
            over.setData(sw.n_gpus[ok], y[ok], pen=self._pen(color, 1.4, Qt.DotLine))
            fit.setData(sw.n_gpus, np.where(fits, y, np.nan), pen=self._pen(color, width, LINE_STYLES[row]),
                        connect="finite")
            xs, ys = sw.n_gpus[ok], y[ok]
            marks.setData(x=np.log10(xs), y=ys, symbol=SYMBOLS[row], size=8,
                          brush=[pg.mkBrush(color) if f else pg.mkBrush(self.theme.bg) for f in fits[ok]],
                          pen=self._pen(color, 1.5))
            finite.append(ys)
        vals = np.concatenate(finite) if finite else np.array([1.0])
        hi = _nice_ceil(float(vals.max()) * 1.1)
        step = hi / 5
        self._set_axes(self.plot, "tput", left=[(v, f"{v:,.0f}") for v in np.arange(0, hi + step / 2, step)],
                       bottom=[(np.log10(v), str(int(v))) for v in sw.n_gpus],
                       x_range=(np.log10(sw.n_gpus[0]) - 0.08, np.log10(sw.n_gpus[-1]) + 0.12), y_range=(0, hi))
