"""Cancellable background work with progress (Orange TaskState / superqt worker style).

``TaskRunner.run(fn, on_done)`` runs ``fn(progress, cancelled)`` on a pool thread. Each run gets a
token; starting a new run cancels the previous one and any late result carrying an old token is
dropped, so a panel never draws a stale answer. Workers never touch widgets: they emit signals.
A job given as an :class:`engines.core.result_cache.EngineCall` goes through the app's result cache
(:mod:`explorer.job_cache`): a stored result for the same function, inputs and code comes back at
once, and the bar under the view says where and when it was computed.
"""
from __future__ import annotations

import logging
import threading
from html import escape
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from engines.core.errors import Cancelled, ValidationError
from engines.core.result_cache import EngineCall, Origin

log = logging.getLogger("explorer")

ProgressFn = Callable[[float, str], None]
CancelledFn = Callable[[], bool]


class Delivered:
    """A job's result with where it came from (an :class:`Origin` of the result cache; None: computed
    now). Jobs given as an ``EngineCall`` return one; a job that looks up a stored result itself may too."""

    __slots__ = ("value", "origin")

    def __init__(self, value: object, origin: Origin | None) -> None:
        self.value, self.origin = value, origin


def _through_cache(call: EngineCall) -> Callable[[ProgressFn, CancelledFn], Any]:
    def work(progress: ProgressFn, cancelled: CancelledFn) -> Delivered:
        from explorer.job_cache import app_cache

        cache = app_cache()
        if cache is None:
            return Delivered(call(progress, cancelled), None)
        return Delivered(*cache.run(call, progress, cancelled))
    return work


class _Bridge(QObject):
    done = Signal(int, object)
    failed = Signal(int, str)
    cancelled = Signal(int)
    progress = Signal(int, float, str)


class _Job(QRunnable):
    def __init__(self, fn, token: int, bridge: _Bridge, stop: threading.Event, ended: threading.Event) -> None:
        super().__init__()
        self.fn, self.token, self.bridge, self.stop, self.ended = fn, token, bridge, stop, ended

    def _emit(self, signal: str, *args) -> bool:
        """Emit on the bridge; False once the owning panel (and its bridge) has been deleted."""
        try:
            getattr(self.bridge, signal).emit(self.token, *args)
            return True
        except RuntimeError:  # "Signal source has been deleted": the window closed mid-task
            self.stop.set()
            return False

    def run(self) -> None:
        def progress(fraction: float, text: str = "") -> None:
            if self.stop.is_set() or not self._emit("progress", float(fraction), text):
                raise Cancelled()

        try:
            self._run(progress)
        finally:
            self.ended.set()

    def _run(self, progress: ProgressFn) -> None:
        try:
            result = self.fn(progress, self.stop.is_set)
        except Cancelled:
            self._emit("cancelled")
        except ValidationError as exc:   # bad input: its message (field and range) is all the panel shows
            self._emit("failed", str(exc))
        except Exception as exc:  # a bug: one line in the panel, the traceback in the log, never lost
            log.error("background task failed\n%s", traceback.format_exc())
            self._emit("failed", f"{type(exc).__name__}: {exc} (details in the log)")
        else:
            self._emit("cancelled") if self.stop.is_set() else self._emit("done", result)


class _CacheHits(QObject):
    """Every job result drawn from the cache, app-wide: the tour bar says so under the step."""

    hit = Signal(object, object)      # the TaskRunner, the Origin


_hits: _CacheHits | None = None


def cache_hits() -> _CacheHits:
    global _hits
    if _hits is None:
        _hits = _CacheHits()
    return _hits


