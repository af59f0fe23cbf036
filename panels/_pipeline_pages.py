"""The pipeline panel's four pages, each a view: schedules, executed on torch, tensor parallel, 3D layout.

A page holds its controls (the panel binds and connects them) and draws the frozen engine result the
panel hands it (``show_result``); a page whose charts are costly draws them in ``draw()``, which the
panel calls when the page is shown. Pages never call engines."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from engines.pipeline import KIND_LABELS, ExecutedView, LayoutStudy, ScheduleComparison, TPStudy

from explorer.binder import param_slider
from explorer.theme import Theme
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ErrorLabel
from panels._pipeline_parallel_views import (LayoutView, StageMemoryChart, TPView, layout_html, tp_caption_html,
                                             tp_counts_html)
from panels._pipeline_views import GanttView, exec_summary, formula_html


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

    def show_result(self, view: ExecutedView) -> None:
        """The measured and the simulated timeline (ms) on one linked time range, and what was measured."""
        run = view.run
        self.exec_gantts[0].show_simulation(view.measured_ms, f"measured on {run.device} (ms)", fit_time=False)
        self.exec_gantts[1].show_simulation(view.simulated_ms, "simulated from measured op times (ms)",
                                            fit_time=False)   # linked: one range for both, set below
        self.exec_gantts[0].set_time_range(view.t_max_ms)
        self.exec_info.setText(exec_summary(KIND_LABELS.get(run.kind, run.kind), run))

    def set_cursor(self, t: float) -> None:
        for g in self.exec_gantts:
            g.set_cursor(t)

    def apply_theme(self, theme: Theme) -> None:
        for g in self.exec_gantts:
            g.apply_theme(theme)


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
        self.sides: list = [None, None]       # the SideResult each chart draws, None where it has an error
        self._geometry: list = [None, None]   # Gantt geometry a worker built, used once
        self._titles = ["", ""]

    def show_context(self, sc, shape) -> None:
        """Where the drawn pipeline (an engines.pipeline.PipelineShape) sits in the scenario ``sc``."""
        self.context_line.setText(context_html(sc, shape))
        self.demo_button.setText(f"Use p = {shape.p}, m = {shape.m}")
        self.demo_button.setVisible(shape.demo)

    def show_result(self, result: ScheduleComparison, geometry=(None, None)) -> None:
        """The captions and titles now (an invalid side says why); the charts at :meth:`draw`.
        ``geometry``: per side, what :func:`gantt_geometry` built in a worker, or None."""
        req = result.request
        errors = []
        for side, r in enumerate(result.sides):
            if r.error:
                self.sides[side] = None
                errors.append(f"{KIND_LABELS[r.kind]}: {r.error}")
                self.formula[side].setText(f"<b>{KIND_LABELS[r.kind]}</b>: not drawn: {r.error}")
                continue
            self.sides[side] = r
            self._geometry[side] = geometry[side]
            self.formula[side].setText(formula_html(KIND_LABELS[r.kind], r, req.costs.t_comm))
        self._titles = [f"{KIND_LABELS[r.kind]}  (p={req.p}, m={req.m}" + (f", v={r.chunks})" if r.chunks > 1 else ")")
                        for r in result.sides]
        self.sched_error.show_error("; ".join(errors) if errors else None)

    def draw(self) -> None:
        """Both Gantt charts, on one (linked) time range."""
        for side, s in enumerate(self.sides):
            if s:
                self.gantts[side].show_simulation(s.sim, self._titles[side], self._geometry[side], fit_time=False)
                self._geometry[side] = None  # built for the theme of its time: only used once
        self.gantts[0].set_time_range(max((s.sim.makespan for s in self.sides if s), default=1.0))

    def set_cursor(self, t: float) -> None:
        for g in self.gantts:
            g.set_cursor(t)

    def apply_theme(self, theme: Theme) -> None:
        for g in self.gantts:
            g.apply_theme(theme)
        for w in (self.context_line, *self.formula):
            w.reset_height()



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
            ("rank_grid", g.ranks, "DP × TP × PP rank grid and its groups"),
            ("stage_memory", g.memory.plot, "Memory per pipeline stage"))


class TPPage(QWidget):
    """TP degree and sequence parallelism (scenario fields), the step view and its captions."""

    def __init__(self, theme: Theme, tp_spin) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        top = FlowLayout()
        self.tp_spin = tp_spin
        self.sp_check = QCheckBox("sequence parallelism (LayerNorm/dropout on s/t tokens)")
        top.addWidget(keep_together(QLabel("TP degree t"), self.tp_spin))
        top.addWidget(self.sp_check)
        lay.addLayout(top)
        self.tp_error = ErrorLabel()
        lay.addWidget(self.tp_error)
        self.split = QWidget()     # the step view with its captions: what a tour focuses on
        inner = QVBoxLayout(self.split)
        inner.setContentsMargins(0, 0, 0, 0)
        self.tp_view = TPView(theme)
        self.tp_view.setAccessibleName("Tensor-parallel split of one transformer block, step by step")
        inner.addWidget(self.tp_view, 1)
        self.tp_caption = LiveText(min_lines=2)  # changes every frame: must not re-lay out the panel
        inner.addWidget(self.tp_caption)
        self.tp_counts = LiveText(min_lines=2)
        inner.addWidget(self.tp_counts)
        lay.addWidget(self.split, 1)
        self.study: TPStudy | None = None

    def show_result(self, study: TPStudy) -> None:
        """The collective counts and the first step's caption now; the step view at :meth:`draw`."""
        self.study = study
        self.tp_counts.setText(tp_counts_html(study))
        self.tp_caption.setText(tp_caption_html(study.steps, 0))

    def draw(self) -> None:
        if self.study is not None:
            self.tp_view.set_steps(list(self.study.steps), self.study.tp, 0)

    def show_step(self, index: int) -> None:
        """Step ``index`` highlighted and described (a timeline frame)."""
        steps = self.study.steps if self.study is not None else ()
        if steps:
            self.tp_view.set_current(index)
            self.tp_caption.setText(tp_caption_html(steps, max(0, min(index, len(steps) - 1))))

    def apply_theme(self, theme: Theme) -> None:
        """The new theme is used at the next :meth:`draw`."""
        self.tp_view.theme = theme
        for w in (self.tp_caption, self.tp_counts):
            w.reset_height()


