"""Grid lines at the axes' ticks, painted by the view instead of by the axes.

pyqtgraph's own grid (``showGrid``) is drawn by each AxisItem across the whole plot, so the axis's
cached pixmap is as large as the plot and is re-rendered (text, lines, a plot-sized blend) every time
the range changes: about 8 ms of a 25 ms scenario edit on a 2-core machine. Here the axes stay
small, cached text strips, and the lines are a handful of cosmetic strokes inside the ViewBox.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QLineF
from PySide6.QtGui import QColor, QPen

from explorer.view_overlay import ViewOverlay

LEVEL_ALPHA = (0.25, 0.12)  # major and minor lines; finer levels are not drawn


class TickGrid(ViewOverlay):
    """Under the data: above the view's background, below its items."""

    def __init__(self, plot_item: pg.PlotItem) -> None:
        super().__init__(plot_item, z=-1000)
        self.axes = {"bottom": plot_item.getAxis("bottom"), "left": plot_item.getAxis("left")}
        self.pens: tuple[QPen, ...] = ()
        self.set_color("#000000")
        for axis in self.axes.values():
            _repaint_on_new_ticks(axis, self)

    def set_color(self, color: str) -> None:
        pens = []
        for alpha in LEVEL_ALPHA:
            c = QColor(color)
            c.setAlphaF(alpha)
            p = QPen(c)
            p.setCosmetic(True)
            p.setWidth(1)
            pens.append(p)
        self.pens = tuple(pens)
        self.update()

    def paint(self, painter, *_args) -> None:
        to_local = self.vb.childGroup.transform()  # view (data) coordinates → this item's pixels
        rect = self.vb.rect()
        for name, along in (("bottom", rect.width()), ("left", rect.height())):
            axis = self.axes[name]
            if not axis.isVisible() or along <= 0:
                continue
            for level, values in enumerate(_tick_levels(axis, along)[:len(self.pens)]):
                painter.setPen(self.pens[level])
                if name == "bottom":
                    xs = (to_local.map(float(v), 0.0)[0] for v in values)
                    lines = [QLineF(x, rect.top(), x, rect.bottom()) for x in xs if rect.left() <= x <= rect.right()]
                else:
                    ys = (to_local.map(0.0, float(v))[1] for v in values)
                    lines = [QLineF(rect.left(), y, rect.right(), y) for y in ys if rect.top() <= y <= rect.bottom()]
                if lines:
                    painter.drawLines(lines)


def _tick_levels(axis: pg.AxisItem, length_px: float) -> list[list[float]]:
    """The tick values the axis itself draws, level by level (fixed ticks if set, else its auto ticks).
    Remembered per axis state: pyqtgraph's tick search costs about a millisecond per call."""
    key = (axis._tickLevels, tuple(axis.range), round(length_px), axis.logMode)
    cached = getattr(axis, "_grid_ticks", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    if axis._tickLevels is not None:
        levels = [[v for v, _label in level] for level in axis._tickLevels]
    else:
        lo, hi = axis.range
        levels = [list(values) for _spacing, values in axis.tickValues(lo, hi, length_px)]
    axis._grid_ticks = (key, levels)
    return levels


def _repaint_on_new_ticks(axis: pg.AxisItem, grid: TickGrid) -> None:
    """Fixed ticks can change without a range change: repaint the grid with them."""
    set_ticks = axis.setTicks

    def setTicks(ticks):  # noqa: N802 (pyqtgraph name)
        set_ticks(ticks)
        grid.update()

    axis.setTicks = setTicks


def install_grid(plot_item: pg.PlotItem, color: str) -> TickGrid:
    """Idempotent: the plot's grid, created once and recoloured on later calls (theme changes)."""
    grid = getattr(plot_item, "_tick_grid", None)
    if grid is None:
        plot_item.showGrid(x=False, y=False)
        grid = plot_item._tick_grid = TickGrid(plot_item)
    grid.set_color(color)
    return grid
