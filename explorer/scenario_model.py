"""The evented scenario model every panel binds to (napari EventedModel / glue echo style).

Holds one immutable :class:`engines.core.scenario.Scenario`. ``update(**changes)`` validates the whole
new scenario, swaps it in, pushes an undo step and emits once: ``changed(frozenset_of_fields)``
plus one per-field signal on ``events`` for each field that really changed. A preset load is a
single update, so panels redraw once, not N times.
"""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from engines.core.errors import ValidationError
from engines.core.scenario import FIELD_NAMES, Scenario
from explorer.files import FileProblem, atomic_write_text, read_text_limited

# One Signal(object) per scenario field, created from the dataclass so the two never drift apart.
ScenarioEvents = type("ScenarioEvents", (QObject,), {f.name: Signal(object) for f in fields(Scenario)})


class _Edit(QUndoCommand):
    def __init__(self, model: "ScenarioModel", old: Scenario, new: Scenario, text: str) -> None:
        super().__init__(text)
        self._model, self._old, self._new = model, old, new
        self._first = True

    def redo(self) -> None:
        if self._first:  # already applied by update(); QUndoStack.push calls redo once
            self._first = False
            return
        self._model._swap(self._new)

    def undo(self) -> None:
        self._model._swap(self._old)


class ScenarioModel(QObject):
    changed = Signal(object)  # frozenset of changed field names

    def __init__(self, scenario: Scenario | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._value = scenario or Scenario()
        self.events = ScenarioEvents(self)
        self.undo_stack = QUndoStack(self)

    @property
    def value(self) -> Scenario:
        return self._value

    def update(self, _label: str | None = None, **changes) -> frozenset[str]:
        """Validate and apply ``changes`` as one undoable step; raises ValidationError if invalid."""
        new = self._value.with_changes(**changes)
        return self.replace(new, _label or "Edit " + ", ".join(sorted(changes)))

    def try_update(self, **changes) -> str | None:
        """Like :meth:`update`, but returns the error text instead of raising (for inline display)."""
        try:
            self.update(**changes)
        except ValidationError as exc:
            return str(exc)
        return None

    def replace(self, new: Scenario, label: str = "Replace scenario") -> frozenset[str]:
        old = self._value
        diff = self._diff(old, new)
        if not diff:
            return diff
        self._swap(new)
        self.undo_stack.push(_Edit(self, old, new, label))
        return diff

    def _diff(self, old: Scenario, new: Scenario) -> frozenset[str]:
        return frozenset(n for n in FIELD_NAMES if getattr(old, n) != getattr(new, n))

    def _swap(self, new: Scenario) -> None:
        diff = self._diff(self._value, new)
        self._value = new
        for name in sorted(diff):
            getattr(self.events, name).emit(getattr(new, name))
        if diff:
            self.changed.emit(diff)

    # --- files -------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Atomic: the previous file survives a crash mid-write."""
        atomic_write_text(path, self._value.to_json() + "\n")

    def load(self, path: str | Path) -> frozenset[str]:
        """Load a scenario file; on any problem raise with an explanation and change nothing."""
        text = read_text_limited(path)
        try:
            new = Scenario.from_json(text)
        except ValidationError as exc:
            raise FileProblem(f"{Path(path).name}: {exc}") from None
        return self.replace(new, f"Load {Path(path).name}")
