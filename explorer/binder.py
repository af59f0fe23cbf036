"""Bind declared fields to widgets by name: one place instead of blockSignals loops.

A panel's ``Params`` and the shared scenario declare their fields the same way
(:func:`engines.core.params.param`: label, unit, range or choices), and one binder keeps a set of
controls and such a value in step both ways. A widget edit becomes an update (``panel.update_params``
or ``ScenarioModel.try_update``: an undoable step; a bad value shows its reason and changes nothing);
a new value from anywhere (undo, a saved view, a tour step, a preset) is written back into the
widgets without re-emitting. Controls can be built from the field's declaration
(:func:`param_slider`, :func:`spin_box`, :func:`choice_combo`, :func:`check_box`), so label, unit and
range have one source. :func:`quiet` is the one way to set a control that is not a declared field
without its signals firing.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from PySide6.QtCore import QObject, QSignalBlocker
from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from engines.core.errors import ValidationError
from engines.core.params import declared_fields, spec_of
from explorer.ui.widgets import LabeledSlider


@contextmanager
def quiet(*objects: QObject) -> Iterator[None]:
    """Set ``objects`` from a value (not the user) inside this block: their signals do not fire, so
    a view that mirrors a value does not echo it back as an edit."""
    blockers = [QSignalBlocker(o) for o in objects]
    try:
        yield
    finally:
        for b in blockers:
            b.unblock()


def fields_of(params_cls) -> list[str]:
    """The declared (``param``) fields of a Params class (or the scenario), in declaration order."""
    return declared_fields(params_cls)


def param_slider(params_cls, name: str, label: str | None = None) -> LabeledSlider:
    """A :class:`LabeledSlider` with the label, range, step and unit the field declares."""
    m = params_cls.spec(name)
    slider = LabeledSlider(label or m["label"], m["lo"], m["hi"], getattr(params_cls(), name), m["step"],
                           m["decimals"], m["unit"])
    if m["tip"]:
        slider.setToolTip(m["tip"])
    return slider


def spin_box(cls, name: str) -> QSpinBox | QDoubleSpinBox:
    """A spin box with the range, step, decimals and unit field ``name`` of ``cls`` declares; it
    commits on Enter or focus loss, not on every keystroke."""
    m = spec_of(cls, name)
    if isinstance(cls.__dataclass_fields__[name].default, int):
        spin = QSpinBox()
        spin.setRange(int(m["lo"]), int(m["hi"]))
    else:
        spin = QDoubleSpinBox()
        spin.setDecimals(m["decimals"])
        lo = m["lo"] + 10.0 ** -m["decimals"] if m["lo_open"] else m["lo"]   # the control never shows lo itself
        spin.setRange(lo, m["hi"])
    spin.setSingleStep(m["step"])
    if m["unit"]:
        spin.setSuffix(f" {m['unit']}")
    spin.setKeyboardTracking(False)
    spin.setToolTip(m["tip"] or m["label"])
    return spin


def choice_labels(cls, name: str) -> dict:
    """``{value: label}`` for choice field ``name``: the declared labels, else the values as text."""
    m = spec_of(cls, name)
    return dict(m["choice_labels"] or {c: str(c) for c in m["choices"]})


def choice_combo(cls, name: str, combo_cls: type[QComboBox] = QComboBox) -> QComboBox:
    """A combo box listing the declared choices of field ``name`` by their labels (value as item data)."""
    combo = combo_cls()
    for value, text in choice_labels(cls, name).items():
        combo.addItem(text, value)
    m = spec_of(cls, name)
    combo.setToolTip(m["tip"] or m["label"])
    return combo


def check_box(cls, name: str) -> QCheckBox:
    """A check box carrying the field's label as its text and its tip as the tooltip."""
    m = spec_of(cls, name)
    box = QCheckBox(m["label"])
    box.setToolTip(m["tip"] or m["label"])
    return box


