"""The pipeline panel's schedules and executed pages: widgets only; the panel connects and fills them."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from explorer.binder import param_slider
from explorer.theme import Theme
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ErrorLabel
from panels._pipeline_views import GanttView


class ExecutedPage(QWidget):
    """Run button, model width and progress; the measured and simulated Gantt charts, linked."""

    def __init__(self, theme: Theme, hidden_spin, progress_widget) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        top = FlowLayout()          # wraps at presenter sizes on a narrow screen
        self.run_button = QPushButton("Run the left schedule on real torch")
        self.run_button.setAccessibleName("Run the executed mode")
        top.addWidget(self.run_button)
        top.addWidget(keep_together(QLabel("hidden width"), hidden_spin))
        top.addWidget(progress_widget)
        lay.addLayout(top)
        self.exec_info = QLabel("A small MLP is cut into p·v stages; one thread per rank (a CUDA stream each on a GPU) "
                                "runs the left schedule's order with real forward and backward work.")
        self.exec_info.setWordWrap(True)
        lay.addWidget(self.exec_info)
        self.exec_error = ErrorLabel()
        lay.addWidget(self.exec_error)
        self.charts = QWidget()
        row = QHBoxLayout(self.charts)
        row.setContentsMargins(0, 0, 0, 0)
        self.exec_gantts = [GanttView(theme, "measured"), GanttView(theme, "simulated from measured op times")]
        for g in self.exec_gantts:
            g.show_placeholder("Not run yet:\npress Run above")
        self.exec_gantts[1].gantt.setXLink(self.exec_gantts[0].gantt)
        for g in self.exec_gantts:
            row.addWidget(g, 1)
        lay.addWidget(self.charts, 1)


def int_spin(lo: int, hi: int, tip: str, step: int = 1) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setSingleStep(step)
    s.setKeyboardTracking(False)
    s.setToolTip(tip)
    s.setAccessibleName(tip)
    return s


def param_spin(params_cls, name: str) -> QSpinBox:
    """A spin box with the range, step and tip the Params field declares."""
    m = params_cls.spec(name)
    return int_spin(int(m["lo"]), int(m["hi"]), m["tip"], int(m["step"]))


COSTS = ("t_f", "t_b", "w_share_pct", "t_comm")
"""The cost sliders, in the order they are shown."""


class SchedulesPage(QWidget):
    """Both schedules' controls (kinds, p, m, v, costs), the scenario context line, and the two
    Gantt charts with their bubble captions."""

    def __init__(self, theme: Theme, params_cls, kinds, kind_labels) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        box = QGroupBox("Schedule and costs")   # p is the scenario's PP, m its gradient accumulation (tooltips)
        inside = QVBoxLayout(box)
        self.kind = [QComboBox(), QComboBox()]
        for combo, name in zip(self.kind, ("left", "right")):
            for k in kinds:
                combo.addItem(kind_labels[k], k)
            combo.setAccessibleName(f"Schedule on the {name}")
        self.p_spin = int_spin(1, 64, "p: pipeline ranks (scenario PP)")
        self.m_spin = int_spin(1, 512, "m: micro-batches per step (scenario gradient accumulation)")
        self.v_spin = param_spin(params_cls, "v")
        self.costs = {name: param_slider(params_cls, name) for name in COSTS}
        controls = FlowLayout()     # wraps at presenter font sizes instead of pushing the panel sideways
        controls.addWidget(keep_together(QLabel("Left"), self.kind[0]))
        controls.addWidget(keep_together(QLabel("Right"), self.kind[1]))
        for lbl, w in (("p ranks", self.p_spin), ("m micro-batches", self.m_spin), ("v chunks", self.v_spin)):
            controls.addWidget(keep_together(QLabel(lbl), w))
        for s in self.costs.values():
            controls.addWidget(s)
        inside.addLayout(controls)
        self.cost_note = QLabel("Costs are per rank's whole stage; a chunk costs 1/v of it (ZB-V: v = 2). "
                                "Blocks: F plain, B hatched ╱, I hatched ╲, W cross-hatched; idle time dotted grey.")
        self.cost_note.setObjectName("muted")
        self.cost_note.setWordWrap(True)
        inside.addWidget(self.cost_note)
        self.sched_error = ErrorLabel()
        inside.addWidget(self.sched_error)
        lay.addWidget(box)
        self.context = QWidget()   # where the pipeline sits in the scenario, or that it is a demonstration
        row = QHBoxLayout(self.context)
        row.setContentsMargins(0, 0, 0, 0)
        self.context_line = LiveText()
        self.context_line.setAccessibleName("Where this pipeline sits in the scenario")
        row.addWidget(self.context_line, 1)
        self.demo_button = QPushButton()   # shown only while the schedules are a demonstration (PP = 1)
        self.demo_button.setToolTip("Write the demonstration's p and m into the scenario as PP and gradient "
                                    "accumulation (one edit: Undo reverts it)")
        self.demo_button.hide()
        row.addWidget(self.demo_button, 0, Qt.AlignTop)
        lay.addWidget(self.context)
        self.charts = QWidget()
        grid = QGridLayout(self.charts)   # charts in one row, captions in the next, so a longer caption on
        grid.setContentsMargins(0, 0, 0, 0)
        self.gantts = [GanttView(theme, "left"), GanttView(theme, "right")]  # one side leaves both charts
        self.gantts[1].gantt.setXLink(self.gantts[0].gantt)                  # the same height
        self.formula = [LiveText(min_lines=4), LiveText(min_lines=4)]
        for col, (g, f) in enumerate(zip(self.gantts, self.formula)):
            g.setAccessibleName("Pipeline Gantt chart and in-flight activations")
            grid.addWidget(g, 0, col)
            f.setAccessibleName("Bubble: measured in the simulation and the published formulas")
            grid.addWidget(f, 1, col)
            grid.setColumnStretch(col, 1)
        grid.setRowStretch(0, 1)
        lay.addWidget(self.charts, 1)



def context_html(sc, shape) -> str:
    """Where the drawn pipeline (an engines.pipeline.PipelineShape) sits in the scenario ``sc``, or
    that it is a demonstration because the scenario has none."""
    if shape.demo:
        return (f"<b>The scenario has no pipeline (PP = {sc.pp}): showing p = {shape.p}, m = {shape.m} as a "
                f"demonstration.</b> Editing p or m, or the button, makes them the scenario's (Undo reverts).")
    return (f"This pipeline of p = {shape.p} ranks is one of DP = {sc.dp} data-parallel replicas running at once; "
            f"each rank is TP = {sc.tp} GPU(s) ({sc.n_gpus} GPUs = DP × TP × PP). A step pushes m = {shape.m} "
            f"micro-batches of {sc.micro_batch} × {sc.seq_len:,} tokens through it.")


def named_views(s: SchedulesPage, e: ExecutedPage, t, g) -> tuple[tuple[str, QWidget, str], ...]:
    """(name, widget, title) of the views a tour step can focus on or highlight, from the four pages
    (schedules, executed, tensor parallel, 3D layout)."""
    return (("schedules", s.charts, "Both schedules' Gantt charts with their bubble figures"),
            ("gantt_left", s.gantts[0], "Left schedule's Gantt chart"),
            ("gantt_right", s.gantts[1], "Right schedule's Gantt chart"),
            ("bubble_left", s.formula[0], "Left schedule's bubble: simulated and published formulas"),
            ("bubble_right", s.formula[1], "Right schedule's bubble: simulated and published formulas"),
            ("context", s.context, "Where the pipeline sits in the scenario"),
            ("apply_demo", s.demo_button, "Apply the demonstration's p and m to the scenario"),
            ("p_ranks", s.p_spin, "p: pipeline ranks (scenario PP)"),
            ("m_microbatches", s.m_spin, "m: micro-batches (scenario gradient accumulation)"),
            ("executed", e.charts, "Measured and simulated run on torch"),
            ("tp_split", t.split, "Tensor-parallel split of one block, step by step"),
            ("tp_degree", t.tp_spin, "t: tensor-parallel GPUs (scenario TP)"),
            ("sequence_parallel", t.sp_check, "Sequence parallelism"),
            ("layout", g.grid, "DP × TP × PP rank grid and memory per stage"),
            ("rank_grid", g.layout_view, "DP × TP × PP rank grid"),
            ("stage_memory", g.memory.plot, "Memory per pipeline stage"))
