"""Pipeline, tensor and 3D parallelism: schedules animated and executed, the TP split, the rank grid.

Binding code only: schedules, simulation, execution, TP steps, the rank grid and per-stage memory
all come from ``engines.pipeline``, ``engines.pipeline_exec``, ``engines.parallel_layout`` and
``engines.memory``.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QSpinBox, QTabWidget, QVBoxLayout, QWidget)

from engines.errors import ValidationError
from engines.parallel_layout import collective_counts, layout_from_scenario, tp_layer_steps
from engines.pipeline import KINDS, bubble_formulas, check_layers, schedule, simulate
from explorer.fast_items import Bars
from explorer.flow_layout import FlowLayout, keep_together
from explorer.panel import Panel, TimelineSpec
from explorer.label_layer import range_end_for_label
from explorer.tasks import Cancelled
from explorer.live_text import LiveText
from explorer.widgets import ErrorLabel, LabeledSlider, cache_static, make_plot
from panels._pipeline_views import (OP_NAMES, GanttView, LayoutView, TPView, Texts,
                                    gantt_geometry)

KIND_LABELS = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved-1f1b": "Interleaved 1F1B", "zb-h1": "ZB-H1", "zb-v": "ZB-V"}
GANTT_FRAMES = 240
PREVIEW_MAX_OPS = 256  # p·m·v above this: cost sliders redraw on release only
TABS = ("schedules", "executed", "tp", "layout")
SYNC_MAX_OPS = 512  # p·m·v per side up to which an edit simulates at once (a few ms); above: in the worker
DEBOUNCE_MS = 150  # a burst of edits to a big schedule runs one simulation
MEMORY_PARTS = (("params", "weights", 5), ("grads", "gradients", 0), ("optimizer", "optimizer", 2),
                ("activations", "activations", 1), ("buffers", "buffers + reserve", 6))


@dataclass(frozen=True)
class _SchedRequest:
    """Everything the two schedules depend on: equal requests give equal drawings."""

    kinds: tuple[str, str]
    p: int
    m: int
    v: int
    layers: int
    costs: tuple[tuple[str, float], ...]

    def ops(self) -> int:
        return self.p * self.m * max(_chunks(k, self.v) for k in self.kinds)


def _simulate_sides(req: _SchedRequest, theme=None, cancelled=lambda: False) -> list[dict]:
    """Schedule and simulate both sides (engine calls only); with ``theme``, also build the Gantt
    geometry, so a worker thread does that part of the drawing too."""
    c = dict(req.costs)
    out = []
    for kind in req.kinds:
        chunks = _chunks(kind, req.v)
        try:
            check_layers(req.layers, req.p, chunks)
            sim = simulate(schedule(kind, req.p, req.m, chunks), t_f=c["t_f"] / chunks, t_b=c["t_b"] / chunks,
                           t_i=c["t_i"] / chunks, t_w=c["t_w"] / chunks, t_comm=c["t_comm"])
        except ValidationError as exc:
            out.append({"kind": kind, "chunks": chunks, "error": str(exc)})
            continue
        if cancelled():
            raise Cancelled()
        out.append({"kind": kind, "chunks": chunks, "sim": sim,
                     "geometry": gantt_geometry(sim, theme) if theme is not None else None})
    return out


def _spin(lo: int, hi: int, tip: str) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setKeyboardTracking(False)
    s.setToolTip(tip)
    s.setAccessibleName(tip)
    return s


class PipelinePanel(Panel):
    key = "pipeline"
    title = "Pipeline and tensor parallelism"
    order = 30
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "tp", "pp", "grad_accum", "micro_batch",
                       "seq_len", "sequence_parallel", "precision", "strategy", "optimizer", "recompute",
                       "offload_optimizer", "offload_params", "internode_gbps"})
    lesson = "pipeline.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scenario = None
        self.sims: list = [None, None]
        self.executed = None
        self._exec_ms: list = []
        self.tp_steps: list = []
        self.layout3d = None
        self.stage_memory: list = []
        self._inputs: dict[str, object] = {}  # view group → the inputs its data was computed from
        self._stale: set[str] = set()  # tabs whose drawing waits until they are shown
        self._geometry: list = [None, None]  # Gantt geometry a worker built, used once
        self._sched_token = 0  # a newer schedule request makes older worker results stale
        self._sched_pending: _SchedRequest | None = None
        self._exec_busy = False
        self._spec_key: object = None
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._start_schedule_task)
        self.tasks.finished.connect(self._task_finished)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_schedules(), "Schedules")
        self.tabs.addTab(self._build_executed(), "Executed on torch")
        self.tabs.addTab(self._build_tp(), "Tensor parallel")
        self.tabs.addTab(self._build_layout(), "3D layout")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.body.addWidget(self.tabs, 1)

    # --- construction ---------------------------------------------------------------------
    def _build_schedules(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        box = QGroupBox("Schedule and costs")   # p is the scenario's PP, m its gradient accumulation (tooltips)
        inside = QVBoxLayout(box)
        self.kind = [QComboBox(), QComboBox()]
        for combo, default, name in zip(self.kind, ("1f1b", "interleaved-1f1b"), ("left", "right")):
            for k in KINDS:
                combo.addItem(KIND_LABELS[k], k)
            combo.setCurrentIndex(KINDS.index(default))
            combo.setAccessibleName(f"Schedule on the {name}")
            combo.currentIndexChanged.connect(self._recompute)
        self.p_spin = _spin(1, 64, "p: pipeline ranks (scenario PP)")
        self.m_spin = _spin(1, 512, "m: micro-batches per step (scenario gradient accumulation)")
        self.v_spin = _spin(2, 8, "v: model chunks per rank (interleaved only)")
        self.v_spin.setValue(2)
        self.p_spin.valueChanged.connect(lambda v: self._edit_scenario(pp=int(v)))
        self.m_spin.valueChanged.connect(lambda v: self._edit_scenario(grad_accum=int(v)))
        self.v_spin.valueChanged.connect(self._recompute)
        self.t_f = LabeledSlider("T_F forward", 0.1, 4, 1.0, 0.1, 1)
        self.t_b = LabeledSlider("T_B full backward", 0.1, 8, 2.0, 0.1, 1)
        self.w_share = LabeledSlider("W share of backward", 10, 90, 50, 5, 0, "%")
        self.t_comm = LabeledSlider("p2p latency", 0, 2, 0.0, 0.05, 2)
        for s in (self.t_f, self.t_b, self.w_share, self.t_comm):
            s.valueChanging.connect(self._preview)
            s.valueCommitted.connect(self._recompute)
        controls = FlowLayout()     # wraps at presenter font sizes instead of pushing the panel sideways
        controls.addWidget(keep_together(QLabel("Left"), self.kind[0]))
        controls.addWidget(keep_together(QLabel("Right"), self.kind[1]))
        for lbl, w in (("p ranks", self.p_spin), ("m micro-batches", self.m_spin), ("v chunks", self.v_spin)):
            controls.addWidget(keep_together(QLabel(lbl), w))
        for s in (self.t_f, self.t_b, self.w_share, self.t_comm):
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
        self.context_line = LiveText()
        self.context_line.setAccessibleName("Where this pipeline sits in the scenario")
        lay.addWidget(self.context_line)
        grid = QGridLayout()   # charts in one row, captions in the next: a longer caption on one
        self.gantts = [GanttView(self.theme, "left"), GanttView(self.theme, "right")]  # side no longer
        self.gantts[1].gantt.setXLink(self.gantts[0].gantt)                          # shortens its chart
        self.formula = [LiveText(min_lines=4), LiveText(min_lines=4)]
        for col, (g, f) in enumerate(zip(self.gantts, self.formula)):
            g.setAccessibleName("Pipeline Gantt chart and in-flight activations")
            grid.addWidget(g, 0, col)
            f.setAccessibleName("Bubble: measured in the simulation and the published formulas")
            grid.addWidget(f, 1, col)
            grid.setColumnStretch(col, 1)
        grid.setRowStretch(0, 1)
        lay.addLayout(grid, 1)
        return page

    def _build_executed(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        top = FlowLayout()          # wraps at presenter sizes on a narrow screen
        self.run_button = QPushButton("Run the left schedule on real torch")
        self.run_button.setAccessibleName("Run the executed mode")
        self.run_button.clicked.connect(self.run_executed)
        self.hidden_spin = _spin(32, 4096, "hidden width of the small model")
        self.hidden_spin.setValue(256)
        self.hidden_spin.setSingleStep(64)
        top.addWidget(self.run_button)
        top.addWidget(keep_together(QLabel("hidden width"), self.hidden_spin))
        top.addWidget(self.tasks.widget())
        lay.addLayout(top)
        self.exec_info = QLabel("A small MLP is cut into p·v stages; one thread per rank (a CUDA stream each on a GPU) "
                                "runs the left schedule's order with real forward and backward work.")
        self.exec_info.setWordWrap(True)
        lay.addWidget(self.exec_info)
        self.exec_error = ErrorLabel()
        lay.addWidget(self.exec_error)
        row = QHBoxLayout()
        self.exec_gantts = [GanttView(self.theme, "measured"), GanttView(self.theme, "simulated from measured op times")]
        for g in self.exec_gantts:
            g.show_placeholder("Not run yet:\npress Run above")
        self.exec_gantts[1].gantt.setXLink(self.exec_gantts[0].gantt)
        for g in self.exec_gantts:
            row.addWidget(g, 1)
        lay.addLayout(row, 1)
        return page

    def _build_tp(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        top = FlowLayout()
        self.tp_spin = _spin(1, 64, "t: tensor-parallel GPUs (scenario TP)")
        self.tp_spin.valueChanged.connect(lambda v: self._edit_scenario(tp=int(v)))
        self.sp_check = QCheckBox("sequence parallelism (LayerNorm/dropout on s/t tokens)")
        self.sp_check.toggled.connect(lambda on: self._edit_scenario(sequence_parallel=bool(on)))
        top.addWidget(keep_together(QLabel("TP degree t"), self.tp_spin))
        top.addWidget(self.sp_check)
        lay.addLayout(top)
        self.tp_error = ErrorLabel()
        lay.addWidget(self.tp_error)
        self.tp_view = TPView(self.theme)
        self.tp_view.setAccessibleName("Tensor-parallel split of one transformer block, step by step")
        lay.addWidget(self.tp_view, 1)
        self.tp_caption = LiveText(min_lines=2)  # changes every frame: must not re-lay out the panel
        lay.addWidget(self.tp_caption)
        self.tp_counts = LiveText(min_lines=2)
        lay.addWidget(self.tp_counts)
        return page

    def _build_layout(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.layout_error = ErrorLabel()
        lay.addWidget(self.layout_error)
        row = QHBoxLayout()
        self.layout_view = LayoutView(self.theme)
        self.layout_view.setAccessibleName("GPUs as DP × TP × PP rank grid, grouped by node")
        row.addWidget(self.layout_view, 3)
        self.memory_plot = make_plot(self.theme, "Memory per GPU by stage", "GB", "pipeline stage")
        self.memory_plot.setAccessibleName("Per-stage memory from the memory engine")
        self.memory_plot.setMouseEnabled(x=False, y=False)
        cache_static(self.memory_plot)
        self.memory_bars = [Bars(x=[0], height=[0], width=0.7) for _ in MEMORY_PARTS]
        self.memory_legend = self.memory_plot.addLegend(offset=(10, 10))  # top left: above the short bars
        for item, (_, label, _) in zip(self.memory_bars, MEMORY_PARTS):
            self.memory_plot.addItem(item)
            self.memory_legend.addItem(item, label)  # BarGraphItem is not auto-listed
        self.memory_totals = Texts(self.memory_plot)
        self.memory_cap = pg.InfiniteLine(angle=0, movable=False)
        self.memory_plot.addItem(self.memory_cap)
        row.addWidget(self.memory_plot, 2)
        lay.addLayout(row, 1)
        self.layout_text = LiveText(min_lines=4)
        lay.addWidget(self.layout_text)
        return page

    # --- scenario ---------------------------------------------------------------------------
    def _edit_scenario(self, **changes) -> None:
        err = self.ctx.scenario.try_update(**changes)  # success redraws through set_scenario
        if err:
            target = self.tp_error if ("tp" in changes or "sequence_parallel" in changes) else self.sched_error
            target.show_error(err)
            if self.scenario is not None:
                self._sync_controls(self.scenario)  # put the control back on the scenario's value

    def _sync_controls(self, sc) -> None:
        for w, v in ((self.p_spin, sc.pp), (self.m_spin, sc.grad_accum), (self.tp_spin, sc.tp)):
            if w.value() != v:
                w.blockSignals(True)
                w.setValue(v)
                w.blockSignals(False)
        if self.sp_check.isChecked() != sc.sequence_parallel:
            self.sp_check.blockSignals(True)
            self.sp_check.setChecked(sc.sequence_parallel)
            self.sp_check.blockSignals(False)

    def _changed(self, group: str, inputs) -> bool:
        """True (and remembered) when ``group``'s inputs differ from those its data came from."""
        if self._inputs.get(group) == inputs:
            return False
        self._inputs[group] = inputs
        return True

    def set_scenario(self, scenario) -> None:
        """Engine data is recomputed only for the views whose inputs changed, and drawn only on the
        visible tab (hidden tabs draw when shown); big schedules simulate in the worker."""
        self.scenario = sc = scenario
        self._sync_controls(sc)
        self.context_line.setText(
            f"This pipeline of p = {sc.pp} rank(s) is one of DP = {sc.dp} data-parallel replicas running at once; "
            f"each rank is TP = {sc.tp} GPU(s) ({sc.n_gpus} GPUs = DP × TP × PP). A step pushes m = {sc.grad_accum} "
            f"micro-batches of {sc.micro_batch} × {sc.seq_len:,} tokens through it."
            + (" <b>PP = 1: one stage, so no pipeline and no bubble.</b> Raise p ranks (and m) to see one, "
               "e.g. p = 4, m = 8." if sc.pp == 1 else ""))
        if self._changed("schedules", (sc.pp, sc.grad_accum, sc.arch.layers)):
            self._recompute()
        if self._changed("tp", (sc.tp, sc.sequence_parallel, sc.arch, sc.seq_len, sc.micro_batch, sc.precision)):
            self._update_tp()
        if self._changed("layout", sc):
            self._update_layout()
        self._emit_timeline()

    def _visible(self, tab: str) -> bool:
        return self._tab() == tab

    def _tab_changed(self, _index: int) -> None:
        tab = self._tab()
        if tab in self._stale:
            self._stale.discard(tab)
            {"schedules": self._draw_gantts, "tp": self._draw_tp, "layout": self._draw_layout}[tab]()
        self._emit_timeline()

    def _emit_timeline(self) -> None:
        """Tell the player only when the spec changed: a new spec stops playback and costs a redraw."""
        key = (self._tab(), self.timeline())
        if key != self._spec_key:
            self._spec_key = key
            self.timeline_changed.emit()

    # --- schedules ----------------------------------------------------------------------------
    def _costs(self) -> dict:
        tb = self.t_b.value()
        w = self.w_share.value() / 100.0
        return {"t_f": self.t_f.value(), "t_b": tb, "t_i": tb * (1 - w), "t_w": tb * w, "t_comm": self.t_comm.value()}

    def _request(self) -> _SchedRequest:
        return _SchedRequest((self.kind[0].currentData(), self.kind[1].currentData()), self.scenario.pp,
                             self.scenario.grad_accum, self.v_spin.value(), self.scenario.arch.layers,
                             tuple(sorted(self._costs().items())))

    def _preview(self, *_args) -> None:
        """Live redraw while a cost slider drags, when the schedules are small enough to stay smooth."""
        if self.scenario is not None and self._request().ops() <= PREVIEW_MAX_OPS:
            self._recompute()

    def _recompute(self, *_args) -> None:
        """Small schedules simulate now (a few ms); big ones go to the worker after a short pause, the
        previous drawing staying up until the new one arrives."""
        if self.scenario is None:
            return
        req = self._request()
        if req.ops() <= SYNC_MAX_OPS:
            self._debounce.stop()
            self._sched_pending = None
            self._sched_token += 1
            self._show_schedules(req, _simulate_sides(req))
            return
        self._sched_pending = req
        if any(self.sims):
            self._debounce.start()
        else:
            self._start_schedule_task()  # nothing drawn yet: no reason to wait

    def _start_schedule_task(self) -> None:
        req = self._sched_pending
        if req is None or self._exec_busy:  # never drop a running execution: start when it ends
            return
        self._sched_pending = None
        self._sched_token += 1
        token, theme = self._sched_token, self.theme

        def work(progress, cancelled):
            progress(0.0, f"simulating p={req.p}, m={req.m}")
            return _simulate_sides(req, theme, cancelled)

        self.tasks.run(work, lambda result: self._schedules_done(token, req, result),
                       label=f"Simulating {req.p} × {req.m} schedules…")

    def _schedules_done(self, token: int, req: _SchedRequest, result: list[dict]) -> None:
        if token == self._sched_token:
            self._show_schedules(req, result)

    def _task_finished(self, _how: str) -> None:
        if not self.tasks.running:
            self._exec_busy = False
            if self._sched_pending is not None:
                self._start_schedule_task()

    def _show_schedules(self, req: _SchedRequest, result: list[dict]) -> None:
        c = dict(req.costs)
        errors = []
        for side, r in enumerate(result):
            kind, chunks = r["kind"], r["chunks"]
            if "error" in r:
                self.sims[side] = None
                errors.append(f"{KIND_LABELS[kind]}: {r['error']}")
                self.formula[side].setText(f"<b>{KIND_LABELS[kind]}</b>: not drawn: {r['error']}")
                continue
            self.sims[side] = (kind, chunks, r["sim"])
            self._geometry[side] = r["geometry"]
            self.formula[side].setText(self._formula_html(kind, req.p, req.m, chunks, r["sim"], c))
        self._titles = [f"{KIND_LABELS[r['kind']]}  (p={req.p}, m={req.m}"
                        + (f", v={r['chunks']})" if r["chunks"] > 1 else ")") for r in result]
        self.sched_error.show_error("; ".join(errors) if errors else None)
        if self._visible("schedules"):
            self._draw_gantts()
        else:
            self._stale.add("schedules")
        self._emit_timeline()

    def _draw_gantts(self) -> None:
        for side, s in enumerate(self.sims):
            if s:
                self.gantts[side].show_simulation(s[2], self._titles[side], self._geometry[side], fit_time=False)
                self._geometry[side] = None  # built for the theme of its time: only used once
        t_max = max((s[2].makespan for s in self.sims if s), default=1.0)
        self.gantts[0].set_time_range(t_max)

    def _formula_html(self, kind, p, m, v, sim, c) -> str:
        fs = bubble_formulas(kind, p, m, v, t_f=c["t_f"], t_b=c["t_b"], t_w=c["t_w"])
        lines = [f"<b>{KIND_LABELS[kind]}</b> — simulated: makespan {sim.makespan:.2f}; "
                 f"bubble / total (GPipe's denominator) <b>{sim.bubble_fraction:.1%}</b>, "
                 f"bubble / ideal (Megatron's) <b>{sim.bubble_over_ideal:.1%}</b>; "
                 f"peak in flight per rank {sim.peak_in_flight}" + (" (chunks)" if v > 1 else "")]
        for f in fs:
            value = f"{f.value:.2f} time units" if f.denominator == "time" else f"{f.value:.1%}"
            lines.append(f"{f.name} = {f.expression} = {value}  "       # the source smaller: the line wraps
                         f"<small><i>[{f.source}]</i></small>")   # less, the Gantt gets the room
        if c["t_comm"] > 0:
            lines.append("<i>p2p latency is on: the formulas assume free communication.</i>")
        return "<br>".join(lines)

    # --- executed -----------------------------------------------------------------------------
    def run_executed(self) -> None:
        if self.scenario is None:
            return
        from engines.pipeline_exec import ExecutionCancelled, execute

        kind = self.kind[0].currentData()
        p, m = self.scenario.pp, self.scenario.grad_accum
        v = _chunks(kind, self.v_spin.value())
        hidden, device = self.hidden_spin.value(), self.ctx.device
        self.exec_error.show_error(None)
        if self.tasks.running and not self._exec_busy:  # a schedule simulation gives way: redo it afterwards
            self._sched_pending = self._request()
        self._exec_busy = True

        def work(progress, cancelled):
            try:
                return execute(kind, p, m, v, device=device, hidden=hidden, layers_per_stage=2, batch=64,
                               progress=progress, cancelled=cancelled)
            except ExecutionCancelled:
                raise Cancelled() from None
            except ValidationError as exc:
                return exc

        self.tasks.run(work, self._executed_done, label=f"Executing {KIND_LABELS[kind]} on {device}")

    def _executed_done(self, run) -> None:
        if isinstance(run, ValidationError):
            self.exec_error.show_error(str(run))
            return
        self.executed = run
        ms = run.measured
        self._exec_ms = [_in_ms(ms), _in_ms(run.simulated)]
        self.exec_gantts[0].show_simulation(self._exec_ms[0], f"measured on {run.device} (ms)", fit_time=False)
        self.exec_gantts[1].show_simulation(self._exec_ms[1], "simulated from measured op times (ms)",
                                            fit_time=False)   # linked: one range for both, set below
        t_max = max(ms.makespan, run.simulated.makespan) * 1e3
        self.exec_gantts[0].set_time_range(t_max)
        costs = ", ".join(f"{OP_NAMES[k]} {v * 1e3:.2f} ms" for k, v in run.mean_costs.items())
        self.exec_info.setText(
            f"{KIND_LABELS.get(run.kind, run.kind)} on {run.device}: measured makespan {ms.makespan * 1e3:.1f} ms, "
            f"bubble / total {ms.bubble_fraction:.1%} (simulated {run.simulated.bubble_fraction:.1%}); "
            f"mean op times: {costs}. Peak in flight {ms.peak_in_flight}. Pipelined gradients vs one plain "
            f"forward/backward: max difference {run.max_grad_error:.1e}. Measured times include thread and "
            f"Python overhead; hand-offs between ranks are in-process (no network).")
        self._emit_timeline()

    # --- tensor parallel ------------------------------------------------------------------------
    def _update_tp(self) -> None:
        sc = self.scenario
        self.tp_error.show_error(None)
        try:
            self.tp_steps = tp_layer_steps(sc.tp, sc.sequence_parallel, sc.arch.hidden, sc.arch.ffn, sc.seq_len,
                                           sc.micro_batch, 4 if sc.precision == "fp32" else 2)
        except ValidationError as exc:
            self.tp_error.show_error(str(exc))
            return
        counts = collective_counts(self.tp_steps)
        parts = []
        for phase in ("forward", "backward"):
            cs = ", ".join(f"{n} {c}" for c, n in counts[phase].items() if n)
            parts.append(f"{phase}: {cs or 'no collectives'}")
        total = sum(s.bytes_per_gpu for s in self.tp_steps) / 1e6
        self.tp_counts.setText(f"Per layer, per micro-batch ({sc.arch.label}, t = {sc.tp}"
                               f"{', SP on' if sc.sequence_parallel else ''}): " + "; ".join(parts) +
                               f". Ring traffic per GPU per layer: {total:,.1f} MB "
                               "(TP and TP+SP move the same bytes)."
                               + (" <b>t = 1: one GPU holds every matrix whole, so the all-reduces have nothing to "
                                  "sum.</b> Raise t (2 to 8, within a node) to see the column-then-row split."
                                  if sc.tp == 1 else ""))
        self._tp_caption(0)
        if self._visible("tp"):
            self._draw_tp()
        else:
            self._stale.add("tp")

    def _draw_tp(self) -> None:
        self.tp_view.set_steps(self.tp_steps, self.scenario.tp, 0)

    def _tp_caption(self, i: int) -> None:
        if not self.tp_steps:
            return
        st = self.tp_steps[i]
        what = f"<b>{st.collective}</b> ({st.operator}), {st.bytes_per_gpu / 1e6:,.1f} MB sent per GPU" \
            if st.collective else (f"operator {st.operator}: identity in this pass" if st.operator else st.kind)
        self.tp_caption.setText(f"Step {i + 1}/{len(self.tp_steps)} — {st.phase}, {st.region}: <b>{st.label}</b>. "
                                f"Each GPU holds {st.shape_per_gpu}. {what}.")

    # --- 3D layout -------------------------------------------------------------------------------
    def _update_layout(self) -> None:
        sc = self.scenario
        self.layout3d = layout_from_scenario(sc)
        summ = self.layout3d.summary()
        nv = f"NVLink {self._gpu_nvlink(sc):,.0f} GB/s"
        net = f"network {sc.internode_gbps:,.0f} GB/s per GPU"
        lines = [f"<b>{sc.n_gpus} GPUs = DP {sc.dp} × TP {sc.tp} × PP {sc.pp}</b> on {self.layout3d.n_nodes} node(s) "
                 f"of {sc.gpus_per_node}. Squares show the global rank = tp + TP·(dp + DP·pp) (Megatron order), "
                 "so TP rank = rank mod TP; shade and hatch = pipeline stage."]
        names = {"tp": "TP groups (solid red line: one example)", "dp": "DP groups (dashed)", "pp": "PP groups (dotted)"}
        for kind, s in summ.items():
            if s["size"] <= 1:
                lines.append(f"{names[kind]}: size 1, no communication.")
                continue
            where = "all inside a node → " + nv if s["intra_node"] == s["groups"] else \
                ("all across nodes → " + net if s["intra_node"] == 0 else
                 f"{s['intra_node']} of {s['groups']} inside a node")
            lines.append(f"{names[kind]}: {s['groups']} group{'s' if s['groups'] != 1 else ''} of {s['size']}, {where}.")
        if self.layout3d.n_nodes > LayoutView.MAX_NODES:
            lines.append(f"<i>Drawing the first {LayoutView.MAX_NODES} of {self.layout3d.n_nodes} nodes.</i>")
        self.layout_text.setText("<br>".join(lines))
        try:
            from engines.memory import per_stage_memory

            self.stage_memory = per_stage_memory(sc)
            self.layout_error.show_error(None)
        except ValidationError as exc:
            self.stage_memory = []
            self.layout_error.show_error(str(exc))
        if self._visible("layout"):
            self._draw_layout()
        else:
            self._stale.add("layout")

    @staticmethod
    def _gpu_nvlink(sc) -> float:
        from engines.hardware import gpu

        return gpu(sc.gpu).nvlink_gbps

    def _draw_layout(self) -> None:
        self.layout_view.set_layout(self.layout3d)
        self._draw_memory()

    def _draw_memory(self) -> None:
        """Per-stage stacked bars from engines.memory, updated in place."""
        from engines.hardware import gpu

        th, stages = self.theme, self.stage_memory
        xs = list(range(len(stages)))
        base = [0.0] * len(stages)
        for item, (attr, _, color) in zip(self.memory_bars, MEMORY_PARTS):
            vals = [getattr(st, attr) / 1e9 + (st.reserve / 1e9 if attr == "buffers" else 0) for st in stages]
            item.setOpts(x=xs, y0=base, height=vals, width=0.7, brush=th.color(color), pen=th.fg)
            base = [b + v for b, v in zip(base, vals)]
        self.memory_totals.begin()
        font = QFont()
        font.setPointSizeF(th.point_size * 0.85)
        for i, total in enumerate(base):  # the number on each bar: colour is never the only cue
            self.memory_totals.add(f"{total:.1f} GB", (i, total), (0.5, 1), th.fg, font)
        cap = gpu(self.scenario.gpu).memory_bytes / 1e9
        self.memory_totals.add(f"GPU memory {cap:.0f} GB", (len(stages) - 0.45, cap), (1, 1), th.fg, font)
        self.memory_totals.end()
        self.memory_cap.setPos(cap)
        self.memory_cap.setPen(pg.mkPen(th.error, width=2, style=Qt.DashLine))
        self.memory_plot.getAxis("bottom").setTicks([[(i, f"{i} ({st.layers} L)") for i, st in enumerate(stages)]])
        self.memory_plot.setXRange(-0.6, max(len(stages), 1) - 0.4, padding=0)
        # room above the tallest thing (bars or the memory line and its label) for the legend
        view_px = max(self.memory_plot.getViewBox().height(), 150.0)
        legend_px = self.memory_legend.height() + 2.5 * QFontMetrics(font).height()
        top = range_end_for_label(max(max(base, default=0), cap), 0.0, legend_px, view_px, 0.4 * view_px)
        self.memory_plot.setYRange(0, top, padding=0)

    # --- timeline / export -------------------------------------------------------------------
    def _tab(self) -> str:
        return TABS[self.tabs.currentIndex()]

    def timeline(self) -> TimelineSpec | None:
        tab = self._tab()
        if tab == "tp":
            return TimelineSpec(max(1, len(self.tp_steps)),
                                [(0, "forward")] + [(i, "backward") for i, s in enumerate(self.tp_steps)
                                                    if s.phase == "backward"][:1], fps=1.5)
        if tab == "layout":
            return None
        sims = self._timeline_sims()
        if not sims:
            return None
        chapters = [(0, "warm-up")]
        first = sims[0]
        t_max = max(s.makespan for s in sims)
        b_start = min((o.start for o in first.ops if o.action.op in ("B", "I")), default=None)
        f_end = max((o.start for o in first.ops if o.action.op == "F"), default=None)
        for t, name in ((b_start, "first backward"), (f_end, "last forward: drain")):
            if t is not None and t_max > 0:
                chapters.append((int(round(t / t_max * (GANTT_FRAMES - 1))), name))
        return TimelineSpec(GANTT_FRAMES, sorted(set(chapters)), fps=20.0)

    def _timeline_sims(self) -> list:
        if self._tab() == "executed":
            if self.executed is None:
                return []
            return self._exec_ms
        return [s[2] for s in self.sims if s]

    def show_frame(self, index: int) -> None:
        tab = self._tab()
        if tab == "tp":
            if self.tp_steps:
                self.tp_view.set_current(index)
                self._tp_caption(max(0, min(index, len(self.tp_steps) - 1)))
            return
        sims = self._timeline_sims()
        if not sims:
            return
        t = max(s.makespan for s in sims) * index / (GANTT_FRAMES - 1)
        views = self.exec_gantts if tab == "executed" else self.gantts
        for g in views:
            g.set_cursor(t)

    def result(self) -> object:
        out = {"schedules": [], "tp_steps": [vars(s) for s in self.tp_steps]}
        for s in self.sims:
            if s:
                kind, v, sim = s
                out["schedules"].append({"kind": kind, "chunks": v, "makespan": sim.makespan,
                                         "bubble_over_total": sim.bubble_fraction,
                                         "bubble_over_ideal": sim.bubble_over_ideal,
                                         "peak_in_flight": sim.peak_in_flight, "costs": sim.costs,
                                         "ops": sim.rows()})
        if self.executed is not None:
            ex = self.executed
            out["executed"] = {"kind": ex.kind, "device": ex.device, "mean_costs_s": ex.mean_costs,
                               "max_grad_error": ex.max_grad_error, "ops": ex.rows()}
        if self.layout3d is not None:
            out["layout"] = {"summary": self.layout3d.summary(), "n_nodes": self.layout3d.n_nodes}
        out["stage_memory"] = [dict(vars(st), total=st.total) for st in self.stage_memory]
        return out

    def table(self) -> list[dict]:
        rows = []
        for side, s in zip(("left", "right"), self.sims):
            if s:
                rows += [dict(r, schedule=s[0], side=side) for r in s[2].rows()]
        return rows

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        if not hasattr(self, "gantts"):
            return
        for g in (*self.gantts, *self.exec_gantts):
            g.apply_theme(theme)
        self.tp_view.theme = self.layout_view.theme = theme
        for w in (self.context_line, *self.formula, self.tp_caption, self.tp_counts, self.layout_text):
            w.reset_height()
        if self.scenario is None:
            return
        for tab in ("tp", "layout"):
            if self._visible(tab):
                {"tp": self._draw_tp, "layout": self._draw_layout}[tab]()
            else:
                self._stale.add(tab)

    def selftest(self) -> None:
        super().selftest()
        for i in range(len(KINDS)):
            self.kind[1].setCurrentIndex(i)
            if self.sims[1] is None and "not drawn" not in self.formula[1].text():
                raise RuntimeError(f"schedule {KINDS[i]} did not draw: {self.formula[1].text()}")
        self.t_b.setValue(3.0)
        self._recompute()
        for tab in range(len(TABS)):
            self.tabs.setCurrentIndex(tab)
            spec = self.timeline()
            if spec:
                for f in (0, spec.n_frames // 2, spec.n_frames - 1):
                    self.show_frame(f)
        self.tabs.setCurrentIndex(0)


def _chunks(kind: str, v: int) -> int:
    """Model chunks per rank: v for interleaving, 2 for the V-shaped ZB-V, else 1."""
    return {"interleaved-1f1b": v, "zb-v": 2}.get(kind, 1)


def _in_ms(sim):
    """A copy of a measured Simulation with times in milliseconds, for readable axes."""
    from dataclasses import replace

    from engines.pipeline import TimedOp

    return replace(sim, ops=[TimedOp(o.rank, o.action, o.start * 1e3, o.end * 1e3) for o in sim.ops],
                   makespan=sim.makespan * 1e3, busy=[b * 1e3 for b in sim.busy],
                   in_flight=[[(t * 1e3, c) for t, c in steps] for steps in sim.in_flight])


PANEL = PipelinePanel
