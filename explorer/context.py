"""What every panel is handed: the scenario model, the shared timeline, the theme and the device."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engines.core.scenario import Scenario
from explorer.gc_guard import install_main_thread_gc
from explorer.scenario_model import ScenarioModel
from explorer.theme import THEMES, Theme
from explorer.timeline import TimelineModel


class AppContext(QObject):
    theme_changed = Signal(object)

    def __init__(self, scenario: Scenario | None = None, device: str = "cpu", theme: str = "light",
                 font_scale: float = 1.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        install_main_thread_gc()     # before any worker can run: collect cycles on this thread only
        self.scenario = ScenarioModel(scenario, self)
        self.timeline = TimelineModel(self)
        self.device = device
        self._theme = THEMES[theme].scaled(font_scale)

    def close(self) -> None:
        """Stop the player and drop the undo history before this context is let go.

        The history's commands hold panels, and Qt owns them through the stack: left for Python's
        collector, the context, its stack and the commands are freed in no set order, and the
        stack's destructor then deleted commands that were already gone (a crash in
        ``QUndoStack::clear``)."""
        self.timeline.stop()
        self.scenario.undo_stack.clear()

    @property
    def theme(self) -> Theme:
        return self._theme

    def set_theme(self, name: str | None = None, font_scale: float | None = None) -> None:
        base = THEMES[name] if name else THEMES[self._theme.name]
        self._theme = base.scaled(self._theme.font_scale if font_scale is None else font_scale)
        self.theme_changed.emit(self._theme)
