"""Plays a tour in the window: applies each step's view, points at what it is about, and (in presenter
mode) folds everything but the step's chart away so the picture gets the room."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (QAbstractScrollArea, QApplication, QBoxLayout, QGridLayout, QLayout, QScrollArea,
                               QSizePolicy, QStackedWidget, QTabWidget, QWidget)

from engines.core.errors import ValidationError
from explorer.lessons.tour import Tour, TourStep
from explorer.ui.paint_settle import lay_out_now


class Marker(QWidget):
    """A thick dashed frame around the widget a step points at, drawn over the window. Shape as well as
    colour (a dashed double line), so it reads without colour vision; clicks pass through."""

    PAD = 6

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WA_NoSystemBackground)
        self.setObjectName("tour_marker")
        self.target: QWidget | None = None
        self.colour = QColor("#d55e00")          # Okabe–Ito vermillion
        self._timer = QTimer(self)
        self._timer.setInterval(150)             # follows the target through layout changes
        self._timer.timeout.connect(self.place)
        self.hide()

    def point_at(self, target: QWidget | None) -> None:
        self.target = target
        if target is None:
            self._timer.stop()
            self.hide()
            return
        self._timer.start()
        self.place()

    def place(self) -> None:
        t, window = self.target, self.parentWidget()
        if t is None or not t.isVisible():
            self.hide()
            return
        seen = t.visibleRegion().boundingRect()          # the part not scrolled or clipped away
        if seen.isEmpty():
            self.hide()
            return
        rect = QRect(t.mapTo(window, seen.topLeft()), seen.size()).adjusted(-self.PAD, -self.PAD, self.PAD, self.PAD)
        if rect != self.geometry():
            self.setGeometry(rect)
        if not self.isVisible():
            self.show()
        self.raise_()

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        r = self.rect().adjusted(3, 3, -3, -3)
        p.setPen(QPen(QColor("white"), 6))
        p.drawRoundedRect(r, 6, 6)
        pen = QPen(self.colour, 4, Qt.DashLine)
        p.setPen(pen)
        p.drawRoundedRect(r, 6, 6)


class Fold:
    """Hides everything in a panel except one widget and the path to it (tab bars included), and puts
    it all back: presenter mode's "the chart fills the panel"."""

    def __init__(self) -> None:
        self._hidden: list[QWidget] = []
        self._undo: list = []            # how to put stretch factors and spacers back
        self._around: tuple | None = None   # (target, root, how) of the fold in place

    @property
    def active(self) -> bool:
        return bool(self._hidden)

    def around(self, target: QWidget, root: QWidget, how: object = None) -> None:
        """Fold around ``target``. A fold in place is replaced, not undone first: what both hide stays
        hidden and only what the new one leaves out is shown again (each chart shown is laid out
        anew: undoing the whole fold cost A2's steps 20 ms)."""
        before = self._hidden
        was_hidden = {id(w) for w in before}
        self._undo_layouts()
        self._hidden = []
        self._around = (target, root, how)
        w = target
        while w is not None and w is not root:           # the new path shows first: its pages measure
            if id(w) in was_hidden:
                QWidget.show(w)
            w = w.parentWidget()

        def shows(sib: QWidget, parent: QWidget) -> bool:   # as it would with no fold in place
            return sib.isVisibleTo(parent) or id(sib) in was_hidden

        w = target
        while w is not None and w is not root:
            parent = w.parentWidget()
            if parent is None:
                break
            if isinstance(parent, QTabWidget):
                bar = parent.tabBar()
                if shows(bar, parent):
                    QWidget.hide(bar)
                    self._hidden.append(bar)
                # the other pages' needs do not count while only this one shows; the layouts below
                # first take in the widgets just hidden, or the page's hint still counts them
                lay_out_now()
                old = parent.minimumHeight()
                self._undo.append(lambda t=parent, old=old: t.setMinimumHeight(old))
                parent.setMinimumHeight(max(1, parent.currentWidget().minimumSizeHint().height()))
            elif not isinstance(parent, QStackedWidget):
                for sib in parent.findChildren(QWidget, options=Qt.FindDirectChildrenOnly):
                    if sib is not w and not sib.isWindow() and shows(sib, parent):
                        QWidget.hide(sib)       # Qt's own: some views define show()/hide() of their own
                        self._hidden.append(sib)
                if parent.layout() is not None:
                    self._give_room(parent.layout(), w)
            w = parent
        hidden_now = {id(h) for h in self._hidden}
        self._show_again([h for h in before if id(h) not in hidden_now])

    def _give_room(self, lay: QLayout, w: QWidget) -> None:
        """All of ``lay``'s stretch to the item holding ``w``; its spacers shrink to nothing."""
        for i in range(lay.count()):
            item = lay.itemAt(i)
            holds = item.widget() is w or (item.layout() is not None and _holds(item.layout(), w))
            spacer = item.spacerItem()
            if spacer is not None:
                hint, policy = spacer.sizeHint(), spacer.sizePolicy()
                self._undo.append(lambda s=spacer, h=hint, p=policy, lay=lay: (
                    s.changeSize(h.width(), h.height(), p.horizontalPolicy(), p.verticalPolicy()), lay.invalidate()))
                spacer.changeSize(0, 0, QSizePolicy.Fixed, QSizePolicy.Fixed)
            if isinstance(lay, QBoxLayout):
                old = lay.stretch(i)
                self._undo.append(lambda lay=lay, i=i, old=old: lay.setStretch(i, old))
                lay.setStretch(i, 1 if holds else 0)
            elif isinstance(lay, QGridLayout) and holds:
                row, col, _rs, _cs = lay.getItemPosition(i)
                for r in range(lay.rowCount()):
                    self._undo.append(lambda lay=lay, r=r, old=lay.rowStretch(r): lay.setRowStretch(r, old))
                    lay.setRowStretch(r, 1 if r == row else 0)
                for c in range(lay.columnCount()):
                    self._undo.append(lambda lay=lay, c=c, old=lay.columnStretch(c): lay.setColumnStretch(c, old))
                    lay.setColumnStretch(c, 1 if c == col else 0)
            if holds and item.layout() is not None:
                self._give_room(item.layout(), w)
        lay.invalidate()

    def holds(self, target: QWidget, root: QWidget, how: object = None) -> bool:
        """Folded around ``target`` in ``root`` (the same ``how``) and still whole: nothing it hid shows
        again and nothing new shows beside the path. Two steps on the same view keep the fold, where
        undoing and redoing it re-laid out every chart of the panel (A2: 60 ms a step)."""
        held = self._around
        if not self._hidden or held is None or held[0] is not target or held[1] is not root or held[2] != how:
            return False
        try:
            if not all(w.isHidden() for w in self._hidden):
                return False
            w = target
            while w is not None and w is not root:
                parent = w.parentWidget()
                if parent is None or (not isinstance(parent, (QTabWidget, QStackedWidget)) and any(
                        sib is not w and not sib.isWindow() and sib.isVisibleTo(parent)
                        for sib in parent.findChildren(QWidget, options=Qt.FindDirectChildrenOnly))):
                    return False
                w = parent
        except RuntimeError:                     # a hidden widget was deleted with its panel
            return False
        return True

    def restore(self) -> None:
        self._around = None
        self._undo_layouts()
        self._show_again(self._hidden)
        self._hidden = []

    def _undo_layouts(self) -> None:
        for undo in reversed(self._undo):
            try:
                undo()
            except RuntimeError:                 # deleted with its panel
                pass
        self._undo.clear()

    @staticmethod
    def _show_again(widgets: list[QWidget]) -> None:
        """Show ``widgets`` again, laid out once. Qt lays out every layout above a widget as it is
        shown, so showing a dozen views one by one resized each chart of the panel a dozen times
        (A2 step 13: 36 ms); the layouts above them are held still meanwhile and lay out once, on
        the next layout pass."""
        above: dict[int, QWidget] = {}           # widgets whose layouts wait (a layout's wrapper may go stale)
        for w in widgets:
            try:
                p = w.parentWidget()
                while p is not None and not p.isWindow():
                    if p.layout() is not None and p.layout().isEnabled():
                        above.setdefault(id(p), p)
                    p = p.parentWidget()
            except RuntimeError:                 # deleted with its panel
                continue
        for p in above.values():
            p.layout().setEnabled(False)
        try:
            for w in reversed(widgets):
                try:
                    QWidget.show(w)
                except RuntimeError:             # deleted with its panel
                    pass
        finally:
            for p in above.values():
                p.layout().setEnabled(True)
                p.layout().invalidate()          # asks for the one layout pass


