"""A grey veil with a "computing… N s" label laid over a view whose next result is still being computed,
so the previous figures are never read as the current ones (issue 38, "honest waiting")."""
from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

SHOW_AFTER_MS = 150      # a cached or quick result arrives before this: no flicker of grey
TICK_MS = 1000           # the label counts whole seconds


def waiting_text(seconds: int) -> str:
    return f"computing… {seconds} s"


class WaitVeil(QWidget):
    """A child of ``target`` covering it (it follows resizes): translucent grey, and a label in the
    middle that counts the seconds since the wait began. Clicks pass through to the view."""

    def __init__(self, target: QWidget) -> None:
        super().__init__(target)
        self.setObjectName("wait_veil")
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WA_NoSystemBackground)
        self.label = QLabel(waiting_text(0), self)
        self.label.setObjectName("wait_label")
        self.label.setAlignment(Qt.AlignCenter)
        self.label.setStyleSheet("QLabel#wait_label { background: white; color: #222222; "
                                 "border: 1px solid #555555; padding: 4px 10px; }")
        lay = QVBoxLayout(self)
        lay.addWidget(self.label, 0, Qt.AlignCenter)
        self._clock = QElapsedTimer()
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(SHOW_AFTER_MS)
        self._delay.timeout.connect(self._appear)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._count)
        target.installEventFilter(self)
        self.hide()

    @property
    def waiting(self) -> bool:
        return self._clock.isValid()

    def begin(self) -> None:
        """The view's result is being computed: grey it shortly (a wait already begun keeps its count)."""
        if self.waiting:
            return
        self._clock.start()
        self._delay.start()

    def end(self) -> None:
        """The result is drawn: the grey goes."""
        self._clock.invalidate()
        self._delay.stop()
        self._tick.stop()
        self.hide()

    def _appear(self) -> None:
        if not self.waiting:
            return
        self.setGeometry(self.parentWidget().rect())
        self._count()
        self.show()
        self.raise_()
        self._tick.start()

    def _count(self) -> None:
        self.label.setText(waiting_text(int(self._clock.elapsed() // 1000)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Resize and watched is self.parentWidget():
            self.setGeometry(self.parentWidget().rect())
        elif event.type() == QEvent.ChildAdded and self.isVisible():
            QTimer.singleShot(0, self, self.raise_)          # stays over views added later
        return False

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        QPainter(self).fillRect(self.rect(), QColor(128, 128, 128, 150))
