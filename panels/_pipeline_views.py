"""Drawing widgets of the pipeline panel: Gantt, in-flight curves, TP steps, 3D rank grid.

Pure drawing: they take engine results (Simulation, TPStep list, Layout3D, StageMemory list) and
never compute domain numbers themselves.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import (QAbstractTextDocumentLayout, QBrush, QColor, QFont, QFontMetrics, QPainter, QPalette,
                           QPen, QPicture, QTextDocument)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QSizePolicy, QWidget

from explorer.theme import Theme
from explorer.widgets import make_plot, pen

def cache_static(plot) -> None:
    """Axes and title change rarely: Qt keeps them as pixmaps, so repainting the data (an edit, a
    timeline frame) does not re-render their text each time (that was most of a repaint)."""
    pi = plot.getPlotItem() if hasattr(plot, "getPlotItem") else plot
    for name in ("left", "bottom", "right", "top"):
        pi.getAxis(name).setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    pi.titleLabel.setCacheMode(QGraphicsItem.DeviceCoordinateCache)


class StableText(QWidget):
    """Word-wrapped rich text whose changes repaint only itself.

    A QLabel re-lays out the whole window on every setText (updateGeometry), which repaints every
    widget of the panel: far too slow for text that changes on each edit or animation frame. This
    widget only grows its height when the text needs more room, and otherwise just repaints."""

    def __init__(self, text: str = "", min_lines: int = 1) -> None:
        super().__init__()
        self._doc = QTextDocument()
        self._doc.setDocumentMargin(1)
        self._html = ""
        self._min_lines = min_lines
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        self.setText(text)

    def text(self) -> str:
        return self._html

    def setText(self, html: str) -> None:  # noqa: N802 (QLabel's name)
        if html == self._html:
            return
        self._html = html
        self._doc.setHtml(html)
        self.setAccessibleDescription(self._doc.toPlainText())
        self._fit()
        self.update()

    def _fit(self) -> None:
        self._doc.setDefaultFont(self.font())
        self._doc.setTextWidth(max(self.width(), 100))
        lines = QFontMetrics(self.font()).lineSpacing() * self._min_lines + 4
        need = max(int(self._doc.size().height()) + 1, lines)
        if need > self.minimumHeight():
            self.setMinimumHeight(need)

    def reset_height(self) -> None:
        """Shrink back to the current text (after a theme or font change)."""
        self.setMinimumHeight(0)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return QSize(300, self.minimumHeight())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.oldSize().width() != event.size().width():
            self.reset_height()
        super().resizeEvent(event)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if event.type() in (event.Type.FontChange, event.Type.PaletteChange, event.Type.StyleChange):
            self.reset_height()
            self.update()

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt name)
        painter = QPainter(self)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        palette = self.palette()
        palette.setColor(QPalette.Text, palette.color(QPalette.WindowText))
        ctx.palette = palette
        self._doc.documentLayout().draw(painter, ctx)
        painter.end()


OP_NAMES = {"F": "F forward", "B": "B backward", "I": "I input-grad", "W": "W weight-grad"}
OP_PATTERN = {"F": None, "B": Qt.BDiagPattern, "I": Qt.FDiagPattern, "W": Qt.CrossPattern}


def op_color(theme: Theme, op: str) -> str:
    return theme.color({"F": 4, "B": 0, "I": 2, "W": 6}[op])


class _Blocks(pg.GraphicsObject):
    """Many filled rectangles with optional hatch and centred labels, painted in one go.

    Labels are drawn in screen pixels and skipped when their block is too small on screen, so
    zooming in reveals them; this is far cheaper than one TextItem per block."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[tuple[QRectF, QBrush, QBrush | None]] = []
        self.labels: list[tuple[QRectF, str]] = []
        self.label_color = QColor("#000000")
        self.font = QFont()
        self._bounds = QRectF()
        self.outline = QPen(QColor("#000000"))
        self.outline.setCosmetic(True)

    def set_rects(self, rects, labels=()) -> None:
        self.prepareGeometryChange()
        self.rects = rects
        self.labels = list(labels)
        self._bounds = QRectF()
        for r, _, _ in rects:
            self._bounds = self._bounds.united(r)
        self._picture = None  # recorded on the next paint, replayed afterwards
        self._widths: dict[str, int] = {}
        self.update()

    def _record(self) -> QPicture:
        picture = QPicture()
        p = QPainter(picture)
        p.setPen(self.outline)
        for r, fill, hatch in self.rects:
            p.setBrush(fill)
            p.drawRect(r)
            if hatch is not None:
                p.setBrush(hatch)
                p.drawRect(r)
        p.end()
        return picture

    def paint(self, painter, *args) -> None:
        if getattr(self, "_picture", None) is None:
            self._picture = self._record()
        self._picture.play(painter)
        if not self.labels:
            return
        to_screen = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setFont(self.font)
        painter.setPen(self.label_color)
        metrics = QFontMetrics(self.font)
        height = metrics.height()
        widths = self._widths
        for r, text in self.labels:
            box = to_screen.mapRect(r)
            w = widths.get(text)
            if w is None:
                w = widths[text] = metrics.horizontalAdvance(text) + 2
            if box.width() >= w and box.height() >= height:
                painter.drawText(box, Qt.AlignCenter, text)
        painter.restore()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        return self._bounds


