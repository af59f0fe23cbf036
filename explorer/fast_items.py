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
from PySide6.QtCore import QRectF


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
    """``pg.BarGraphItem`` with remembered bounds (same options, same legend sample)."""


class Scatter(_RememberedBounds, pg.ScatterPlotItem):
    """``pg.ScatterPlotItem`` with remembered bounds (same options)."""

    def updateSpots(self, dataSet=None) -> None:  # noqa: N802, N803 (pyqtgraph names)
        super().updateSpots(dataSet)   # symbol sizes (the pixel margin) may have changed
        self._bounds = None

    def clear(self) -> None:
        super().clear()
        self._bounds = None
