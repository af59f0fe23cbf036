"""Drawing widgets of the pipeline panel: the Gantt chart with in-flight curves, reusable text items,
and the schedules' and executed run's captions (the TP, rank-grid and stage-memory charts are in
``_pipeline_parallel_views``; the pages, the panel's views, in ``_pipeline_pages``).

Pure drawing: they take engine results (Simulation, SideResult, ExecutedRun) and never compute
domain numbers themselves.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPen
from PySide6.QtWidgets import QGraphicsItem

from explorer.theme import Theme
from explorer.ui.widgets import RowLegend, bottom_axis, cache_static, style_axis


OP_NAMES = {"F": "F forward", "B": "B backward", "I": "I input-grad", "W": "W weight-grad"}
OP_PATTERN = {"F": None, "B": Qt.BDiagPattern, "I": Qt.FDiagPattern, "W": Qt.CrossPattern}


def op_color(theme: Theme, op: str) -> str:
    return theme.color({"F": 4, "B": 0, "I": 2, "W": 6}[op])


class _Blocks(pg.GraphicsObject):
    """Many filled rectangles, batched: one ``drawRects`` per (fill, hatch) style, and centred
    labels drawn in screen pixels only where they fit (zooming in reveals them).

    The item is cached as a device pixmap, so a moving time cursor repaints it by a blit."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[tuple[QBrush, QBrush | None, list[QRectF]]] = []
        self.label_color = QColor("#000000")
        self.font = QFont()
        self._bounds = QRectF()
        self._labels = (np.zeros((4, 0)), [])
        self.outline = QPen(QColor("#000000"))
        self.outline.setCosmetic(True)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def set_rects(self, rects, labels=()) -> None:
        """``rects``: (QRectF, fill, hatch or None) each; brushes of equal look share one draw call."""
        groups: dict[tuple, tuple[QBrush, QBrush | None, list[QRectF]]] = {}
        for r, fill, hatch in rects:
            key = (_brush_key(fill), _brush_key(hatch))
            if key not in groups:
                groups[key] = (fill, hatch, [])
            groups[key][2].append(r)
        self.set_groups(list(groups.values()),
                        np.array([[r.left(), r.right(), r.top(), r.bottom()] for r, _ in labels]).T.reshape(4, -1),
                        [t for _, t in labels])

    def set_groups(self, groups, label_boxes=None, label_texts=()) -> None:
        """``groups``: (fill, hatch or None, [QRectF]); labels: a 4×n array (x0, x1, y0, y1) and n texts."""
        self.prepareGeometryChange()
        self.groups = groups
        self._labels = (np.zeros((4, 0)) if label_boxes is None else label_boxes, list(label_texts))
        bounds = QRectF()
        for _, _, rects in groups:
            for r in (rects[0], rects[-1]) if len(rects) > 64 else rects:
                bounds = bounds.united(r)
        if groups and any(len(g[2]) > 64 for g in groups):  # many rects: the labels' box is the exact extent
            boxes = self._labels[0]
            if boxes.shape[1]:
                bounds = bounds.united(QRectF(boxes[0].min(), boxes[2].min(), boxes[1].max() - boxes[0].min(),
                                              boxes[3].max() - boxes[2].min()))
        self._bounds = bounds
        self.update()

    def paint(self, painter, *args) -> None:
        painter.setPen(self.outline)
        for fill, hatch, rects in self.groups:
            painter.setBrush(fill)
            painter.drawRects(rects)
            if hatch is not None:
                painter.setBrush(hatch)
                painter.drawRects(rects)
        boxes, texts = self._labels
        if not texts:
            return
        t = painter.transform()
        xa, xb = boxes[0] * t.m11() + t.dx(), boxes[1] * t.m11() + t.dx()
        ya, yb = boxes[2] * t.m22() + t.dy(), boxes[3] * t.m22() + t.dy()
        x0, x1, y0, y1 = np.minimum(xa, xb), np.maximum(xa, xb), np.minimum(ya, yb), np.maximum(ya, yb)
        metrics = QFontMetrics(self.font)
        digit = metrics.horizontalAdvance("0")
        lengths = np.fromiter((len(s) for s in texts), dtype=float, count=len(texts))
        device = painter.device()
        fits = (x1 - x0 >= lengths * digit + 3) & (y1 - y0 >= metrics.height()) & (x1 > 0) & \
            (x0 < device.width()) & (y1 > 0) & (y0 < device.height())
        show = np.nonzero(fits)[0]
        if not len(show) or len(show) > 4000:  # too many to read: zoom in to see them
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(self.font)
        painter.setPen(self.label_color)
        for i in show:
            painter.drawText(QRectF(x0[i], y0[i], x1[i] - x0[i], y1[i] - y0[i]), Qt.AlignCenter, texts[i])
        painter.restore()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        return self._bounds


