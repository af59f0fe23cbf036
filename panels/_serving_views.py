"""The serving panel's two larger charts: one replica's memory, and steady-state latency against load."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

from engines.core.hardware import gpu as gpu_spec
from engines.serving import GIB, WEIGHT_BITS_EFFECTIVE, DeploymentStudy, ReplicaMemory, capacity
from explorer.ui.bar_chart import bar_chart
from explorer.ui.fast_items import Bars
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import brush, legend_below, make_plot, pen

PART_ROWS = 4          # memory waterfall: one row per part, so labels never collide
MAX_GPU_LINES = 32     # GPU boundaries drawn one by one in the memory chart


class ReplicaMemoryChart(QWidget):
    """Weights, KV cache, activations and overhead of one replica against its GPUs' usable memory."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.plot = make_plot(theme, "One replica's memory", "", "GiB (2³⁰ B)")
        self.plot.setAccessibleName("Memory of one serving replica")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.getAxis("left").setTicks([[(PART_ROWS - 1 - i, name) for i, name in
                                             enumerate(("weights", "KV cache", "activations", "overhead"))]])
        self.plot.setYRange(-0.7, PART_ROWS + 0.6, padding=0)
        self.bars = [Bars(x0=[0], y=[PART_ROWS - 1 - i], width=[0], height=0.6) for i in range(PART_ROWS)]
        self.values = [pg.TextItem("", anchor=(0, 0.5)) for _ in range(PART_ROWS)]
        for item in (*self.bars, *self.values):
            self.plot.addItem(item)
        self.gpu_lines: list = []          # one dashed line per GPU of the replica, grown on demand
        self.gpu_tag = pg.TextItem("", anchor=(1, 0))
        self.plot.addItem(self.gpu_tag)
        self.text = LiveText()
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.plot, 1)
        box.addWidget(self.text)
        self._fg = theme.fg

    def draw(self, m: ReplicaMemory, scenario) -> None:
        sizes = np.array([b for _, b in m.parts()], dtype=float) / GIB
        x0 = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        for bar, label, x, w in zip(self.bars, self.values, x0, sizes):
            bar.setOpts(x0=[x], width=[w])
            label.setText(f"{w:,.1f}")
            label.setPos(x + w, bar.opts["y"][0])
        per_gpu = m.usable_per_gpu_bytes / GIB
        # past MAX_GPU_LINES the lines would merge into a grey band: then only the last one
        bounds = range(1, m.gpus_needed + 1) if m.gpus_needed <= MAX_GPU_LINES else [m.gpus_needed]
        while len(self.gpu_lines) < len(bounds):
            line = pg.InfiniteLine(angle=90, pen=pen(self._fg, 1.5, Qt.DashLine))
            self.plot.addItem(line)
            self.gpu_lines.append(line)
        for i, line in enumerate(self.gpu_lines):
            line.setVisible(i < len(bounds))
            if i < len(bounds):
                line.setPos(bounds[i] * per_gpu)
        self.gpu_tag.setText(f"{m.gpus_needed} × 90% of {m.gpu_memory_bytes / 1e9:.0f} GB")
        self.gpu_tag.setPos(m.gpus_needed * per_gpu, PART_ROWS + 0.55)
        self.plot.setXRange(0, max(sizes.sum(), m.gpus_needed * per_gpu) * 1.08, padding=0)
        self.plot.getViewBox().updateMatrix()
        cap = capacity(scenario, m.gpus_needed)
        packed = (f" ({WEIGHT_BITS_EFFECTIVE[m.weight_bits]:g} bits with their scales for every weight, embeddings "
                  "and head too, as the sizing rule assumes; GPTQ/AWQ checkpoints keep those at 16 bits, as the "
                  "Quantization panel's table does)") if m.weight_bits < 16 else ""
        self.text.setText(
            f"{scenario.arch.label}: weights {m.weight_bits}-bit{packed} + KV {m.kv_bits}-bit for {m.batch} × "
            f"{m.context:,} tokens = {m.total_bytes / GIB:,.1f} GiB → {m.gpus_needed} × {gpu_spec(m.gpu).label} "
            f"(TP divides {scenario.arch.heads} heads). KV room: {cap.max_tokens:,} tokens = "
            f"{cap.max_batch_at_context} sequences at this context, or {cap.max_context_at_batch:,} tokens each at "
            "this batch.")

    def apply_theme(self, t) -> None:
        self._fg = t.fg
        styles = [brush(t.color(4)), pg.mkBrush(t.color(0), style=Qt.BDiagPattern), brush(t.color(2)),
                  pg.mkBrush(t.color(6), style=Qt.Dense4Pattern)]
        for bar, label, fill in zip(self.bars, self.values, styles):
            bar.setOpts(brush=fill, pen=pen(t.fg, 1))
            label.setColor(t.fg)
        for line in self.gpu_lines:
            line.setPen(pen(t.fg, 1.5, Qt.DashLine))
        self.gpu_tag.setColor(t.fg)


