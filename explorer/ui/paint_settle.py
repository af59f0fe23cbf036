"""One paint per update: pyqtgraph's lazy work done before the window paints, not during it.

pyqtgraph sets a plot's auto range, and so its axes' tick text and widths, when the plot is about
to paint (``GraphicsScene.prepareForPaint``). A new axis width re-lays out the plot, which asks for
another paint: after a tour step's result, each chart of the quantization panel painted three or
four times in one turn of the event loop (B2's step turns 75–104 ms). ``SettleBeforePaint`` watches
the window's update request and, before Qt paints, lets the visible charts of the panel shown
prepare, then delivers the layout requests and scene updates that sets off, twice (a new axis
width can move the range once more); the paint that follows draws the settled charts once.

Two more things would ask for a second paint of the same charts right after the first, so both are
done here too. Qt asks for a shown widget's first paint with an event (``UpdateLater``) that can be
queued behind the window's update request: a tour step that shows a tab had its charts painted with
the window and again for being shown (D1's chart steps, each chart twice in one turn). Those events
are delivered before the paint. And work that moves widgets once the layout is known (a tour step
scrolls to its view and places its marker) is handed to :meth:`SettleBeforePaint.before_paint`
and done before the paint, not on a timer after it.

The paint itself is lightened the same way: each axis's tick text and the tick grid's lines are
worked out while settling (``draw_ahead``), and a settle that took longer than ``SPLIT_MS`` ends its
turn of the event loop and lets the paint follow on the next, so the window handles input between
the two halves of a heavy step (D1's chart steps: one 28–45 ms turn became two of about 15 and 25).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QPainter, QPicture
from PySide6.QtWidgets import QWidget

ROUNDS = 2
SPLIT_MS = 6.0      # settling that took longer paints on the next turn of the loop, not in this one
NO_PAINT_MS = 100   # work waiting for a paint runs anyway after this (nothing changed on screen);
                    # longer than a held step paint (``PaintHold.CAP_MS``)


def lay_out_now() -> None:
    """Deliver the posted layout requests, twice: a widget resized by the first pass (wrapped text at
    a new width) asks again."""
    QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
    QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)


class SettleBeforePaint(QObject):
    """Event filter for a top-level window; ``root()`` gives the widget whose charts to settle."""

    def __init__(self, window: QWidget, root: Callable[[], QWidget | None]) -> None:
        super().__init__(window)
        self._root = root
        self._before: list[Callable[[], None]] = []
        self._last: list[Callable[[], None]] = []
        self._split = False        # this window's paint was put off by one turn after a long settle
        self._no_paint = QTimer(self)
        self._no_paint.setSingleShot(True)
        self._no_paint.setInterval(NO_PAINT_MS)
        self._no_paint.timeout.connect(self._run_before)
        window.installEventFilter(self)

    @staticmethod
    def of(widget: QWidget) -> "SettleBeforePaint | None":
        """The one watching ``widget``'s window, if any (a widget shown on its own, as in a test, has none)."""
        return widget.window().findChild(SettleBeforePaint, "", Qt.FindDirectChildrenOnly)

    def before_paint(self, work: Callable[[], None], last: bool = False) -> None:
        """Run ``work`` just before the window next paints, after the posted layouts are done; ``last``
        for work that reads where widgets end up (a marker), after the work that moves them."""
        (self._last if last else self._before).append(work)
        self._no_paint.start()

    def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() != QEvent.UpdateRequest:
            return False
        t0 = time.perf_counter()
        self._run_before()
        self.settle()
        QCoreApplication.sendPostedEvents(None, QEvent.UpdateLater)   # widgets just shown: this paint
        if self._split or (time.perf_counter() - t0) * 1e3 < SPLIT_MS:
            self._split = False
            return False
        self._split = True         # the paint waits one turn: input is handled between the two halves
        QCoreApplication.postEvent(self.parent(), QEvent(QEvent.UpdateRequest))
        return True

    def _run_before(self) -> None:
        """The work waiting, what it handed on, then the ``last`` work."""
        self._no_paint.stop()
        for _ in range(ROUNDS + 1):
            work, self._before = self._before, []
            if not work:
                break
            lay_out_now()
            for w in work:
                w()
        work, self._last = self._last, []
        if work:
            lay_out_now()
        for w in work:
            w()

    def settle(self) -> None:
        pg = sys.modules.get("pyqtgraph")      # not imported yet: no chart to settle (start-up stays light)
        root = self._root() if pg is not None else None
        if root is None:
            return
        views = [v for v in root.findChildren(pg.GraphicsView) if v.isVisible()]
        if not views:
            return
        for _ in range(ROUNDS):
            for view in views:
                view.scene().prepareForPaint()
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
            for view in views:
                QCoreApplication.sendPostedEvents(view.scene(), QEvent.MetaCall)
        for view in views:
            draw_ahead(view.scene(), pg)


_ROLE: dict[type, str] = {}   # per item class: "axis", "prepare" or "" (asked once: shiboken's lookups are slow)


def draw_ahead(scene, pg) -> None:
    """Work a chart's paint would do first, done now: each axis's tick text and lines (pyqtgraph
    records them on a ``QPicture`` when it first paints after a change, as here) and whatever an
    item prepares in its ``prepare_paint()`` (the tick grid's lines)."""
    for item in scene.items():
        role = _ROLE.get(type(item))
        if role is None:
            kind = type(item)
            role = _ROLE[kind] = ("axis" if issubclass(kind, pg.AxisItem) else
                                  "prepare" if hasattr(kind, "prepare_paint") else "")
        if role == "axis":
            if item.picture is None and item.isVisible():
                _axis_picture(item)
        elif role == "prepare":
            item.prepare_paint()


def _axis_picture(axis) -> None:
    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
        if specs is not None:
            axis.drawPicture(painter, *specs)
    finally:
        painter.end()
    axis.picture = picture
