"""SettleBeforePaint: a chart whose new data widens its axis paints fewer times per update."""
from __future__ import annotations

import time

import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.ui.paint_settle import SettleBeforePaint
from paint_events import Paints


def _pump(qapp, seconds: float = 0.3) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        qapp.processEvents()


def _paints_after_new_data(qtbot, qapp, settle: bool) -> int:
    win = QWidget()
    qtbot.addWidget(win)
    plot = pg.PlotWidget()
    QVBoxLayout(win).addWidget(plot)
    win.resize(600, 400)
    win.show()
    if settle:
        SettleBeforePaint(win, lambda: win)
    curve = plot.plot([0, 1], [0, 1])
    _pump(qapp)
    paints = Paints()
    plot.viewport().installEventFilter(paints)
    curve.setData([0, 1, 2], [0, 123_456_789.0, 5])     # long tick labels: a wider left axis
    _pump(qapp)
    return paints.count


def test_settled_chart_paints_fewer_times(qtbot, qapp):
    plain = _paints_after_new_data(qtbot, qapp, settle=False)
    settled = _paints_after_new_data(qtbot, qapp, settle=True)
    assert settled < plain, (settled, plain)
    assert settled <= 2