FOCUS_SHARE = 0.35     # in the window, a focus view given less of the panel's height than this gets it all


def _cramped(view: QWidget, panel: QWidget) -> bool:
    """Whether the whole panel leaves ``view`` too little room: the panel scrolls in its tab, or the
    view has under ``FOCUS_SHARE`` of the tab's height (a 1280×800 laptop squeezes a dense panel's
    charts to a strip). A view of text alone (no chart, table or scroll area) that already shows all
    its text is not cramped. A view that a scroll area in the panel cuts short is cramped."""
    lay_out_now()                                                 # the tab just shown has its geometry
    host = panel.parentWidget().parentWidget() if panel.parentWidget() is not None else None
    if not hasattr(host, "scrolls"):
        return False
    room = host.viewport().height()
    text_only = not isinstance(view, QAbstractScrollArea) and not view.findChildren(QAbstractScrollArea)
    if _scrolled_away(view, panel):
        return True             # before the text-only test: a label a card scrolls half away is not whole
    if text_only and view.hasHeightForWidth() and view.heightForWidth(view.width()) <= view.height() <= room:
        return False            # text that shows whole: folding would only surround it with white
    return host.scrolls() or view.height() < FOCUS_SHARE * room


def _scrolled_away(view: QWidget, panel: QWidget) -> bool:
    """A scroll area inside the panel shows less of ``view``'s height than it has: part of the step's
    view is scrolled out of sight however the panel's own host scrolls (a long answer list on a card)."""
    p = view.parentWidget()
    while p is not None and p is not panel:
        if isinstance(p, QScrollArea) and p.widget() is not None and p.widget().isAncestorOf(view) \
                and view.height() > p.viewport().height():
            return True
        p = p.parentWidget()
    return False


