"""Drawing widgets of the pipeline panel: Gantt, in-flight curves, TP steps, 3D rank grid.

Pure drawing: they take engine results (Simulation, TPStep list, Layout3D, StageMemory list) and
never compute domain numbers themselves.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPen
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGraphicsItem, QGraphicsRectItem, QGridLayout, QGroupBox,
                               QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from explorer.binder import param_slider
from explorer.ui.fast_items import Bars
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.theme import Theme
from explorer.ui.widgets import ErrorLabel, RowLegend, bottom_axis, cache_static, make_plot, pen, style_axis


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
        self.setMinimumHeight(300)
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
        self.gantt.setTitle(self.title, color=theme.fg, size=f"{theme.point_size * 1.05:.0f}pt")
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
        if title != self._drawn_title:
            self.gantt.setTitle(title, color=th.fg, size=f"{th.point_size * 1.05:.0f}pt")
            self._drawn_title = title
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
        super().resizeEvent(event)
        if hasattr(self, "legend") and event.oldSize().width() != event.size().width():
            self.legend.fit_columns(event.size().width(), self._legend_font())

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


MEMORY_STYLE = (("weights", 5), ("gradients", 0), ("optimizer", 2), ("activations", 1), ("buffers + reserve", 6))
"""Legend label and theme colour of each part in engines.pipeline.study.MEMORY_PARTS order."""


class StageMemoryChart:
    """Per-stage stacked memory bars (a LayoutStudy's parts), each total written on its bar, and
    the GPU's memory as a dashed line; updated in place."""

    def __init__(self, theme: Theme) -> None:
        self.plot = make_plot(theme, "Memory per GPU by stage", "GB", "pipeline stage")
        self.plot.setAccessibleName("Per-stage memory from the memory engine")
        self.plot.setMouseEnabled(x=False, y=False)
        cache_static(self.plot)
        self.bars = [Bars(x=[0], height=[0], width=0.7) for _ in MEMORY_STYLE]
        self.legend = self.plot.addLegend(offset=(10, 10))  # top left: above the short bars
        for item, (label, _) in zip(self.bars, MEMORY_STYLE):
            self.plot.addItem(item)
            self.legend.addItem(item, label)  # BarGraphItem is not auto-listed
        self.totals = Texts(self.plot)
        self.cap = pg.InfiniteLine(angle=0, movable=False)
        self.plot.addItem(self.cap)

    def show(self, study, th: Theme) -> None:
        n = len(study.stage_memory)
        xs = list(range(n))
        base = [0.0] * n
        for item, vals, (_, color) in zip(self.bars, study.parts_gb or [()] * len(MEMORY_STYLE), MEMORY_STYLE):
            item.setOpts(x=xs, y0=base, height=list(vals), width=0.7, brush=th.color(color), pen=th.fg)
            base = [b + v for b, v in zip(base, vals)]
        self.totals.begin()
        font = QFont()
        font.setPointSizeF(th.point_size * 0.85)
        for i, total in enumerate(base):  # the number on each bar: colour is never the only cue
            self.totals.add(f"{total:.1f} GB", (i, total), (0.5, 1), th.fg, font)
        cap = study.gpu_memory_gb
        self.totals.add(f"GPU memory {cap:.0f} GB", (n - 0.45, cap), (1, 1), th.fg, font)
        self.totals.end()
        self.cap.setPos(cap)
        self.cap.setPen(pg.mkPen(th.error, width=2, style=Qt.DashLine))
        self.plot.getAxis("bottom").setTicks([[(i, f"{i} ({st.layers} L)") for i, st in enumerate(study.stage_memory)]])
        self.plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        # room above the tallest thing (bars or the memory line and its label) for the legend
        view_px = max(self.plot.getViewBox().height(), 150.0)
        legend_px = self.legend.height() + 2.5 * QFontMetrics(font).height()
        top = range_end_for_label(max(max(base, default=0), cap), 0.0, legend_px, view_px, 0.4 * view_px)
        self.plot.setYRange(0, top, padding=0)


class TPView(pg.PlotWidget):
    """Steps of one tensor-parallel block (columns) × GPUs (rows). Each cell shows which part of
    the tensor the GPU holds: the whole (replicated), slice i of t (column / sequence shard) or
    a hatched whole (a partial sum awaiting the all-reduce). Collectives are vertical bars."""

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.setMouseEnabled(x=False, y=False)
        self.hideAxis("bottom")
        self.getPlotItem().invertY(True)
        cache_static(self)
        self.cells = _Blocks()
        self.addItem(self.cells)
        self.texts = Texts(self)
        self.highlight = QGraphicsRectItem()
        self.addItem(self.highlight)
        self.steps = []
        self.t = 1
        self.current = 0

    def set_steps(self, steps, t: int, current: int = 0) -> None:
        self.steps, self.t = steps, t
        self.current = max(0, min(current, len(steps) - 1))
        self._draw()

    def set_current(self, index: int) -> None:
        index = max(0, min(index, len(self.steps) - 1))
        if index != self.current:
            self.current = index
            self._draw()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._draw()

    def _draw(self) -> None:
        th = self.theme
        self.setBackground(th.bg)
        self.texts.begin()
        rows = min(self.t, 8)
        rects = []
        font = QFont()
        font.setPointSizeF(th.point_size * 0.8)
        for i, st in enumerate(self.steps):
            done = i <= self.current
            alpha = 1.0 if done else 0.25
            x0 = i * 1.2
            if st.collective:
                c = QColor(th.error)
                c.setAlphaF(alpha)
                rects.append((QRectF(x0 + 0.3, -0.45, 0.4, rows - 0.1), QBrush(c), QBrush(QColor(th.bg), Qt.Dense5Pattern)))
                self.texts.add(st.collective.replace("-", "-\n"), (x0 + 0.5, rows - 0.4), (0.5, 0),
                               th.fg if done else th.muted, font)
                continue
            for g in range(rows):
                base = QColor(th.muted)
                base.setAlphaF(0.15)
                rects.append((QRectF(x0, g - 0.4, 1.0, 0.8), QBrush(base), None))
                col = QColor(th.color({"replicated": 1, "sequence-shard": 2, "column": 4, "row": 0,
                                       "local": 4, "collective": 5}[st.kind]))
                col.setAlphaF(alpha)
                if st.kind in ("column", "local", "sequence-shard"):
                    w = 1.0 / self.t
                    rects.append((QRectF(x0 + g * w, g - 0.4, w, 0.8), QBrush(col), None))
                elif st.kind == "row":
                    rects.append((QRectF(x0, g - 0.4, 1.0, 0.8), QBrush(col), QBrush(QColor(th.bg), Qt.BDiagPattern)))
                else:
                    rects.append((QRectF(x0, g - 0.4, 1.0, 0.8), QBrush(col), None))
        self.cells.outline = QPen(QColor(th.fg))
        self.cells.outline.setCosmetic(True)
        self.cells.set_rects(rects)
        if self.steps:
            x0 = self.current * 1.2
            self.highlight.setRect(QRectF(x0 - 0.08, -0.55, 1.16, rows + 0.1))
            p = QPen(QColor(th.error), 0)
            p.setWidthF(3)
            p.setCosmetic(True)
            self.highlight.setPen(p)
            bold = QFont()
            bold.setPointSizeF(th.point_size)
            bold.setBold(True)
            for phase in ("forward", "backward"):  # phase captions above the columns
                idx = [i for i, s in enumerate(self.steps) if s.phase == phase]
                if idx:
                    self.texts.add(f"{phase} pass", (idx[0] * 1.2, -1.0), (0, 1), th.fg, bold)
            for i, st in enumerate(self.steps):  # region captions where the region changes
                if i == 0 or self.steps[i - 1].region != st.region:
                    self.texts.add(st.region.upper() if st.region == "mlp" else st.region, (i * 1.2, -0.5), (0, 1),
                                   th.muted, font)
        self.texts.end()
        ticks = [(g, f"GPU {g}") for g in range(rows)]
        if ticks != getattr(self, "_ticks", None):
            self.getAxis("left").setTicks([ticks])
            self._ticks = ticks
        self.getAxis("left").setTextPen(pen(th.fg, 1))
        n = max(1, len(self.steps))
        self.setXRange(-0.2, n * 1.2, padding=0)
        self.setYRange(-1.8, rows + 0.9, padding=0)


# ---------------------------------------------------------------------------------------------


class LayoutView(pg.PlotWidget):
    """GPUs as squares inside node boxes, labelled rank and (TP, DP, PP) coordinates, shaded by
    pipeline stage; one example TP, DP and PP group is joined by solid / dashed / dotted lines."""

    MAX_NODES = 16

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.setMouseEnabled(x=False, y=False)
        self.hideAxis("bottom")
        self.hideAxis("left")
        self.getPlotItem().invertY(True)
        self.layout3d = None
        self.blocks = _Blocks()
        self.blocks.setZValue(-1)
        self.addItem(self.blocks)
        self.texts = Texts(self)
        self.group_lines = {kind: (pg.PlotCurveItem(connect="finite"), pg.ScatterPlotItem())
                            for kind in ("tp", "dp", "pp")}                 # (path, member dots)
        for line, dots in self.group_lines.values():
            self.addItem(line)
            self.addItem(dots)
        self.setAspectLocked(True)

    def set_layout(self, layout3d) -> None:
        self.layout3d = layout3d
        self._draw()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._draw()

    def _pos(self, rank: int) -> tuple[float, float]:
        g = self.layout3d.gpus_per_node
        node, local = divmod(rank, g)
        per_row = min(g, 8)
        cols = 2 if self.layout3d.n_nodes <= 8 else 4
        nx, ny = node % cols, node // cols
        gx, gy = local % per_row, local // per_row
        rows_per_node = -(-g // per_row)
        return nx * (per_row + 1.2) + gx, ny * (rows_per_node + 1.6) + gy

    def _draw(self) -> None:
        th = self.theme
        self.setBackground(th.bg)
        lay = self.layout3d
        if lay is None:
            return
        self.texts.begin()
        shown = min(lay.n_nodes, self.MAX_NODES)
        limit = shown * lay.gpus_per_node
        g = lay.gpus_per_node
        per_row = min(g, 8)
        rows_per_node = -(-g // per_row)
        font = QFont()
        font.setPointSizeF(th.point_size * (0.85 if shown <= 8 else 0.65))
        rects, labels = [], []
        for node in range(shown):
            x, y = self._pos(node * g)
            rects.append((QRectF(x - 0.55, y - 0.75, per_row + 0.1, rows_per_node + 0.3), QBrush(Qt.NoBrush), None))
            members = lay.ranks[node * g:(node + 1) * g]
            pps = sorted({r.pp_rank for r in members})
            dps = sorted({r.dp_rank for r in members})
            # short enough to stay over its node's box at presenter text sizes ("DP replica 40–47" ran past it)
            self.texts.add(f"node {node}: PP stage {_span(pps)} · DP {_span(dps)}", (x - 0.55, y - 0.75),
                           (0, 1), th.fg, font)
        for rp in lay.ranks[:limit]:
            x, y = self._pos(rp.rank)
            c = QColor(th.color([1, 0, 2, 6, 4, 5, 3][rp.pp_rank % 7]))
            hatch = QBrush(QColor(th.bg), [None, Qt.BDiagPattern, Qt.FDiagPattern, Qt.CrossPattern][rp.pp_rank % 4]) \
                if rp.pp_rank % 4 else None
            box = QRectF(x - 0.42, y - 0.42, 0.84, 0.84)
            rects.append((box, QBrush(c), hatch))
            labels.append((box, str(rp.rank)))
        self.texts.end()
        self.blocks.outline = QPen(QColor(th.fg))
        self.blocks.outline.setCosmetic(True)
        bold = QFont(font)
        bold.setBold(True)
        self.blocks.font = bold
        self.blocks.set_rects(rects, labels)
        styles = {"tp": Qt.SolidLine, "dp": Qt.DashLine, "pp": Qt.DotLine}
        xs = [self._pos(r)[0] for r in range(0, limit)]
        ys = [self._pos(r)[1] for r in range(0, limit)]
        for kind, (line, dots) in self.group_lines.items():
            grp = next((gr for gr in lay.groups if gr.kind == kind and max(gr.members) < limit), None)
            if grp is None or len(grp.members) < 2:
                line.hide()
                dots.hide()
                continue
            pts = [self._pos(m) for m in grp.members]
            dx, dy = {"tp": (0.0, 0.5), "dp": (0.0, -0.5), "pp": (-0.5, 0.0)}[kind]  # in the gaps: numbers stay legible
            colour = th.error if kind == "tp" else th.fg
            px, py = group_path(pts, dx, dy, min(xs) - SPINE[kind])
            line.setData(px, py, pen=pg.mkPen(colour, width=4 if kind == "tp" else 3, style=styles[kind]))
            dots.setData([x + dx for x, _ in pts], [y + dy for _, y in pts], size=9, brush=colour, pen=pg.mkPen(colour))
            line.show()
            dots.show()
        # one call: with the aspect locked, pyqtgraph then widens whichever range the widget's shape
        # needs; two calls keep the last one and crop the other (nodes were cut off at both sides)
        self.setRange(xRange=(min(xs) - max(SPINE.values()) - 0.3, max(xs) + 0.8),
                      yRange=(min(ys) - 1.4, max(ys) + 0.8), padding=0)


SPINE = {"tp": 0.85, "dp": 1.0, "pp": 1.15}   # a group's spine: this far left of the first GPU column


def group_path(points: list[tuple[float, float]], dx: float, dy: float, spine_x: float) -> tuple[list, list]:
    """A group's connecting path: a line along each row of members (offset by dx, dy into the gaps
    between squares), and for a group that spans rows a vertical spine at ``spine_x``, left of the
    node boxes, with a stub into each row. Diagonals from one row's end to the next row's start
    crossed the node labels (a 64-GPU DP group zigzagged through every node). NaN separates
    segments (``connect="finite"``)."""
    nan = float("nan")
    rows: dict[float, list[float]] = {}
    for x, y in points:
        rows.setdefault(round(y + dy, 6), []).append(x + dx)
    xs: list[float] = []
    ys: list[float] = []
    for y, row in sorted(rows.items()):
        xs += sorted(row) + [nan]
        ys += [y] * len(row) + [nan]
    if len(rows) > 1:
        for y, row in sorted(rows.items()):
            xs += [spine_x, min(row), nan]
            ys += [y, y, nan]
        xs += [spine_x, spine_x, nan]
        ys += [min(rows), max(rows), nan]
    return xs, ys


def _span(values: list[int]) -> str:
    """'3' or '0–7' for a sorted list of small integers."""
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"


# --- captions: engine results as text -------------------------------------------------------------


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


def tp_counts_html(tp, sc) -> str:
    """Collectives per phase of an engines.pipeline.TPStudy, and the ring traffic."""
    parts = []
    for phase, counts in (("forward", tp.forward), ("backward", tp.backward)):
        cs = ", ".join(f"{n} {c}" for c, n in counts if n)
        parts.append(f"{phase}: {cs or 'no collectives'}")
    return (f"Per layer, per micro-batch ({sc.arch.label}, t = {sc.tp}"
            f"{', SP on' if sc.sequence_parallel else ''}): " + "; ".join(parts) +
            f". Ring traffic per GPU per layer: {tp.bytes_per_gpu / 1e6:,.1f} MB "
            "(TP and TP+SP move the same bytes)."
            + (" <b>t = 1: one GPU holds every matrix whole, so the all-reduces have nothing to "
               "sum.</b> Raise t (2 to 8, within a node) to see the column-then-row split."
               if sc.tp == 1 else ""))


def tp_caption_html(steps, i: int) -> str:
    if not steps:
        return ""
    st = steps[i]
    what = f"<b>{st.collective}</b> ({st.operator}), {st.bytes_per_gpu / 1e6:,.1f} MB sent per GPU" \
        if st.collective else (f"operator {st.operator}: identity in this pass" if st.operator else st.kind)
    return (f"Step {i + 1}/{len(steps)} — {st.phase}, {st.region}: <b>{st.label}</b>. "
            f"Each GPU holds {st.shape_per_gpu}. {what}.")


def layout_html(study, sc, max_nodes: int) -> str:
    """The rank grid's groups (an engines.pipeline.LayoutStudy) and the links they use."""
    lay = study.layout
    nv = f"NVLink {study.nvlink_gbps:,.0f} GB/s"
    net = f"network {sc.internode_gbps:,.0f} GB/s per GPU"
    lines = [f"<b>{sc.n_gpus} GPUs = DP {sc.dp} × TP {sc.tp} × PP {sc.pp}</b> on {lay.n_nodes} node(s) "
             f"of {sc.gpus_per_node}. Squares show the global rank = tp + TP·(dp + DP·pp) (Megatron order), "
             "so TP rank = rank mod TP; shade and hatch = pipeline stage."]
    names = {"tp": "TP groups (solid red line: one example)", "dp": "DP groups (dashed)", "pp": "PP groups (dotted)"}
    for kind, s in lay.summary().items():
        if s["size"] <= 1:
            lines.append(f"{names[kind]}: size 1, no communication.")
            continue
        where = "all inside a node → " + nv if s["intra_node"] == s["groups"] else \
            ("all across nodes → " + net if s["intra_node"] == 0 else
             f"{s['intra_node']} of {s['groups']} inside a node")
        lines.append(f"{names[kind]}: {s['groups']} group{'s' if s['groups'] != 1 else ''} of {s['size']}, {where}.")
    if lay.n_nodes > max_nodes:
        lines.append(f"<i>Drawing the first {max_nodes} of {lay.n_nodes} nodes.</i>")
    return "<br>".join(lines)


# --- tab pages: widgets only; the panel connects them and fills them -------------------------------


class ExecutedPage(QWidget):
    """Run button, model width and progress; the measured and simulated Gantt charts, linked."""

    def __init__(self, theme: Theme, hidden_spin, progress_widget) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        top = FlowLayout()          # wraps at presenter sizes on a narrow screen
        self.run_button = QPushButton("Run the left schedule on real torch")
        self.run_button.setAccessibleName("Run the executed mode")
        top.addWidget(self.run_button)
        top.addWidget(keep_together(QLabel("hidden width"), hidden_spin))
        top.addWidget(progress_widget)
        lay.addLayout(top)
        self.exec_info = QLabel("A small MLP is cut into p·v stages; one thread per rank (a CUDA stream each on a GPU) "
                                "runs the left schedule's order with real forward and backward work.")
        self.exec_info.setWordWrap(True)
        lay.addWidget(self.exec_info)
        self.exec_error = ErrorLabel()
        lay.addWidget(self.exec_error)
        row = QHBoxLayout()
        self.exec_gantts = [GanttView(theme, "measured"), GanttView(theme, "simulated from measured op times")]
        for g in self.exec_gantts:
            g.show_placeholder("Not run yet:\npress Run above")
        self.exec_gantts[1].gantt.setXLink(self.exec_gantts[0].gantt)
        for g in self.exec_gantts:
            row.addWidget(g, 1)
        lay.addLayout(row, 1)


class TPPage(QWidget):
    """TP degree and sequence parallelism (scenario fields), the step view and its captions."""

    def __init__(self, theme: Theme, tp_spin) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        top = FlowLayout()
        self.tp_spin = tp_spin
        self.sp_check = QCheckBox("sequence parallelism (LayerNorm/dropout on s/t tokens)")
        top.addWidget(keep_together(QLabel("TP degree t"), self.tp_spin))
        top.addWidget(self.sp_check)
        lay.addLayout(top)
        self.tp_error = ErrorLabel()
        lay.addWidget(self.tp_error)
        self.tp_view = TPView(theme)
        self.tp_view.setAccessibleName("Tensor-parallel split of one transformer block, step by step")
        lay.addWidget(self.tp_view, 1)
        self.tp_caption = LiveText(min_lines=2)  # changes every frame: must not re-lay out the panel
        lay.addWidget(self.tp_caption)
        self.tp_counts = LiveText(min_lines=2)
        lay.addWidget(self.tp_counts)


class LayoutPage(QWidget):
    """The rank grid beside the per-stage memory chart, and the groups described under them."""

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        self.layout_error = ErrorLabel()
        lay.addWidget(self.layout_error)
        row = QHBoxLayout()
        self.layout_view = LayoutView(theme)
        self.layout_view.setAccessibleName("GPUs as DP × TP × PP rank grid, grouped by node")
        row.addWidget(self.layout_view, 3)
        self.memory = StageMemoryChart(theme)
        row.addWidget(self.memory.plot, 2)
        lay.addLayout(row, 1)
        self.layout_text = LiveText(min_lines=4)
        lay.addWidget(self.layout_text)


def int_spin(lo: int, hi: int, tip: str, step: int = 1) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setSingleStep(step)
    s.setKeyboardTracking(False)
    s.setToolTip(tip)
    s.setAccessibleName(tip)
    return s


def param_spin(params_cls, name: str) -> QSpinBox:
    """A spin box with the range, step and tip the Params field declares."""
    m = params_cls.spec(name)
    return int_spin(int(m["lo"]), int(m["hi"]), m["tip"], int(m["step"]))


COSTS = ("t_f", "t_b", "w_share_pct", "t_comm")
"""The cost sliders, in the order they are shown."""


class SchedulesPage(QWidget):
    """Both schedules' controls (kinds, p, m, v, costs), the scenario context line, and the two
    Gantt charts with their bubble captions."""

    def __init__(self, theme: Theme, params_cls, kinds, kind_labels) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        box = QGroupBox("Schedule and costs")   # p is the scenario's PP, m its gradient accumulation (tooltips)
        inside = QVBoxLayout(box)
        self.kind = [QComboBox(), QComboBox()]
        for combo, name in zip(self.kind, ("left", "right")):
            for k in kinds:
                combo.addItem(kind_labels[k], k)
            combo.setAccessibleName(f"Schedule on the {name}")
        self.p_spin = int_spin(1, 64, "p: pipeline ranks (scenario PP)")
        self.m_spin = int_spin(1, 512, "m: micro-batches per step (scenario gradient accumulation)")
        self.v_spin = param_spin(params_cls, "v")
        self.costs = {name: param_slider(params_cls, name) for name in COSTS}
        controls = FlowLayout()     # wraps at presenter font sizes instead of pushing the panel sideways
        controls.addWidget(keep_together(QLabel("Left"), self.kind[0]))
        controls.addWidget(keep_together(QLabel("Right"), self.kind[1]))
        for lbl, w in (("p ranks", self.p_spin), ("m micro-batches", self.m_spin), ("v chunks", self.v_spin)):
            controls.addWidget(keep_together(QLabel(lbl), w))
        for s in self.costs.values():
            controls.addWidget(s)
        inside.addLayout(controls)
        self.cost_note = QLabel("Costs are per rank's whole stage; a chunk costs 1/v of it (ZB-V: v = 2). "
                                "Blocks: F plain, B hatched ╱, I hatched ╲, W cross-hatched; idle time dotted grey.")
        self.cost_note.setObjectName("muted")
        self.cost_note.setWordWrap(True)
        inside.addWidget(self.cost_note)
        self.sched_error = ErrorLabel()
        inside.addWidget(self.sched_error)
        lay.addWidget(box)
        self.context_line = LiveText()
        self.context_line.setAccessibleName("Where this pipeline sits in the scenario")
        lay.addWidget(self.context_line)
        grid = QGridLayout()   # charts in one row, captions in the next: a longer caption on one
        self.gantts = [GanttView(theme, "left"), GanttView(theme, "right")]  # side no longer shortens
        self.gantts[1].gantt.setXLink(self.gantts[0].gantt)                  # its chart
        self.formula = [LiveText(min_lines=4), LiveText(min_lines=4)]
        for col, (g, f) in enumerate(zip(self.gantts, self.formula)):
            g.setAccessibleName("Pipeline Gantt chart and in-flight activations")
            grid.addWidget(g, 0, col)
            f.setAccessibleName("Bubble: measured in the simulation and the published formulas")
            grid.addWidget(f, 1, col)
            grid.setColumnStretch(col, 1)
        grid.setRowStretch(0, 1)
        lay.addLayout(grid, 1)

