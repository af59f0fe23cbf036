"""Bind a panel's ``Params`` fields to widgets by name: one place instead of blockSignals loops.

A widget edit becomes ``panel.update_params(field=value)`` (an undoable step; a bad value shows its
reason in the panel's error line and changes nothing); a new ``Params`` from anywhere (undo, a saved
view, a tour step) is written back into the widgets without re-emitting. Controls can be built from
the field's declaration (:func:`param_slider`), so label, unit and range have one source.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields

from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from explorer.ui.widgets import LabeledSlider


def fields_of(params_cls) -> list[str]:
    """The declared (``param``) fields of a Params class, in declaration order."""
    return [f.name for f in fields(params_cls) if f.metadata]


def param_slider(params_cls, name: str, label: str | None = None) -> LabeledSlider:
    """A :class:`LabeledSlider` with the label, range, step and unit the field declares."""
    m = params_cls.spec(name)
    slider = LabeledSlider(label or m["label"], m["lo"], m["hi"], getattr(params_cls(), name), m["step"],
                           m["decimals"], m["unit"])
    if m["tip"]:
        slider.setToolTip(m["tip"])
    return slider


class ParamBinder:
    """Keeps ``widgets`` (field name → control) and ``panel.params`` in step both ways."""

    def __init__(self, panel, widgets: Mapping[str, QWidget], choices: Mapping[str, Mapping] | None = None,
                 error: Callable[[str | None], None] | None = None) -> None:
        self.panel, self.widgets = panel, dict(widgets)
        self.choices = {k: dict(v) for k, v in (choices or {}).items()}   # field → {value: label}
        self.error = error or (lambda _text: None)
        for name, w in self.widgets.items():
            self._connect(name, w)
        panel.params_changed.connect(self.show)
        self.show(panel.params)

    def _connect(self, name: str, w: QWidget) -> None:
        def send(value) -> None:
            self.error(self.panel.update_params(**{name: value}))

        integer = isinstance(getattr(self.panel.params, name), int)
        if isinstance(w, LabeledSlider):
            w.valueCommitted.connect(lambda v: send(int(round(v)) if integer else float(v)))
        elif isinstance(w, QComboBox):
            labels = self.choices.get(name)
            w.currentTextChanged.connect(lambda t: send(next((k for k, v in labels.items() if v == t), t)
                                                        if labels else t))
        elif isinstance(w, QCheckBox):
            w.toggled.connect(lambda on: send(bool(on)))
        elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
            w.valueChanged.connect(lambda v: send(int(v) if integer else float(v)))
        else:
            raise TypeError(f"no binding for {type(w).__name__} ({name})")

    def set_choice(self, name: str, value, label: str) -> None:
        """Add a choice to a combo-bound field, or rename one (a file tensor opened, a label that
        follows the scenario); the combo shows the current value's label afterwards."""
        labels = self.choices.setdefault(name, {})
        combo = self.widgets[name]
        combo.blockSignals(True)
        try:
            if value in labels and combo.findText(labels[value]) >= 0:
                combo.setItemText(combo.findText(labels[value]), label)
            else:
                combo.addItem(label)
        finally:
            combo.blockSignals(False)
        labels[value] = label
        self.show(self.panel.params)

    def show(self, params) -> None:
        """Write ``params`` into the widgets without their signals firing."""
        for name, w in self.widgets.items():
            value = getattr(params, name)
            w.blockSignals(True)
            try:
                if isinstance(w, LabeledSlider):
                    w.setValue(value)
                elif isinstance(w, QComboBox):
                    w.setCurrentText(self.choices.get(name, {}).get(value, str(value)))
                elif isinstance(w, QCheckBox):
                    w.setChecked(bool(value))
                elif isinstance(w, QAbstractSpinBox):
                    w.setValue(value)
            finally:
                w.blockSignals(False)
