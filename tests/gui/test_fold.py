"""Putting a folded panel back lays its charts out once for all the views shown, not once per view."""
from __future__ import annotations

import time

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

from explorer.lessons import lesson_tour


class _Resizes(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count: dict[int, int] = {}

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Resize and isinstance(obj, pg.GraphicsView):
            self.count[id(obj)] = self.count.get(id(obj), 0) + 1
        return False


def _pump(seconds: float = 0.3) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        QApplication.processEvents()


def test_a_step_that_unfolds_the_panel_resizes_its_charts_once(window):
    """A2 step 13 puts back the memory panel that step 12 folded around one chart (the window's
    1500×950 leaves that chart cramped): Qt lays out the layouts above a widget as it is shown, so
    showing the hidden views one by one resized every chart once per view shown (18 resizes in all,
    each setting off pyqtgraph's range and our relabelling); now the layout passes the step asks for
    (whether the chart is cramped, a wrapped line asking again) are all there is."""
    tour = lesson_tour("A2")
    assert window.tour.start(tour, 11)
    _pump()
    assert window.tour.fold.active                    # step 12: the panel folded around its chart
    resizes = _Resizes()
    QApplication.instance().installEventFilter(resizes)
    try:
        assert window.tour.go(12)
        assert not window.tour.fold.active
        assert sum(resizes.count.values()) <= 3, resizes.count
    finally:
        QApplication.instance().removeEventFilter(resizes)
        window.tour.stop()
