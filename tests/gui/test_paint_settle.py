"""SettleBeforePaint: a chart paints as few times per update as it can, and work waiting for the
paint is done before it."""
from __future__ import annotations

import sys
import time

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.ui.paint_settle import NO_PAINT_MS, SPLIT_MS, SettleBeforePaint
from paint_events import Paints


def _pump(qapp, seconds: float = 0.3) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        qapp.processEvents()


def _chart(qtbot, qapp, settle: bool, size: tuple[int, int]):
    """A window holding one chart with a short line, shown and painted; (window, chart, line): the
    caller keeps the window alive."""
    win = QWidget()
    qtbot.addWidget(win)
    plot = pg.PlotWidget()
    QVBoxLayout(win).addWidget(plot)
    win.resize(*size)
    win.show()
    if settle:
        SettleBeforePaint(win, lambda: win)
    curve = plot.plot([0, 1], [0, 1])
    _pump(qapp)
    return win, plot, curve


def _paints_after_new_data(qtbot, qapp, settle: bool) -> int:
    _win, plot, curve = _chart(qtbot, qapp, settle, (600, 400))
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



class _Counts(QObject):
    """Paint events of one widget and update requests of its window."""

    def __init__(self, chart: QWidget, window: QWidget) -> None:
        super().__init__()
        self.chart, self.paints, self.requests = chart, 0, 0
        chart.installEventFilter(self)
        window.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Paint and obj is self.chart:
            self.paints += 1
        elif event.type() == QEvent.UpdateRequest and obj is not self.chart:
            self.requests += 1
        return False


def _shown_while_a_paint_is_due(qtbot, qapp, settle: bool) -> _Counts:
    """A chart shown after the window's paint was asked for (as ``PaintHold`` asks for it when it
    lets a held paint go). Qt queues the shown chart's own paint behind that request: the window
    paints twice, and a settled chart (laid out for the first paint) is drawn in both."""
    win = QWidget()
    qtbot.addWidget(win)
    lay = QVBoxLayout(win)
    label = QLabel("before")
    plot = pg.PlotWidget()
    plot.plot([0, 1], [0, 1])
    lay.addWidget(label)
    lay.addWidget(plot)
    plot.hide()
    win.resize(600, 400)
    win.show()
    if settle:
        SettleBeforePaint(win, lambda: win)
    _pump(qapp)
    counts = _Counts(plot.viewport(), win)
    QCoreApplication.postEvent(win, QEvent(QEvent.UpdateRequest))   # the window's paint asked for…
    label.setText("after")
    plot.show()                                                     # …and the chart shown after it
    _pump(qapp)
    return counts


def test_a_chart_shown_after_the_paint_was_asked_for_paints_once(qtbot, qapp, monkeypatch):
    import explorer.ui.paint_settle as paint_settle

    monkeypatch.setattr(paint_settle, "SPLIT_MS", float("inf"))   # counted requests: a slow settle
                                                                  # on a loaded machine may not split
    plain = _shown_while_a_paint_is_due(qtbot, qapp, settle=False)
    assert plain.requests == 2                      # Qt's own order: the shown chart on a paint of its own
    settled = _shown_while_a_paint_is_due(qtbot, qapp, settle=True)
    assert (settled.requests, settled.paints) == (1, 1)


def _label_window(qtbot, qapp):
    """A settled window holding one label, shown and painted; (window, label, settle): the caller
    keeps the window alive."""
    win = QWidget()
    qtbot.addWidget(win)
    label = QLabel("text", win)
    win.resize(300, 200)
    win.show()
    settle = SettleBeforePaint(win, lambda: win)
    _pump(qapp)
    return win, label, settle


def test_work_before_the_paint_runs_before_it_or_without_one(qtbot, qapp):
    _win, label, settle = _label_window(qtbot, qapp)
    seen: list[str] = []

    class Order(QObject):
        def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
            if event.type() == QEvent.Paint:
                seen.append("paint")
            return False

    order = Order()
    label.installEventFilter(order)
    settle.before_paint(lambda: seen.append("work"))
    label.setText("new text")
    _pump(qapp)
    assert seen[:2] == ["work", "paint"]
    seen.clear()
    settle.before_paint(lambda: seen.append("work"))     # nothing to paint: the work still runs
    _pump(qapp, (NO_PAINT_MS + 100) / 1000)
    assert seen == ["work"]


