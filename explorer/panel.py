"""The base every topic panel derives from, and the discovery of panels.

A panel declares what it reads from the scenario, draws engine results, and offers its timeline,
exports and explanation to the shell. It never computes domain numbers itself.
"""
from __future__ import annotations

import importlib
import pkgutil
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Callable, ClassVar, Iterator

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QIcon, QUndoCommand
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from engines.core.assets import asset_path
from engines.core.errors import ValidationError
from engines.core.scenario import Scenario
from explorer.binder import param_slider
from explorer.tasks import Debounce, TaskRunner
from explorer.theme import Theme
from explorer.timeline import TimelineSpec
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.shown_draws import DrawWhenShown
from explorer.ui.wait_veil import WaitVeil

__all__ = ["Panel", "PanelInfo", "TimelineSpec", "discover_panels", "registered_panels"]


class Panel(QWidget):
    key: ClassVar[str] = ""
    title: ClassVar[str] = ""
    order: ClassVar[int] = 100
    icon: ClassVar[str] = ""
    reads: ClassVar[frozenset[str]] = frozenset()
    lesson: ClassVar[str] = ""
    Params: ClassVar[type | None] = None   # the topic's engines.core.params.ParamsBase subclass, if it has knobs

    timeline_changed = Signal()
    params_changed = Signal(object)        # the new Params
    idle = Signal()                        # the last running job has delivered and its result is drawn

    def __init__(self, ctx) -> None:
        super().__init__()
        self.ctx = ctx
        self.tasks = TaskRunner(self)
        self._jobs: dict[str, TaskRunner] = {"main": self.tasks}
        self._veils: dict[int, WaitVeil] = {}    # views greyed while a job computes their next result
        self._watch(self.tasks)
        self._debounces: list[Debounce] = []
        self._params = self.Params() if self.Params is not None else None
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(8, 8, 8, 8)
        self.setAccessibleName(self.title)
        self.defer_when_hidden = False  # the main window sets this: hidden tabs update when shown
        self._leaving = False           # see ``deferring``
        self._dirty = False
        self._bound = False
        self._text_size = ctx.theme.point_size   # the size plot labels without a font of their own have
        self._views: dict[str, QWidget] = {}
        self.sliders: dict[str, QWidget] = {}    # the Params sliders, by field (slider_row)
        self._held: dict | None = None            # redraws waiting for the view being applied (``holding``)
        self._shown_draws = DrawWhenShown(self)

    # --- shell wiring ----------------------------------------------------------------------
    def bind(self) -> None:
        """Connect to the scenario and theme, and draw the current scenario once."""
        if self._bound:
            return
        self._bound = True
        self.ctx.scenario.changed.connect(self._scenario_changed)
        self.ctx.theme_changed.connect(self.apply_theme)
        self.apply_theme(self.ctx.theme)
        self.set_scenario(self.ctx.scenario.value)

    def unbind(self) -> None:
        if self._bound:
            self._bound = False
            for timer in self._debounces:
                timer.stop()
            self.cancel_jobs()
            self.ctx.scenario.changed.disconnect(self._scenario_changed)
            self.ctx.theme_changed.disconnect(self.apply_theme)

    def _scenario_changed(self, diff: frozenset[str]) -> None:
        if not (diff & self.reads):
            return
        if self.defer_when_hidden and (not self.isVisible() or self._leaving):
            self._dirty = True
            return
        self.set_scenario(self.ctx.scenario.value)

    @contextmanager
    def deferring(self) -> Iterator[None]:
        """Scenario changes wait for the next show, as when hidden: the window is about to show another
        panel for this scenario (a view or tour step), and this one would compute for it in vain (the
        memory panel's 30-50 s PyTorch check ran on behind the next lessons' tours)."""
        self._leaving = True
        try:
            yield
        finally:
            self._leaving = False

    def showEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self._dirty:
            self._dirty = False
            self.set_scenario(self.ctx.scenario.value)
        super().showEvent(event)

    @property
    def theme(self) -> Theme:
        return self.ctx.theme

    def lesson_markdown(self) -> str:
        if not self.lesson:
            return ""
        try:
            return asset_path("lessons", self.lesson).read_text(encoding="utf-8")
        except OSError:
            return f"*(lesson file {self.lesson} is missing)*"

    # --- job slots ------------------------------------------------------------------------
    def jobs(self, name: str = "main") -> TaskRunner:
        """The job slot ``name`` (made on first use): a new run in a slot cancels its previous one;
        the shell cancels every slot together on teardown and on close."""
        if name not in self._jobs:
            self._jobs[name] = TaskRunner(self)
            self._watch(self._jobs[name])
        return self._jobs[name]

    # --- honest waiting: a view whose result is being computed says so -------------------------
    def waits_for_jobs(self, view: QWidget) -> WaitVeil:
        """Grey ``view`` with a "computing… N s" label while any of this panel's job slots runs, so
        the last result is not read as the current one (a tour does this for each step's focus view)."""
        veil = next((v for v in self._each_veil() if v.parentWidget() is view), None)
        if veil is None:
            veil = self._veils[id(view)] = WaitVeil(view)
        if self.computing:
            veil.begin()
        return veil

    @property
    def computing(self) -> bool:
        """A job slot has a result still to deliver."""
        return any(r.running for r in self._jobs.values())

    def _watch(self, runner: TaskRunner) -> None:
        runner.started.connect(self._job_started)
        runner.finished.connect(self._job_finished)

    def _each_veil(self):
        for key, veil in list(self._veils.items()):
            try:
                veil.objectName()
            except RuntimeError:                 # deleted with its view
                del self._veils[key]
                continue
            yield veil

    def _job_started(self, _label: str = "") -> None:
        for veil in self._each_veil():
            veil.begin()

    def _job_finished(self, _how: str = "") -> None:
        QTimer.singleShot(0, self, self._jobs_ended)   # a result may start the next job: look after it is drawn

    def _jobs_ended(self) -> None:
        if not self.computing:
            for veil in self._each_veil():
                veil.end()
            self.idle.emit()

    def debounce(self, start, delay_ms: int) -> Debounce:
        """A timer that calls ``start`` once edits have been quiet for ``delay_ms``; unbinding stops it."""
        timer = Debounce(self, start, delay_ms)
        self._debounces.append(timer)
        return timer

    def cancel_jobs(self) -> None:
        for runner in self._jobs.values():
            runner.cancel()

    @property
    def busy(self) -> bool:
        """A debounce holds back work, or a job slot's worker has not ended (or its result is not drawn)."""
        return any(t.isActive() for t in self._debounces) or any(r.busy for r in self._jobs.values())

    def settle(self, timeout_ms: int = 120_000) -> bool:
        """Bring the view up to date with what has been asked of it: start what the panel's debounces
        hold back, wait until every slot's worker has ended (a cancelled one too) and its result has
        been drawn on the GUI thread (views on hidden tabs too), and repeat while that sets off more
        (a result that starts the next job). The one wait for screenshots, exports, the self-test,
        tours, benchmarks and tests; False if work was still pending after ``timeout_ms``."""
        from PySide6.QtCore import QCoreApplication, QElapsedTimer, QThread

        clock = QElapsedTimer()
        clock.start()
        quiet = 0
        while True:
            self.flush_pending()
            QCoreApplication.processEvents()   # deliver results; zero-delay timers a result armed run
            self._shown_draws.flush()          # views on hidden tabs too: what waits on this reads them
            busy = self.busy
            quiet = 0 if busy else quiet + 1
            if quiet >= 2:                      # idle across a second pass: nothing it drew set off more
                return True
            if clock.elapsed() >= timeout_ms:
                return False
            if busy:
                QThread.msleep(5)

    def draw_when_shown(self, view: QWidget, draw: Callable[[], None], part: str = "result") -> None:
        """``draw()`` now if ``view`` is showing, else when it is shown (see ``explorer.ui.shown_draws``):
        the latest call per ``part`` counts. ``settle()`` makes the waiting ones."""
        self._shown_draws.draw(view, draw, part)

    # --- pages of knobs above a view ------------------------------------------------------------
    def slider_row(self, names, extra=()) -> FlowLayout:
        """A wrapping row of sliders for these ``Params`` fields, then ``extra`` widgets; the sliders
        are kept in ``self.sliders`` by field name (for the binder, and for tours to point at)."""
        row = FlowLayout()
        for name in names:
            self.sliders[name] = param_slider(self.Params, name)
            row.addWidget(self.sliders[name])
        for widget in extra:
            row.addWidget(widget)
        return row

    def slider_page(self, names, view: QWidget, extra=(), margins: int | None = None) -> QWidget:
        """A tab page: :meth:`slider_row` above ``view``, which takes the rest of the height."""
        page = QWidget()
        lay = QVBoxLayout(page)
        if margins is not None:
            lay.setContentsMargins(margins, margins, margins, margins)
        lay.addLayout(self.slider_row(names, extra))
        lay.addWidget(view, 1)
        return page

    # --- one redraw for a whole view ---------------------------------------------------------
    @contextmanager
    def holding(self) -> Iterator[None]:
        """Apply several changes as one: a view's parameters, scenario and tabs arrive one after the
        other, and each would otherwise recompute and redraw (three times on a compute tour step).
        Work passed to ``once`` inside runs when the outermost ``holding`` ends, each call once; then
        the views showing draw (``draw_when_shown``), each once, the rest when shown."""
        outer = self._held is None
        if outer:
            self._held = {}
            self._shown_draws.hold()
        try:
            yield
        finally:
            if outer:
                calls, self._held = self._held, None
                try:
                    for call in calls.values():
                        call()
                finally:
                    self._shown_draws.release()

    def once(self, call: Callable[[], None]) -> None:
        """``call()`` now, or once when the current ``holding`` ends (calls of the same bound method
        count as one and keep the place of the first)."""
        if self._held is None:
            call()
        else:
            self._held.setdefault(getattr(call, "__func__", call), call)

    # --- parameters: the panel's own knobs, as one validated, undoable value ---------------
    @property
    def params(self):
        return self._params

    def set_params(self, params, record: bool = True) -> None:
        """Show ``params`` (a ``Params``); ``record`` pushes an undo step shared with scenario edits."""
        if self.Params is None or params == self._params:
            return
        if not isinstance(params, self.Params):
            raise ValidationError("params", f"expected {self.Params.__qualname__}, got {type(params).__name__}")
        old, self._params = self._params, params
        if record:
            self.ctx.scenario.undo_stack.push(_ParamsEdit(self, old, params))
        self._params_swapped(old, params)

    def update_params(self, **changes) -> str | None:
        """Apply ``changes`` as one undoable step; the error text (field and range) if invalid."""
        try:
            self.set_params(self.Params.from_dict({**self._params.to_dict(), **changes}))
        except ValidationError as exc:
            return str(exc)
        return None

    def _params_swapped(self, old, new) -> None:
        self.params_changed.emit(new)
        # field by field, without to_dict(): a deep copy of both values per field cost the law panel's
        # 45 fields tens of milliseconds on every tour step
        self.params_updated(frozenset(f.name for f in fields(new) if getattr(old, f.name) != getattr(new, f.name)))

    def params_updated(self, changed: frozenset[str]) -> None:
        """Redraw for new parameters (``changed`` names the fields); widgets are already in step."""

    # --- inner tabs -------------------------------------------------------------------------
    def tab_widgets(self) -> list[QTabWidget]:
        """The panel's tab widgets in creation order (a saved view records each one's current tab)."""
        return self.findChildren(QTabWidget)

    def inner_tabs(self) -> tuple[str, ...]:
        """Each tab widget's current tab title, as shown ("GPTQ & AWQ", not Qt's "GPTQ && AWQ")."""
        return tuple(_shown(w.tabText(w.currentIndex())) for w in self.tab_widgets())

    def set_inner_tabs(self, titles) -> None:
        """Select each tab widget's tab by title, as shown or as Qt writes it (unknown titles are
        left as they are)."""
        for widget, title in zip(self.tab_widgets(), titles):
            for i in range(widget.count()):
                if _shown(widget.tabText(i)) == _as_shown(title):
                    widget.setCurrentIndex(i)
                    break

    def flush_pending(self) -> None:
        """Start now what the panel's debounces (``debounce``) would start in a moment: a tour step or
        an opened view is one change, not a burst of slider moves, and should not wait them out."""
        for timer in self._debounces:
            timer.flush()

    # --- named views: what a tour step can focus on or point at ------------------------------
    def name_view(self, name: str, widget: QWidget, title: str = "") -> QWidget:
        """Give ``widget`` (a chart, a table, a group of controls) a stable name tour files can use."""
        self._views[name] = widget
        widget.setProperty("view_title", title or name)
        return widget

    def views(self) -> dict[str, QWidget]:
        """The named views, in the order they were named."""
        return dict(self._views)

    def view_widget(self, name: str) -> QWidget | None:
        """A named view, else the control bound to the parameter ``name`` (None if neither)."""
        if name in self._views:
            return self._views[name]
        binder = getattr(self, "binder", None)
        return binder.widgets.get(name) if binder is not None else None

    # --- to override ---------------------------------------------------------------------
    def set_scenario(self, scenario: Scenario) -> None:
        """Redraw for a new scenario (only called when a field in ``reads`` changed)."""

    def timeline(self) -> TimelineSpec | None:
        return None

    def show_frame(self, index: int) -> None:
        """Draw timeline frame ``index``."""

    def result(self) -> object:
        """The engine result behind the current view (exported as JSON)."""
        return None

    def table(self) -> list[dict]:
        """Flat rows of the current result (exported as CSV)."""
        return []

    def export_widget(self) -> QWidget:
        """The widget PNG/SVG exports render (default: the whole panel)."""
        return self

    def apply_theme(self, theme: Theme) -> None:
        """Re-style plots for the theme; subclasses call super() then recolour their items."""
        from explorer.ui.widgets import style_plot

        try:
            import pyqtgraph as pg
        except ImportError:  # pragma: no cover
            return
        for plot in self.findChildren(pg.PlotWidget):
            style_plot(plot, theme)
            _rescale_default_labels(plot, self._text_size, theme.point_size)
        self._text_size = theme.point_size

    def selftest(self) -> None:
        """Drive the main controls once; raise on any error. Default: redraw and walk the timeline."""
        self.set_scenario(self.ctx.scenario.value)

    @classmethod
    def planned_jobs(cls, scenario: Scenario, params, tabs: tuple[str, ...], device: str) -> list:
        """The engine calls (``EngineCall``) this panel's jobs will make for a view it is not showing yet,
        built by the same functions its jobs use: a tour computes the next step's into the cache while
        this one is shown. Default: none (the panel's jobs are cheap or not cacheable)."""
        return []


