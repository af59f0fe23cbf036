"""The training-at-scale panel's top row: the MFU gauge with its formula, and the goodput chart
(Daly's expected goodput, Young's and Daly's optima, the Monte Carlo check).

Views: each takes frozen engine results (``ScaleAnalysis``, ``CheckpointStudy``, ``FailureSimulation``)
and never computes domain numbers; the panel owns the jobs that make them.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGroupBox, QVBoxLayout, QWidget

from engines.scale import MFU_REFERENCES, CheckpointStudy, FailureSimulation, ScaleAnalysis
from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import Label, label_layer
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import brush, legend_below, log_axes, make_plot, pen
from panels._scale_views import plain_log_ticks

STALE_OPACITY = 0.35


class MfuGauge(QGroupBox):
    """The assumed MFU as a bar against published references, and PaLM's formula with the numbers."""

    def __init__(self, theme) -> None:
        super().__init__("Model FLOPs utilization")
        lay = QVBoxLayout(self)
        self.gauge = make_plot(theme, "", "", "MFU (% of dense bf16 peak)")
        self.gauge.setAccessibleName("MFU gauge")
        self.gauge.setMouseEnabled(x=False, y=False)
        self.gauge.getAxis("left").setTicks([[]])
        self.gauge_bg = Bars(x0=[0], y=[0], width=[100], height=0.6)
        self.gauge_bar = Bars(x0=[0], y=[0], width=[40], height=0.6)
        self.gauge.addItem(self.gauge_bg)
        self.gauge.addItem(self.gauge_bar)
        self.gauge_refs = []
        for value, name in MFU_REFERENCES:
            line = pg.InfiniteLine(pos=value, angle=90)
            label = pg.TextItem(name, anchor=(0, 1.0 if value < 40 else 0.0))
            label.setPos(value, 0.32 if value < 40 else -0.32)
            label.setZValue(5)
            self.gauge.addItem(line)
            self.gauge.addItem(label)
            self.gauge_refs.append((line, label))
        self.gauge.setXRange(0, 100, padding=0.02)
        self.gauge.setYRange(-0.95, 0.95, padding=0)
        lay.addWidget(self.gauge)
        self.formula = LiveText()
        lay.addWidget(self.formula)

    def show_result(self, a: ScaleAnalysis) -> None:
        th = a.throughput
        pct = th.mfu * 100
        if self.gauge_bar.opts["width"][0] != pct:
            self.gauge_bar.setOpts(width=[pct])
        self.formula.setText(
            f"<b>MFU {pct:.0f}%</b> = tokens/s × FLOPs/token ÷ (GPUs × peak)<br>"
            f"FLOPs/token = 6N + 12·L·H·Q·T = {th.flops_per_token_6n:.3g} + "
            f"{th.attention_flops_per_token:.3g} = <b>{th.flops_per_token:.3g}</b> "
            f"(attention {th.attention_share:.1%} at T = {th.seq_len:,})<br>"
            f"{th.n_gpus:,} × {th.peak_flops_per_gpu / 1e12:,.0f} TFLOP/s → <b>{th.tokens_per_second:,.0f} tokens/s</b> "
            f"({th.tokens_per_second_per_gpu:,.0f} per GPU, {th.achieved_tflops_per_gpu:.0f} TFLOP/s each); "
            f"HFU with {th.recompute} recompute {th.hfu:.0%}; step {th.step_seconds:.2f} s; "
            f"15T tokens in {th.days_for_tokens:,.0f} days. <i>(PaLM App. B)</i>")

    def apply_theme(self, t) -> None:
        self.gauge.setMinimumHeight(int(t.point_size * 8))    # the bar, a label line above and below it and
        self.gauge.setMaximumHeight(int(t.point_size * 16))   # the axis, at any text size
        self.gauge_bg.setOpts(brush=brush(t.grid, 0.35), pen=pen(t.fg, 1))
        self.gauge_bar.setOpts(brush=brush(t.color(4)), pen=pen(t.fg, 1))
        for line, label in self.gauge_refs:
            line.setPen(pen(t.fg, 1.5, Qt.DashLine))
            label.setColor(t.fg)


