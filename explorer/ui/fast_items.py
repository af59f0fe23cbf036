"""pyqtgraph bar and scatter items that work out their bounding rectangle once per change.

Qt asks every item for its ``boundingRect()`` several times per paint (to find what the exposed
region touches, to clip, to cache). pyqtgraph's bars and scatter points answer from scratch each
time, including a pixel-size lookup through the view's transform, so a chart with a dozen of them
spent about 3 ms of a 27 ms scenario edit only answering that question. These subclasses remember
the answer until something it depends on changes: the data or style (pyqtgraph announces those with
``prepareGeometryChange``, or for scatter sizes ``updateSpots``/``clear``) or the view's scale
(``viewTransformChanged``, since part of the margin is measured in pixels).
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush


class _RememberedBounds:
    """Mixin for a pyqtgraph GraphicsObject: ``boundingRect`` computed at most once per change."""

    _bounds: QRectF | None = None

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        if self._bounds is None:
            self._bounds = super().boundingRect()
        return self._bounds

    def prepareGeometryChange(self) -> None:  # noqa: N802 (Qt name)
        super().prepareGeometryChange()  # Qt reads the old bounds here: forget them only afterwards
        self._bounds = None

    def viewTransformChanged(self) -> None:  # noqa: N802 (pyqtgraph name)
        self._bounds = None
        super().viewTransformChanged()


class Bars(_RememberedBounds, pg.BarGraphItem):
    """``pg.BarGraphItem`` with remembered bounds (same options, same legend sample).

    Bars with one pen and a brush per bar are painted as one ``drawRects`` call per run of equal
    brushes (a stacked chart passes one brush per category), not recorded into a QPicture after
    every change and replayed rectangle by rectangle. ``hatches=[QBrush, …]`` (one per bar, with
    one pen) lays a pattern over each bar's fill in the same item: a category reads by its pattern
    as well as its colour, without a second item that repeats the geometry."""

    _runs: tuple | None = None

    def setOpts(self, **opts) -> None:  # noqa: N802 (pyqtgraph name)
        self._runs = None
        super().setOpts(**opts)

    def paint(self, painter, *args) -> None:
        hatches = self.opts.get("hatches")
        if self._pens is not None or (hatches is None and self._singleColor):
            super().paint(painter, *args)
            return
        if self._runs is None:
            rects = self._rectarray.instances()
            fills = self._brushes or [self._sharedBrush] * len(rects)
            self._runs = (rects, _brush_runs(rects, fills), _brush_runs(rects, hatches) if hatches else [])
        rects, fill_runs, hatch_runs = self._runs
        painter.setPen(Qt.NoPen if hatch_runs else self._sharedPen)
        for brush, run in (*fill_runs, *hatch_runs):
            painter.setBrush(brush)
            painter.drawRects(run)
        if hatch_runs:   # outlines last, over the patterns
            painter.setPen(self._sharedPen)
            painter.setBrush(Qt.NoBrush)
            painter.drawRects(rects)


def _brush_runs(rects: list[QRectF], brushes: list[QBrush]) -> list[tuple[QBrush, list[QRectF]]]:
    """Consecutive rectangles that share a brush, grouped (drawing order is kept)."""
    runs: list[tuple[QBrush, list[QRectF]]] = []
    for rect, brush in zip(rects, brushes):
        if runs and (runs[-1][0] is brush or runs[-1][0] == brush):
            runs[-1][1].append(rect)
        else:
            runs.append((brush, [rect]))
    return runs


class Scatter(_RememberedBounds, pg.ScatterPlotItem):
    """``pg.ScatterPlotItem`` with remembered bounds (same options)."""

    def updateSpots(self, dataSet=None) -> None:  # noqa: N802, N803 (pyqtgraph names)
        super().updateSpots(dataSet)   # symbol sizes (the pixel margin) may have changed
        self._bounds = None

    def clear(self) -> None:
        super().clear()
        self._bounds = None