def _shown(title: str) -> str:
    """A tab title as the user reads it: Qt doubles a literal "&" (a single one marks a shortcut)."""
    return title.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _as_shown(title: str) -> str:
    """A title given either way: Qt's form (with "&&") or as shown."""
    return _shown(title) if "&&" in title else title


def _rescale_default_labels(plot, old_size: float, new_size: float) -> None:
    """A TextItem given no font keeps the application font of the moment it was made: move those
    (and only those: a label with a deliberate size keeps it) to the new theme's size."""
    import pyqtgraph as pg

    if abs(old_size - new_size) < 1e-6:
        return
    for added in plot.getPlotItem().items:
        item = getattr(added, "label", None) if isinstance(added, pg.InfiniteLine) else added   # a line's label too
        if isinstance(item, pg.TextItem):
            font = item.textItem.font()
            if abs(font.pointSizeF() - old_size) < 1e-6:
                font.setPointSizeF(new_size)
                item.setFont(font)


class _ParamsEdit(QUndoCommand):
    def __init__(self, panel: Panel, old, new) -> None:
        before = old.to_dict()      # once: a deep copy per field cost a tour step tens of milliseconds
        super().__init__(f"{panel.title}: " + ", ".join(
            sorted(k for k, v in new.to_dict().items() if before.get(k) != v)))
        self._panel, self._old, self._new = panel, old, new
        self._first = True

    def redo(self) -> None:
        if self._first:    # already applied by set_params; QUndoStack.push calls redo once
            self._first = False
            return
        self._panel.set_params(self._new, record=False)

    def undo(self) -> None:
        self._panel.set_params(self._old, record=False)