def _brush_key(b: QBrush | None) -> tuple | None:
    return None if b is None else (b.color().rgba(), int(b.style().value))


def gantt_geometry(sim, theme: Theme) -> tuple[list, np.ndarray, list[str]]:
    """Block groups (one per op and chunk shade) and label boxes of a Simulation: pure data, so a
    worker thread can build it for a big schedule."""
    n = max(1, sim.n_ranks)
    groups: dict[tuple[str, int], list[QRectF]] = {}
    for o in sim.ops:
        a = o.action
        groups.setdefault((a.op, a.stage // n if a.op == "F" else 0), []).append(
            QRectF(o.start, o.rank - 0.4, o.end - o.start, 0.8))
    styled = []
    for (op, shade), rects in sorted(groups.items()):
        c = QColor(op_color(theme, op))
        if op == "F":
            c = c.lighter(100 + 8 * shade)  # later chunks slightly lighter
        pattern = OP_PATTERN[op]
        styled.append((QBrush(c), QBrush(QColor(theme.bg), pattern) if pattern is not None else None, rects))
    boxes = np.array([(o.start, o.end, o.rank - 0.4, o.rank + 0.4) for o in sim.ops], dtype=float).T.reshape(4, -1)
    return styled, boxes, [str(o.action.microbatch) for o in sim.ops]  # the op itself: hatch and legend


class GanttView(pg.GraphicsLayoutWidget):
    """One row per rank, blocks labelled with their micro-batch, idle time hatched grey, a time
    cursor, and under it the in-flight activations per rank over time."""

    def __init__(self, theme: Theme, title: str) -> None:
        super().__init__()
        self.theme = theme
        self.setMinimumHeight(215)   # with the bubble texts under it, the page fits a 1280×800 window unscrolled
        self.gantt = self.addPlot(row=0, col=0, axisItems={"bottom": bottom_axis()})
        self.flight = self.addPlot(row=1, col=0, axisItems={"bottom": bottom_axis()})
        self.ci.layout.setRowStretchFactor(0, 3)   # the rows carry the micro-batch numbers: most room
        self.ci.layout.setRowStretchFactor(1, 1)
        self.flight.setXLink(self.gantt)
        self.gantt.getAxis("bottom").setStyle(showValues=False)  # the linked in-flight axis below reads time
        for p in (self.gantt, self.flight):
            p.setMouseEnabled(x=True, y=False)
            cache_static(p)
            for name in ("left", "bottom"):
                p.getAxis(name).enableAutoSIPrefix(False)  # unit-less: no label rewrite on every range change
        self.gantt.invertY(True)
        self.gantt.getViewBox().sigResized.connect(lambda *_a: self._rank_ticks())
        self.idle = _Blocks()
        self.blocks = _Blocks()
        self.gantt.addItem(self.idle)
        self.gantt.addItem(self.blocks)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self.cursor2 = pg.InfiniteLine(angle=90, movable=False)
        self.gantt.addItem(self.cursor)
        self.flight.addItem(self.cursor2)
        self.curves: list[pg.PlotDataItem] = []
        self.legend = RowLegend(colCount=4, frame=False)  # below the curves, never over them
        self.ci.addItem(self.legend, row=2, col=0)
        self.sim = None
        self.title = title
        self.placeholder = pg.TextItem(anchor=(0.5, 0.5))
        self.placeholder.hide()
        self.gantt.addItem(self.placeholder)
        self.apply_theme(theme)

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.setBackground(theme.bg)
        # the Gantt's ticks read "rank 0…": an axis title there would only collide with "in flight"
        for plot, left, bottom in ((self.gantt, None, None), (self.flight, "in flight", "time")):
            style_axis(plot.getAxis("left"), theme, left)
            style_axis(plot.getAxis("bottom"), theme, bottom)
        self._drawn_title = None
        self._fit_title()
        for c in (self.cursor, self.cursor2):
            c.setPen(pg.mkPen(theme.error, width=3))
        self.legend.row_height = QFontMetrics(self._legend_font()).height() * 1.15 + 10  # + the label margins
        for c in self.curves[:8]:
            label = self.legend.getLabel(c)
            label.setText(label.text, color=theme.fg, size=f"{theme.point_size * 0.8:.1f}pt")
        self.legend.fit_columns(self.width(), self._legend_font())
        self.blocks.outline = QPen(QColor(theme.fg))
        self.blocks.outline.setCosmetic(True)
        self.idle.outline = QPen(Qt.NoPen)
        self.placeholder.setColor(theme.fg)
        self._drawn_title = self._ranks = self._flight_top = self._ticks = None
        if self.sim is not None:
            self.show_simulation(self.sim, self.title)

    def show_placeholder(self, text: str) -> None:
        """A note in the middle of the empty chart (e.g. before the executed mode has run)."""
        self.placeholder.setText(text, color=self.theme.fg)
        self.placeholder.setPos(0.5, 0.5)
        self.gantt.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.placeholder.show()

    def _legend_font(self) -> QFont:
        font = QFont()
        font.setPointSizeF(self.theme.point_size * 0.8)
        return font

    def show_simulation(self, sim, title: str, geometry=None, fit_time: bool = True) -> None:
        """Draw every op of ``sim`` (an engines.pipeline.Simulation); ``geometry`` from
        :func:`gantt_geometry` when a worker already built it; ``fit_time=False`` when the caller
        sets the (linked) time range itself."""
        self.sim, self.title = sim, title
        self.placeholder.hide()
        th = self.theme
        self._fit_title()
        n = sim.n_ranks
        grey = QColor(th.muted)
        grey.setAlphaF(0.35)
        self.idle.set_groups([(QBrush(grey, Qt.Dense6Pattern), None,
                               [QRectF(0, r - 0.42, sim.makespan, 0.84) for r in range(n)])])
        groups, boxes, texts = geometry if geometry is not None else gantt_geometry(sim, th)
        font = QFont()
        font.setPointSizeF(th.point_size * 0.85)
        font.setBold(True)
        self.blocks.font = font
        self.blocks.set_groups(groups, boxes, texts)
        if n != getattr(self, "_ranks", None):
            self.gantt.setYRange(-0.6, n - 0.4, padding=0)
            self._ranks = n
            self._rank_ticks()
        if fit_time:
            self.set_time_range(sim.makespan)
        styles = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine)
        if len(self.curves) != n:  # rebuild curves and legend only when the rank count changes
            for c in self.curves:
                self.flight.removeItem(c)
            self.legend.clear()
            self.curves = [pg.PlotDataItem() for r in range(n)]
            for r, c in enumerate(self.curves):
                self.flight.addItem(c)
                c.curve.setCacheMode(QGraphicsItem.DeviceCoordinateCache)  # the cursor sweeps over it every frame
                if r < 8:
                    self.legend.addItem(c, f"rank {r}")  # peaks per rank: in the caption under the chart
                    self.legend.getLabel(c).setText(f"rank {r}", color=th.fg, size=f"{th.point_size * 0.8:.1f}pt")
            self.legend.fit_columns(self.width(), self._legend_font())
        for r, steps in enumerate(sim.in_flight):
            x = np.array([t for t, _ in steps] + [sim.makespan])
            y = np.array([c for _, c in steps], dtype=float)
            self.curves[r].setData(x, y, stepMode="center",
                                   pen=pg.mkPen(th.color(r), width=3, style=styles[r % len(styles)]))
        top = max(sim.peak_in_flight) + 0.5
        if top != getattr(self, "_flight_top", None):
            self.flight.setYRange(0, top, padding=0)
            peak = max(sim.peak_in_flight)   # the short in-flight chart: 0 and the peak, ticks that never collide
            self.flight.getAxis("left").setTicks([[(0, "0"), (peak, str(peak))]])
            self._flight_top = top

    def _rank_ticks(self) -> None:
        """One tick per rank, or every k-th when the rows are shorter than the tick text."""
        n = getattr(self, "_ranks", None)
        if not n:
            return
        font = QFont()
        font.setPointSizeF(self.theme.point_size * 0.9)
        row_px = max(self.gantt.getViewBox().height(), 1.0) / n
        step = max(1, int(np.ceil(QFontMetrics(font).height() * 1.05 / row_px)))
        ticks = [(r, f"rank {r}") for r in range(0, n, step)]
        if ticks != getattr(self, "_ticks", None):
            self.gantt.getAxis("left").setTicks([ticks])
            self._ticks = ticks

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if hasattr(self, "legend") and event.oldSize().width() != event.size().width():
            self.legend.fit_columns(event.size().width(), self._legend_font())   # first: the layout's
            self._fit_title()                                   # minimum width must allow the new size
        super().resizeEvent(event)

    def _fit_title(self) -> None:
        """The title, cut with an ellipsis where the chart is narrower: a wider title widened the whole
        chart past its widget and cut off its right side (the end of the schedule, the cursor)."""
        size = f"{self.theme.point_size * 1.05:.0f}"
        font = QFont()
        font.setPointSizeF(float(size))
        room = max(40, self.width() - int(self.gantt.getAxis("left").width()) - 40)   # layout margins
        shown = QFontMetrics(font).elidedText(self.title, Qt.ElideRight, room)
        if shown != getattr(self, "_drawn_title", None):
            self.gantt.setTitle(shown, color=self.theme.fg, size=f"{size}pt")
            self._drawn_title = shown
            self.setToolTip(self.title if shown != self.title else "")
            self.ci.setGeometry(QRectF(0, 0, self.width(), self.height()))   # shrink back to the widget

    def set_time_range(self, t_max: float) -> None:
        """Time axis 0…t_max (+1 %). Compared with the range shown, not the last one asked for: a
        linked chart (the other side, the executed pair) may have moved it since."""
        want = [0.0, t_max * 1.01]
        if self.gantt.getViewBox().viewRange()[0] != want:
            self.gantt.setXRange(*want, padding=0)

    def set_cursor(self, t: float) -> None:
        self.cursor.setValue(t)
        self.cursor2.setValue(t)


