"""Python's cyclic garbage collector runs only on the GUI thread.

Automatic collection fires in whichever thread happens to allocate past the threshold. With workers
running engine code, that is often a pool thread, and it then destroys Qt objects left in reference
cycles by closed panels (pyqtgraph items, timers) from the wrong thread: Qt requires a QObject to be
deleted in the thread it lives in, and breaking that rule crashes or deadlocks the process at random.
The remedy pyqtgraph documents (``pyqtgraph.util.garbage_collector``) is applied here: automatic
collection is switched off and a timer on the GUI thread collects, generation by generation, with the
interpreter's own thresholds and its rule for the oldest generation: a full collection runs only when
the objects that reached it since the last one exceed a quarter of those it held then (CPython
``Modules/gcmodule.c``, ``collect_generations``; the cost argument is in the comment there, after
Martin von Löwis on python-dev, 2008). Without that rule every tenth middle-generation pass walked
the whole heap: 212–379 ms on the GUI thread during a tour's first walk, with no objects frozen.

A full collection walks every tracked object: with a panel built, some 74,000 (widgets, plot items,
modules), 80 ms on the GUI thread here — five dropped frames in a slider drag, about once a minute
of editing. ``freeze_long_lived`` moves what is alive once a panel is built into the permanent
generation, so later collections walk only what was made since. It collects the youngest
generation only before freezing: the timer's passes have already collected what a panel's build
threw away, and a full pass then walked everything made since the last freeze (28 and 86 ms on the
GUI thread in a tour's first walk) to find 0 and 20 objects. Only the app's own window does
this (``MainWindow(freeze_objects=True)``, set by the command line): a window that is closed while
the process goes on, as in tests, would leave its frozen objects for a later collection to meet
half-destroyed. (Anything frozen that is or later becomes cyclic garbage is never freed: at most
the items a panel drew at start-up and replaced since, and a few dozen objects, once per panel.)
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
        self.long_lived = len(gc.get_objects(2))   # the oldest generation after its last full pass
        self.pending = 0                           # objects moved into it since (estimated)
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
        if generation < 0:
            return
        if generation == 2 and self.pending <= self.long_lived / 4:
            generation = 1                     # the interpreter's rule: a full pass is not worth it yet
        # what the pass walks besides the old generation (listing the young ones costs less than collecting them)
        young = len(gc.get_objects(0)) + len(gc.get_objects(1)) if generation >= 1 else 0
        found = gc.collect(generation)
        if generation == 1:
            self.pending += young - found      # the survivors moved into the oldest generation
        elif generation == 2:
            self.long_lived, self.pending = max(0, self.long_lived + self.pending + young - found), 0

    def frozen(self) -> None:
        """Everything alive has just moved to the permanent generation: the oldest generation is
        empty, as after a full pass that found all of it garbage. (``gc.get_freeze_count`` would walk
        the whole permanent generation to count it: 21 ms on the GUI thread with one panel frozen.)"""
        self.long_lived = self.pending = 0


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
    """Collect the youngest generation, then exempt every surviving object from later collections
    (see the module's note)."""
    gc.collect(0)
    gc.freeze()
    app = QCoreApplication.instance()
    collector = getattr(app, "_explorer_gc_collector", None) if app is not None else None
    if collector is not None:
        collector.frozen()