@dataclass(frozen=True)
class PanelInfo:
    """What the window needs to show a tab before the panel's module is imported."""

    module: str
    key: str
    title: str
    order: int
    cls: type[Panel] | None = None  # already imported (tests pass classes directly)

    @property
    def icon(self) -> str:
        return (self.cls.icon if self.cls is not None and self.cls.icon else "") or f"{self.key}.svg"

    def load(self) -> type[Panel]:
        """Import the panel module (once) and return its ``PANEL`` class."""
        if self.cls is not None:
            return self.cls
        cls = getattr(importlib.import_module(f"panels.{self.module}"), "PANEL")
        if cls.key != self.key:
            raise RuntimeError(f"panels.REGISTRY says {self.module} is {self.key!r}, its PANEL says {cls.key!r}")
        object.__setattr__(self, "cls", cls)
        return cls

    @classmethod
    def of(cls, panel_cls: type[Panel]) -> "PanelInfo":
        return cls(panel_cls.__module__.rsplit(".", 1)[-1], panel_cls.key, panel_cls.title, panel_cls.order, panel_cls)


def panel_icon(name: str) -> QIcon:
    """A tab's icon (``PanelInfo.icon``) from assets/icons; empty if the file is missing."""
    path = asset_path("icons", name)
    return QIcon(str(path)) if path.exists() else QIcon()


def registered_panels() -> list[PanelInfo]:
    """The tabs, from ``panels.REGISTRY``, without importing any panel module."""
    import panels

    return sorted((PanelInfo(*row) for row in panels.REGISTRY), key=lambda i: (i.order, i.key))


def discover_panels() -> list[type[Panel]]:
    """Every ``PANEL`` class in the modules of the ``panels`` package (skipping ``_private`` ones)."""
    import panels

    found: list[type[Panel]] = []
    for info in pkgutil.iter_modules(panels.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"panels.{info.name}")
        cls = getattr(module, "PANEL", None)
        if isinstance(cls, type) and issubclass(cls, Panel):
            found.append(cls)
    return sorted(found, key=lambda c: (c.order, c.key))