def _scroll_to(w: QWidget, panel: QWidget) -> None:
    """Scroll the scroll areas around ``w`` to it: in the window (nothing folded) a step's focus view
    may sit below the fold of a long tab, and the step is about that view. One taller than a scroll
    area shows its top, except in the panel's host, which then stays put (its tabs stay in sight)."""
    lay_out_now()                                                 # the tab just shown has its geometry
    p = w.parentWidget()
    while p is not None:
        if isinstance(p, QScrollArea) and p.widget() is not None and p.widget().isAncestorOf(w):
            r = QRect(w.mapTo(p.widget(), w.rect().topLeft()), w.size())
            port, inside = p.viewport().size(), panel.isAncestorOf(p)
            for bar, lo, hi, room in ((p.verticalScrollBar(), r.top(), r.bottom(), port.height()),
                                      (p.horizontalScrollBar(), r.left(), r.right(), port.width())):
                if hi - lo + 1 > room:
                    if inside:
                        bar.setValue(lo)
                elif lo < bar.value():
                    bar.setValue(lo)
                elif hi >= bar.value() + room:
                    bar.setValue(hi - room + 1)
        p = p.parentWidget()


def _holds(lay: QLayout, w: QWidget) -> bool:
    for i in range(lay.count()):
        item = lay.itemAt(i)
        if item.widget() is w or (item.layout() is not None and _holds(item.layout(), w)):
            return True
    return False