class GoodputView(QWidget):
    """Daly's expected goodput against the checkpoint interval, both optima, and the Monte Carlo
    points of the simulation that belongs to the study shown (dimmed while a newer one runs)."""

    def __init__(self, theme) -> None:
        super().__init__()
        gp = self.plot = make_plot(theme, "Goodput against checkpoint interval", "goodput (%)",
                                   "checkpoint interval, compute (min)")
        gp.setAccessibleName("Goodput against checkpoint interval")
        log_axes(gp, x=True)
        gp.setMouseEnabled(x=False, y=False)
        self.legend = legend_below(gp)
        self.exact_curve = gp.plot([], [], name="Daly's expected goodput")
        self.mc_bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), height=np.zeros(0))
        gp.addItem(self.mc_bars)
        self.mc_points = gp.plot([], [], pen=None, symbol="o", name="Monte Carlo (mean ± sd)")
        self.optimum_marks = {}     # the two optimum lines; their labels go to the plot's label layer
        for key, style in (("young", Qt.DashLine), ("daly", Qt.DotLine)):
            line = pg.InfiniteLine(angle=90)
            line.setPen(pen("#000000", 2, style))
            gp.addItem(line)
            self.optimum_marks[key] = (line, style)
        self.optimum_labels = label_layer(gp)
        self.text = LiveText()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(gp, 1)
        lay.addWidget(self.text)
        self._ticks = None          # the goodput axis ticks shown now
        self._label_font = QFont()  # the optimum labels (set to the theme's size in apply_theme)
        self._fg = theme.fg
        self.study: CheckpointStudy | None = None
        self.sim: FailureSimulation | None = None

    def show_result(self, c: CheckpointStudy) -> None:
        """The analytic curve and optima; Monte Carlo points of another study are not drawn again."""
        self.study = c
        gp = self.plot
        minutes = c.intervals_seconds / 60
        self.exact_curve.setData(minutes, c.goodput * 100)
        ticks = plain_log_ticks(minutes[0], minutes[-1])
        if ticks != self._ticks:            # setTicks re-renders the axis even for the same ticks
            self._ticks = ticks
            gp.getAxis("bottom").setTicks(ticks)
        labels = []
        optima = {"young": c.young_seconds, "daly": c.daly_seconds}
        left = "young" if c.young_seconds <= c.daly_seconds else "daly"   # the left line's label goes left of it
        for key, name in (("young", "Young √(2δM)"), ("daly", "Daly")):
            anchor = (1.08, 0) if key == left else (-0.08, 0)   # a gap each side of the lines between them
            line, _style = self.optimum_marks[key]
            x = np.log10(optima[key] / 60)
            line.setPos(x)
            labels.append(Label(f"{name}\n{optima[key] / 60:.1f} min", float(x), c.best_goodput * 100 - 1, anchor,
                                self._label_font, self._fg))
        self.optimum_labels.set_labels(labels)
        x_lo, x_hi = np.log10(minutes[0]), np.log10(minutes[-1])
        self._range(x=(x_lo - 0.02 * (x_hi - x_lo), x_hi + 0.02 * (x_hi - x_lo)))  # one range change
        self.text.setText(
            f"Job MTBF {c.mtbf_seconds / 3600:,.1f} h (= per-GPU MTBF ÷ {c.n_gpus:,} GPUs), checkpoint δ "
            f"{c.checkpoint_seconds / 60:.1f} min, restart R {c.restart_seconds / 60:.0f} min: best expected goodput "
            f"{c.best_goodput:.2%} near Daly's interval.")

    def _current_sim(self) -> FailureSimulation | None:
        """The simulation, if it belongs to the study on screen."""
        c, sim = self.study, self.sim
        return sim if c is not None and sim is not None and sim.key == c.failure_key else None

    def show_simulation(self, sim: FailureSimulation) -> None:
        """The Monte Carlo mean ± sd at each probe interval."""
        self.sim = sim
        if self._current_sim() is None:
            return
        x = sim.probes_seconds / 60
        self.mc_points.setData(x, sim.mean * 100)
        self.mc_bars.setData(x=np.log10(x), y=sim.mean * 100, height=2 * sim.std * 100)
        self.set_stale(False)
        self._range()

    def set_stale(self, stale: bool) -> None:
        for item in (self.mc_points, self.mc_bars):
            item.setOpacity(STALE_OPACITY if stale else 1.0)

    def _range(self, x: tuple[float, float] | None = None) -> None:
        """The y range holds the optimum, 15 points below it and the simulated points, in 5 % steps
        (it stays put on small edits); with ``x``, both axes change in one step (each separate change
        re-lays out the view and its axes)."""
        best, sim = self.study.best_goodput, self._current_sim()
        lo = best - 0.15        # the optimum and its neighbourhood; the far tails may leave the plot
        if sim is not None:
            lo = min(lo, float(sim.mean.min()))
        y_lo, y_hi = max(0, 5 * math.floor(lo * 20)), min(100, 5 * math.ceil(best * 20 + 0.4))  # 5 % steps
        pad = self.plot.getViewBox().suggestPadding(1) * (y_hi - y_lo)
        self.plot.setRange(xRange=x, yRange=(y_lo - pad, y_hi + pad), padding=0)

    def apply_theme(self, t) -> None:
        self.plot.getAxis("left").setWidth(int(t.point_size * 4.5))   # fixed: new tick text never re-lays it out
        self.exact_curve.setPen(pen(t.color(4), 3))
        self.mc_points.setSymbolBrush(brush(t.color(0)))
        self.mc_points.setSymbolPen(pen(t.fg, 1))
        self.mc_bars.setData(pen=pen(t.fg, 1))
        for line, style in self.optimum_marks.values():
            line.setPen(pen(t.color(5), 2, style))
        self._label_font = QFont()
        self._label_font.setPointSizeF(t.point_size)
        self._fg = t.fg
        if self.study is not None:
            self.show_result(self.study)     # the optimum labels in the new colour and size