class TaskRunner(QObject):
    """One slot of background work for one panel."""

    started = Signal(str)
    progressed = Signal(float, str)
    finished = Signal(str)        # "done", "cancelled" or "failed"
    failed = Signal(str)
    from_cache = Signal(object)   # the last result came from the cache: its Origin (where and when computed)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = _Bridge(self)
        self._bridge.done.connect(self._on_done)
        self._bridge.failed.connect(self._on_failed)
        self._bridge.cancelled.connect(self._on_cancelled)
        self._bridge.progress.connect(self._on_progress)
        self._token = 0
        self._stop: threading.Event | None = None
        self._ended = threading.Event()
        self._ended.set()
        self._on_result: Callable[[Any], None] | None = None
        self._on_error: Callable[[str], None] | None = None
        self._running = False
        self.last_error: str | None = None
        self.origin: Origin | None = None    # where the last delivered result was computed (None: just now)
        self._widget: TaskBar | None = None

    @property
    def running(self) -> bool:
        return self._running

    @property
    def busy(self) -> bool:
        """A result still to deliver, or a worker thread (even a cancelled one) still going."""
        return self._running or not self._ended.is_set()

    def run(self, fn: Callable[[ProgressFn, CancelledFn], Any], on_done: Callable[[Any], None],
            label: str = "Working…", on_error: Callable[[str], None] | None = None) -> int:
        """Run ``fn`` on a pool thread; an :class:`EngineCall` is looked up in the result cache first."""
        self.cancel()
        if isinstance(fn, EngineCall):
            fn = _through_cache(fn)
        self._token += 1
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._on_result, self._on_error = on_done, on_error
        self._running = True
        self.last_error = None
        self.started.emit(label)
        QThreadPool.globalInstance().start(_Job(fn, self._token, self._bridge, self._stop, self._ended))
        return self._token

    def cancel(self) -> None:
        if self._stop is not None and self._running:
            self._stop.set()
            self._running = False
            self.finished.emit("cancelled")

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Block (processing events) until this slot's task ends; a panel waits with ``Panel.settle``."""
        from PySide6.QtCore import QCoreApplication, QElapsedTimer

        timer = QElapsedTimer()
        timer.start()
        while self._running and timer.elapsed() < timeout_ms:
            QCoreApplication.processEvents()
            QThreadPool.globalInstance().waitForDone(10)
        QCoreApplication.processEvents()
        return not self._running

    def join(self, timeout_ms: int = 30_000) -> bool:
        """Block (processing events) until the latest worker thread has returned, even a cancelled
        one: a cancelled task stops showing at once but its thread ends at its next progress call."""
        from PySide6.QtCore import QCoreApplication, QElapsedTimer

        timer = QElapsedTimer()
        timer.start()
        while not self._ended.wait(0.01) and timer.elapsed() < timeout_ms:
            QCoreApplication.processEvents()
        QCoreApplication.processEvents()
        return self._ended.is_set()

    @Slot(int, object)
    def _on_done(self, token: int, result: object) -> None:
        if token != self._token or not self._running:
            return  # stale: a newer run superseded it, or it was cancelled
        self._running = False
        origin = None
        if isinstance(result, Delivered):
            result, origin = result.value, result.origin
        self.origin = origin
        self.finished.emit("done")
        if origin is not None:
            self.from_cache.emit(origin)
            cache_hits().hit.emit(self, origin)
        if self._on_result is not None:
            self._on_result(result)

    @Slot(int, str)
    def _on_failed(self, token: int, text: str) -> None:
        if token != self._token:
            return
        self._running = False
        self.last_error = text
        self.finished.emit("failed")
        self.failed.emit(text)
        if self._on_error is not None:
            self._on_error(text)

    @Slot(int)
    def _on_cancelled(self, token: int) -> None:
        if token == self._token and self._running:
            self._running = False
            self.finished.emit("cancelled")

    @Slot(int, float, str)
    def _on_progress(self, token: int, fraction: float, text: str) -> None:
        if token == self._token and self._running:
            self.progressed.emit(fraction, text)

    def widget(self) -> "TaskBar":
        if self._widget is None:
            self._widget = TaskBar(self)
        return self._widget


