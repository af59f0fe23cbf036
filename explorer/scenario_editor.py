"""The scenario dock: one control per scenario field, each with its inline error line.

Edits go through ``ScenarioModel.try_update``; an invalid value stays visible in its control with
the reason beside it (nothing is lost, nothing changes). External changes (preset, undo, file load)
are mirrored back into the controls without re-emitting.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLabel,
                               QScrollArea, QSpinBox, QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.core.hardware import GPUS
from engines.memory.labels import STRATEGY_LABELS   # one source for every view that names a strategy
from engines.core.models import PRESETS, ModelArch
from engines.core.presets import CUSTOM, switch_model
from engines.core.scenario import (INT_RANGES, KV_BITS, PRECISIONS, RECOMPUTE, STRATEGIES, WEIGHT_BITS,
                              Scenario)
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ElidedCombo, ErrorLabel


# field: (label, tooltip); the allowed range is the engine's INT_RANGES
INT_FIELDS = {
    "n_gpus": ("GPUs", "Total GPU count = DP × TP × PP"),
    "gpus_per_node": ("GPUs per node", "GPUs joined by NVLink inside one server"),
    "tp": ("Tensor parallel (TP)", "Splits each layer's matrices; must divide the heads"),
    "pp": ("Pipeline parallel (PP)", "Splits the layers into stages"),
    "micro_batch": ("Micro-batch", "Sequences per forward pass per GPU"),
    "seq_len": ("Sequence length", "Tokens per training sequence"),
    "grad_accum": ("Gradient accumulation", "Micro-batches per optimizer step"),
    "serve_batch": ("Serving batch", "Concurrent sequences per replica"),
    "serve_context": ("Serving context", "Tokens of context per sequence"),
}
CHOICE_FIELDS = {
    "strategy": ("Sharding", [(s, STRATEGY_LABELS[s]) for s in STRATEGIES]),
    "precision": ("Precision", [(p, p) for p in PRECISIONS]),
    "optimizer": ("Optimizer", [("adamw", "AdamW (12 B/param)"), ("sgd-momentum", "SGD + momentum"),
                                ("adam-8bit", "8-bit Adam")]),
    "recompute": ("Recomputation", [(r, r) for r in RECOMPUTE]),
    "offload_target": ("Offload to", [("cpu", "CPU RAM (ZeRO-Offload)"), ("nvme", "NVMe (ZeRO-Infinity)")]),
    "weight_bits": ("Weight bits", [(b, f"{b}-bit") for b in WEIGHT_BITS]),
    "kv_bits": ("KV-cache bits", [(b, f"{b}-bit") for b in KV_BITS]),
}
BOOL_FIELDS = {   # short text (a check box does not wrap: a 1280-px projector's dock at presenter size), full tooltip
    "sequence_parallel": ("Sequence parallel", "Sequence parallelism: LayerNorm and dropout activations split over "
                                               "the tensor-parallel group (Korthikanti et al. 2022)"),
    "offload_optimizer": ("Offload optimizer", "Offload the optimizer states (fp32 master weights and Adam moments) "
                                               "to the target below (ZeRO-Offload)"),
    "offload_params": ("Offload parameters", "Offload the parameter shards to the target below (ZeRO-3 / FSDP only; "
                                             "ZeRO-Infinity)"),
}
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

        f = group("Cluster")
        gpu = ElidedCombo()
        for key, g in GPUS.items():
            gpu.addItem(g.label, key)
        gpu.activated.connect(lambda i: self._edit("gpu", gpu.itemData(i)))
        add(f, "gpu", "GPU", gpu)
        for name in ("n_gpus", "gpus_per_node", "tp", "pp"):
            self._add_int(f, add, name)
        net = QDoubleSpinBox()
        net.setRange(0.1, 100_000)
        net.setSuffix(" GB/s")
        net.setKeyboardTracking(False)
        net.valueChanged.connect(lambda v: self._edit("internode_gbps", float(v)))
        add(f, "internode_gbps", "Network per GPU", net, "Inter-node bandwidth per GPU (400 Gb/s ≈ 50 GB/s)")
        self.dp_label = LiveText(min_lines=1)   # a QLabel's setText re-lays out (and repaints) the whole dock
        f.addRow(QLabel("Data parallel (DP)"), self.dp_label)

        f = group("Training")
        for name in ("strategy", "precision", "optimizer", "recompute"):
            self._add_choice(f, add, name)
        for name in ("micro_batch", "seq_len", "grad_accum"):
            self._add_int(f, add, name)
        for name, (label, tip) in BOOL_FIELDS.items():
            box = QCheckBox(label)
            box.toggled.connect(lambda v, n=name: self._edit(n, bool(v)))
            add(f, name, "", box, tip)
        self._add_choice(f, add, "offload_target")

        f = group("Serving")
        for name in ("weight_bits", "kv_bits"):
            self._add_choice(f, add, name)
        for name in ("serve_batch", "serve_context"):
            self._add_int(f, add, name)
        outer.addStretch(1)
        model.changed.connect(self.sync)
        self.sync()

    def _add_int(self, form, add, name: str) -> None:
        label, tip = INT_FIELDS[name]
        lo, hi = INT_RANGES[name]
        spin = QSpinBox()
        spin.setRange(lo, hi)
        spin.setKeyboardTracking(False)
        spin.valueChanged.connect(lambda v, n=name: self._edit(n, int(v)))
        add(form, name, label, spin, tip)

    def _add_choice(self, form, add, name: str) -> None:
        label, options = CHOICE_FIELDS[name]
        combo = ElidedCombo()
        for value, text in options:
            combo.addItem(text, value)
        combo.activated.connect(lambda i, n=name, c=combo: self._edit(n, c.itemData(i)))
        add(form, name, label, combo)

    # --- edits -----------------------------------------------------------------------------
    def _edit(self, name: str, value) -> None:
        err = self.model.try_update(**{name: value})
        self.errors[name].show_error(err)
        if err is None:
            for e in self.errors.values():  # a fix elsewhere may have cured a dependent error
                if e is not self.errors[name] and e.isVisible():
                    e.show_error(None)

    def choose_model(self, key: str) -> None:
        """A preset model keeps the parallel layout where it can (engines.core.presets.switch_model); the
        note under the combo says what had to change, and the window's status bar repeats it."""
        if key == CUSTOM:
            self._edit("model", key)
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
        """Show the model's values: all of them, or only the widgets of the ``changed`` fields (an
        edit touches one or two of some thirty widgets; the architecture's widgets follow ``arch``)."""
        s: Scenario = self.model.value
        if changed is not None and "model" in changed:
            self._set_model_note(None)       # the note was about the model shown before (undo, preset)
        for name, w in self.widgets.items():
            field = "arch" if name in ARCH_INT or name == "tied_embeddings" else name
            if changed is not None and field not in changed:
                continue
            w.blockSignals(True)
            try:
                value = getattr(s.arch, name) if field == "arch" else getattr(s, name)
                if isinstance(w, QComboBox):
                    i = w.findData(value)
                    if i >= 0 and i != w.currentIndex():
                        w.setCurrentIndex(i)
                elif isinstance(w, QCheckBox):
                    if w.isChecked() != bool(value):
                        w.setChecked(bool(value))
                elif w.value() != value:
                    w.setValue(value)
            finally:
                w.blockSignals(False)
        text = f"{s.dp}  (= GPUs / (TP × PP))"
        self.dp_label.setText(text)
