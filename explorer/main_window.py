"""The main window: scenario dock, panel tabs, shared player, lesson dock, menus and shortcuts."""
from __future__ import annotations

import dataclasses
from contextlib import ExitStack
import logging
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (QApplication, QBoxLayout, QDockWidget, QFileDialog, QFormLayout, QFrame, QGridLayout,
                               QLabel, QMainWindow, QMessageBox, QProgressDialog, QScrollArea, QStyle, QTabWidget,
                               QWidget)

from engines.core.errors import ValidationError
from engines.core.presets import apply_preset, scenario_presets
from engines.core.models import PRESETS
from explorer import exports
from explorer.app import send_undo_to_the_scenario, settings  # noqa: F401 (settings importable here too)
from explorer.context import AppContext
from explorer.files import FileProblem
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.paint_hold import PaintHold
from explorer.ui.paint_settle import SettleBeforePaint
from explorer.gc_guard import freeze_long_lived
from explorer.panel import Panel, PanelInfo, panel_icon, registered_panels  # panel_icon: importable here too
from explorer.scenario_editor import ScenarioEditor
from explorer.theme import qt_palette, stylesheet
from explorer.timeline import PlayerWidget
from explorer.view_state import ViewState, load_view_state, save_view_state
from explorer.ui.widgets import LessonView

log = logging.getLogger("explorer")

PRESENTER_SCALE = 1.6
PRESENTER_HEIGHT = 800    # presenter text is PRESENTER_SCALE × the base size at this screen height, in step with it
PRESENTER_SIDE = 0.27      # share of the screen's width the side column keeps in presenter mode
EDITOR_MIN_WIDTH = 280    # the editor scrolls sideways below this
FREEZE_AFTER_MS = 1000    # a newly built panel has painted and its first results are in by then


def _page_height(page: QWidget, width: int) -> int:
    """A tab page's need at ``width``: its layout's, or its own minimum (a chart has no layout)."""
    if page.layout() is None:
        return page.minimumSizeHint().expandedTo(page.minimumSize()).height()
    m = page.contentsMargins()
    return _least_height(page.layout(), max(1, width - m.left() - m.right())) + m.top() + m.bottom()