class GanttView(pg.GraphicsLayoutWidget):
    """One row per rank, blocks labelled ``F3``/``B3``…, idle time hatched grey, a time cursor,
    and under it the in-flight activations per rank over time."""

    def __init__(self, theme: Theme, title: str) -> None:
        super().__init__()
        self.theme = theme
        self.setMinimumHeight(320)
        self.gantt = self.addPlot(row=0, col=0)
        self.flight = self.addPlot(row=1, col=0)
        self.ci.layout.setRowStretchFactor(0, 3)
        self.ci.layout.setRowStretchFactor(1, 2)
        self.flight.setXLink(self.gantt)
        for p in (self.gantt, self.flight):
            p.setMouseEnabled(x=True, y=False)
        self.gantt.invertY(True)
        self.idle = _Blocks()
        self.blocks = _Blocks()
        self.gantt.addItem(self.idle)
        self.gantt.addItem(self.blocks)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self.cursor2 = pg.InfiniteLine(angle=90, movable=False)
        self.gantt.addItem(self.cursor)
        self.flight.addItem(self.cursor2)
        self.curves: list[pg.PlotDataItem] = []
        self.legend = self.flight.addLegend(offset=(-5, 2), labelTextSize=f"{theme.point_size * 0.8:.0f}pt",
                                            colCount=2)
        self.sim = None
        self.title = title
        self.apply_theme(theme)

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.setBackground(theme.bg)
        font = QFont()
        font.setPointSizeF(theme.point_size * 0.9)
        for plot, left in ((self.gantt, "rank"), (self.flight, "in flight")):
            for name in ("left", "bottom"):
                ax = plot.getAxis(name)
                ax.setPen(pen(theme.fg, 1))
                ax.setTextPen(pen(theme.fg, 1))
                ax.setStyle(tickFont=font)
            plot.setLabel("left", left, color=theme.fg, size=f"{theme.point_size:.0f}pt")
        self.flight.setLabel("bottom", "time", color=theme.fg, size=f"{theme.point_size:.0f}pt")
        self.gantt.setTitle(self.title, color=theme.fg, size=f"{theme.point_size * 1.05:.0f}pt")
        for c in (self.cursor, self.cursor2):
            c.setPen(pg.mkPen(theme.error, width=3))
        self.legend.setLabelTextColor(theme.fg)
        bg = QColor(theme.bg)
        bg.setAlphaF(0.85)
        self.legend.setBrush(bg)
        self.blocks.outline = QPen(QColor(theme.fg))
        self.blocks.outline.setCosmetic(True)
        self.idle.outline = QPen(Qt.NoPen)
        if self.sim is not None:
            self.show_simulation(self.sim, self.title)

    def show_simulation(self, sim, title: str, unit: str = "") -> None:
        """Draw every op of ``sim`` (an engines.pipeline.Simulation)."""
        self.sim, self.title = sim, title
        th = self.theme
        self.gantt.setTitle(title, color=th.fg, size=f"{th.point_size * 1.05:.0f}pt")
        n = sim.n_ranks
        grey = QColor(th.muted)
        grey.setAlphaF(0.35)
        self.idle.set_rects([(QRectF(0, r - 0.42, sim.makespan, 0.84), QBrush(grey, Qt.Dense6Pattern), None)
                             for r in range(n)])
        rects, labels = [], []
        for o in sim.ops:
            c = QColor(op_color(th, o.action.op))
            if o.action.op == "F":
                c = c.lighter(100 + 8 * (o.action.stage // max(1, n)))  # later chunks slightly lighter
            pattern = OP_PATTERN[o.action.op]
            hatch = QBrush(QColor(th.bg), pattern) if pattern is not None else None
            r = QRectF(o.start, o.rank - 0.4, o.end - o.start, 0.8)
            rects.append((r, QBrush(c), hatch))
            labels.append((r, str(o.action.microbatch)))  # the op itself is told by hatch and legend
        font = QFont()
        font.setPointSizeF(th.point_size * 0.85)
        font.setBold(True)
        self.blocks.font = font
        self.blocks.set_rects(rects, labels)
        self.gantt.getAxis("left").setTicks([[(r, f"rank {r}") for r in range(n)]])
        self.gantt.setYRange(-0.6, n - 0.4, padding=0)
        self.gantt.setXRange(0, sim.makespan * 1.01, padding=0)
        styles = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine)
        if len(self.curves) != n:  # rebuild curves and legend only when the rank count changes
            for c in self.curves:
                self.flight.removeItem(c)
            self.legend.clear()
            self.curves = [pg.PlotDataItem(name=f"rank {r}" if r < 8 else None) for r in range(n)]
            for c in self.curves:
                self.flight.addItem(c)
        for r, steps in enumerate(sim.in_flight):
            x = np.array([t for t, _ in steps] + [sim.makespan])
            y = np.array([c for _, c in steps], dtype=float)
            self.curves[r].setData(x, y, stepMode="center",
                                   pen=pg.mkPen(th.color(r), width=3, style=styles[r % len(styles)]))
            if r < 8:
                label = self.legend.getLabel(self.curves[r])
                if label is not None:
                    label.setText(f"rank {r} (peak {sim.peak_in_flight[r]})", color=th.fg)
        self.flight.setYRange(0, max(sim.peak_in_flight) + 0.5, padding=0)

    def set_time_range(self, t_max: float) -> None:
        self.gantt.setXRange(0, t_max * 1.01, padding=0)

    def set_cursor(self, t: float) -> None:
        self.cursor.setValue(t)
        self.cursor2.setValue(t)


# ---------------------------------------------------------------------------------------------


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
        self.cells = _Blocks()
        self.addItem(self.cells)
        self.texts: list[pg.TextItem] = []
        self.highlight = QGraphicsRectItem()
        self.addItem(self.highlight)
        self.steps = []
        self.t = 1
        self.current = 0

    def set_steps(self, steps, t: int) -> None:
        self.steps, self.t = steps, t
        self._draw()

    def set_current(self, index: int) -> None:
        self.current = max(0, min(index, len(self.steps) - 1))
        self._draw()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._draw()

    def _draw(self) -> None:
        th = self.theme
        self.setBackground(th.bg)
        for t in self.texts:
            self.removeItem(t)
        self.texts = []
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
                tx = pg.TextItem(st.collective.replace("-", "-\n"), color=th.fg if done else th.muted, anchor=(0.5, 0))
                tx.setFont(font)
                tx.setPos(x0 + 0.5, rows - 0.4)
                self.addItem(tx)
                self.texts.append(tx)
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
            st = self.steps[self.current]
            x0 = self.current * 1.2
            self.highlight.setRect(QRectF(x0 - 0.08, -0.55, 1.16, rows + 0.1))
            p = QPen(QColor(th.error), 0)
            p.setWidthF(3)
            p.setCosmetic(True)
            self.highlight.setPen(p)
            # phase captions above the columns
            for phase in ("forward", "backward"):
                idx = [i for i, s in enumerate(self.steps) if s.phase == phase]
                if idx:
                    cap = pg.TextItem(f"{phase} pass", color=th.fg, anchor=(0, 1))
                    f2 = QFont()
                    f2.setPointSizeF(th.point_size)
                    f2.setBold(True)
                    cap.setFont(f2)
                    cap.setPos(idx[0] * 1.2, -1.0)
                    self.addItem(cap)
                    self.texts.append(cap)
            for i, st in enumerate(self.steps):  # region captions where the region changes
                if i == 0 or self.steps[i - 1].region != st.region:
                    rc = pg.TextItem(st.region.upper() if st.region == "mlp" else st.region, color=th.muted, anchor=(0, 1))
                    rc.setFont(font)
                    rc.setPos(i * 1.2, -0.5)
                    self.addItem(rc)
                    self.texts.append(rc)
        self.getAxis("left").setTicks([[(g, f"GPU {g}") for g in range(rows)]])
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
        self.items: list = []

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
        for it in self.items:
            self.removeItem(it)
        self.items = []
        lay = self.layout3d
        if lay is None:
            return
        shown = min(lay.n_nodes, self.MAX_NODES)
        limit = shown * lay.gpus_per_node
        g = lay.gpus_per_node
        per_row = min(g, 8)
        rows_per_node = -(-g // per_row)
        font = QFont()
        font.setPointSizeF(th.point_size * (0.85 if shown <= 8 else 0.65))
        blocks = _Blocks()
        rects, labels = [], []
        for node in range(shown):
            x, y = self._pos(node * g)
            rects.append((QRectF(x - 0.55, y - 0.75, per_row + 0.1, rows_per_node + 0.3), QBrush(Qt.NoBrush), None))
            members = lay.ranks[node * g:(node + 1) * g]
            pps = sorted({r.pp_rank for r in members})
            dps = sorted({r.dp_rank for r in members})
            cap = pg.TextItem(f"node {node}: PP stage {_span(pps)}, DP replica {_span(dps)}", color=th.fg, anchor=(0, 1))
            cap.setFont(font)
            cap.setPos(x - 0.55, y - 0.75)
            self.addItem(cap)
            self.items.append(cap)
        for rp in lay.ranks[:limit]:
            x, y = self._pos(rp.rank)
            c = QColor(th.color([1, 0, 2, 6, 4, 5, 3][rp.pp_rank % 7]))
            hatch = QBrush(QColor(th.bg), [None, Qt.BDiagPattern, Qt.FDiagPattern, Qt.CrossPattern][rp.pp_rank % 4]) \
                if rp.pp_rank % 4 else None
            box = QRectF(x - 0.42, y - 0.42, 0.84, 0.84)
            rects.append((box, QBrush(c), hatch))
            labels.append((box, str(rp.rank)))
        blocks.outline = QPen(QColor(th.fg))
        blocks.outline.setCosmetic(True)
        bold = QFont(font)
        bold.setBold(True)
        blocks.font = bold
        blocks.set_rects(rects, labels)
        self.addItem(blocks)
        self.items.append(blocks)
        blocks.setZValue(-1)
        styles = {"tp": Qt.SolidLine, "dp": Qt.DashLine, "pp": Qt.DotLine}
        for kind in ("tp", "dp", "pp"):
            grp = next((gr for gr in lay.groups if gr.kind == kind and max(gr.members) < limit), None)
            if grp is None or len(grp.members) < 2:
                continue
            pts = [self._pos(m) for m in grp.members]
            dx, dy = {"tp": (0.0, 0.3), "dp": (0.0, -0.3), "pp": (0.25, 0.0)}[kind]
            xs = [p[0] + dx for p in pts]
            ys = [p[1] + dy for p in pts]
            colour = th.error if kind == "tp" else th.fg
            line = pg.PlotDataItem(xs, ys, pen=pg.mkPen(colour, width=4 if kind == "tp" else 3, style=styles[kind]),
                                   symbol="o", symbolSize=9, symbolBrush=colour)
            self.addItem(line)
            self.items.append(line)
        xs = [self._pos(r)[0] for r in range(0, limit)]
        ys = [self._pos(r)[1] for r in range(0, limit)]
        self.setAspectLocked(True)
        self.setXRange(min(xs) - 0.8, max(xs) + 0.8, padding=0)
        self.setYRange(min(ys) - 1.4, max(ys) + 0.8, padding=0)


def _span(values: list[int]) -> str:
    """'3' or '0–7' for a sorted list of small integers."""
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"
