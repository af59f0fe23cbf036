"""The task bar under a view: a burst of progress reports repaints the bar a few times, not once per
report, and the bar always ends on the task's final state."""
from __future__ import annotations

import threading


def _run_with_reports(runner, n: int, release: threading.Event):
    """A job that reports ``n`` progress steps at once, then waits for ``release`` before finishing."""
    def work(progress, cancelled):
        for i in range(1, n + 1):
            progress(i / n, f"step {i} of {n}")
        release.wait(30)
        return n
    got = []
    runner.run(work, got.append, label="reporting")
    return got


def test_a_burst_of_reports_is_shown_a_few_times_and_ends_on_the_latest(qapp, qtbot):
    from explorer.tasks import TaskRunner

    runner = TaskRunner()
    bar = runner.widget()
    shown: list[int] = []
    bar.bar.valueChanged.connect(shown.append)
    release = threading.Event()
    got = _run_with_reports(runner, 500, release)
    # every report has been delivered once the latest is on screen (it is held at most PROGRESS_MS)
    qtbot.waitUntil(lambda: bar.bar.value() == 1000 and bar.label.text() == "step 500 of 500", timeout=10_000)
    assert 2 <= len([v for v in shown if v > 0]) < 100           # 500 reports, a few repaints
    release.set()
    assert runner.wait(30_000) and got == [500]
    assert bar.bar.value() == 1000 and bar.label.text() == "Done."


def test_a_cancelled_task_leaves_the_bar_where_its_last_report_got(qapp, qtbot):
    from explorer.tasks import TaskRunner

    runner = TaskRunner()
    bar = runner.widget()
    bar._throttle.setInterval(60_000)          # hold every report after the first one
    release = threading.Event()
    _run_with_reports(runner, 10, release)
    qtbot.waitUntil(lambda: bar.bar.value() > 0, timeout=10_000)   # the first report shows at once
    qtbot.waitUntil(lambda: bar._pending is not None and bar._pending[0] == 1000, timeout=10_000)
    assert bar.bar.value() == 100                                   # the later ones are held ...
    runner.cancel()
    assert bar.bar.value() == 1000 and bar.label.text() == "Cancelled."   # ... and the latest is shown at the end
    release.set()
    assert runner.join(30_000)


def test_setting_the_bar_paints_it_with_the_next_frame_not_inside_the_call(qapp, qtbot):
    """Qt's own bar repaints inside ``setValue``, lengthening whatever handler set it."""
    from PySide6.QtCore import QEvent, QObject

    from explorer.tasks import TaskRunner

    bar = TaskRunner().widget()
    qtbot.addWidget(bar)
    bar.show()
    qtbot.waitExposed(bar)
    qtbot.wait(200)                                          # the first paint is done
    paints: list[int] = []

    class Count(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt name)
            if event.type() == QEvent.Paint:
                paints.append(obj.value())
            return False

    counter = Count()
    bar.bar.installEventFilter(counter)
    bar.bar.setValue(500)
    assert paints == [] and bar.bar.value() == 500          # nothing painted during the call ...
    qtbot.waitUntil(lambda: 500 in paints, timeout=5_000)   # ... the value shows with the next paint
