"""The base every topic panel derives from, and the discovery of panels.

A panel declares what it reads from the scenario, draws engine results, and offers its timeline,
exports and explanation to the shell. It never computes domain numbers itself.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import ClassVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from engines.assets import asset_path
from engines.scenario import Scenario
from explorer.tasks import TaskRunner
from explorer.theme import Theme
from explorer.timeline import TimelineSpec

__all__ = ["Panel", "PanelInfo", "TimelineSpec", "discover_panels", "registered_panels"]


class Panel(QWidget):
    key: ClassVar[str] = ""
    title: ClassVar[str] = ""
    order: ClassVar[int] = 100
    icon: ClassVar[str] = ""
    reads: ClassVar[frozenset[str]] = frozenset()
    lesson: ClassVar[str] = ""

    timeline_changed = Signal()

    def __init__(self, ctx) -> None:
        super().__init__()
        self.ctx = ctx
        self.tasks = TaskRunner(self)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(8, 8, 8, 8)
        self.setAccessibleName(self.title)
        self.defer_when_hidden = False  # the main window sets this: hidden tabs update when shown
        self._dirty = False
        self._bound = False
        self._text_size = ctx.theme.point_size   # the size plot labels without a font of their own have

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
            self.tasks.cancel()
            self.ctx.scenario.changed.disconnect(self._scenario_changed)
            self.ctx.theme_changed.disconnect(self.apply_theme)

    def _scenario_changed(self, diff: frozenset[str]) -> None:
        if not (diff & self.reads):
            return
        if self.defer_when_hidden and not self.isVisible():
            self._dirty = True
            return
        self.set_scenario(self.ctx.scenario.value)

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
        from explorer.widgets import style_plot

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


def _rescale_default_labels(plot, old_size: float, new_size: float) -> None:
    """A TextItem given no font keeps the application font of the moment it was made: move those
    (and only those: a label with a deliberate size keeps it) to the new theme's size."""
    import pyqtgraph as pg

    if abs(old_size - new_size) < 1e-6:
        return
    for item in plot.getPlotItem().items:
        if isinstance(item, pg.TextItem):
            font = item.textItem.font()
            if abs(font.pointSizeF() - old_size) < 1e-6:
                font.setPointSizeF(new_size)
                item.setFont(font)


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
