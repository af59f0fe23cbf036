"""A tour step paints once: the window's paint waits for the step's quick results, never longer
than the cap, and holds nothing when no job runs."""
from __future__ import annotations

import threading
import time

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QLabel

from explorer.panel import Panel
from explorer.ui import paint_hold
from explorer.ui.paint_hold import PaintHold
from paint_events import Paints


class _GatedPanel(Panel):
    key = "gated_test"
    title = "Gated"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.view = QLabel("old result")
        self.body.addWidget(self.view, 1)
        self.gate = threading.Event()

    def start(self) -> None:
        def work(_progress, _cancelled):
            self.gate.wait(10)
            return "new result"

        self.tasks.run(work, self.view.setText, label="Gated job")


def _shown(qtbot, ctx):
    panel = _GatedPanel(ctx)
    qtbot.addWidget(panel)
    panel.resize(400, 200)
    panel.show()
    qtbot.waitExposed(panel)
    paints = Paints()
    panel.view.installEventFilter(paints)
    _pump(0.1)                                      # the first paint, after the show
    paints.count = 0
    return panel, paints, PaintHold(panel)


def _pump(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        QCoreApplication.processEvents()
        time.sleep(0.002)


def test_the_paint_waits_for_the_result_and_then_paints_it_once(qtbot, ctx, monkeypatch):
    monkeypatch.setattr(paint_hold, "CAP_MS", 5_000)
    panel, paints, hold = _shown(qtbot, ctx)
    panel.start()
    hold.hold(panel)
    panel.view.setText("the step's own state")       # what the step changes before its result
    _pump(0.2)
    assert hold.holding and paints.count == 0        # nothing painted while the result is on its way
    panel.gate.set()
    qtbot.waitUntil(lambda: not hold.holding, timeout=3000)
    _pump(0.1)
    assert panel.view.text() == "new result" and paints.count == 1


def test_a_result_slower_than_the_cap_does_not_hold_the_window(qtbot, ctx, monkeypatch):
    monkeypatch.setattr(paint_hold, "CAP_MS", 50)
    panel, paints, hold = _shown(qtbot, ctx)
    panel.start()
    hold.hold(panel)
    panel.view.setText("waiting")
    _pump(0.3)
    assert not hold.holding and paints.count == 1    # painted at the cap, result still computing
    assert panel.computing
    panel.gate.set()
    assert panel.settle(5000)
    _pump(0.1)
    assert paints.count == 2                         # and the result paints when it comes


def test_no_job_running_holds_nothing(qtbot, ctx):
    panel, paints, hold = _shown(qtbot, ctx)
    hold.hold(panel)
    assert not hold.holding
    panel.view.setText("now")
    _pump(0.1)
    assert paints.count == 1