class LoadChart(QWidget):
    """Steady-state p90 TTFT (left axis) and output tokens/s (right) against arrivals, per policy; each
    curve ends at its policy's saturation line, the region past continuous saturation is shaded and
    the sized rate is starred."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.plot = make_plot(theme, "Latency and throughput against load", "p90 TTFT (s)", "arrivals (req/s)")
        self.plot.setAccessibleName("Latency and throughput against load")
        self.legend = legend_below(self.plot)
        self.tput_view = pg.ViewBox()
        pi = self.plot.getPlotItem()
        pi.showAxis("right")
        pi.scene().addItem(self.tput_view)
        pi.getAxis("right").linkToView(self.tput_view)
        self.tput_view.setXLink(pi)
        pi.getAxis("right").setLabel("output tokens/s →")   # "→" marks the legend's right-axis curves
        pi.vb.sigResized.connect(lambda: self.tput_view.setGeometry(pi.vb.sceneBoundingRect()))
        self.curves = {}
        for policy in ("static", "continuous"):
            ttft = self.plot.plot([], [], name=f"{policy} TTFT")
            tput = pg.PlotDataItem([], [])
            self.tput_view.addItem(tput)
            self.legend.addItem(tput, f"{policy} tok/s →")   # TTFT in the first column, tok/s in the second
            self.curves[policy] = (ttft, tput)
        # its label at the left end: the right end is the shaded "unstable" region and its upright word
        self.target_line = pg.InfiniteLine(angle=0, label="TTFT target",
                                           labelOpts={"position": 0.03, "anchors": [(0, 1), (0, 1)]})
        # static's label reads right of its line, continuous's left of it: they never overlap
        self.sat_lines = {p: pg.InfiniteLine(angle=90, label="", labelOpts={"position": pos, "anchors": [a, a]})
                          for p, pos, a in (("static", 0.95, (0, 0)), ("continuous", 0.7, (1, 0)))}
        self.unstable_region = pg.LinearRegionItem(movable=False)
        self.unstable_region.setZValue(-10)
        self.unstable_text = pg.TextItem("unstable", anchor=(0, 0), angle=90)
        self.sized_marker = pg.ScatterPlotItem(symbol="star", size=22)
        self._fills: dict = {}
        for item in (self.target_line, self.unstable_region, *self.sat_lines.values(), self.sized_marker,
                     self.unstable_text):
            self.plot.addItem(item)
        self.plot.setToolTip("p90 time to first token in steady state against the arrival rate, per policy. "
                             "Hollow markers: estimates whose run had not settled. Each curve ends where its "
                             "policy saturates; ★ is the rate each replica is sized for.")
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.plot)
        self.study: DeploymentStudy | None = None

    def draw(self, study: DeploymentStudy | None) -> None:
        self.study = study
        if study is None or not self._fills:
            return
        target, curves, z = study.target, study.curves, study.sizing
        top_rate = 1.08 * max(c.rates.max() for c in curves.values())
        ttft_top = 0.0
        for policy, (ttft_curve, tput_curve) in self.curves.items():
            c = curves[policy]
            ttft = c.series("ttft_p90_s")
            ok = np.isfinite(ttft)
            fill = self._fills[policy]
            ttft_curve.setData(c.rates[ok], ttft[ok], symbolBrush=[fill if done else None for done in c.settled[ok]])
            tput_curve.setData(c.rates, c.throughput())
            ttft_top = max(ttft_top, float(ttft[ok].max()) if ok.any() else 0.0)
            line = self.sat_lines[policy]
            line.setPos(c.saturation_rate_per_s)
            line.label.setText(f"{policy} saturates: {c.saturation_rate_per_s:,.2f}" + (
                f" ({c.saturation_rate_per_s / curves['static'].saturation_rate_per_s:.1f}× static)"
                if policy == "continuous" else ""))
        self.target_line.setPos(target.ttft_p90_s)
        y_top = min(max(ttft_top, target.ttft_p90_s), 5 * target.ttft_p90_s) * 1.05
        self.plot.setXRange(0, top_rate, padding=0)
        self.plot.setYRange(0, y_top)
        cont = curves["continuous"].saturation_rate_per_s
        self.unstable_region.setRegion((cont, top_rate))
        self.unstable_text.setPos(cont, 0)
        if z.feasible and z.at_rate is not None and math.isfinite(z.at_rate.ttft_p90_s):
            self.sized_marker.setData([z.max_rate_per_replica], [z.at_rate.ttft_p90_s])
        else:
            self.sized_marker.setData([], [])
        self.tput_view.setYRange(0, max(float(np.nanmax(curves["continuous"].throughput())), 1.0) * 1.1)
        self.tput_view.setGeometry(self.plot.getPlotItem().vb.sceneBoundingRect())

    def apply_theme(self, t) -> None:
        self.plot.setMinimumHeight(int(t.point_size * 14))   # title, axis and a two-row legend leave the data room
        # fixed axis widths, room for "100000" tokens/s: an axis that widens after its first paint
        # would show 1500 as "150" until then
        self.plot.getAxis("left").setWidth(int(t.point_size * 4.5))
        self.plot.getAxis("right").setWidth(int(t.point_size * 6))
        # policy by colour *and* line and marker; metric by weight: TTFT bold, tokens/s thin with triangles
        styles = {"static": (t.color(5), Qt.DashLine, "s", Qt.DotLine, "t"),
                  "continuous": (t.color(4), Qt.SolidLine, "o", Qt.DashDotLine, "t1")}
        for policy, (colour, style, sym, tput_style, tput_sym) in styles.items():
            ttft, tput = self.curves[policy]
            ttft.setPen(pen(colour, 3, style))
            ttft.setSymbol(sym)
            ttft.setSymbolBrush(brush(colour))
            ttft.setSymbolPen(pen(colour, 2))
            tput.setPen(pen(colour, 1.5, tput_style))
            tput.setSymbol(tput_sym)
            tput.setSymbolBrush(brush(colour, 0.5))
            self._fills[policy] = brush(colour)   # a marker left hollow: its estimate did not settle
            self.sat_lines[policy].setPen(pen(colour, 2, style))
        self.target_line.setPen(pen(t.fg, 1.5, Qt.DashDotLine))
        label_font = QFont()
        label_font.setPointSizeF(t.point_size * 0.85)
        for label in (self.target_line.label, *(line.label for line in self.sat_lines.values())):
            label.setColor(t.fg)
            label.setFont(label_font)   # pyqtgraph's default size does not follow the theme
        self.unstable_region.setBrush(brush(t.fg, 0.15))   # a hatch would scale with the view: a plain tint
        for line in self.unstable_region.lines:
            line.setPen(pen(t.fg, 0))
        self.unstable_text.setColor(t.fg)
        self.sized_marker.setPen(pen(t.fg, 1.5))
        self.sized_marker.setBrush(brush(t.color(4)))
        self.draw(self.study)


class SizingBox(QWidget):
    """The sizing in words, and as bars where there is room for them: squeezed into a few lines (the
    1280×800 window) the chart cut its own labels, and asking for its height squeezed the load chart."""

    def __init__(self, theme) -> None:
        super().__init__()
        box = QVBoxLayout(self)
        self.text = LiveText("…")
        box.addWidget(self.text)
        self.plot = make_plot(theme, "One replica's rate (requests/s)", "", "requests per second")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMinimumHeight(0)
        self.plot.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Ignored)   # takes what the words leave
        box.addWidget(self.plot, 1)
        box.addStretch(0)                    # the room, while the chart is hidden: the words stay on top
        self.text.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        words = self.text.heightForWidth(self.text.width())     # what the words need, not what they were given
        words = words if words > 0 else self.text.sizeHint().height()
        self.plot.setVisible(self.height() - words >= 9 * self.fontMetrics().height())


def draw_sizing(plot, theme, study: DeploymentStudy | None) -> None:
    """One replica's rates as bars, so the sizing is a picture and not a paragraph alone: the roofline
    bound, the simulated saturation, the most the sizing allows, and what each replica carries."""
    z = study.sizing if study is not None else None
    if z is None or not z.feasible:
        bar_chart(plot, theme, [], [])
        return
    bar_chart(plot, theme, ["roofline bound", "saturation (simulated)", "most allowed per replica",
                            "carried per replica"],
              [z.roofline_rate_per_replica, z.saturation_rate_per_replica, z.max_rate_per_replica,
               z.rate_per_s / z.replicas], "{:,.2f}")


def sizing_words(study: DeploymentStudy) -> tuple[str, str]:
    """The sizing in words (rich text) and a tooltip with the curves' rates under the target."""
    z, target, curves = study.sizing, study.target, study.curves
    goal = f"p90 TTFT ≤ {target.ttft_p90_s:g} s, TPOT ≤ {target.tpot_p90_s * 1e3:g} ms"
    sat_s, sat_c = curves["static"].saturation_rate_per_s, curves["continuous"].saturation_rate_per_s
    compare = f"Saturation: static {sat_s:,.2f}, continuous {sat_c:,.2f} req/s ({sat_c / sat_s:.1f}×)."
    tip = (f"Highest rate on the load curves meeting {goal}: static {curves['static'].max_rate_meeting(target):,.2f}, "
           f"continuous {curves['continuous'].max_rate_meeting(target):,.2f} req/s. All speeds are roofline "
           "bounds: real servers reach a fraction of them.")
    if not z.feasible:
        return f"<b>No replica meets {goal}</b> in steady state, even at light load.<br>{compare}", tip
    a = z.at_rate
    binds = (f"headroom binds (≤ {z.max_utilisation:.0%})" if z.limited_by == "headroom"
             else f"the target binds below {z.max_utilisation:.0%}")
    return (f"<b>{z.replicas:,} replicas × {z.gpus_per_replica} GPU = {z.gpus:,} GPUs</b> for {z.rate_per_s:,.0f} "
            f"req/s under {goal}: {z.rate_per_s / z.replicas:,.2f} req/s each, <b>utilisation {z.utilisation:.0%}</b> of "
            f"{z.saturation_rate_per_replica:,.2f} req/s saturation (roofline {z.roofline_rate_per_replica:,.2f}). "
            f"At most {z.max_rate_per_replica:,.2f} req/s per replica: {binds}; there p90 TTFT "
            f"{a.ttft_p90_s:.3g} s, TPOT {a.tpot_p90_s * 1e3:.3g} ms ★ over {a.requests:,} simulated requests, "
            f"warm-up ({a.warmup:,}) and drain ({a.cooldown:,}) dropped, halves within {a.change:.1%}."
            f"<br>{compare}"), tip
