"""Cyclic garbage is collected on the GUI thread only, never in a worker (Qt objects die in their thread)."""
import gc
import threading

from PySide6.QtCore import QObject

from explorer.tasks import TaskRunner


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_workers_never_run_the_cyclic_collector(ctx, qtbot):
    assert not gc.isenabled()                       # the context installed the GUI-thread collector
    threads: list[int] = []

    def record(phase, info):
        if phase == "start":
            threads.append(threading.get_ident())

    gc.callbacks.append(record)
    try:
        # Garbage a closed panel leaves behind: a Qt object held only by a reference cycle.
        holder = _Cycle()
        holder.obj = QObject()
        del holder
        tasks = TaskRunner()

        def allocate(progress, cancelled):             # far past every generation's threshold
            for _ in range(300_000):
                _Cycle()
            return True

        tasks.run(allocate, lambda result: None)
        assert tasks.wait(60_000)
        qtbot.waitUntil(lambda: bool(threads), timeout=5_000)   # the GUI-thread timer collects
    finally:
        gc.callbacks.remove(record)
    assert set(threads) == {threading.main_thread().ident}


def test_a_built_panel_is_frozen_so_full_collections_stay_short(ctx, qtbot):
    """A full collection walked every widget and plot item (80 ms here, a visible hitch while
    dragging a slider); once a panel of the app's window is built they move to the permanent
    generation (the conftest thaws them after the test)."""
    from explorer.main_window import FREEZE_AFTER_MS, MainWindow

    gc.unfreeze()           # what earlier tests left frozen (tests/conftest.py): count only the window's

    window = MainWindow(ctx, remember_layout=False, freeze_objects=True)
    qtbot.addWidget(window)
    window.show()
    window.show_panel("memory")
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=FREEZE_AFTER_MS + 5000)
    frozen = gc.get_freeze_count()
    assert frozen > 10_000                                  # the window, its docks and the panel
    assert len(gc.get_objects()) < frozen / 5             # what a full collection still walks
    for panel in window.panels:
        panel.tasks.cancel()
        panel.settle(30_000)


def test_a_full_pass_waits_until_the_old_generation_grew_by_a_quarter(ctx):
    """The interpreter's rule (CPython gcmodule.c): without it, every tenth middle pass walked the
    whole heap on the GUI thread (212–379 ms in a tour's first walk)."""
    from PySide6.QtCore import QCoreApplication

    collector = QCoreApplication.instance()._explorer_gc_collector
    generations: list[int] = []

    def record(phase, info):
        if phase == "start":
            generations.append(info["generation"])

    saved = collector.thresholds, collector.long_lived, collector.pending
    collector.thresholds = (-1, -1, -1)             # every generation is due at every check
    collector.long_lived, collector.pending = 1_000_000, 0
    kept = []
    gc.callbacks.append(record)
    try:
        for _ in range(5):
            kept.append([[] for _ in range(1_000)])  # survivors that reach the old generation
            collector.check()
        assert generations == [1] * 5                # not a full pass: far under a quarter
        assert collector.pending >= 5_000            # ... but the survivors were counted
        collector.pending = 250_001                  # more than a quarter of a million since the last
        collector.check()
        assert generations[-1] == 2
        assert collector.pending == 0
        assert collector.long_lived > 1_000_000      # the old generation's new size, survivors added
    finally:
        gc.callbacks.remove(record)
        collector.thresholds, collector.long_lived, collector.pending = saved