class ParamBinder:
    """Keeps ``widgets`` (field name → control) and ``panel.params`` in step both ways.

    ``choices`` gives a combo's ``{value: label}`` where the field declares none; ``error`` receives
    the result of each edit (``None`` or the reason), ``field_error`` the field's name with it."""

    def __init__(self, panel, widgets: Mapping[str, QWidget], choices: Mapping[str, Mapping] | None = None,
                 error: Callable[[str | None], None] | None = None,
                 field_error: Callable[[str, str | None], None] | None = None) -> None:
        self.panel, self.widgets = panel, dict(widgets)
        self.choices = {k: dict(v) for k, v in (choices or {}).items()}   # field → {value: label}
        for name in self.widgets:
            if name not in self.choices:
                declared = self._declared_labels(name)
                if declared:
                    self.choices[name] = declared
        error = error or (lambda _text: None)
        self.field_error = field_error or (lambda _name, text: error(text))
        for name, w in self.widgets.items():
            self._connect(name, w)
        self._watch()
        self.show(self._value())

    # --- what is bound: a panel's params (a subclass binds something else) ----------------------
    def _value(self):
        return self.panel.params

    def _update(self, **changes) -> str | None:
        return self.panel.update_params(**changes)

    def _watch(self) -> None:
        self.panel.params_changed.connect(self.show)

    def _declared_labels(self, name: str) -> dict | None:
        try:
            return spec_of(type(self._value()), name).get("choice_labels")
        except ValidationError:   # a field without a declaration: no labels
            return None

    def _connect(self, name: str, w: QWidget) -> None:
        def send(value) -> None:
            self.field_error(name, self._update(**{name: value}))

        current = getattr(self._value(), name)
        integer = isinstance(current, int) and not isinstance(current, bool)
        if isinstance(w, LabeledSlider):
            w.valueCommitted.connect(lambda v: send(int(round(v)) if integer else float(v)))
        elif isinstance(w, QComboBox):
            w.currentTextChanged.connect(lambda t: send(self._value_of(name, t)))
        elif isinstance(w, QCheckBox):
            w.toggled.connect(lambda on: send(bool(on)))
        elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
            w.valueChanged.connect(lambda v: send(int(v) if integer else float(v)))
        else:
            raise TypeError(f"no binding for {type(w).__name__} ({name})")

    def _value_of(self, name: str, text: str):
        labels = self.choices.get(name)
        return next((k for k, v in labels.items() if v == text), text) if labels else text

    def set_choice(self, name: str, value, label: str) -> None:
        """Add a choice to a combo-bound field, or rename one (a file tensor opened, a label that
        follows the scenario); the combo shows the current value's label afterwards."""
        labels = self.choices.setdefault(name, {})
        combo = self.widgets[name]
        with quiet(combo):
            if value in labels and combo.findText(labels[value]) >= 0:
                combo.setItemText(combo.findText(labels[value]), label)
            else:
                combo.addItem(label)
        labels[value] = label
        self.show(self._value())

    def show(self, params, changed: frozenset[str] | None = None) -> None:
        """Write ``params`` into the widgets (only those of the ``changed`` fields, if given) without
        their signals firing; a control already showing its value is left alone (no repaint)."""
        for name, w in self.widgets.items():
            if changed is not None and name not in changed:
                continue
            value = getattr(params, name)
            with quiet(w):
                if isinstance(w, QComboBox):
                    text = self.choices.get(name, {}).get(value, str(value))
                    if w.currentText() != text:
                        w.setCurrentText(text)
                elif isinstance(w, QCheckBox):
                    if w.isChecked() != bool(value):
                        w.setChecked(bool(value))
                elif isinstance(w, (LabeledSlider, QAbstractSpinBox)):
                    if w.value() != value:
                        w.setValue(value)


class _Relay(QObject):
    """Forwards the scenario's ``changed`` to a binder for as long as ``parent`` lives: the scenario
    outlives the dock and every panel, and a lambda connected to it would outlive them too."""

    def __init__(self, binder: "ScenarioBinder", parent: QObject) -> None:
        super().__init__(parent)
        self.binder = binder

    def relay(self, changed) -> None:
        self.binder.show(self.binder.model.value, changed)


class ScenarioBinder(ParamBinder):
    """The same binding for fields of the shared scenario (``explorer.scenario_model.ScenarioModel``):
    an edit is ``model.try_update`` (an undo step); only the controls of changed fields are re-shown.
    ``owner`` (the dock, a panel) bounds the binding's life."""

    def __init__(self, model, widgets: Mapping[str, QWidget], owner: QObject,
                 choices: Mapping[str, Mapping] | None = None, error: Callable[[str | None], None] | None = None,
                 field_error: Callable[[str, str | None], None] | None = None) -> None:
        self.model, self.owner = model, owner
        super().__init__(model, widgets, choices, error, field_error)

    def _value(self):
        return self.model.value

    def _update(self, **changes) -> str | None:
        return self.model.try_update(**changes)

    def _watch(self) -> None:
        self._relay = _Relay(self, self.owner)
        self.model.changed.connect(self._relay.relay)
