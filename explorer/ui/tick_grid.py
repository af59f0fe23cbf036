"""Grid lines at the axes' ticks, painted by the view instead of by the axes.

pyqtgraph's own grid (``showGrid``) is drawn by each AxisItem across the whole plot, so the axis's
cached pixmap is as large as the plot and is re-rendered (text, lines, a plot-sized blend) every time
the range changes: about 8 ms of a 25 ms scenario edit on a 2-core machine. Here the axes stay
small, cached text strips, and the lines are a handful of cosmetic strokes inside the ViewBox.
"""
from __future__ import annotations

import logging

import pyqtgraph as pg
from PySide6.QtCore import QLineF
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPen

from explorer.ui.view_overlay import ViewOverlay

log = logging.getLogger(__name__)
LEVEL_ALPHA = (0.25, 0.12)  # major and minor lines; finer levels are not drawn


class TickGrid(ViewOverlay):
    """Under the data: above the view's background, below its items."""

    def __init__(self, plot_item: pg.PlotItem) -> None:
        super().__init__(plot_item, z=-1000)
        self.axes = {"bottom": plot_item.getAxis("bottom"), "left": plot_item.getAxis("left")}
        self.pens: tuple[QPen, ...] = ()
        self._lines: tuple[tuple, list[tuple[QPen, list[QLineF]]]] | None = None  # (view state, lines per pen)
        self.set_color("#000000")
        for axis in self.axes.values():
            _repaint_on_new_ticks(axis, self)
            _share_tick_values(axis)

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
        self._lines = None
        self.update()

    def paint(self, painter, *_args) -> None:
        try:
            grid = self._grid_lines()
        except Exception:   # noqa: BLE001 — raising out of a paint() corrupts Qt's painter: it crashed
            log.exception("grid lines skipped")  # the app (a date axis asked too early); no grid is better
            return
        for line_pen, lines in grid:
            painter.setPen(line_pen)
            painter.drawLines(lines)

    def prepare_paint(self) -> None:
        """Called before the window paints (``paint_settle.draw_ahead``): the lines worked out then."""
        try:
            self._grid_lines()
        except Exception:   # noqa: BLE001 — as in paint(): no grid is better than no window
            log.exception("grid lines skipped")

    def _grid_lines(self) -> list[tuple[QPen, list[QLineF]]]:
        """The lines to stroke, worked out again only when the view or the ticks moved: a repaint
        for other reasons (a bar changed, a cursor moved) just strokes them."""
        to_local = self.vb.childGroup.transform()  # view (data) coordinates → this item's pixels
        rect = self.vb.rect()
        levels = {name: _tick_levels(axis, along) if axis.isVisible() and along > 0 else []
                  for (name, axis), along in zip(self.axes.items(), (rect.width(), rect.height()))}
        state = (to_local.m11(), to_local.m22(), to_local.dx(), to_local.dy(), rect.getRect(),
                 *(tuple(map(tuple, v)) for v in levels.values()))
        if self._lines is not None and self._lines[0] == state:
            return self._lines[1]
        out = []
        for name, per_level in levels.items():
            for level, values in enumerate(per_level[:len(self.pens)]):
                if name == "bottom":
                    xs = (to_local.map(float(v), 0.0)[0] for v in values)
                    lines = [QLineF(x, rect.top(), x, rect.bottom()) for x in xs if rect.left() <= x <= rect.right()]
                else:
                    ys = (to_local.map(0.0, float(v))[1] for v in values)
                    lines = [QLineF(rect.left(), y, rect.right(), y) for y in ys if rect.top() <= y <= rect.bottom()]
                if lines and not _a_smear(lines, name == "bottom"):
                    out.append((self.pens[level], lines))
        self._lines = (state, out)
        return out


MIN_MEAN_GAP_PX = 6.0   # a level's lines closer than this on average shade the view instead of dividing it


def _a_smear(lines: list[QLineF], vertical: bool) -> bool:
    """A level of lines too close to read as a grid: a date axis over sixteen years ticks every month
    (192 lines, 5 px apart on a slide), a log axis with narrow decades its 2…9 multiples."""
    if len(lines) < 3:
        return False
    at = [line.x1() if vertical else line.y1() for line in lines]
    return (max(at) - min(at)) / (len(at) - 1) < MIN_MEAN_GAP_PX


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
        if isinstance(axis, pg.DateAxisItem) and not hasattr(axis, "fontMetrics"):
            # a date axis measures its labels with metrics it takes on its first paint; the grid
            # paints first (it is under the data) and asked before them: give it its own font's
            axis.fontMetrics = QFontMetrics(axis.style["tickFont"] or QFont())
        lo, hi = axis.range
        levels = [list(values) for _spacing, values in axis.tickValues(lo, hi, length_px)]
    axis._grid_ticks = (key, levels)
    return levels


PX_PER_DECADE_MIN = 2.0   # a log axis with narrower decades gets no per-decade ticks (see _wide_log_ticks)


def _share_tick_values(axis: pg.AxisItem) -> None:
    """The axis and its grid ask for the same automatic ticks after a range change: work them out
    once (pyqtgraph's tick search is pure Python, about a millisecond)."""
    compute = axis.tickValues
    memo: list = [None, None]

    def tickValues(min_val, max_val, size):  # noqa: N802 (pyqtgraph name)
        key = (min_val, max_val, round(size))
        if memo[0] != key:
            wide = axis.logMode and abs(max_val - min_val) * PX_PER_DECADE_MIN > max(size, 1.0)
            memo[0], memo[1] = key, (_wide_log_ticks(axis, compute, min_val, max_val, size) if wide
                                     else compute(min_val, max_val, size))
        return memo[1]

    axis.tickValues = tickValues


def _wide_log_ticks(axis: pg.AxisItem, compute, min_val: float, max_val: float, size: float) -> list:
    """Ticks of a log axis whose view spans more decades than half its pixels (a range given in
    linear units, a transient auto-range): every decade and its 2…9 multiples would be a smear of
    lines under a pixel apart, and working them out costs a numpy call or a list per decade (118 ms
    for a view of 40,000 "decades" on an 800-pixel axis; a tour step was profiled at 124 ms). The axis gets pyqtgraph's ordinary ticks
    at whole-decade spacings instead, the levels pyqtgraph itself keeps for a wide log axis."""
    axis.logMode = False          # the linear tick search, on the log10 values the view holds
    try:
        levels = compute(min_val, max_val, size)
    finally:
        axis.logMode = True
    return [(spacing, values) for spacing, values in levels if spacing >= 1.0]


def _repaint_on_new_ticks(axis: pg.AxisItem, grid: TickGrid) -> None:
    """Fixed ticks can change without a range change: repaint the grid when they move. New text at
    the same places (a "GPU 63" tick that now reads "GPU 127") leaves the lines where they are, and
    repainting the grid would repaint the whole plot area with it (about 2 ms per chart)."""
    set_ticks = axis.setTicks

    def setTicks(ticks):  # noqa: N802 (pyqtgraph name)
        before = _tick_positions(axis._tickLevels)
        set_ticks(ticks)
        if _tick_positions(axis._tickLevels) != before:
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


def _tick_positions(levels) -> tuple | None:
    """Where fixed ticks sit, level by level (``None``: automatic ticks)."""
    if levels is None:
        return None
    return tuple(tuple(float(value) for value, _label in level) for level in levels)
