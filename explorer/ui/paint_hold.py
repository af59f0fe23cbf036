"""A tour step paints once: the window's paint waits a moment for the step's stored results.

A step starts its panel's jobs, and a result the cache holds comes back within milliseconds, but
only after the window has painted the step without it. The step then painted twice in one turn of
the event loop: B2's quantization steps drew each chart twice, 57–80 ms. ``PaintHold.hold`` keeps
the window's update request back until the panel's jobs have delivered (``Panel.idle``) or
``CAP_MS`` has passed (a job that computes: the step paints its views greyed and counting, as
before), then lets one paint through.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

CAP_MS = 60   # longest the window goes without painting a step; well under the 150 ms a step may take


class PaintHold(QObject):
    """Event filter for a top-level window: while a hold lasts, its update requests wait."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._panel = None
        self._held = False           # an update request was kept back: post one on release
        self._cap = QTimer(self)
        self._cap.setSingleShot(True)
        self._cap.timeout.connect(self.release)
        window.installEventFilter(self)   # installed after SettleBeforePaint, so it filters first

    @property
    def holding(self) -> bool:
        return self._panel is not None

    def hold(self, panel) -> None:
        """Hold the window's paint until ``panel``'s running jobs have delivered, at most ``CAP_MS``;
        nothing to wait for (no job running) holds nothing."""
        self._let_go()
        if not panel.computing:
            self.release()
            return
        self._panel = panel
        panel.idle.connect(self.release)
        self._cap.start(CAP_MS)

    def release(self) -> None:
        """End the hold; a paint that was kept back happens now (on the next turn of the loop)."""
        self._cap.stop()
        self._let_go()
        if self._held:
            self._held = False
            QCoreApplication.postEvent(self._window, QEvent(QEvent.UpdateRequest))

    def _let_go(self) -> None:
        if self._panel is not None:
            self._panel.idle.disconnect(self.release)
            self._panel = None

    def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
        if self._panel is not None and event.type() == QEvent.UpdateRequest:
            self._held = True
            return True
        return False