def _least_height(item, width: int) -> int:
    """The height a layout item needs at ``width``: each widget's minimum, but word-wrapped text at
    its full height for the width it gets. (Qt's ``minimumHeightForWidth`` answers with preferred
    heights for grids, far more than needed; ``minimumSizeHint`` ignores the wrapping.)"""
    lay = item.layout()
    if lay is None:
        w = item.widget()
        if w is None:
            return item.minimumSize().height()
        if w.isHidden():
            return 0
        if isinstance(w, QTabWidget):                          # the tallest page's need, under the tab bar
            pages = ([w.widget(i) for i in range(w.count())] if w.tabBar().isVisibleTo(w)
                     else [w.currentWidget()])                 # a tour's focus: only the page shown
            frame = 2 * w.style().pixelMetric(QStyle.PM_DefaultFrameWidth)
            shown = w.currentWidget()                          # a page is narrower than its tab widget:
            inset = w.width() - shown.width() if shown is not None and shown.width() > 0 else frame
            inside = max((_page_height(page, width - inset) for page in pages), default=0)   # 4 px can wrap a line
            return max(item.minimumSize().height(), w.tabBar().sizeHint().height() + inside + frame)
        if w.hasHeightForWidth() and w.layout() is None:       # text that wraps
            return max(w.minimumHeight(), w.heightForWidth(max(1, width)))
        if w.layout() is not None:                             # a group box, a labelled slider: frame, title, layout
            wm = w.contentsMargins()
            inside = _least_height(w.layout(), max(1, width - wm.left() - wm.right()))
            return max(item.minimumSize().height(), inside + wm.top() + wm.bottom())
        return item.minimumSize().height()
    m = lay.contentsMargins()
    inner = max(1, width - m.left() - m.right())
    kids = [lay.itemAt(i) for i in range(lay.count())]
    if isinstance(lay, QGridLayout):
        rows: dict[int, int] = {}
        cols = max(1, lay.columnCount())
        gap = max(0, lay.horizontalSpacing())
        where = [lay.getItemPosition(i) for i in range(len(kids))]
        used = {c for kid, (_r, c0, _rs, cs) in zip(kids, where) if not kid.isEmpty() for c in range(c0, c0 + cs)}
        used |= {c for c in range(cols) if lay.columnStretch(c)}   # Qt gives a column no width only when it is
        used = used or set(range(cols))                        # empty and unstretched (a tour's fold: hidden, 0)
        stretch = [lay.columnStretch(c) if c in used else 0 for c in range(cols)]
        room = max(1, inner - (len(used) - 1) * gap)           # columns share the room by stretch, as Qt does
        widths = ([room * s // sum(stretch) for s in stretch] if all(stretch[c] for c in used)
                  else [room // len(used) if c in used else 0 for c in range(cols)])
        for i, kid in enumerate(kids):
            r, c, rspan, cspan = lay.getItemPosition(i)
            if rspan == 1:
                rows[r] = max(rows.get(r, 0), _least_height(kid, sum(widths[c:c + cspan]) + (cspan - 1) * gap))
        need = sum(rows.values()) + max(0, len(rows) - 1) * max(0, lay.verticalSpacing())
    elif isinstance(lay, QBoxLayout) and lay.direction() in (QBoxLayout.TopToBottom, QBoxLayout.BottomToTop):
        heights = [_least_height(k, inner) for k in kids]
        shown = [h for h in heights if h > 0]
        need = sum(shown) + max(0, len(shown) - 1) * max(0, lay.spacing())
    elif isinstance(lay, QBoxLayout):                          # side by side: hidden ones take no width
        shown = [k for k in kids if not k.isEmpty()]
        room = inner - max(0, len(shown) - 1) * max(0, lay.spacing())   # a few px wrap a line differently
        need = max((_least_height(k, max(1, room // max(1, len(shown)))) for k in shown), default=0)
    elif isinstance(lay, FlowLayout):                          # controls that wrap onto more lines
        return max(item.minimumSize().height(), lay.heightForWidth(max(1, width)))
    elif isinstance(lay, QFormLayout):                         # rows of label and field, or one spanning item
        label_w = max((lay.itemAt(r, QFormLayout.LabelRole).sizeHint().width() for r in range(lay.rowCount())
                       if lay.itemAt(r, QFormLayout.LabelRole) is not None), default=0)
        heights = []
        for r in range(lay.rowCount()):
            span = lay.itemAt(r, QFormLayout.SpanningRole)
            if span is not None:
                heights.append(_least_height(span, inner))
                continue
            label, field = lay.itemAt(r, QFormLayout.LabelRole), lay.itemAt(r, QFormLayout.FieldRole)
            heights.append(max(_least_height(label, label_w) if label is not None else 0,
                               _least_height(field, max(1, inner - label_w)) if field is not None else 0))
        shown = [h for h in heights if h > 0]
        need = sum(shown) + max(0, len(shown) - 1) * max(0, lay.verticalSpacing())
    else:
        return item.minimumSize().height()
    return max(item.minimumSize().height(), need + m.top() + m.bottom())


class PanelHost(QScrollArea):
    """A tab's frame for its panel: the panel fills the tab exactly, and scrolls only where the tab
    is smaller than the panel's minimum size (a 1280×800 projector, presenter fonts), so no panel can
    push the window past the screen. QScrollArea's own resizing is not used: it sizes a widget with
    word-wrapped text by its preferred height, taller than the tab even on a large screen."""

    def __init__(self) -> None:
        super().__init__()
        self.setFrameShape(QFrame.NoFrame)
        self._refit = QTimer(self)                  # a changed minimum refits once the turn's events are done
        self._refit.setSingleShot(True)
        self._refit.setInterval(0)
        self._refit.timeout.connect(self.fit)

    def setWidget(self, widget: QWidget) -> None:  # noqa: N802 (Qt name)
        super().setWidget(widget)
        self.fit()

    def scrolls(self) -> bool:
        """Whether its panel needs more height than the tab has (the panel scrolls in it)."""
        panel = self.widget()
        if panel is None:
            return False
        room = self.maximumViewportSize()
        least = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        width = max(room.width(), least.width())
        need = max(least.height(), _least_height(panel.layout(), width)) if panel.layout() else least.height()
        return need > room.height() or least.width() > room.width()

    def fit(self) -> None:
        panel = self.widget()
        if panel is None:
            return
        least = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        room = self.maximumViewportSize()                       # the viewport without scroll bars
        bar = self.style().pixelMetric(QStyle.PM_ScrollBarExtent)
        def least_height(width: int) -> int:                    # wrapped text needs more height when narrow
            return max(least.height(), _least_height(panel.layout(), width)) if panel.layout() else least.height()

        w = max(room.width(), least.width())
        h = max(room.height(), least_height(w))
        if h > room.height():                                   # a vertical bar takes its width
            w = max(room.width() - bar, least.width())
            h = max(room.height(), least_height(w))
        if w > room.width():
            h = max(room.height() - bar, least_height(w))
        panel.resize(w, h)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self.fit()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if obj is self.widget() and event.type() == QEvent.LayoutRequest and not self._refit.isActive():
            self._refit.start()                                 # its minimum size may have changed
        return super().eventFilter(obj, event)


def tidy_config_folders(st: QSettings) -> None:
    """What a killed run left next to the app's own files: temp files of a killed save (our own
    ``.NAME.xxxxxxxx.tmp`` pattern, in the configuration folders only) and a settings lock whose
    owner is gone (QLockFile removes a stale lock when it tries to take it)."""
    from PySide6.QtCore import QLockFile, QStandardPaths

    from explorer.files import remove_stale_temps

    folders = {Path(st.fileName()).parent,
               Path(os.environ.get("EXPLORER_CONFIG_DIR")
                    or QStandardPaths.writableLocation(QStandardPaths.AppConfigLocation))}
    for folder in folders:
        for path in remove_stale_temps(folder):
            log.info("removed %s, left by an interrupted save", path)
    lock = QLockFile(st.fileName() + ".lock")
    if lock.tryLock(0):
        lock.unlock()


class MainWindow(QMainWindow):
    def __init__(self, ctx: AppContext, panel_classes: list[type[Panel]] | None = None,
                 remember_layout: bool = True, freeze_objects: bool = False) -> None:
        super().__init__()
        self.ctx = ctx
        self.freeze_objects = freeze_objects   # the app's own window: see gc_guard.freeze_long_lived
        self.remember_layout = remember_layout
        self.setWindowTitle("AI Systems Explorer")
        self.setObjectName("MainWindow")
        self._apply_theme(ctx.theme)  # first: widgets created below inherit the font size
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # Tabs hold empty hosts; a panel is built the first time its tab is shown (fast start-up).
        self.panel_infos: list[PanelInfo] = ([PanelInfo.of(c) for c in panel_classes] if panel_classes is not None
                                             else registered_panels())
        self._instances: dict[str, Panel] = {}
        self._hosts: dict[str, QWidget] = {}
        self._pending_params: dict[str, object] = {}      # Params for panels not built yet (a view, a restart)
        self._pending_versions: dict[str, int] = {}       # the version a remembered params dict was saved at
        self._pending_tabs: dict[str, tuple[str, ...]] = {}
        self._pending_frame: int | None = None   # a view's frame, kept until the user moves the timeline
        self._placing_frame = False
        self._pending_play = False
        self._active_index = -1          # the tab whose panel, explanation and timeline are shown
        for info in self.panel_infos:
            # The panel is placed here when its tab is first shown (it scrolls only if it cannot fit).
            host = PanelHost()
            self._hosts[info.key] = host
            self.tabs.addTab(host, panel_icon(info.icon), info.title)
        from explorer.lessons.shell import LessonsShell

        self.lessons = LessonsShell(self)   # navigator, start page and tour bar around the panels
        self.tour = self.lessons.player
        self.tour.changed.connect(self.fit_presenter)   # a tour's slides scale with the screen
        self.paint_settle = SettleBeforePaint(self, self._shown_panel)   # charts lay out before a paint
        self.paint_hold = PaintHold(self)               # a tour step paints once, with its stored results
        self._before_presenter: tuple[QByteArray, str, float] | None = None   # layout and theme to go back to
        self._presenter_base = PRESENTER_SCALE   # presenter text scale at PRESENTER_HEIGHT
        self.editor = ScenarioEditor(ctx.scenario)
        self.editor.notice.connect(lambda text: self.statusBar().showMessage(text, 15_000))
        send_undo_to_the_scenario(self.editor)
        self.editor.setMinimumWidth(EDITOR_MIN_WIDTH)
        self._dock("Scenario", "scenario_dock", self.editor, Qt.LeftDockWidgetArea)
        self.lesson = LessonView()
        self._dock("Explanation", "lesson_dock", self.lesson, Qt.RightDockWidgetArea)
        self.player = PlayerWidget(ctx.timeline)
        self._dock("Timeline", "timeline_dock", self.player, Qt.BottomDockWidgetArea)
        self.device_label = QLabel()
        self.statusBar().addPermanentWidget(self.device_label)
        self.error_label = QLabel()
        self.error_label.setObjectName("error")
        self.statusBar().addWidget(self.error_label, 1)
        self._build_menus()
        self._build_shortcuts()
        ctx.timeline.position_changed.connect(self._show_frame)
        ctx.theme_changed.connect(self._apply_theme)
        ctx.scenario.changed.connect(lambda _d: self._update_title())
        self.tabs.currentChanged.connect(self._activate)
        self.set_device(ctx.device)
        self.resize(1500, 950)
        # Initial split (a remembered layout overrides it): side docks stay narrow, panels get the room.
        side = int(320 * min(ctx.theme.font_scale, 1.2))
        self.resizeDocks([self.findChild(QDockWidget, "scenario_dock"), self.findChild(QDockWidget, "lesson_dock")],
                         [side, side], Qt.Horizontal)
        if remember_layout:
            self._restore_layout()
        if self.panel_infos and not self.lessons.on_start_page:   # the start page builds no panel yet
            self._activate(self.tabs.currentIndex())
        self._update_title()

    # --- construction --------------------------------------------------------------------
    def _dock(self, title: str, name: str, widget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, menu, text: str, slot, shortcut=None, checkable: bool = False) -> QAction:
        act = QAction(text, self)
        if shortcut:
            act.setShortcut(QKeySequence(shortcut))
        act.setCheckable(checkable)
        act.triggered.connect(slot)
        menu.addAction(act)
        self.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action(f, "Open scenario…", self.open_scenario_dialog, QKeySequence.Open)
        self._action(f, "Save scenario as…", self.save_scenario_dialog, QKeySequence.Save)
        f.addSeparator()
        self._action(f, "Open view…", self.open_view_dialog, "Ctrl+Shift+O")
        self._action(f, "Save view…", self.save_view_dialog, "Ctrl+Shift+S")
        self._action(f, "Open measurement…", lambda _=False: self.show_panel("memory").open_measurement_dialog())
        f.addSeparator()
        for fmt in ("png", "svg", "csv", "json", "gif"):
            self._action(f, f"Export panel as {fmt.upper()}…", lambda _=False, fmt=fmt: self.export_dialog(fmt))
        f.addSeparator()
        self._action(f, "Quit", self.close, QKeySequence.Quit)
        e = mb.addMenu("&Edit")
        undo = self.ctx.scenario.undo_stack.createUndoAction(self, "Undo")
        undo.setShortcut(QKeySequence.Undo)
        redo = self.ctx.scenario.undo_stack.createRedoAction(self, "Redo")
        redo.setShortcuts([QKeySequence.Redo, QKeySequence("Ctrl+Shift+Z")])
        e.addAction(undo)
        e.addAction(redo)
        self.addAction(undo)
        self.addAction(redo)
        p = mb.addMenu("&Presets")
        for key, arch in PRESETS.items():
            self._action(p, f"Model: {arch.label}", lambda _=False, k=key: self.apply_preset(k))
        custom = self._action(p, "Model: custom (the current architecture, to edit)",
                              lambda _=False: self.apply_preset("custom"))
        custom.setToolTip("Keep the current model's numbers as a custom architecture and edit them in the Scenario dock")
        p.addSeparator()
        for key, preset in scenario_presets().items():
            act = self._action(p, preset.label, lambda _=False, k=key: self.apply_preset(k))
            act.setToolTip(preset.description)
        v = mb.addMenu("&View")
        self._action(v, "Light theme (projector)", lambda: self.ctx.set_theme("light"))
        self._action(v, "Dark theme", lambda: self.ctx.set_theme("dark"))
        self._action(v, "Larger text", lambda: self.scale_text(0.15), "Ctrl+=")
        self._action(v, "Smaller text", lambda: self.scale_text(-0.15), "Ctrl+-")
        self.presenter_action = self._action(v, "Presenter mode", self.toggle_presenter, "Ctrl+Shift+F",
                                             checkable=True)
        self._action(v, "Full screen", self.toggle_full_screen, "F11")
        self.lessons.build_menu(mb)
        self._action(mb.addMenu("&Practice"), "Practice this lesson…", self.open_practice, "Ctrl+Shift+P")
        h = mb.addMenu("&Help")
        self._action(h, "About", lambda: QMessageBox.about(
            self, "AI Systems Explorer", "Linked, animated panels for the arithmetic of AI infrastructure.\n"
            "Every number comes from an engine; every formula cites its source in the Explanation dock."))

    def _build_shortcuts(self) -> None:
        from explorer.lessons.shell import keys_for

        t = self.ctx.timeline
        keys = {"Space": t.toggle, "Shift+Right": lambda: t.step(10), "Shift+Left": lambda: t.step(-10),
                "Home": t.home, "End": t.end, "Esc": self._cancel_current, **keys_for(self)}
        self.shortcuts = []
        for key, fn in keys.items():
            sc = QShortcut(QKeySequence(key), self)
            sc.activated.connect(fn)
            self.shortcuts.append(sc)

    # --- panels & timeline ---------------------------------------------------------------
    @property
    def panels(self) -> list[Panel]:
        """The panels built so far, in tab order."""
        return [self._instances[c.key] for c in self.panel_infos if c.key in self._instances]

    def current_panel(self) -> Panel | None:
        i = self.tabs.currentIndex()
        if i < 0:
            return None
        return self._ensure(self.panel_infos[i].key)

    def _shown_panel(self) -> Panel | None:
        """The panel on screen, if it has been built (never builds one)."""
        i = self.tabs.currentIndex()
        return self._instances.get(self.panel_infos[i].key) if i >= 0 else None

    def _ensure(self, key: str) -> Panel:
        """Build (once) and return the panel for ``key``."""
        if key not in self._instances:
            info = next(i for i in self.panel_infos if i.key == key)
            panel = info.load()(self.ctx)
            panel.defer_when_hidden = True
            self._instances[key] = panel
            self._hosts[key].setWidget(panel)
            panel.timeline_changed.connect(lambda p=panel: self._timeline_changed(p))
            panel.tasks.failed.connect(lambda text, p=panel: self.show_error(f"{p.title}: {text.splitlines()[0]}"))
            if key in self._pending_params:
                self._set_pending_params(panel, self._pending_params.pop(key), self._pending_versions.pop(key, None))
            panel.bind()
            if key in self._pending_tabs:
                panel.set_inner_tabs(self._pending_tabs.pop(key))
            send_undo_to_the_scenario(panel)
            if self.freeze_objects:   # its items live as long as the app (not so a test's window)
                QTimer.singleShot(FREEZE_AFTER_MS, self, freeze_long_lived)   # cancelled with the window
        return self._instances[key]

    def panel(self, key: str) -> Panel:
        if not any(c.key == key for c in self.panel_infos):
            raise ValidationError("panel", f"no panel {key!r}", ", ".join(c.key for c in self.panel_infos))
        return self._ensure(key)

    def show_panel(self, key: str) -> Panel:
        p = self.panel(key)
        self.tabs.setCurrentWidget(self._hosts[key])
        self.lessons.show_panels()
        self.lessons.panel_shown(key)
        return p

    def _activate(self, index: int) -> None:
        self._active_index = index
        self._pending_frame = None
        self._pending_play = False
        panel = self.current_panel()
        if panel is None:
            return
        self.lesson.setMarkdown(panel.lesson_markdown())
        self.ctx.timeline.set_spec(panel.timeline())
        self.lessons.panel_shown(panel.key)

    @property
    def panel_classes(self) -> list[type[Panel]]:
        """Every panel class (imports every panel module; the self-test and benchmarks use it)."""
        return [i.load() for i in self.panel_infos]

    def _timeline_changed(self, panel: Panel) -> None:
        if panel is self.current_panel():
            self._placing_frame = True
            try:
                self.ctx.timeline.set_spec(panel.timeline(), keep_position=True)
            finally:
                self._placing_frame = False
            if self._pending_frame is not None and self.ctx.timeline.spec is not None:
                self._place_frame()

    def _show_frame(self, index: int) -> None:
        if self._pending_frame is not None and index != self._pending_frame and not self._placing_frame:
            self._pending_frame = None      # the user moved on
        panel = self.current_panel()
        if panel is not None and self.ctx.timeline.spec is not None:
            panel.show_frame(index)

    def _cancel_current(self) -> None:
        panel = self.current_panel()
        if panel is not None:
            panel.tasks.cancel()

    # --- scenario actions --------------------------------------------------------------------
    def apply_preset(self, name: str) -> None:
        """A preset from the menu or ``--preset``. A model preset goes the editor's way: it keeps the
        layout where it fits and says what it had to change (engines.core.presets.switch_model)."""
        if name in PRESETS:
            self.show_error(None)
            self.editor.choose_model(name)
            return
        try:
            self.ctx.scenario.replace(apply_preset(self.ctx.scenario.value, name), f"Preset {name}")
            self.show_error(None)
        except ValidationError as exc:
            self.show_error(str(exc))

    def open_scenario(self, path: str) -> bool:
        try:
            self.ctx.scenario.load(path)
        except FileProblem as exc:
            self.show_error(str(exc))
            return False
        self.show_error(None)
        return True

    def open_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", "Scenario (*.json)")
        if path and not self.open_scenario(path):
            QMessageBox.warning(self, "Could not open the scenario", self.error_label.text())

    def save_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", "scenario.json", "Scenario (*.json)")
        if path:
            try:
                self.ctx.scenario.save(path)
            except OSError as exc:
                self.show_error(f"Could not save {path}: {exc}")

    def open_practice(self, lesson: str | None = None):
        """Exercises for ``lesson`` (default: the tour being played), marked by the engines."""
        from explorer.lessons.practice_view import open_practice

        self._practice = open_practice(self, lesson)
        return self._practice

    # --- views: everything that puts the app back into one view --------------------------------
    def view_state(self) -> ViewState:
        """The current view: scenario, panel, every panel's parameters and inner tabs, the frame."""
        params = {k: v if isinstance(v, dict) else v.to_dict() for k, v in self._pending_params.items()}
        versions = {k: self._pending_versions[k] if isinstance(v, dict) else v.version
                    for k, v in self._pending_params.items() if not isinstance(v, dict) or k in self._pending_versions}
        tabs = dict(self._pending_tabs)
        for p in self.panels:
            if p.params is not None:
                params[p.key] = p.params.to_dict()
                versions[p.key] = p.params.version
            if p.tab_widgets():
                tabs[p.key] = p.inner_tabs()
        cur = self.current_panel()
        frame = self._pending_frame
        if frame is None and self.ctx.timeline.spec is not None:
            frame = self.ctx.timeline.position
        return ViewState(self.ctx.scenario.value, cur.key if cur else "", params, tabs, frame, versions)

    @staticmethod
    def _set_pending_params(panel: Panel, params, version: int | None = None) -> None:
        """Parameters kept for a panel until it was built: a Params from a view, or a remembered dict
        saved at ``version`` (checked now: one from an older or edited settings file may no longer be valid)."""
        if isinstance(params, dict):
            try:
                params = panel.Params.from_dict(params, version) if panel.Params is not None else None
            except ValidationError as exc:
                log.warning("%s: remembered parameters not restored: %s", panel.key, exc)
                return
        if params is not None:
            panel.set_params(params, record=False)

    def _stage(self, view: ViewState) -> dict[str, object]:
        """Validate every panel's parameters in ``view`` (raising before anything changes), apply them to
        built panels and keep them for the rest; returns the Params by panel key."""
        known = {c.key: c for c in self.panel_infos}
        staged = {}
        for key, values in view.params.items():
            if key not in known:
                raise ValidationError("params", f"no panel {key!r}", ", ".join(known))
            cls = known[key].load().Params
            if cls is None:
                raise ValidationError(f"params.{key}", "this panel has no parameters")
            staged[key] = view.panel_params(key, cls)
        for key, params in staged.items():
            if key in self._instances:
                self._instances[key].set_params(params)
            else:
                self._pending_params[key] = params
                self._pending_versions.pop(key, None)
        for key, titles in view.tabs.items():
            if key in self._instances:
                self._instances[key].set_inner_tabs(titles)
            elif key in known:
                self._pending_tabs[key] = tuple(titles)
        return staged

    def apply_view_state(self, view: ViewState) -> None:
        """Put the app into ``view``; a bad view raises ValidationError and changes nothing."""
        if not any(c.key == view.panel for c in self.panel_infos):
            raise ValidationError("panel", f"no panel {view.panel!r}", ", ".join(c.key for c in self.panel_infos))
        i = self.tabs.currentIndex()
        shown = self._instances.get(self.panel_infos[i].key) if i >= 0 else None
        leaving = shown if shown is not None and shown.key != view.panel else None
        with ExitStack() as held:                  # each built panel redraws once, for the whole view
            for panel in list(self._instances.values()):
                held.enter_context(panel.holding())
            self._stage(view)
            if leaving is not None:
                held.enter_context(leaving.deferring())
            self.ctx.scenario.replace(view.scenario, "Open view")
        self.show_panel(view.panel)
        if view.frame is not None:
            self.set_frame(view.frame)
        else:
            self._pending_frame, self._pending_play = None, False

    def set_frame(self, frame: int, play: bool = False) -> None:
        """Go to ``frame`` now, and again once the panel's timeline arrives from its job (its length may
        depend on the result); ``play`` then plays on to the next chapter mark (a tour step)."""
        self._pending_frame = frame
        self._pending_play = play
        if self.ctx.timeline.spec is not None:
            self._place_frame()

    def _place_frame(self) -> None:
        self._placing_frame = True
        try:
            self.ctx.timeline.set_position(self._pending_frame)
        finally:
            self._placing_frame = False
        if self._pending_play:
            self._pending_play = False
            self._pending_frame = None          # the animation moves on from here
            self.ctx.timeline.play_chapter()

    def open_view(self, path: str | Path) -> bool:
        try:
            self.apply_view_state(load_view_state(path))
        except (FileProblem, ValidationError) as exc:
            self.show_error(f"{Path(path).name}: {exc}" if isinstance(exc, ValidationError) else str(exc))
            return False
        self.show_error(None)
        return True

    def open_view_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open view", "", "Saved view (*.json)")
        if path and not self.open_view(path):
            QMessageBox.warning(self, "Could not open the view", self.error_label.text())

    def save_view_dialog(self) -> None:
        cur = self.current_panel()
        path, _ = QFileDialog.getSaveFileName(self, "Save view", f"{cur.key if cur else 'view'}-view.json",
                                              "Saved view (*.json)")
        if path:
            try:
                save_view_state(self.view_state(), path)
            except OSError as exc:
                self.show_error(f"Could not save {path}: {exc}")

    _animation_export: exports.AnimationExport | None = None   # the GIF export under way, if any

    def export(self, fmt: str, path: str | Path, panel: Panel | None = None) -> Path:
        """Export the current (or given) panel; one code path for menu, CLI and self-test.

        A GIF runs as the menu's does (progress dialog, Cancel) and is waited for here; a cancelled
        one raises exports.ExportCancelled."""
        panel = panel or self.current_panel()
        state = self.view_state()
        if panel.key != state.panel:
            state = dataclasses.replace(state, panel=panel.key, frame=None)
        meta = {"panel": panel.key, "scenario": self.ctx.scenario.value.to_json_dict(), "state": state.to_json_dict()}
        if fmt == "png":
            return exports.export_png(panel.export_widget(), path, scale=2.0, state=state.to_json())
        if fmt == "svg":
            return exports.export_svg(panel.export_widget(), path, title=panel.title, state=state.to_json())
        if fmt == "json":
            return exports.export_json(panel.result(), path, meta)
        if fmt == "csv":
            return exports.export_csv(panel.table(), path, state=state.to_json())
        if fmt == "gif":
            return self.export_animation(path, panel).result()
        raise ValidationError("format", f"unknown export format {fmt!r}", "png, svg, csv, json, gif")

    def export_dialog(self, fmt: str) -> None:
        panel = self.current_panel()
        if panel is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, f"Export {fmt.upper()}", f"{panel.key}.{fmt}", f"*.{fmt}")
        if path:
            try:
                if fmt == "gif":
                    self.export_animation(path)     # returns at once; the status bar reports the outcome
                else:
                    self.export(fmt, path)
            except (OSError, ValueError) as exc:
                self.show_error(f"Export failed: {exc}")

    def export_animation(self, path: str | Path, panel: Panel | None = None) -> exports.AnimationExport:
        """Start a GIF export of the panel's timeline and return at once: a progress dialog, modal to
        the window, counts the frames and offers Cancel; the status bar reports the outcome."""
        if self._animation_export is not None and self._animation_export.running:
            raise ValueError("another export is still running")
        panel = panel or self.current_panel()
        if panel is None:
            raise ValueError("no panel to export")
        state = self.view_state()
        state = dataclasses.replace(state, panel=panel.key, frame=None)   # the animation, not a frame
        job = exports.AnimationExport(panel, self.ctx.timeline, path, parent=self,    # ValueError: no animation
                                      state=state.to_json())
        self._animation_export = job
        n, of = job.total, job.timeline_frames
        sampled = f"\n({n} of the timeline's {of} frames, evenly spaced)" if n < of else ""
        dialog = QProgressDialog(f"Exporting frame 1 of {n}{sampled}", "Cancel", 0, n, self)
        dialog.setObjectName("export_progress")
        dialog.setWindowTitle(f"Export {panel.title} as GIF")
        dialog.setWindowModality(Qt.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(job.cancel)

        def progressed(i: int, total: int) -> None:
            if i < total:
                dialog.setLabelText(f"Exporting frame {i + 1} of {total}{sampled}")
            dialog.setValue(i)

        def encoding() -> None:
            dialog.setLabelText(f"Encoding {n} frames as GIF…")
            dialog.setRange(0, 0)                  # busy: the encoder runs on a worker thread

        job.progressed.connect(progressed)
        job.encoding.connect(encoding)
        job.finished.connect(lambda how, detail: self._animation_export_finished(job, dialog, how, detail))
        dialog.show()
        job.start()
        return job

    def _animation_export_finished(self, job: exports.AnimationExport, dialog, how: str, detail) -> None:
        dialog.canceled.disconnect(job.cancel)
        dialog.reset()
        dialog.hide()
        dialog.deleteLater()
        if self._animation_export is job:
            self._animation_export = None
        job.deleteLater()
        if how == "done":
            sampled = f" (sampled from {job.timeline_frames})" if job.total < job.timeline_frames else ""
            self.statusBar().showMessage(f"Exported {job.total} frames{sampled} to {detail}", 15_000)
        elif how == "cancelled":
            self.statusBar().showMessage("Export cancelled", 15_000)
        else:
            self.show_error(f"Export failed: {detail}")

    # --- presentation ------------------------------------------------------------------------
    def toggle_presenter(self) -> None:
        self.set_presenter(self.presenter_action.isChecked())

    def set_presenter(self, on: bool, full_screen: bool = True) -> None:
        """Presenter mode: light theme, large text, full screen, and the panel gets the room: the
        explanation is tabbed under the scenario editor in one narrow side column. Leaving it
        restores the docks exactly as they were."""
        self.presenter_action.setChecked(on)
        scenario = self.findChild(QDockWidget, "scenario_dock")
        lesson = self.findChild(QDockWidget, "lesson_dock")
        if on and self._before_presenter is None:
            self.lessons.unfold()            # the layout to go back to is the unfolded one
            before = self.ctx.theme.font_scale
            self._before_presenter = (self.saveState(), self.ctx.theme.name, before)
            # the user's own scale (--font-scale) if they chose one, else the presenter's
            self._presenter_base = before if abs(before - 1.0) > 1e-6 else PRESENTER_SCALE
            self.ctx.set_theme("light", self.presenter_scale())
            if scenario.isVisible() and lesson.isVisible() and not lesson.isFloating():
                self.tabifyDockWidget(scenario, lesson)
                scenario.raise_()
            if full_screen:
                self.showFullScreen()
            QApplication.processEvents()    # the new geometry first, then the column's share of it
            self.fit_presenter()
        elif not on and self._before_presenter is not None:
            state, theme, scale = self._before_presenter
            self._before_presenter = None
            self.ctx.set_theme(theme, scale)
            if self.isFullScreen():
                self.showNormal()
            self.restoreState(state)
        self.lessons.presenter_changed()

    def presenter_scale(self) -> float:
        """During a tour, presenter text in step with the screen's height: the same share of it at 800
        and at 1080 lines (at a fixed size, 1080p text would be two-thirds as large against the screen);
        the step's view has the whole panel area then. Outside a tour a whole panel must fit the screen,
        so the text keeps its 800-line size."""
        grow = max(self.height(), 1) / PRESENTER_HEIGHT if self.tour.active else 1.0
        return self._presenter_base * max(1.0, grow)

    def fit_presenter(self) -> None:
        """After a resize in presenter mode: text scaled to the new height, the side column its share."""
        if not self.presenting:
            return
        scale = self.presenter_scale()
        if abs(self.ctx.theme.scaled(scale).font_scale - self.ctx.theme.font_scale) > 0.02:
            self.ctx.set_theme(font_scale=scale)
        scenario = self.findChild(QDockWidget, "scenario_dock")
        self.resizeDocks([scenario], [max(self.editor.minimumWidth(), int(self.width() * PRESENTER_SIDE))],
                         Qt.Horizontal)

    def scale_text(self, step: float) -> None:
        """Ctrl+= / Ctrl+-: larger or smaller text; in presenter mode it stays in step with the screen."""
        if self.presenting:
            self._presenter_base = max(0.6, self._presenter_base + step)
            self.ctx.set_theme(font_scale=self.presenter_scale())
        else:
            self.ctx.set_theme(font_scale=self.ctx.theme.font_scale + step)

    @property
    def presenting(self) -> bool:
        return self._before_presenter is not None

    def show_tour_page(self) -> None:
        """Leave the start page for the panels (a tour step, a panel chosen)."""
        self.lessons.show_panels()

    def toggle_full_screen(self) -> None:
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    def _apply_theme(self, theme) -> None:
        """Application-wide font, palette and stylesheet, set only when they change: each set
        re-polishes every widget the application has."""
        app = QApplication.instance()
        font = app.font()
        resized = font.pointSizeF() != theme.point_size
        if resized:
            font.setPointSizeF(theme.point_size)
            app.setFont(font)  # before the stylesheet: only its re-polish gives styled widgets the size
        palette = qt_palette(theme)
        if app.palette() != palette:
            app.setPalette(palette)
        css = stylesheet(theme)
        if resized or app.styleSheet() != css:
            app.setStyleSheet(css)

    def set_device(self, device: str, label: str | None = None) -> None:
        self.ctx.device = device
        self.device_label.setText(f"Compute: {label or ('CPU' if device == 'cpu' else device)}")

    def show_error(self, text: str | None) -> None:
        self.error_label.setText(("⚠ " + text) if text else "")
        if text:
            log.error(text)

    def _update_title(self) -> None:
        s = self.ctx.scenario.value
        self.setWindowTitle(f"AI Systems Explorer — {s.arch.label}, {s.n_gpus} × {s.gpu}")

    # --- layout memory -------------------------------------------------------------------------
    def _restore_layout(self) -> None:
        """The remembered layout, panel and knobs; a setting of the wrong type or a broken one is
        skipped with a warning (the app always starts; the settings file is rewritten at close)."""
        st = settings()
        tidy_config_folders(st)
        skipped: list[str] = []
        for key, restore in (("geometry", self.restoreGeometry), ("state", self.restoreState)):
            value = st.value(key)
            if value is None:
                continue
            if not isinstance(value, (QByteArray, bytes)) or not restore(QByteArray(value)):
                skipped.append(key)
        saved = st.value("view")
        if saved:   # the panels' own knobs and tabs, checked as each panel is built (no imports at start-up)
            try:
                if not isinstance(saved, str):
                    raise ValidationError("view", f"expected the text of a view, got {type(saved).__name__}")
                view = ViewState.from_json(saved)
            except ValidationError as exc:
                log.warning("the remembered panel settings were not restored: %s", exc)
                skipped.append("view")
            else:
                known = {c.key for c in self.panel_infos}
                self._pending_params.update({k: dict(v) for k, v in view.params.items() if k in known})
                self._pending_versions.update({k: view.params_versions[k] for k in view.params if k in known})
                self._pending_tabs.update({k: tuple(v) for k, v in view.tabs.items() if k in known})
        tab = st.value("tab")
        if tab is not None and not isinstance(tab, str):
            skipped.append("tab")
            tab = None
        if tab and tab != "start":
            for i, c in enumerate(self.panel_infos):
                if c.key == tab:
                    self.tabs.setCurrentIndex(i)
        else:          # a first start, or the start page last time: show what the app can teach
            self.lessons.show_start()
        if skipped:
            note = f"Some remembered settings were broken and not used: {', '.join(skipped)} ({st.fileName()})"
            log.warning(note)
            self.statusBar().showMessage(note, 15_000)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.lessons.nav.fit_width(event.size().width())
        if self.presenting and event.oldSize().height() != event.size().height():
            QTimer.singleShot(0, self, self.fit_presenter)     # once the resize has settled

    def closeEvent(self, event) -> None:  # noqa: N802
        self.lessons.prefetch.stop()
        for p in self.panels:
            p.cancel_jobs()
        if self.remember_layout:
            if self._before_presenter is not None:   # remember the working layout, not the presenter one
                self.set_presenter(False)
            st = settings()
            st.setValue("geometry", self.saveGeometry())
            st.setValue("state", self.lessons.layout_state())
            cur = self.current_panel()
            st.setValue("tab", "start" if self.lessons.on_start_page else (cur.key if cur else ""))
            st.setValue("view", self.view_state().to_json())
            st.sync()
        super().closeEvent(event)
