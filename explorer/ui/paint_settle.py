"""One paint per update: pyqtgraph's lazy work done before the window paints, not during it.

pyqtgraph sets a plot's auto range, and so its axes' tick text and widths, when the plot is about
to paint (``GraphicsScene.prepareForPaint``). A new axis width re-lays out the plot, which asks for
another paint: after a tour step's result, each chart of the quantization panel painted three or
four times in one turn of the event loop (B2's step turns 75–104 ms). ``SettleBeforePaint`` watches
the window's update request and, before Qt paints, lets the visible charts of the panel shown
prepare, then delivers the layout requests and scene updates that sets off, twice (a new axis
width can move the range once more); the paint that follows draws the settled charts once.
"""
from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QWidget

ROUNDS = 2


class SettleBeforePaint(QObject):
    """Event filter for a top-level window; ``root()`` gives the widget whose charts to settle."""

    def __init__(self, window: QWidget, root: Callable[[], QWidget | None]) -> None:
        super().__init__(window)
        self._root = root
        window.installEventFilter(self)

    def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.UpdateRequest:
            self.settle()
        return False

    def settle(self) -> None:
        pg = sys.modules.get("pyqtgraph")      # not imported yet: no chart to settle (start-up stays light)
        root = self._root() if pg is not None else None
        if root is None:
            return
        views = [v for v in root.findChildren(pg.GraphicsView) if v.isVisible()]
        if not views:
            return
        for _ in range(ROUNDS):
            for view in views:
                view.scene().prepareForPaint()
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
            for view in views:
                QCoreApplication.sendPostedEvents(view.scene(), QEvent.MetaCall)