class TourPlayer(QObject):
    """The tour being shown and its current step; every way of moving (keys, buttons, command line,
    the benchmark) goes through :meth:`go`."""

    changed = Signal()                  # a new tour, a new step, or an edit

    def __init__(self, window) -> None:
        super().__init__(window)
        self.win = window
        self.tour: Tour | None = None
        self.index = 0
        self.path: Path | None = None   # the file it came from or was saved to
        self.shipped = False            # a shipped lesson tour: "Save tour as…" makes the teacher's copy
        self.modified = False
        self.marker = Marker(window)
        self.fold = Fold()
        self._cramped_at: dict[tuple, bool] = {}     # see ``_cramped``
        self.error: str | None = None

    @property
    def active(self) -> bool:
        return self.tour is not None

    @property
    def step(self) -> TourStep | None:
        return self.tour.steps[self.index] if self.tour is not None else None

    def start(self, tour: Tour, index: int = 0, path: Path | None = None, shipped: bool = False) -> bool:
        self.tour, self.path, self.shipped, self.modified = tour, path, shipped, False
        self.index = 0
        return self.go(index)

    def stop(self) -> None:
        self.tour = None
        self.marker.point_at(None)
        self.fold.restore()
        self.changed.emit()

    def next(self) -> bool:
        return self.go(self.index + 1) if self.tour and self.index + 1 < len(self.tour.steps) else False

    def previous(self) -> bool:
        return self.go(self.index - 1) if self.tour and self.index > 0 else False

    def go(self, index: int) -> bool:
        """Show step ``index``; a step that cannot be applied says why (status bar) and changes nothing."""
        if self.tour is None:
            return False
        if not 0 <= index < len(self.tour.steps):
            raise ValidationError("step", f"{index + 1} is not a step of this tour", f"1…{len(self.tour.steps)}")
        step = self.tour.steps[index]
        self.win.ctx.timeline.stop()             # the last step's animation ends here
        self.marker.point_at(None)
        try:
            view = step.view_state()
            self.win.apply_view_state(view)
        except ValidationError as exc:
            self.error = f"step {index + 1}: {exc}"
            self.win.show_error(f"Tour {self.tour.lesson}, {self.error}")
            self.changed.emit()
            return False
        self.error = None
        self.win.show_error(None)
        self.index = index
        panel = self.win.current_panel()
        panel.flush_pending()
        self.win.paint_hold.hold(panel)          # one paint, with the results the cache has
        focus = panel.view_widget(step.focus) if step.focus else None
        if focus is not None:
            panel.waits_for_jobs(focus)          # greyed, counting, until this step's result is drawn
        timeline = self.win.ctx.timeline
        if step.frame is None and timeline.spec is not None:
            fresh = self.win.current_panel().timeline()     # its opening frame may follow the new scenario
            timeline.set_position((fresh or timeline.spec).start)
        elif step.frame is not None and step.play:
            self.win.set_frame(step.frame, play=True)
        self.win.show_tour_page()
        self.changed.emit()                      # the shell folds the docks, then arranges the panel once
        return True

    def arrange(self, fold: bool = True) -> None:
        """Point at the step's highlight, and fold the panel around its focus (unless ``fold`` is False:
        the controls are shown): in presenter mode, and in the window when the whole panel leaves that
        view too little room (the step is about it). Undoing and redoing a fold re-lays out every
        view of the panel, so a step is arranged once, by the shell, after it has folded the docks."""
        step, panel = self.step, self.win.current_panel()
        if step is None or panel is None:
            self.fold.restore()
            return
        later = self.win.paint_settle.before_paint      # laid out, and drawn in the same paint
        target = panel.view_widget(step.focus) if step.focus else None
        presenting = self.win.presenting
        folding = target is not None and fold and (presenting or self.win.lessons.folds)
        if not (folding and self.fold.holds(target, panel, presenting)):    # else: the step before's fold
            if folding and (presenting or self._cramped(target, panel)):
                self.fold.around(target, panel, presenting)                 # in place of the step before's
            else:
                self.fold.restore()
                if target is not None:
                    later(lambda: _scroll_to(target, panel) if self.step is step else None)
        mark = panel.view_widget(step.highlight) if step.highlight else None
        later(lambda: self.marker.point_at(mark) if self.step is step else None, last=True)

    def _cramped(self, target: QWidget, panel: QWidget) -> bool:
        """:func:`_cramped`, asked of the panel with nothing folded. The answer is kept for the panel,
        the view, the panel's room and the text size, so a step from one folded view to another need
        not unfold the panel (showing every chart again) just to ask."""
        host = panel.parentWidget().parentWidget() if panel.parentWidget() is not None else None
        room = host.size() if host is not None else None          # outside its scroll bars: they come and go
        key = (id(panel), id(target), (room.width(), room.height()) if room is not None else None,
               self.win.ctx.theme.point_size)
        if key not in self._cramped_at:
            self.fold.restore()
            self._cramped_at[key] = _cramped(target, panel)
        else:            # laid out now, as the test would have: left to the paint, wrapped text asked again there
            lay_out_now()
        return self._cramped_at[key]

    # --- authoring -------------------------------------------------------------------------
    def edit(self, tour: Tour, index: int | None = None) -> None:
        """Replace the tour with an edited copy (the view stays as it is)."""
        self.tour, self.modified = tour, True
        if index is not None:
            self.index = max(0, min(index, len(tour.steps) - 1))
        self.changed.emit()