def test_work_that_reads_positions_runs_after_the_work_that_moves_them(qtbot, qapp):
    """A tour marker was placed before the question card folded for its final size (a fold asked
    for by a resize during the same layout): it ended 5 px off the answers it points at."""
    win = QWidget()
    qtbot.addWidget(win)
    win.resize(300, 200)
    win.show()
    settle = SettleBeforePaint(win, lambda: win)
    _pump(qapp)
    assert SettleBeforePaint.of(QLabel("x", win)) is settle
    seen: list[str] = []
    settle.before_paint(lambda: seen.append("marker"), last=True)
    settle.before_paint(lambda: (seen.append("fold"), settle.before_paint(lambda: seen.append("fold again"))))
    win.update()
    _pump(qapp)
    assert seen == ["fold", "fold again", "marker"]


def test_a_tour_step_paints_each_chart_once(window, qapp, monkeypatch):
    """D1's first step shows the compute panel's scaling charts (a tab shown in the step): each paints
    once when the step is shown, not once with the window and again for being shown."""
    from explorer.lessons import lesson_tour

    paints: dict[int, int] = {}
    paint = pg.GraphicsView.paintEvent

    def counted(view, event) -> None:
        paints[id(view)] = paints.get(id(view), 0) + 1
        paint(view, event)

    tour = lesson_tour("D1")
    assert window.tour.start(tour, len(tour.steps) - 1)
    _pump(qapp, 0.5)
    monkeypatch.setattr(pg.GraphicsView, "paintEvent", counted)
    try:
        assert window.tour.go(0)
        _pump(qapp, 0.5)
        charts = [v for v in window.current_panel().findChildren(pg.GraphicsView) if v.isVisible()]
        assert charts and [paints.get(id(v), 0) for v in charts] == [1] * len(charts)
    finally:
        window.tour.stop()


def test_a_long_settle_paints_on_the_next_turn_and_a_short_one_at_once(qtbot, qapp):
    """Work before a paint that takes longer than ``SPLIT_MS`` ends its turn of the event loop; the
    paint comes on the next turn (input can be handled in between), once."""
    _win, label, settle = _label_window(qtbot, qapp)
    paints = Paints()
    label.installEventFilter(paints)
    settle.before_paint(lambda: time.sleep(2 * SPLIT_MS / 1000))
    label.setText("slow")
    qapp.processEvents()
    assert paints.count == 0
    qapp.processEvents()
    assert paints.count == 1
    settle.before_paint(lambda: None)
    label.setText("quick")
    qapp.processEvents()
    assert paints.count == 2
    _pump(qapp)
    assert paints.count == 2


def _axis_image(qtbot, qapp, settle: bool):
    _win, plot, curve = _chart(qtbot, qapp, settle, (500, 350))
    drawn_in_paint: list[bool] = []
    specs = pg.AxisItem.generateDrawSpecs

    def spied_specs(axis, p):            # called from a chart's paintEvent, or before it
        frame, inside = sys._getframe(1), False
        while frame is not None and not inside:
            inside, frame = frame.f_code.co_name == "paintEvent", frame.f_back
        drawn_in_paint.append(inside)
        return specs(axis, p)

    pg.AxisItem.generateDrawSpecs = spied_specs
    try:
        curve.setData([0, 1, 2], [0, 40_000.0, 5])
        _pump(qapp)
    finally:
        pg.AxisItem.generateDrawSpecs = specs
    return plot.grab().toImage(), drawn_in_paint


def test_axes_are_drawn_ahead_of_the_paint_and_look_the_same(qtbot, qapp):
    plain, plain_when = _axis_image(qtbot, qapp, settle=False)
    settled, settled_when = _axis_image(qtbot, qapp, settle=True)
    assert plain_when and all(plain_when)                 # pyqtgraph's own: while painting
    assert settled_when and not any(settled_when)         # settled: before the paint
    assert settled == plain
