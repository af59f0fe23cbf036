"""Pipeline, tensor and 3D parallelism: schedules animated and executed, the TP split, the rank grid.

Binding code only: the knobs are ``engines.pipeline.Params``; schedules compared, the executed
run, TP steps, the rank grid and per-stage memory all come from ``engines.pipeline.study``.
"""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QTabWidget

from engines.core.errors import ValidationError
from engines.pipeline import (KIND_LABELS, KINDS, ExecRequest, LayoutStudy, Params, PipelineShape, ScheduleRequest,
                              TPStudy, compare_schedules, layout_study, pipeline_shape, run_executed, schedule_request,
                              timeline_marks, tp_study)
from explorer.binder import ParamBinder, quiet
from explorer.panel import Panel, TimelineSpec
from panels._pipeline_pages import (ExecutedPage, LayoutPage, SchedulesPage, TPPage, int_spin, named_views,
                                    param_spin)
from panels._pipeline_views import gantt_geometry

GANTT_FRAMES = 240
PREVIEW_MAX_OPS = 256  # p·m·v above this: cost sliders redraw on release only
TABS = ("schedules", "executed", "tp", "layout")
SYNC_MAX_OPS = 512  # p·m·v per side up to which an edit simulates at once (a few ms); above: in the worker
DEBOUNCE_MS = 150  # a burst of edits to a big schedule runs one simulation


