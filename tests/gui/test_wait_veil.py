"""Honest waiting (issue 38): while a job computes, the view that will show its result is greyed with
a "computing… N s" label that counts; the grey goes when the result is drawn."""
from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel

from engines.core.errors import Cancelled
from explorer.panel import Panel
from explorer.ui.wait_veil import WaitVeil


class _SlowPanel(Panel):
    key = "slow_test"
    title = "Slow"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.view = self.name_view("chart", QLabel("old result"), "A chart")
        self.body.addWidget(self.view, 1)

    def start(self, seconds: float) -> None:
        def work(progress, cancelled):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if cancelled():
                    raise Cancelled()
                time.sleep(0.02)
            return "new result"

        self.tasks.run(work, self.view.setText, label="Slow job")


def _panel(qtbot, ctx) -> _SlowPanel:
    panel = _SlowPanel(ctx)
    qtbot.addWidget(panel)
    panel.resize(600, 400)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_a_slow_job_greys_its_view_with_a_counting_label_until_settled(qtbot, ctx):
    panel = _panel(qtbot, ctx)
    veil = panel.waits_for_jobs(panel.view)
    assert not veil.isVisible()
    panel.start(2.6)
    qtbot.waitUntil(veil.isVisible, timeout=1000)
    assert veil.geometry() == panel.view.rect()          # covers the whole view
    assert veil.label.text() == "computing… 0 s"
    qtbot.waitUntil(lambda: veil.label.text() == "computing… 1 s", timeout=2000)
    assert veil.isVisible() and panel.view.text() == "old result"
    assert panel.settle(10_000)
    assert panel.view.text() == "new result"
    assert not veil.isVisible()


def test_a_quick_job_never_flashes_grey(qtbot, ctx):
    panel = _panel(qtbot, ctx)
    veil = panel.waits_for_jobs(panel.view)
    panel.start(0.0)
    assert panel.settle(5_000)
    qtbot.wait(300)
    assert not veil.isVisible() and panel.view.text() == "new result"


def test_a_view_named_while_its_job_runs_is_greyed_and_kept_once(qtbot, ctx):
    panel = _panel(qtbot, ctx)
    panel.start(1.5)
    veil = panel.waits_for_jobs(panel.view)          # the tour names the focus after the step's job began
    assert panel.waits_for_jobs(panel.view) is veil
    qtbot.waitUntil(veil.isVisible, timeout=1000)
    assert len(panel.view.findChildren(WaitVeil)) == 1
    panel.tasks.cancel()
    assert panel.settle(5_000)
    assert not veil.isVisible()
