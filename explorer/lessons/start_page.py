"""The start page: what the app can teach, course by course, with one click into each lesson's tour."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFrame, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton, QScrollArea,
                               QSizePolicy, QVBoxLayout, QWidget)

from explorer.lessons.catalog import Course, Lesson

CARD_EM = 34          # a course card's comfortable width, in letter heights


class StartPage(QScrollArea):
    lesson_chosen = Signal(str)
    practice_chosen = Signal(str)

    def __init__(self, courses: tuple[Course, ...], steps: dict[str, int], practice: frozenset[str] = frozenset()) -> None:
        """``steps``: the number of steps of each ready lesson's tour; ``practice``: the lessons with exercises."""
        super().__init__()
        self.practice = practice
        self.practice_buttons: dict[str, QPushButton] = {}
        self.setObjectName("start_page")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)   # the text wraps instead
        body = QWidget()
        outer = QVBoxLayout(body)
        outer.setContentsMargins(16, 12, 16, 12)
        ready = sum(lesson.ready for c in courses for lesson in c.lessons)
        total = sum(len(c.lessons) for c in courses)
        head = QLabel(f"<h2>Lessons</h2><p>Eight courses, {total} lessons. A ready lesson opens a guided tour: "
                      f"each step sets up a panel and says what to look at, with its source. Use "
                      f"<b>Next ▶</b> and <b>◀</b> under the picture, Alt+→ / Alt+←, or PgDn / PgUp "
                      f"(a presenter's clicker) while a tour runs. {ready} of {total} lessons are ready; the others "
                      f"come with their panels.</p>")
        head.setWordWrap(True)
        head.setTextFormat(Qt.RichText)
        outer.addWidget(head)
        self.grid = QGridLayout()
        self.grid.setSpacing(12)
        outer.addLayout(self.grid)
        outer.addStretch(1)
        self.cards = [self._card(c, steps) for c in courses]
        self.buttons: dict[str, QPushButton] = {}
        for card in self.cards:
            self.buttons.update(card.property("buttons") or {})
        self._columns = 0
        self.setWidget(body)
        self._layout_cards()

    def _card(self, course: Course, steps: dict[str, int]) -> QGroupBox:
        box = QGroupBox(f"{course.id} · {course.title}")
        box.setObjectName(f"course_{course.id}")
        lay = QVBoxLayout(box)
        buttons = {}
        for lesson in course.lessons:
            lay.addWidget(self._row(lesson, steps.get(lesson.id, 0), buttons))
        box.setProperty("buttons", buttons)
        box.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)
        return box

    def _row(self, lesson: Lesson, n_steps: int, buttons: dict) -> QWidget:
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 4, 0, 4)
        text = QLabel(f"<b>{escape(lesson.id)} {escape(lesson.title)}</b><br>"
                      f"<span>{escape(lesson.summary)}</span>")
        text.setTextFormat(Qt.RichText)
        text.setWordWrap(True)
        lay.addWidget(text, 1)
        if lesson.ready:
            b = QPushButton(f"▶ {n_steps} steps")
            b.setToolTip(f"Start the guided tour of {lesson.id}")
            b.setAccessibleName(f"Start the tour of {lesson.id} {lesson.title}")
            b.clicked.connect(lambda _=False, i=lesson.id: self.lesson_chosen.emit(i))
            buttons[lesson.id] = b
            lay.addWidget(b, 0, Qt.AlignTop)
            if lesson.id in self.practice:
                p = QPushButton("✎ Practice")
                p.setToolTip(f"Exercises for {lesson.id}, set and marked by the engines")
                p.setAccessibleName(f"Practise {lesson.id} {lesson.title}")
                p.clicked.connect(lambda _=False, i=lesson.id: self.practice_chosen.emit(i))
                self.practice_buttons[lesson.id] = p
                lay.addWidget(p, 0, Qt.AlignTop)
        else:
            note = QLabel("coming with\nits panel")
            note.setObjectName("muted")
            note.setAlignment(Qt.AlignRight | Qt.AlignTop)
            lay.addWidget(note, 0, Qt.AlignTop)
        return row

    def _layout_cards(self) -> None:
        em = self.fontMetrics().height()
        cols = max(1, min(2, self.viewport().width() // max(1, CARD_EM * em)))
        if cols == self._columns:
            return
        self._columns = cols
        for card in self.cards:
            self.grid.removeWidget(card)
        for i, card in enumerate(self.cards):
            self.grid.addWidget(card, i // cols, i % cols, Qt.AlignTop)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._layout_cards()