class Debounce(QTimer):
    """A single-shot timer that calls ``start`` once a burst of edits has been quiet for ``delay_ms``,
    so the burst runs one job. It is a QTimer: ``start()`` (re)arms it, ``stop()`` drops the pending call."""

    def __init__(self, parent: QObject, start: Callable[[], None], delay_ms: int) -> None:
        super().__init__(parent)
        self.setSingleShot(True)
        self.setInterval(delay_ms)
        self.timeout.connect(start)
        self._start = start

    def flush(self) -> None:
        """Make a pending call now (tests and the self-test then wait for its job)."""
        if self.isActive():
            self.stop()
            self._start()


PROGRESS_MS = 50   # the bar and its text change at most this often while a task reports progress


class _ProgressBar(QProgressBar):
    """``QProgressBar.setValue`` repaints the bar inside the call (Qt wants progress seen while the
    GUI thread is busy); ours are only set from the event loop, so that synchronous repaint only
    lengthened the handler that set them (14 ms of a finished job's 28 ms on the GUI thread, B2's
    tour). With updates off for the call, the bar is marked dirty and painted with the rest."""

    def setValue(self, value: int) -> None:  # noqa: N802 (Qt name)
        self.setUpdatesEnabled(False)
        try:
            super().setValue(value)
        finally:
            self.setUpdatesEnabled(True)     # schedules the repaint (``QWidget.update``)


class TaskBar(QWidget):
    """Progress bar, status text and a Cancel button bound to a TaskRunner.

    A job that reports progress hundreds of times would change the bar as often on the GUI thread.
    The first report after a quiet spell shows at once, later ones at most every ``PROGRESS_MS``
    (the latest wins), and the end of a task always shows its final state."""

    def __init__(self, runner: TaskRunner) -> None:
        super().__init__()
        self.runner = runner
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel("")
        self.bar = _ProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel background task")
        self.cancel_button.clicked.connect(runner.cancel)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.bar, 2)
        lay.addWidget(self.cancel_button)
        runner.started.connect(self._started)
        runner.progressed.connect(self._progress)
        runner.finished.connect(self._finished)
        runner.from_cache.connect(self._from_cache)
        self._pending: tuple[int, str] | None = None   # the latest report not shown yet
        self._throttle = QTimer(self)
        self._throttle.setSingleShot(True)
        self._throttle.setInterval(PROGRESS_MS)
        self._throttle.timeout.connect(self._show_pending)
        self._set_idle("")

    def _set_idle(self, text: str) -> None:
        self.cancel_button.setEnabled(False)
        self.label.setText(text)

    def _from_cache(self, origin: Origin) -> None:
        # relative, not a point size: one fixed in presenter mode stayed 1.6x large in the window
        self.label.setText(f"<small>{escape(origin.short())}</small>")
        self.label.setToolTip(origin.describe())

    def _started(self, label: str) -> None:
        self._pending = None
        self._throttle.stop()
        self.label.setToolTip("")
        self.cancel_button.setEnabled(True)
        self.bar.setValue(0)
        self.bar.setFormat("%p%")
        self.label.setText(label)

    def _progress(self, fraction: float, text: str) -> None:
        value = int(max(0.0, min(1.0, fraction)) * 1000)
        if self._pending is not None and not text:
            text = self._pending[1]                     # a text not shown yet stays until a newer one
        self._pending = (value, text)
        if not self._throttle.isActive():
            self._show_pending()

    def _show_pending(self) -> None:
        """Show the latest report, then hold later ones for ``PROGRESS_MS``."""
        if self._pending is None:
            return
        (value, text), self._pending = self._pending, None
        self.bar.setValue(value)
        if text:
            self.label.setText(text)
        self._throttle.start()

    def _finished(self, how: str) -> None:
        self._throttle.stop()
        if self._pending is not None:                   # where a cancelled or failed task got to
            self.bar.setValue(self._pending[0])
            self._pending = None
        if how == "done":
            self.bar.setValue(1000)
        self._set_idle({"done": "Done.", "cancelled": "Cancelled.", "failed": "Failed — see the message."}[how])