# ---------------------------------------------------------------------------------------------


class Texts:
    """TextItems reused across redraws (creating a TextItem costs far more than updating one)."""

    def __init__(self, plot) -> None:
        self.plot = plot
        self.items: list[pg.TextItem] = []
        self.used = 0

    def begin(self) -> None:
        self.used = 0

    def add(self, text: str, pos: tuple[float, float], anchor: tuple[float, float], color: str, font: QFont) -> None:
        if self.used == len(self.items):
            item = pg.TextItem()
            item.setZValue(10)
            self.plot.addItem(item)
            self.items.append(item)
        item = self.items[self.used]
        self.used += 1
        if getattr(item, "_shown", None) != (text, color, font.pointSizeF(), font.bold()):
            item.setFont(font)
            item.setText(text, color=color)
            item._shown = (text, color, font.pointSizeF(), font.bold())
        item.setAnchor(anchor)
        item.setPos(*pos)
        item.show()

    def end(self) -> None:
        for item in self.items[self.used:]:
            item.hide()


def formula_html(label: str, side, t_comm: float) -> str:
    """The simulated bubble of one side (an engines.pipeline.SideResult) beside the published formulas."""
    sim = side.sim
    lines = [f"<b>{label}</b> — simulated: makespan {sim.makespan:.2f}; "
             f"bubble / total (GPipe's denominator) <b>{sim.bubble_fraction:.1%}</b>, "
             f"bubble / ideal (Megatron's) <b>{sim.bubble_over_ideal:.1%}</b>; "
             f"peak in flight per rank {sim.peak_in_flight}" + (" (chunks)" if side.chunks > 1 else "")]
    for f in side.formulas:
        value = f"{f.value:.2f} time units" if f.denominator == "time" else f"{f.value:.1%}"
        lines.append(f"{f.name} = {f.expression} = {value}  "       # the source smaller: the line wraps
                     f"<small><i>[{f.source}]</i></small>")   # less, the Gantt gets the room
    if t_comm > 0:
        lines.append("<i>p2p latency is on: the formulas assume free communication.</i>")
    return "<br>".join(lines)


def exec_summary(label: str, run) -> str:
    """What an executed run (engines.pipeline.ExecutedRun) measured, in one paragraph."""
    ms = run.measured
    costs = ", ".join(f"{OP_NAMES[k]} {v * 1e3:.2f} ms" for k, v in run.mean_costs.items())
    return (f"{label} on {run.device}: measured makespan {ms.makespan * 1e3:.1f} ms, "
            f"bubble / total {ms.bubble_fraction:.1%} (simulated {run.simulated.bubble_fraction:.1%}); "
            f"mean op times: {costs}. Peak in flight {ms.peak_in_flight}. Pipelined gradients vs one plain "
            f"forward/backward: max difference {run.max_grad_error:.1e}. Measured times include thread and "
            f"Python overhead; hand-offs between ranks are in-process (no network).")