class LayoutPage(QWidget):
    """The rank grid beside the per-stage memory chart, and the groups described under them."""

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        self.layout_error = ErrorLabel()
        lay.addWidget(self.layout_error)
        self.grid = QWidget()      # rank grid, stage memory and the groups' text: what a tour focuses on
        inner = QVBoxLayout(self.grid)
        inner.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.layout_view = LayoutView(theme)
        self.layout_view.setAccessibleName("GPUs as DP × TP × PP rank grid, grouped by node")
        # the grid with the groups' text under it: a slide of the grid also says what its groups are
        self.ranks = QWidget()
        ranks_box = QVBoxLayout(self.ranks)
        ranks_box.setContentsMargins(0, 0, 0, 0)
        ranks_box.addWidget(self.layout_view, 1)
        self.layout_text = LiveText(min_lines=4)
        ranks_box.addWidget(self.layout_text)
        row.addWidget(self.ranks, 3)
        self.memory = StageMemoryChart(theme)
        row.addWidget(self.memory.plot, 2)
        inner.addLayout(row, 1)
        lay.addWidget(self.grid, 1)
        self.theme = theme
        self.study: LayoutStudy | None = None

    def show_result(self, study: LayoutStudy) -> None:
        """The groups' text and any memory error now; the grid and the memory chart at :meth:`draw`."""
        self.study = study
        self.layout_text.setText(layout_html(study, LayoutView.MAX_NODES))
        self.layout_error.show_error(study.memory_error)

    def draw(self) -> None:
        if self.study is not None:
            self.layout_view.set_layout(self.study.layout)
            self.memory.show(self.study, self.theme)

    def apply_theme(self, theme: Theme) -> None:
        """The new theme is used at the next :meth:`draw`."""
        self.theme = self.layout_view.theme = theme
        self.layout_text.reset_height()
