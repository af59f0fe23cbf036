"""A layer painted over (or under) a plot's data in pixel space: the base of the grid and label layers."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF


class ViewOverlay(pg.GraphicsObject):
    """Child of a ViewBox, not one of its data items: ``PlotItem.clear()`` leaves it in place, and
    autoscaling ignores it. It covers the view's rectangle and repaints when the range or the size
    changes; ``paint`` maps data to pixels with ``self.vb.childGroup.transform()``."""

    def __init__(self, plot_item: pg.PlotItem, z: float) -> None:
        self.vb = plot_item.getViewBox()
        super().__init__(self.vb)
        self.setZValue(z)  # the view's data (its child group) sit at z 0
        self.vb.sigResized.connect(self._resized)
        self.vb.sigRangeChanged.connect(self._moved)

    def _moved(self, *_args) -> None:
        self.update()

    def _resized(self, *_args) -> None:
        self.prepareGeometryChange()
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt name)
        return self.vb.rect()
