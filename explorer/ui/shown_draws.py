"""Views on tabs nobody is looking at draw when they are shown, not when a result arrives.

A job's result lands in every view of a panel, and most of them sit on tabs that are not showing:
the quantization panel drew four views for each new layer, one of them seen, and that drawing sat in
the same turn of the event loop as the window's paint. :class:`DrawWhenShown` keeps the latest draw
call of each hidden view, by part (``"result"``, ``"frame"``), and replays them in the order they were
made when the view is shown, so the view ends up as an immediate draw would have left it.

While held (:meth:`DrawWhenShown.hold`, a whole view being applied), every draw waits, shown view or
not; when the hold ends the views showing draw, and a panel not showing draws what it held, as it
would have at once. A tour step that changed a clock and then the tab drew the chart on the tab it
was leaving (G4 11).
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


class DrawWhenShown(QObject):
    """Draw calls of ``owner``'s views: now when the view shows (or ``owner`` does not: nothing to
    save then, and tests of an unshown panel read their views at once), else on the view's next show."""

    def __init__(self, owner: QWidget) -> None:
        super().__init__(owner)
        self._owner = owner
        self._waiting: dict[int, tuple[QWidget, dict[str, Callable[[], None]]]] = {}
        self._held = False
        self._unshown: set[int] = set()         # views held while the owner did not show (drawn at once unheld)

    def hold(self) -> None:
        """Keep every draw until :meth:`release`."""
        self._held = True

    def release(self) -> None:
        """Make the waiting draws of the views now showing, and those held while the owner did not
        show; the others wait for their view's show, as before the hold."""
        self._held = False
        unshown, self._unshown = self._unshown, set()
        owner_hidden = not self._owner.isVisible()
        for view, _calls in list(self._waiting.values()):
            try:
                if view.isVisible() or (owner_hidden and id(view) in unshown):
                    self.flush(view)
            except RuntimeError:                # deleted with its page
                self._waiting.pop(id(view), None)

    def draw(self, view: QWidget, call: Callable[[], None], part: str = "result") -> None:
        entry = self._waiting.get(id(view))
        if entry is None:
            if view.isVisible() or not self._owner.isVisible():
                if not self._held:
                    call()
                    return
                if not self._owner.isVisible():
                    self._unshown.add(id(view))
            entry = self._waiting[id(view)] = (view, {})
            view.installEventFilter(self)
        calls = entry[1]
        calls.pop(part, None)                   # the latest call of a part replaces it, in call order
        calls[part] = call
        if view.isVisible() and not self._held:
            self.flush(view)

    @property
    def waiting(self) -> int:
        """How many views have draws waiting."""
        return len(self._waiting)

    def flush(self, view: QWidget | None = None) -> None:
        """Make the waiting draws of ``view`` (default: every view) now."""
        for key in [id(view)] if view is not None else list(self._waiting):
            entry = self._waiting.pop(key, None)
            if entry is None:
                continue
            widget, calls = entry
            try:
                widget.removeEventFilter(self)
            except RuntimeError:                # the view was deleted with its page: nothing to draw
                continue
            for call in calls.values():
                call()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Show and id(obj) in self._waiting and not self._held:
            self.flush(obj)
        return False
