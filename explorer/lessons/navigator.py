"""The side list that replaces the scrolling tab bar: the start page, every panel (one click each),
and the eight courses with their lessons (ready ones start their tour; coming ones say so)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem

from explorer.lessons.catalog import Course

START, PANEL, COURSE, LESSON, PRACTICE = "start", "panel", "course", "lesson", "practice"
ROLE = Qt.UserRole


class Navigator(QTreeWidget):
    start_chosen = Signal()
    panel_chosen = Signal(str)
    lesson_chosen = Signal(str)
    practice_chosen = Signal(str)

    def __init__(self, panels: list[tuple[str, str, object]], courses: tuple[Course, ...],
                 practice: frozenset[str] = frozenset()) -> None:
        """``panels``: (key, title, QIcon) in tab order; ``practice``: the lessons with exercises."""
        super().__init__()
        self.setObjectName("navigator")
        self.setAccessibleName("Lessons and panels")
        self.setHeaderHidden(True)
        self.setRootIsDecorated(True)
        self.setIndentation(14)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setTextElideMode(Qt.ElideRight)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._items: dict[tuple[str, str], QTreeWidgetItem] = {}
        start = self._item(None, "★ Lessons: start here", START, "",
                           "All courses and lessons; each ready lesson has a guided tour")
        bold = QFont(start.font(0))
        bold.setBold(True)
        start.setFont(0, bold)
        for key, title, icon in panels:
            item = self._item(None, title, PANEL, key, f"Open the {title} panel")
            item.setIcon(0, icon)
        for course in courses:
            head = self._item(None, f"{course.id} · {course.title}", COURSE, course.id, course.title)
            head.setFont(0, bold)
            head.setFlags(head.flags() & ~Qt.ItemIsSelectable)
            for lesson in course.lessons:
                text = f"{lesson.id} {lesson.title}" + ("" if lesson.ready else " (coming)")
                item = self._item(head, text, LESSON, lesson.id, f"{lesson.id} {lesson.title}\n{lesson.summary}"
                                  + ("" if lesson.ready else "\nComing with its panel."))
                if not lesson.ready:
                    font = QFont(item.font(0))
                    font.setItalic(True)
                    item.setFont(0, font)
                    item.setFlags(item.flags() & ~Qt.ItemIsSelectable)
                if lesson.id in practice:
                    self._item(head, f"    ✎ Practice {lesson.id}", PRACTICE, lesson.id,
                               f"Exercises for {lesson.id}, set and marked by the engines")
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)

    def _item(self, parent, text: str, kind: str, key: str, tip: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem([text])
        item.setData(0, ROLE, (kind, key))
        item.setToolTip(0, tip)
        (parent.addChild(item) if parent is not None else self.addTopLevelItem(item))
        self._items[(kind, key)] = item
        return item

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        kind, key = item.data(0, ROLE)
        if kind == START:
            self.start_chosen.emit()
        elif kind == PANEL:
            self.panel_chosen.emit(key)
        elif kind == LESSON and item.flags() & Qt.ItemIsSelectable:
            self.lesson_chosen.emit(key)
        elif kind == PRACTICE:
            self.practice_chosen.emit(key)
        elif kind == COURSE:
            item.setExpanded(not item.isExpanded())

    def mark(self, kind: str, key: str = "") -> None:
        """Select the entry for what is shown (the start page, a panel, or a lesson whose tour runs)."""
        item = self._items.get((kind, key))
        self.blockSignals(True)
        try:
            if item is None:
                self.clearSelection()
                return
            if item.parent() is not None:
                item.parent().setExpanded(True)
            self.setCurrentItem(item)
            self.scrollToItem(item)
        finally:
            self.blockSignals(False)

    SHARE = 0.18             # at most this share of the window's width: the panels keep the room
    docked = False           # presenter mode puts it in a dock, which sets its width

    def fit_width(self, window_width: int | None = None) -> None:
        """Wide enough for the panel titles, up to a share of the window (longer titles, courses and
        lessons elide, with tooltips)."""
        if self.docked:
            return
        fm = self.fontMetrics()
        widest = max((fm.horizontalAdvance(it.text(0)) for (kind, _), it in self._items.items()
                      if kind in (START, PANEL)), default=120)
        want = widest + 2 * self.indentation() + fm.height() + 24
        if window_width:
            want = min(want, max(8 * fm.height(), int(window_width * self.SHARE)))
        self.setFixedWidth(want)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if event.type() == QEvent.FontChange:
            self.fit_width(self.window().width() if self.window() is not self else None)
