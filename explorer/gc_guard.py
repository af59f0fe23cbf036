"""Python's cyclic garbage collector runs only on the GUI thread.

Automatic collection fires in whichever thread happens to allocate past the threshold. With workers
running engine code, that is often a pool thread, and it then destroys Qt objects left in reference
cycles by closed panels (pyqtgraph items, timers) from the wrong thread: Qt requires a QObject to be
deleted in the thread it lives in, and breaking that rule crashes or deadlocks the process at random.
The remedy pyqtgraph documents (``pyqtgraph.util.garbage_collector``) is applied here: automatic
collection is switched off and a timer on the GUI thread collects, generation by generation, with the
interpreter's own thresholds.

A full collection walks every tracked object: with a panel built, some 74,000 (widgets, plot items,
modules), 80 ms on the GUI thread here — five dropped frames in a slider drag, about once a minute
of editing. ``freeze_long_lived`` moves what is alive once a panel is built into the permanent
generation, so later collections walk only what was made since. Only the app's own window does
this (``MainWindow(freeze_objects=True)``, set by the command line): a window that is closed while
the process goes on, as in tests, would leave its frozen objects for a later collection to meet
half-destroyed. (Anything frozen that later becomes cyclic garbage is never freed: at most the
items a panel drew at start-up and replaced since, once.)
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

_INTERVAL_MS = 500
_PROPERTY = "_explorer_gc_guard"


class _MainThreadCollector(QObject):
    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(_INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        """Collect the oldest generation whose count passed its threshold, as the interpreter would."""
        counts = gc.get_count()
        generation = -1
        for g in range(3):
            if counts[g] <= self.thresholds[g]:
                break
            generation = g
        if generation >= 0:
            gc.collect(generation)


def install_main_thread_gc() -> None:
    """Idempotent; needs the QApplication to exist (call it from the GUI thread)."""
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("install_main_thread_gc() needs a QApplication")
    if app.property(_PROPERTY):
        return
    app.setProperty(_PROPERTY, True)
    app._explorer_gc_collector = _MainThreadCollector(app)  # keep the Python wrapper alive


def freeze_long_lived() -> None:
    """Collect, then exempt every surviving object from later collections (see the module's note)."""
    gc.collect()
    gc.freeze()
