"""Practice: one lesson's exercises in the window, marked by the engines, usable from the keyboard.

``PracticeView`` is a view in the contract's sense: it shows drawn variants and marks answers with
engines.practice, and reports *Show me* and *Check my view* through signals; ``PracticeDialog``
connects those to the window (apply the Show-me view; read the window's view for a knobs check).
Keys: Enter checks, Ctrl+Return (or Alt+N) draws the next question, Ctrl+H shows the solution,
Ctrl+M opens the panel in the question's state, Ctrl+K toggles *Ask the class* (presenter use: the
question large, no answer controls; Ctrl+H reveals the answer and the solution). Progress per lesson
is saved atomically; a broken progress file is explained and left untouched for the session."""
from __future__ import annotations

import html
import os
import random
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QComboBox, QDialog, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QRadioButton, QTextBrowser, QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.practice import DIRECTIONS, Variant, draw, lesson_templates, mark
from engines.practice.export import solution_html
from engines.practice.progress import Progress, load_progress, save_progress


def progress_path() -> Path:
    """``practice.json`` in the app's configuration folder (EXPLORER_CONFIG_DIR in tests)."""
    folder = os.environ.get("EXPLORER_CONFIG_DIR")
    if not folder:
        from PySide6.QtCore import QStandardPaths

        folder = QStandardPaths.writableLocation(QStandardPaths.AppConfigLocation)
    return Path(folder) / "practice.json"


def parse_number(text: str) -> float:
    """A typed number: thousands separators and a trailing unit are allowed ("1,128.9 GB")."""
    token = text.strip().replace(",", "").replace("\u202f", "").split(" ")[0].rstrip("%$×")
    try:
        return float(token)
    except ValueError:
        raise ValidationError("answer", f"{text!r} is not a number", "e.g. 17.6") from None


def _line(text: str) -> str:
    """One prompt line as HTML; a fact line ("• question — answer") shows its answer in bold, so the
    facts read at a glance as they do in the worked solution."""
    if text.startswith("• ") and " — " in text:
        q, a = text.rsplit(" — ", 1)
        return f"{html.escape(q)} — <b>{html.escape(a)}</b>"
    return html.escape(text)


