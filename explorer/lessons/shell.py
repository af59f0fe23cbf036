"""The lessons side of the window: the navigator beside the panels, the start page, the tour bar
under them, the Tour menu (playing and authoring), the keys, and presenter mode's folding."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QHBoxLayout, QInputDialog, QMessageBox, QStackedWidget,
                               QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from explorer.files import FileProblem
from explorer.lessons.catalog import courses, lesson, lesson_tour, tour_path
from explorer.lessons.navigator import LESSON, PANEL, START, Navigator
from explorer.lessons.tour import Tour, TourStep, load_tour, save_tour
from explorer.lessons.tour_bar import TourBar
from explorer.panel import panel_icon

KEYS_HELP = """Tour keys
  Next step: Alt+→ (always), PgDn while a tour runs, → too in presenter mode
  Previous step: Alt+← (always), PgUp while a tour runs, ← too in presenter mode
  A presenter clicker sends PgDn/PgUp (or →/←): both move the tour in presenter mode.
  Timeline during a tour: Space plays, Shift+PgDn / Shift+PgUp jump chapters, → / ← step frames
  (outside presenter mode). F6 shows the folded controls (side columns fold during a tour unless
  Tour ▸ Keep side columns open during tours is on)."""


class LessonsShell:
    """Owns the navigator, start page, tour bar and tour player of one main window."""

    def __init__(self, win) -> None:
        from explorer.lessons.player import TourPlayer
        from explorer.lessons.prefetch import TourPrefetch

        self.win = win
        self.player = TourPlayer(win)
        self.prefetch = TourPrefetch(self.player)   # the next steps' jobs, computed while this one is shown
        self.courses = courses([i.key for i in win.panel_infos])
        from engines.practice import shipped_lessons

        self.practice = frozenset(shipped_lessons())      # lessons with exercises: a Practice entry each
        self.nav = Navigator([(i.key, i.title, panel_icon(i.icon)) for i in win.panel_infos], self.courses,
                             self.practice)
        self.nav.practice_chosen.connect(win.open_practice)
        self.nav.start_chosen.connect(self.show_start)
        self.nav.panel_chosen.connect(win.show_panel)
        self.nav.lesson_chosen.connect(self.start_lesson)
        self.pages = QStackedWidget()
        self.start_page = None            # built the first time it is shown
        self.pages.addWidget(win.tabs)
        self.bar = TourBar(self.player)
        self.bar.controls_button.toggled.connect(lambda _on: self.arrange())
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.nav)
        self.row = row
        self._nav_dock: QDockWidget | None = None   # presenter mode: the navigator is a tab of the side column
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.pages, 1)
        column.addWidget(self.bar)
        row.addLayout(column, 1)
        win.tabs.tabBar().hide()          # the navigator lists the panels: no scrolling tab bar
        win.setCentralWidget(central)
        self._fold_state = None           # the window's dock layout before a presenter tour folded it
        self._timeline_folded = False
        from explorer.app import settings

        # a learner's layout: during a tour the side columns fold so the picture fits a laptop, unless pinned
        self.pin_docks = settings().value("tour/pin_docks", False, type=bool)
        win.ctx.timeline.spec_changed.connect(lambda _spec: self._fold_timeline())
        self.player.changed.connect(self._tour_changed)
        self.nav.fit_width()

    # --- pages --------------------------------------------------------------------------
    @property
    def on_start_page(self) -> bool:
        return self.start_page is not None and self.pages.currentWidget() is self.start_page

    def show_start(self) -> None:
        if self.start_page is None:
            from explorer.lessons.start_page import StartPage

            steps = {}
            for c in self.courses:
                for item in c.lessons:
                    if item.ready:
                        try:
                            steps[item.id] = len(load_tour(tour_path(item.id)).steps)
                        except FileProblem:
                            steps[item.id] = 0
            self.start_page = StartPage(self.courses, steps, self.practice)
            self.start_page.lesson_chosen.connect(self.start_lesson)
            self.start_page.practice_chosen.connect(self.win.open_practice)
            self.pages.addWidget(self.start_page)
        self.pages.setCurrentWidget(self.start_page)
        self.nav.mark(START)

    def show_panels(self) -> None:
        self.pages.setCurrentWidget(self.win.tabs)
        if self.win._active_index != self.win.tabs.currentIndex():   # left the start page for its tab
            self.win._activate(self.win.tabs.currentIndex())

    def panel_shown(self, key: str) -> None:
        if self.player.active and self.player.step is not None and self.player.step.panel == key:
            self.nav.mark(LESSON, self.player.tour.lesson)
        elif not self.on_start_page:
            self.nav.mark(PANEL, key)

    # --- playing ------------------------------------------------------------------------
    def start_lesson(self, lesson_id: str, step: int = 0) -> bool:
        try:
            tour = lesson_tour(lesson_id)
        except (ValidationError, FileProblem) as exc:
            self.win.show_error(str(exc))
            return False
        return self.player.start(tour, step, tour_path(lesson(lesson_id).id), shipped=True)

    def _tour_changed(self) -> None:
        if self.player.active:
            self.nav.mark(LESSON, self.player.tour.lesson)
        self.arrange()
        for act in self.step_actions:
            act.setEnabled(self.player.active)

    @property
    def folds(self) -> bool:
        """Whether a tour folds the side columns: always in presenter mode, else unless pinned."""
        return self.win.presenting or not self.pin_docks

    def set_pin_docks(self, on: bool) -> None:
        from explorer.app import settings

        self.pin_docks = on
        settings().setValue("tour/pin_docks", on)
        self.arrange()

    def arrange(self) -> None:
        """During a tour the picture gets the room: the navigator and side docks fold away (in the
        normal window too, unless pinned: on a 1280×800 laptop they left no room for the chart) and,
        in presenter mode, the panel folds around the step's view, until "Show controls" (F6)."""
        fold = self.folds and self.player.active and not self.bar.controls_button.isChecked()
        if fold and self._fold_state is None:
            self._fold_state = self.win.saveState()        # docks, tabs and sizes, to put back exactly
            self._hide_side_docks()
            QTimer.singleShot(0, self._hide_side_docks)     # hiding a tab's dock shows the next tab's, later
            if self.win.presenting:
                self.win.statusBar().hide()
            elif self._nav_dock is None:
                self.nav.hide()
        elif not fold and self._fold_state is not None:
            self.unfold()
        self._fold_timeline(fold)
        self.player.arrange(fold)
        self.bar.refresh()

    def unfold(self) -> None:
        """Put the docks, navigator and status bar back as they were before the tour folded them."""
        if self._fold_state is None:
            return
        state, self._fold_state = self._fold_state, None
        self._timeline_folded = False
        self.win.restoreState(state)
        self.win.statusBar().show()
        if self._nav_dock is None:
            self.nav.show()

    def layout_state(self):
        """The window's dock layout to remember: the one before a tour folded it."""
        return self._fold_state if self._fold_state is not None else self.win.saveState()

    def _hide_side_docks(self) -> None:
        if self._fold_state is None:
            return
        for dock in self.win.findChildren(QDockWidget):
            if dock.objectName() != "timeline_dock" and dock.toggleViewAction().isChecked():
                dock.hide()

    def _fold_timeline(self, fold: bool | None = None) -> None:
        """While folded, the player shows only on a step that plays its timeline: a still step of an
        animated panel does not give a row of the slide to a player nobody uses."""
        if fold is None:
            fold = self._fold_state is not None
        dock = self.win.findChild(QDockWidget, "timeline_dock")
        if dock is None:
            return
        step = self.player.step
        plays = step is not None and step.play and self.win.ctx.timeline.spec is not None
        if fold and not plays and dock.isVisible():
            dock.hide()
            self._timeline_folded = True
        elif self._timeline_folded and (not fold or plays):
            dock.show()
            self._timeline_folded = False

    def presenter_changed(self) -> None:
        if self.win.presenting and self._nav_dock is None:
            self._dock_nav()
        elif not self.win.presenting and self._nav_dock is not None:
            self._undock_nav()
        if not self.win.presenting:
            self._fold_state = None       # leaving presenter mode restores the docks itself
            self._timeline_folded = False
            self.win.statusBar().show()
            self.nav.show()
            self.bar.controls_button.setChecked(False)
        self.arrange()

    def _dock_nav(self) -> None:
        """Presenter mode: the navigator becomes a tab beside Scenario and Explanation in the side
        column, so at 1.6x text the panel keeps its width and every panel stays two clicks away."""
        win = self.win
        scenario = win.findChild(QDockWidget, "scenario_dock")
        dock = QDockWidget("Lessons", win)
        dock.setObjectName("nav_dock")
        self.nav.docked = True
        self.nav.setMinimumWidth(0)
        self.nav.setMaximumWidth(16_777_215)
        dock.setWidget(self.nav)
        win.addDockWidget(Qt.LeftDockWidgetArea, dock)
        dock.show()
        if scenario is not None and scenario.isVisible() and not scenario.isFloating():
            win.tabifyDockWidget(scenario, dock)
            scenario.raise_()
        self._nav_dock = dock

    def _undock_nav(self) -> None:
        dock, self._nav_dock = self._nav_dock, None
        self.nav.docked = False
        self.row.insertWidget(0, self.nav)
        self.nav.show()
        self.win.removeDockWidget(dock)
        dock.setParent(None)
        dock.deleteLater()
        self.nav.fit_width(self.win.width())

    def step_key(self, direction: int, key: str) -> bool:
        """A navigation key: True when the tour took it (PgDn/PgUp during a tour; arrows too in
        presenter mode, where a clicker may send them)."""
        if not self.player.active or (key == "arrow" and not self.win.presenting):
            return False
        self.player.next() if direction > 0 else self.player.previous()
        return True

    # --- menu ---------------------------------------------------------------------------
    def build_menu(self, menubar) -> None:
        w = self.win
        m = menubar.addMenu("&Tour")
        add = w._action
        add(m, "Lessons (start page)", self.show_start, "Ctrl+L")
        self.step_actions = [
            add(m, "Next step", self.player.next, "Alt+Right"),
            add(m, "Previous step", self.player.previous, "Alt+Left"),
            add(m, "End tour", self.player.stop),
            add(m, "Prepare lesson (compute every step ahead)…", self.prepare),
        ]
        m.addSeparator()
        add(m, "New tour from this view…", self.new_tour)
        self.step_actions += [
            add(m, "Add this view as a step", self.add_step, "Ctrl+Shift+A"),
            add(m, "Edit this step's caption…", self.edit_caption),
            add(m, "Update this step to the current view", self.update_step),
            add(m, "Move this step earlier", lambda: self.move_step(-1)),
            add(m, "Move this step later", lambda: self.move_step(1)),
            add(m, "Delete this step", self.delete_step),
        ]
        m.addSeparator()
        add(m, "Open tour…", self.open_dialog)
        self.step_actions += [add(m, "Save tour as…", self.save_dialog)]
        m.addSeparator()
        self.step_actions += [
            add(m, "Export tour as HTML slides…", lambda: self.export_dialog("html")),
            add(m, "Export tour as PDF…", lambda: self.export_dialog("pdf")),
        ]
        self.pin_action = add(m, "Keep side columns open during tours", lambda: self.set_pin_docks(
            self.pin_action.isChecked()), checkable=True)
        self.pin_action.setChecked(self.pin_docks)
        m.addSeparator()
        add(m, "Keys for tours…", lambda: QMessageBox.information(w, "Tour keys", KEYS_HELP))
        for act in self.step_actions:
            act.setEnabled(False)

    def prepare(self) -> bool:
        """Compute every step of the tour shown (its jobs land in the cache), with one progress bar."""
        from explorer.lessons.prefetch import prepare_dialog

        return prepare_dialog(self.win, self.player)

    # --- authoring ----------------------------------------------------------------------
    def _caption(self, title: str, text: str = "") -> str | None:
        caption, ok = QInputDialog.getMultiLineText(self.win, title, "Caption (one to three sentences):", text)
        return caption.strip() if ok and caption.strip() else None

    def new_tour(self, caption: str | None = None, lesson_id: str = "MY", title: str = "My tour") -> None:
        caption = caption if caption is not None else self._caption("New tour")
        if not caption:
            return
        step = TourStep.from_view(self.win.view_state(), caption)
        self.player.tour, self.player.index, self.player.path, self.player.shipped = (
            Tour(lesson_id, title, (step,)), 0, None, False)
        self.player.edit(self.player.tour, 0)

    def add_step(self, caption: str | None = None) -> None:
        if not self.player.active:
            return self.new_tour(caption)
        caption = caption if caption is not None else self._caption("Add this view as a step")
        if caption:
            step = TourStep.from_view(self.win.view_state(), caption)
            self.player.edit(self.player.tour.with_step(step, self.player.index + 1), self.player.index + 1)

    def update_step(self) -> None:
        if self.player.active:
            old = self.player.step
            new = TourStep.from_view(self.win.view_state(), old.caption, source=old.source, claim=old.claim,
                                     notes=old.notes, focus=old.focus, highlight=old.highlight)
            steps = list(self.player.tour.steps)
            steps[self.player.index] = new
            self.player.edit(replace(self.player.tour, steps=tuple(steps)))

    def edit_caption(self, caption: str | None = None) -> None:
        if not self.player.active:
            return
        caption = caption if caption is not None else self._caption("Edit caption", self.player.step.caption)
        if caption:
            try:
                self.player.edit(self.player.tour.with_caption(self.player.index, caption))
            except ValidationError as exc:
                self.win.show_error(str(exc))

    def move_step(self, delta: int) -> None:
        if self.player.active:
            to = self.player.index + delta
            if 0 <= to < len(self.player.tour.steps):
                self.player.edit(self.player.tour.moved(self.player.index, to), to)

    def delete_step(self) -> None:
        if self.player.active:
            try:
                tour = self.player.tour.without_step(self.player.index)
            except ValidationError as exc:
                self.win.show_error(str(exc))
                return
            self.player.edit(tour, min(self.player.index, len(tour.steps) - 1))
            self.player.go(self.player.index)

    def open_tour(self, path: str | Path) -> bool:
        try:
            tour = load_tour(path)
        except FileProblem as exc:
            self.win.show_error(str(exc))
            return False
        return self.player.start(tour, 0, Path(path))

    def save_tour(self, path: str | Path) -> bool:
        try:
            save_tour(self.player.tour, path)
        except OSError as exc:
            self.win.show_error(f"Could not save {path}: {exc.strerror or exc}")
            return False
        self.player.path, self.player.shipped, self.player.modified = Path(path), False, False
        self.player.changed.emit()
        self.win.statusBar().showMessage(f"Saved the tour to {path}", 15_000)
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.win, "Open tour", "", "Tour (*.json)")
        if path and not self.open_tour(path):
            QMessageBox.warning(self.win, "Could not open the tour", self.win.error_label.text())

    def save_dialog(self) -> None:
        if not self.player.active:
            return
        name = f"{self.player.tour.lesson}-tour.json"
        start = str(self.player.path) if self.player.path and not self.player.shipped else name
        path, _ = QFileDialog.getSaveFileName(self.win, "Save tour as", start, "Tour (*.json)")
        if path:
            self.save_tour(path)

    def export_dialog(self, fmt: str) -> None:
        if not self.player.active:
            return
        tour = self.player.tour
        path, _ = QFileDialog.getSaveFileName(self.win, f"Export tour as {fmt.upper()}", f"{tour.lesson}.{fmt}",
                                              f"*.{fmt}")
        if path:
            from explorer.lessons.slides import export_tour

            try:
                export_tour(self.win, tour, path)
            except (OSError, ValueError) as exc:
                self.win.show_error(f"Export failed: {exc}")
                return
            self.win.statusBar().showMessage(f"Exported {len(tour.steps)} steps to {path}", 15_000)


def keys_for(win) -> dict[str, object]:
    """The window's navigation keys, shared by the timeline and the tour (see KEYS_HELP)."""
    t, tours = win.ctx.timeline, win.lessons
    return {"Right": lambda: tours.step_key(1, "arrow") or t.step(1),
            "Left": lambda: tours.step_key(-1, "arrow") or t.step(-1),
            "PgDown": lambda: tours.step_key(1, "page") or t.chapter(1),
            "PgUp": lambda: tours.step_key(-1, "page") or t.chapter(-1),
            "Shift+PgDown": lambda: t.chapter(1), "Shift+PgUp": lambda: t.chapter(-1),
            "F6": lambda: tours.bar.controls_button.toggle() if tours.bar.controls_button.isVisible() else None}


