"""The scenario dock: one control per scenario field, each with its inline error line.

Edits go through ``ScenarioModel.try_update``; an invalid value stays visible in its control with
the reason beside it (nothing is lost, nothing changes). External changes (preset, undo, file load)
are mirrored back into the controls without re-emitting.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QScrollArea, QSpinBox,
                               QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.core.models import PRESETS, ModelArch
from engines.core.presets import CUSTOM, switch_model
from engines.core.scenario import Scenario
from explorer.binder import ScenarioBinder, check_box, choice_combo, quiet, spin_box
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ElidedCombo, ErrorLabel

# where each declared scenario field sits (its label, range, choices and tip are the Scenario's own)
CLUSTER = ("gpu", "n_gpus", "gpus_per_node", "tp", "pp", "internode_gbps")
TRAINING = ("strategy", "precision", "optimizer", "recompute", "micro_batch", "seq_len", "grad_accum",
            "sequence_parallel", "offload_optimizer", "offload_params", "offload_target")
SERVING = ("weight_bits", "kv_bits", "serve_batch", "serve_context")
ARCH_INT = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")


class ScenarioEditor(QScrollArea):
    notice = Signal(str)   # a model switch adapted the layout: the window shows it in its status bar

    def __init__(self, model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.setWidgetResizable(True)
        inner = QWidget()
        self.setWidget(inner)
        outer = QVBoxLayout(inner)
        self.widgets: dict[str, QWidget] = {}
        self.errors: dict[str, ErrorLabel] = {}

        def group(title: str) -> QFormLayout:
            box = QGroupBox(title)
            form = QFormLayout(box)
            form.setRowWrapPolicy(QFormLayout.WrapLongRows)   # a narrow dock: the field goes under its label
            outer.addWidget(box)
            return form

        def add(form: QFormLayout, name: str, label: str, widget: QWidget, tip: str = "") -> None:
            if isinstance(widget, QComboBox):   # a long choice ("NVIDIA H100 SXM 80GB") is cut with "…"
                widget.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)  # rather
                widget.setMinimumContentsLength(8)          # than widening the dock past its width
            widget.setToolTip(tip or label)
            widget.setAccessibleName(label)
            err = ErrorLabel()
            col = QWidget()
            v = QVBoxLayout(col)
            v.setContentsMargins(0, 0, 0, 0)
            v.addWidget(widget)
            v.addWidget(err)
            if label:
                form.addRow(QLabel(label), col)
            else:                                           # a check box carries its own text: full width
                form.addRow(col)
            self.widgets[name], self.errors[name] = widget, err

        f = group("Model")
        combo = ElidedCombo()
        for key, arch in PRESETS.items():
            combo.addItem(arch.label, key)
        combo.addItem("Custom architecture", "custom")
        combo.activated.connect(lambda i: self.choose_model(combo.itemData(i)))
        add(f, "model", "Model", combo, "Preset architectures; edit any shape field to go custom")
        self.model_note = QLabel()          # what a model switch changed in the layout (TP 8 → 1)
        self.model_note.setWordWrap(True)
        self.model_note.hide()
        f.addRow(self.model_note)
        for name in ARCH_INT:
            spin = QSpinBox()
            spin.setRange(1, 10_000_000)
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda v, n=name: self._edit_arch(n, v))
            add(f, name, name.replace("_", " ").capitalize(), spin, f"Architecture: {name}")
        tied = QCheckBox("Tied embeddings")
        tied.toggled.connect(lambda v: self._edit_arch("tied_embeddings", v))
        add(f, "tied_embeddings", "Embeddings", tied)

        def declared(form: QFormLayout, names: tuple[str, ...]) -> None:
            for name in names:
                spec = Scenario.spec(name)
                if spec["choices"] is not None:
                    add(form, name, spec["label"], choice_combo(Scenario, name, ElidedCombo), spec["tip"])
                elif isinstance(getattr(Scenario, name, None), bool):    # a check box carries its own text
                    add(form, name, "", check_box(Scenario, name), spec["tip"])
                else:
                    add(form, name, spec["label"], spin_box(Scenario, name), spec["tip"])

        f = group("Cluster")
        declared(f, CLUSTER)
        self.dp_label = LiveText(min_lines=1)   # a QLabel's setText re-lays out (and repaints) the whole dock
        f.addRow(QLabel("Data parallel (DP)"), self.dp_label)
        f = group("Training")
        declared(f, TRAINING)
        f = group("Serving")
        declared(f, SERVING)
        outer.addStretch(1)
        self.binder = ScenarioBinder(model, {n: self.widgets[n] for n in (*CLUSTER, *TRAINING, *SERVING)}, self,
                                     field_error=self._edited)
        model.changed.connect(self.sync)
        self.sync()

    # --- edits -----------------------------------------------------------------------------
    def _edited(self, name: str, err: str | None) -> None:
        """The result of an edit of field ``name``: its reason beside the control, or, once accepted,
        no stale reason elsewhere (a fix here may have cured a dependent error)."""
        self.errors[name].show_error(err)
        if err is None:
            for e in self.errors.values():  # a fix elsewhere may have cured a dependent error
                if e is not self.errors[name] and e.isVisible():
                    e.show_error(None)

    def choose_model(self, key: str) -> None:
        """A preset model keeps the parallel layout where it can (engines.core.presets.switch_model); the
        note under the combo says what had to change, and the window's status bar repeats it."""
        if key == CUSTOM:
            self._edited("model", self.model.try_update(model=key))
            return
        try:
            new, note = switch_model(self.model.value, key)
        except ValidationError as exc:
            self.errors["model"].show_error(str(exc))
            return
        self.model.replace(new, f"Model {new.arch.label}")
        self.errors["model"].show_error(None)
        self._set_model_note(note)
        if note:
            self.notice.emit(f"{new.arch.label}: adjusted {note}")

    def _set_model_note(self, note: str | None) -> None:
        self.model_note.setText(f"Adjusted: {note}" if note else "")
        self.model_note.setVisible(bool(note))

    def _edit_arch(self, name: str, value) -> None:
        s = self.model.value
        try:
            arch: ModelArch = replace(s.arch, **{name: value}, label="Custom", params_override=None, source="user")
        except ValidationError as exc:
            self.errors[name].show_error(str(exc))
            return
        err = self.model.try_update(model="custom", arch=arch)
        self.errors[name].show_error(err)

    # --- mirror the model --------------------------------------------------------------------
    def sync(self, changed: frozenset[str] | None = None) -> None:
        """Show the model and its architecture (the declared fields follow through ``self.binder``):
        all of them, or only if ``model`` or ``arch`` is among the ``changed`` fields."""
        s: Scenario = self.model.value
        if changed is not None and "model" in changed:
            self._set_model_note(None)       # the note was about the model shown before (undo, preset)
        if changed is None or "model" in changed:
            combo = self.widgets["model"]    # "activated" only: setting it here does not echo
            i = combo.findData(s.model)
            if i >= 0 and i != combo.currentIndex():
                combo.setCurrentIndex(i)
        if changed is None or "arch" in changed:
            for name in (*ARCH_INT, "tied_embeddings"):
                w, value = self.widgets[name], getattr(s.arch, name)
                with quiet(w):
                    if isinstance(w, QCheckBox):
                        if w.isChecked() != bool(value):
                            w.setChecked(bool(value))
                    elif w.value() != value:
                        w.setValue(value)
        text = f"{s.dp}  (= GPUs / (TP × PP))"
        self.dp_label.setText(text)