class PracticeView(QWidget):
    """Question, answer controls, feedback and solution for one lesson."""

    show_me = Signal(dict)            # the tour-step diff of the question's state
    check_view = Signal()             # a knobs question: the dialog marks the window's current view

    def __init__(self, lesson: str, seed: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rng = random.Random(seed)
        self.path = progress_path()
        self.save_problem = ""
        try:
            self.progress = load_progress(self.path)
        except ValidationError as exc:     # explain, keep the file as it is, practise without saving
            self.progress, self.save_problem = Progress(), str(exc)
        self.variant: Variant | None = None
        self.answered = False
        self.question = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.question.setObjectName("practiceQuestion")
        self.answers = QWidget()
        self.answer_box = QVBoxLayout(self.answers)
        self.answer_box.setContentsMargins(0, 0, 0, 0)
        self.feedback = QLabel(wordWrap=True)
        self.feedback.setObjectName("practiceFeedback")
        self.solution = QTextBrowser()
        self.solution.setVisible(False)
        self.status = QLabel()
        self.check_btn = QPushButton("&Check")
        self.solution_btn = QPushButton("S&olution")
        self.show_btn = QPushButton("&Show me")
        self.next_btn = QPushButton("&Next question")
        self.ask_btn = QPushButton("As&k the class", checkable=True)
        self.ask_btn.toggled.connect(self.ask_the_class)
        for b, slot in ((self.check_btn, self.check), (self.solution_btn, self.reveal),
                        (self.show_btn, self._show), (self.next_btn, self.next_question)):
            b.clicked.connect(slot)
        row = QHBoxLayout()
        for b in (self.check_btn, self.solution_btn, self.show_btn, self.next_btn, self.ask_btn):
            row.addWidget(b)
        lay = QVBoxLayout(self)
        for w in (self.question, self.answers):
            lay.addWidget(w)
        lay.addLayout(row)
        lay.addWidget(self.feedback)
        lay.addWidget(self.solution, 20)        # the solution takes the room when shown ...
        lay.addStretch(1)                       # ... else the question stays together at the top
        lay.addWidget(self.status)
        for keys, slot in (("Ctrl+Return", self.next_question), ("Ctrl+H", self.reveal), ("Ctrl+M", self._show),
                           ("Ctrl+K", self.ask_btn.toggle)):
            QShortcut(QKeySequence(keys), self, slot)
        self.set_lesson(lesson)

    # -- state
    def set_lesson(self, lesson: str) -> None:
        self.lesson = lesson
        self.templates = lesson_templates(lesson)
        self.next_question()

    def next_question(self) -> None:
        if not self.templates:
            self.question.setText(f"Lesson {html.escape(self.lesson)} has no exercises yet.")
            return
        solved = set(self.progress.of(self.lesson).solved)
        fresh = [t for t in self.templates if t.id not in solved] or list(self.templates)
        self.variant = draw(self.rng.choice(fresh), self.rng.randrange(2**31))
        self.answered = False
        self._build_answer()
        self.feedback.setText("")
        self.solution.setVisible(False)
        if self.ask_btn.isChecked():
            self.ask_the_class(True)
        self._update_status()

    def _build_answer(self) -> None:
        while self.answer_box.count():            # the last question's controls go at once, not at idle
            w = self.answer_box.takeAt(0).widget()
            if w is not None:
                w.hide()
                w.setParent(None)
                w.deleteLater()
        v = self.variant
        t = v.template
        self.question.setText("<p>" + "<br>".join(_line(x) for x in v.prompt.split("\n")) + "</p>")
        self.choice_buttons: list[tuple[str, Any]] = []
        self.number = self.direction = None
        if t.kind in ("numeric", "direction"):
            row = QHBoxLayout()
            if t.kind == "direction":
                self.direction = QComboBox()
                self.direction.addItems(DIRECTIONS)
                row.addWidget(QLabel("It"))
                row.addWidget(self.direction)
                row.addWidget(QLabel("to"))
            self.number = QLineEdit(placeholderText="your answer")
            self.number.returnPressed.connect(self.check)
            row.addWidget(self.number)
            row.addWidget(QLabel(html.escape(t.unit)))
            holder = QWidget()
            holder.setLayout(row)
            self.answer_box.addWidget(holder)
            self.number.setFocus()
        elif t.kind == "choice":
            single = len(v.outcome.answer) == 1
            group = QButtonGroup(self.answers)
            group.setExclusive(single)
            for i, opt in enumerate(v.outcome.options):
                b = (QRadioButton if single else QCheckBox)(f"&{i + 1}  {opt.text}")   # Alt+digit: letters are taken
                b.setToolTip(opt.cite)
                group.addButton(b)
                self.answer_box.addWidget(b)
                self.choice_buttons.append((opt.key, b))
            if not single:
                self.answer_box.addWidget(QLabel("Choose every answer that applies."))
        else:
            self.answer_box.addWidget(QLabel("Change the panel with Show me's panel open, then press Check: "
                                             "the engine checks the window's current view."))

    def ask_the_class(self, on: bool) -> None:
        """Presenter use: the question in large type, no answer controls; Ctrl+H reveals."""
        font = self.font()
        if on:
            font.setPointSizeF(font.pointSizeF() * 2)
        self.question.setFont(font)
        for w in (self.answers, self.check_btn, self.feedback):
            w.setVisible(not on)
        self.solution.setVisible(False)

    # -- actions
    def check(self) -> None:
        v = self.variant
        if v is None:
            return
        if v.template.kind == "knobs":
            self.check_view.emit()
            return
        try:
            if v.template.kind == "numeric":
                response: Any = parse_number(self.number.text())
            elif v.template.kind == "direction":
                response = (self.direction.currentText(), parse_number(self.number.text()))
            else:
                response = frozenset(k for k, b in self.choice_buttons if b.isChecked())
                if not response:
                    raise ValidationError("answer", "choose an answer")
        except ValidationError as exc:
            self.feedback.setText(str(exc).split(": ", 1)[-1])
            return
        self.record(mark(v, response))

    def check_scenario(self, scenario, params: dict) -> None:
        """Mark a knobs question against the window's scenario and the panel's parameters."""
        self.record(mark(self.variant, scenario, params))

    def record(self, result) -> None:
        self.feedback.setText(("✓ " if result.correct else "✗ ") + result.feedback)
        if not self.answered:
            self.answered = True
            self.progress = self.progress.record(self.lesson, self.variant.template.id, result.correct)
            self._save()
        if result.correct:
            self.reveal()
        self._update_status()

    def reveal(self) -> None:
        v = self.variant
        if v is None:
            return
        self.solution.setHtml(f"<p><b>Answer:</b> {html.escape(v.answer_text())}</p>{solution_html(v)}"
                              f"<p><i>Source: {html.escape(v.template.source)}</i></p>")
        self.solution.setVisible(True)

    def _show(self) -> None:
        if self.variant is not None:
            self.show_me.emit(dict(self.variant.outcome.show_me))

    def _save(self) -> None:
        if self.save_problem:
            return
        try:
            save_progress(self.progress, self.path)
        except OSError as exc:
            self.save_problem = f"progress not saved: {exc.strerror or exc}"

    def _update_status(self) -> None:
        p = self.progress.of(self.lesson)
        text = (f"{self.lesson}: {p.correct} of {p.answered} answered right; "
                f"{len(p.solved)} of {len(self.templates)} kinds of question solved")
        self.status.setText(text + (f" — {self.save_problem}" if self.save_problem else ""))


class PracticeDialog(QDialog):
    """The Practice window for a lesson, joined to the main window (Show me, knobs checks)."""

    def __init__(self, win, lesson: str, seed: int | None = None) -> None:
        super().__init__(win)
        self.win = win
        self.setWindowTitle(f"Practice · {lesson}")
        self.lessons = QComboBox()
        from engines.practice import shipped_lessons

        self.lessons.addItems(shipped_lessons())
        self.lessons.setCurrentText(lesson)
        self.view = PracticeView(lesson, seed, self)
        self.lessons.currentTextChanged.connect(self._lesson)
        self.view.show_me.connect(self.apply_show_me)
        self.view.check_view.connect(self.check_window)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(QLabel("&Lesson"))
        top.itemAt(0).widget().setBuddy(self.lessons)
        top.addWidget(self.lessons, 1)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self.resize(720, 560)

    def _lesson(self, lesson: str) -> None:
        self.setWindowTitle(f"Practice · {lesson}")
        self.view.set_lesson(lesson)

    def apply_show_me(self, step: dict) -> None:
        from explorer.lessons.tour import TourStep

        try:
            self.win.apply_view_state(TourStep.from_json_dict({**step, "caption": "Show me"}).view_state())
        except ValidationError as exc:
            self.view.feedback.setText(f"Show me failed: {exc}")

    def check_window(self) -> None:
        view = self.win.view_state()
        self.view.check_scenario(view.scenario, dict(view.params.get(view.panel, {})))


def open_practice(win, lesson: str | None = None) -> PracticeDialog:
    """Open Practice for ``lesson`` (default: the tour being played, else the first lesson with exercises)."""
    from engines.practice import shipped_lessons

    if lesson is None:
        tour = getattr(getattr(getattr(win, "lessons", None), "player", None), "tour", None)
        lesson = getattr(tour, "lesson", None)
    if lesson not in shipped_lessons():
        lesson = shipped_lessons()[0]
    dlg = PracticeDialog(win, lesson)
    dlg.show()
    return dlg