class PipelinePanel(Panel):
    key = "pipeline"
    title = "Pipeline and tensor parallelism"
    order = 30
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "tp", "pp", "grad_accum", "micro_batch",
                       "seq_len", "sequence_parallel", "precision", "strategy", "optimizer", "recompute",
                       "offload_optimizer", "offload_params", "internode_gbps"})
    lesson = "pipeline.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scenario = None
        self.shape: PipelineShape | None = None  # the p, m drawn: the scenario's, or the demonstration's at PP = 1
        self.sims: list = [None, None]        # engines.pipeline.SideResult per side, None when not drawn
        self.executed = None                  # engines.pipeline.ExecutedRun
        self.exec_view = None                 # engines.pipeline.ExecutedView: the run in milliseconds
        self.tp: TPStudy | None = None
        self.grid_study: LayoutStudy | None = None
        self._inputs: dict[str, object] = {}  # view group → the inputs its data was computed from
        self._stale: set[str] = set()  # tabs whose drawing waits until they are shown
        self._sched_pending: ScheduleRequest | None = None
        self._spec_key: object = None
        # slots: "executed" is the torch run; "main" (self.tasks) the schedule simulations, started after it
        self.jobs("executed").finished.connect(lambda _how: self._start_schedule_task())
        self._debounce = self.debounce(self._start_schedule_task, DEBOUNCE_MS)
        self.tabs = QTabWidget()
        self._build_pages()
        self.tabs.addTab(self.schedules_page, "Schedules")
        self.tabs.addTab(self.executed_page, "Executed on torch")
        self.tabs.addTab(self.tp_page, "Tensor parallel")
        self.tabs.addTab(self.layout_page, "3D layout")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.body.addWidget(self.tabs, 1)
        self.binder = ParamBinder(self, {"left_kind": self.kind[0], "right_kind": self.kind[1], "v": self.v_spin,
                                         **self.costs, "hidden": self.hidden_spin},
                                  choices={"left_kind": KIND_LABELS, "right_kind": KIND_LABELS},
                                  error=self.sched_error.show_error)
        for name, widget, title in named_views(self.schedules_page, self.executed_page, self.tp_page,
                                               self.layout_page):
            self.name_view(name, widget, title)    # what tour steps focus on and highlight

    # --- construction ---------------------------------------------------------------------
    def _build_pages(self) -> None:
        self.schedules_page = page = SchedulesPage(self.theme, Params, KINDS, KIND_LABELS)
        page.p_spin.valueChanged.connect(lambda v: self._edit_shape(pp=int(v)))
        page.m_spin.valueChanged.connect(lambda v: self._edit_shape(grad_accum=int(v)))
        page.demo_button.clicked.connect(self.apply_demo)
        for name, slider in page.costs.items():
            slider.valueChanging.connect(lambda value, n=name: self._preview(n, value))
        for name in ("kind", "p_spin", "m_spin", "v_spin", "costs", "sched_error", "context_line", "demo_button",
                     "gantts", "formula"):
            setattr(self, name, getattr(page, name))
        self.hidden_spin = param_spin(Params, "hidden")
        self.executed_page = ExecutedPage(self.theme, self.hidden_spin, self.jobs("executed").widget())
        self.executed_page.run_button.clicked.connect(self.run_executed)
        for name in ("exec_info", "exec_error", "exec_gantts"):
            setattr(self, name, getattr(self.executed_page, name))
        self.tp_page = TPPage(self.theme, int_spin(1, 64, "t: tensor-parallel GPUs (scenario TP)"))
        self.tp_page.tp_spin.valueChanged.connect(lambda v: self._edit_scenario(tp=int(v)))
        self.tp_page.sp_check.toggled.connect(lambda on: self._edit_scenario(sequence_parallel=bool(on)))
        for name in ("tp_spin", "sp_check", "tp_error", "tp_view", "tp_caption", "tp_counts"):
            setattr(self, name, getattr(self.tp_page, name))
        self.layout_page = LayoutPage(self.theme)
        for name in ("layout_view", "layout_text"):
            setattr(self, name, getattr(self.layout_page, name))

    # --- what tests and exports read ------------------------------------------------------
    @property
    def tp_steps(self) -> list:
        return list(self.tp.steps) if self.tp is not None else []

    @property
    def layout3d(self):
        return self.grid_study.layout if self.grid_study is not None else None

    @property
    def stage_memory(self) -> list:
        return list(self.grid_study.stage_memory) if self.grid_study is not None else []

    # --- scenario and parameters ------------------------------------------------------------
    def _edit_scenario(self, **changes) -> None:
        err = self.ctx.scenario.try_update(**changes)  # success redraws through set_scenario
        if err:
            target = self.tp_error if ("tp" in changes or "sequence_parallel" in changes) else self.sched_error
            target.show_error(err)
        if self.scenario is not None:
            self._sync_controls(self.scenario)  # an edit refused or changing nothing: back to what is drawn

    def _edit_shape(self, **change: int) -> None:
        """p or m edited: on a demonstration both shown values go into the scenario (one undoable
        edit), so the schedules keep what the controls show."""
        self._edit_scenario(**(self.shape.scenario_changes(**change) if self.shape and self.shape.demo else change))

    def apply_demo(self) -> None:
        """Make the demonstration's p and m the scenario's PP and gradient accumulation (undoable)."""
        if self.shape is not None and self.shape.demo:
            self._edit_scenario(**self.shape.scenario_changes())

    def _sync_controls(self, sc) -> None:
        shape = self.shape or pipeline_shape(sc.pp, sc.grad_accum)
        for w, v in ((self.p_spin, shape.p), (self.m_spin, shape.m), (self.tp_spin, sc.tp),
                     (self.sp_check, sc.sequence_parallel)):
            with quiet(w):
                w.setChecked(v) if isinstance(w, QCheckBox) else w.setValue(v)

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
        self.shape = shape = pipeline_shape(sc.pp, sc.grad_accum)
        self._sync_controls(sc)
        self.schedules_page.show_context(sc, shape)
        if self._changed("schedules", (shape.p, shape.m, sc.arch.layers)):
            self._recompute()
        if self._changed("tp", (sc.tp, sc.sequence_parallel, sc.arch, sc.seq_len, sc.micro_batch, sc.precision)):
            self._update_tp()
        if self._changed("layout", sc):
            self._update_layout()
        self._emit_timeline()

    def params_updated(self, changed: frozenset[str]) -> None:
        if changed - {"hidden"}:      # the width is read when the executed mode runs
            self._recompute()

    def _visible(self, tab: str) -> bool:
        return self._tab() == tab

    def _tab_changed(self, _index: int) -> None:
        tab = self._tab()
        if tab in self._stale:
            self._stale.discard(tab)
            self._draw(tab)
        self._emit_timeline()

    def _draw(self, tab: str) -> None:
        {"schedules": self.schedules_page, "tp": self.tp_page, "layout": self.layout_page}[tab].draw()

    def _draw_or_defer(self, tab: str) -> None:
        if self._visible(tab):
            self._draw(tab)
        else:
            self._stale.add(tab)

    def _emit_timeline(self) -> None:
        """Tell the player only when the spec changed: a new spec stops playback and costs a redraw."""
        key = (self._tab(), self.timeline())
        if key != self._spec_key:
            self._spec_key = key
            self.timeline_changed.emit()

    # --- schedules ----------------------------------------------------------------------------
    def _preview(self, name: str, value: float) -> None:
        """Live redraw while a cost slider drags, when the schedules are small enough to stay smooth
        (the dragged value is shown, not recorded: the release makes the undoable edit)."""
        if self.scenario is None:
            return
        try:
            params = Params.from_dict({**self.params.to_dict(), name: int(round(value)) if
                                       isinstance(getattr(self.params, name), int) else float(value)})
        except ValidationError:
            return
        if self._request(params).ops() <= PREVIEW_MAX_OPS:
            self._recompute(params)

    def _request(self, params: Params) -> ScheduleRequest:
        return schedule_request(params, self.shape.p, self.shape.m, self.scenario.arch.layers)

    def _recompute(self, params: Params | None = None) -> None:
        """Small schedules simulate now (a few ms); big ones go to the worker after a short pause, the
        previous drawing staying up until the new one arrives."""
        if self.scenario is None:
            return
        req = self._request(params or self.params)
        if req.ops() <= SYNC_MAX_OPS:
            self._debounce.stop()
            self._sched_pending = None
            self.tasks.cancel()     # a simulation still running is older than this drawing: never draw it
            self._show_schedules(compare_schedules(req), [None, None])
            return
        self._sched_pending = req
        if any(self.sims):
            self._debounce.start()
        else:
            self._start_schedule_task()  # nothing drawn yet: no reason to wait

    def _start_schedule_task(self) -> None:
        req = self._sched_pending
        if req is None or self.jobs("executed").running:  # never slow a running execution: start when it ends
            return
        self._sched_pending = None
        theme = self.theme

        def work(progress, cancelled):
            progress(0.0, f"simulating p={req.p}, m={req.m}")
            result = compare_schedules(req, cancelled)
            return result, [gantt_geometry(s.sim, theme) if s.sim else None for s in result.sides]  # drawing too

        self.tasks.run(work, lambda out: self._show_schedules(*out),   # the slot drops an older run's result
                       label=f"Simulating {req.p} × {req.m} schedules…")

    def _show_schedules(self, result, geometry) -> None:
        self.sims = [None if r.error else r for r in result.sides]
        self.schedules_page.show_result(result, geometry)
        self._draw_or_defer("schedules")
        self._emit_timeline()

    # --- executed -----------------------------------------------------------------------------
    def run_executed(self) -> None:
        if self.scenario is None:
            return
        req = ExecRequest.of(self.params, self.shape.p, self.shape.m, self.ctx.device)  # the p, m drawn
        self.exec_error.show_error(None)

        def work(progress, cancelled):
            try:
                return run_executed(req, progress, cancelled)
            except ValidationError as exc:
                return exc

        self.jobs("executed").run(work, self._executed_done, label=f"Executing {KIND_LABELS[req.kind]} on {req.device}")

    def _executed_done(self, view) -> None:
        if isinstance(view, ValidationError):
            self.exec_error.show_error(str(view))
            return
        self.exec_view, self.executed = view, view.run
        self.executed_page.show_result(view)
        self._emit_timeline()

    # --- tensor parallel and the 3D layout --------------------------------------------------------
    def _update_tp(self) -> None:
        self.tp_error.show_error(None)
        try:
            self.tp = tp_study(self.scenario)
        except ValidationError as exc:
            self.tp_error.show_error(str(exc))
            return
        self.tp_page.show_result(self.tp)
        self._draw_or_defer("tp")

    def _update_layout(self) -> None:
        self.grid_study = layout_study(self.scenario)
        self.layout_page.show_result(self.grid_study)
        self._draw_or_defer("layout")

    # --- timeline / export -------------------------------------------------------------------
    def _tab(self) -> str:
        return TABS[self.tabs.currentIndex()]

    def timeline(self) -> TimelineSpec | None:
        tab = self._tab()
        if tab == "tp":
            steps = self.tp_steps
            return TimelineSpec(max(1, len(steps)), [(0, "forward")] + [(i, "backward") for i, s in enumerate(steps)
                                                                        if s.phase == "backward"][:1], fps=1.5)
        if tab == "layout":
            return None
        sims = self._timeline_sims()
        if not sims:
            return None
        chapters = [(0, "warm-up")]
        t_max = max(s.makespan for s in sims)
        for t, name in zip(timeline_marks(sims[0]), ("first backward", "last forward: drain")):
            if t is not None and t_max > 0:
                chapters.append((int(round(t / t_max * (GANTT_FRAMES - 1))), name))
        return TimelineSpec(GANTT_FRAMES, sorted(set(chapters)), fps=20.0)

    def _timeline_sims(self) -> list:
        if self._tab() == "executed":
            v = self.exec_view
            return [v.measured_ms, v.simulated_ms] if v is not None else []
        return [s.sim for s in self.sims if s]

    def show_frame(self, index: int) -> None:
        tab = self._tab()
        if tab == "tp":
            self.tp_page.show_step(index)
            return
        sims = self._timeline_sims()
        if not sims:
            return
        t = max(s.makespan for s in sims) * index / (GANTT_FRAMES - 1)
        (self.executed_page if tab == "executed" else self.schedules_page).set_cursor(t)

    def result(self) -> object:
        out = {"schedules": [], "tp_steps": [vars(s) for s in self.tp_steps]}
        if self.shape is not None:
            out["pipeline"] = {"p": self.shape.p, "m": self.shape.m, "demonstration": self.shape.demo}
        for s in self.sims:
            if s:
                sim = s.sim
                out["schedules"].append({"kind": s.kind, "chunks": s.chunks, "makespan": sim.makespan,
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
        return [dict(r, schedule=s.kind, side=side) for side, s in zip(("left", "right"), self.sims) if s
                for r in s.sim.rows()]

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        if not hasattr(self, "layout_page"):
            return
        for page in (self.schedules_page, self.executed_page, self.tp_page, self.layout_page):
            page.apply_theme(theme)
        if self.scenario is None:
            return
        for tab in ("tp", "layout"):
            if tab != "tp" or self.tp is not None:
                self._draw_or_defer(tab)

    def selftest(self) -> None:
        super().selftest()
        for i in range(len(KINDS)):
            self.kind[1].setCurrentIndex(i)
            if self.sims[1] is None and "not drawn" not in self.formula[1].text():
                raise RuntimeError(f"schedule {KINDS[i]} did not draw: {self.formula[1].text()}")
        self.update_params(t_b=3.0)
        for tab in range(len(TABS)):
            self.tabs.setCurrentIndex(tab)
            spec = self.timeline()
            if spec:
                for f in (0, spec.n_frames // 2, spec.n_frames - 1):
                    self.show_frame(f)
        self.tabs.setCurrentIndex(0)


PANEL = PipelinePanel
