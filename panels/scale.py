"""Training at scale: MFU, the checkpoint interval, failures on a run timeline, triage habits, and a
real data-parallel run with injected faults to triage (its own page).

A thin view over :mod:`engines.scale`: the analytic answers (``scale_analysis``: MFU, Young/Daly,
expected goodput, interruptions per day) are drawn at once on every edit; the Monte Carlo check and
the simulated run (``simulate_failures``) go to a background job, debounced so a burst of edits
simulates once, while the previous result stays visible (dimmed) until it lands. The fault run
(``engines.scale.faults.fault_study``) is the "faults" job: it starts when its page is shown or its
knobs change while it is shown.
"""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QGridLayout, QPushButton, QSpinBox, QWidget

from engines.core.result_cache import EngineCall, engine_call
from engines.core.scenario import Scenario
from engines.scale.faults import FaultStudy, fault_study, from_params, summary
from engines.scale.params import FAULT_FIELDS
from engines.scale import (ZOOM_INTERVALS, FailureSimulation, Params, RunResult, ScaleAnalysis, daly_interval,
                           llama3_interruptions, scale_analysis, simulate_failures)
from explorer.binder import ParamBinder, ScenarioBinder, param_slider
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.live_text import pin_size
from explorer.panel import Panel, TimelineSpec
from explorer.ui.widgets import ErrorLabel, Tabs
from panels._scale_charts import STALE_OPACITY, GoodputView, MfuGauge
from panels._scale_faults import FAULT_NAMES, FaultRunView
from panels._scale_views import ClusterAndTriage, RunTimeline

N_FRAMES = 240
DEBOUNCE_MS = 150
SLIDERS = ("mfu_pct", "checkpoint_min", "restart_min")
FAULT_TAB = "Fault run and triage"
ZOOM_LABELS = {12: "view: 12 checkpoint intervals", 60: "view: 60 checkpoint intervals", 0: "view: whole run"}


class ScalePanel(Panel):
    key = "scale"
    title = "Training at scale"
    order = 60
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "tp", "pp", "seq_len", "micro_batch", "grad_accum",
                       "recompute", "precision"})
    lesson = "scale.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.data = llama3_interruptions()
        self.analysis: ScaleAnalysis | None = None
        self.sim: FailureSimulation | None = None
        self._frame = 0
        self._refresh = self.debounce(self._start_simulation, DEBOUNCE_MS)
        self.fault_study: FaultStudy | None = None
        self._fault_key = None          # what the fault study on screen was run for
        self._fault_timer = self.debounce(self._start_fault_run, DEBOUNCE_MS)

        controls = FlowLayout()     # wraps at presenter font sizes instead of pushing the panel sideways
        self.sliders = {name: param_slider(Params, name) for name in SLIDERS}
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setRange(*Scenario.limits("n_gpus"))
        self.gpus_spin.setPrefix("GPUs: ")
        self.gpus_spin.setKeyboardTracking(False)
        self.gpus_spin.setAccessibleName("Number of GPUs in the cluster")
        self.llama_button = QPushButton("Llama 3 405B run")
        self.llama_button.setToolTip("16,384 H100s, TP 8 × PP 16, 8K sequences (Dubey et al. 2024, Table 4)")
        self.llama_button.clicked.connect(self._llama3_preset)
        self.zoom_box = QComboBox()
        self.zoom_box.addItems([ZOOM_LABELS[n] for n in ZOOM_INTERVALS])
        self.zoom_box.setAccessibleName("Run timeline zoom around the cursor")
        self.zoom_box.setToolTip("The run is long: follow the cursor with a window of this many checkpoint "
                                 "intervals, or show the whole run")
        for w in (*self.sliders.values(), self.gpus_spin, self.llama_button, self.zoom_box, self.tasks.widget()):
            controls.addWidget(w)
        self.body.addLayout(controls)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.fault_view = FaultRunView(self.theme, self.jobs("faults").widget())
        self.binder = ParamBinder(self, {**self.sliders, "zoom_intervals": self.zoom_box, **self.fault_view.widgets()},
                                  choices={"zoom_intervals": ZOOM_LABELS, "fault_kind": FAULT_NAMES},
                                  error=self.error.show_error)
        self.scenario_binder = ScenarioBinder(self.ctx.scenario, {"n_gpus": self.gpus_spin}, self,
                                              error=self.error.show_error)

        grid = QGridLayout()                    # each chart with its readout is one view (a tour's focus)
        self.gauge_view = MfuGauge(self.theme)
        grid.addWidget(self.gauge_view, 0, 0)
        self.goodput_view = GoodputView(self.theme)
        grid.addWidget(self.goodput_view, 0, 1)
        self.run_view = RunTimeline(self.theme)
        grid.addWidget(self.run_view, 1, 0)
        self.cluster_view = ClusterAndTriage(self.theme, self.data)
        grid.addWidget(self.cluster_view, 1, 1)
        for name, widget, title in (("mfu", self.gauge_view, "Model FLOPs utilization"),
                                    ("goodput", self.goodput_view, "Goodput against checkpoint interval"),
                                    ("run", self.run_view, "One simulated run"),
                                    ("cluster", self.cluster_view.page, "Cluster size against interruptions"),
                                    ("triage", self.cluster_view.triage, "Triage checklist"),
                                    ("gpus", self.gpus_spin, "Number of GPUs"),
                                    ("llama3", self.llama_button, "Llama 3 405B run"),
                                    ("faults", self.fault_view, "A real run with injected faults"),
                                    ("fault_loss", self.fault_view.loss_box, "Loss of the faulty and the clean run"),
                                    ("fault_grad", self.fault_view.grad_plot, "Gradient norm of both runs"),
                                    ("fault_log", self.fault_view.log_box, "Alarms and triage actions")):
            self.name_view(name, widget, title)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        failures = QWidget()
        failures.setLayout(grid)
        self.pages = Tabs()
        self.pages.addTab(failures, "Checkpoints and failures")
        self.pages.addTab(self.fault_view, FAULT_TAB)
        self.pages.currentChanged.connect(lambda _i: self._maybe_run_faults())
        self.body.addWidget(self.pages, 1)

    # --- scenario and parameters ------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self._recompute()           # the GPU count's control follows through self.scenario_binder

    def params_updated(self, changed: frozenset[str]) -> None:
        if changed - {"zoom_intervals"} - FAULT_FIELDS:
            self._recompute()
        if changed & FAULT_FIELDS:
            self.jobs("faults").cancel()    # a run for other knobs is never drawn, its page shown or not
            self._maybe_run_faults()
        if "zoom_intervals" in changed:
            self.show_frame(self._frame)

    def _llama3_preset(self) -> None:
        err = self.ctx.scenario.try_update(model="llama3-405b", gpu="h100-sxm", n_gpus=16384, tp=8, pp=16,
                                           seq_len=8192, micro_batch=1, grad_accum=16)
        self.error.show_error(err)

    @property
    def run(self) -> RunResult | None:
        return self.sim.run if self.sim is not None else None

    def _recompute(self) -> None:
        """The analytic part (a few ms, inline); then schedule the simulation if what it depends on moved."""
        try:
            analysis = scale_analysis(self.ctx.scenario.value, self.params, self.data)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.error.show_error(None)
        old, self.analysis = self.analysis, analysis
        self._draw()
        if old is None or old.checkpoint.failure_key != analysis.checkpoint.failure_key:
            self._schedule_simulation()              # MFU-only edits keep the simulation

    # --- background simulation --------------------------------------------------------------
    def _schedule_simulation(self) -> None:
        """Run at once the first time; afterwards wait for the edits to settle (the old result stays, dimmed)."""
        if self.sim is None and not self.tasks.running and not self._refresh.isActive():
            self._start_simulation()
            return
        self.tasks.cancel()
        self.goodput_view.set_stale(True)
        self.run_view.set_opacity(STALE_OPACITY)
        self._refresh.start()

    def _start_simulation(self) -> None:
        self._refresh.stop()
        if self.analysis is None:
            return
        self.tasks.run(_simulation_call(self.analysis, self.data), self._simulated, label="simulating failures",
                       on_error=self.error.show_error)

    def _simulated(self, sim: FailureSimulation) -> None:
        if self.analysis is None or sim.key != self.analysis.checkpoint.failure_key:
            return
        self.sim = sim
        self.goodput_view.show_simulation(sim)
        self.run_view.show_result(sim.run)
        self.timeline_changed.emit()
        self.show_frame(self._frame)

    # --- the fault run (its own page and job slot) ------------------------------------------
    def _fault_request(self):
        config, faults = from_params(self.params)
        return config, faults, self.ctx.device

    def _maybe_run_faults(self) -> None:
        """Debounce a fault run if its page is shown and the study on screen is not for these knobs."""
        if self.pages.currentWidget() is not self.fault_view or self._fault_request() == self._fault_key:
            return
        self.jobs("faults").cancel()
        self.fault_view.set_stale(self.fault_study is not None)
        self._fault_timer.start()

    def _start_fault_run(self) -> None:
        self._fault_timer.stop()
        if self.pages.currentWidget() is not self.fault_view:
            return
        request = self._fault_request()
        self.jobs("faults").run(_fault_call(self.params, self.ctx.device),
                                lambda study: self._fault_done(request, study), label="training with faults",
                                on_error=self.error.show_error)

    def _fault_done(self, request, study: FaultStudy) -> None:
        self._fault_key, self.fault_study = request, study
        self.fault_view.show_result(study)

    @classmethod
    def planned_jobs(cls, scenario, params, tabs, device) -> list[EngineCall]:
        data = llama3_interruptions()
        calls = [_simulation_call(scale_analysis(scenario, params, data), data)]
        if tabs[:1] == (FAULT_TAB,):
            calls.append(_fault_call(params, device))
        return calls

    # --- drawing (the views update existing items only) -----------------------------------------
    def _draw(self) -> None:
        a = self.analysis
        if a is None:
            return
        self.gauge_view.show_result(a)
        self.goodput_view.show_result(a.checkpoint)
        self.cluster_view.show_result(a.checkpoint)

    def timeline(self) -> TimelineSpec | None:
        chapters = [(0, "start")]
        if self.run is not None:
            for f in self.run.failures[:12]:
                chapters.append((int(f.time / self.run.wall_seconds * (N_FRAMES - 1)), f"failure: {f.cause}"))
        return TimelineSpec(n_frames=N_FRAMES, chapters=chapters, fps=12.0, start=N_FRAMES - 1)  # the whole run

    def show_frame(self, index: int) -> None:
        self._frame = max(0, min(int(index), N_FRAMES - 1))
        if self.run is not None:
            self.run_view.show_at(self.run.wall_seconds * self._frame / (N_FRAMES - 1), self.params.zoom_intervals)

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        pin_size(self.tasks.widget(), 40)
        for view in (self.gauge_view, self.goodput_view, self.cluster_view, self.run_view, self.fault_view):
            view.apply_theme(theme)

    def result(self) -> object:
        a, run = self.analysis, self.run
        if a is None:
            return None
        c = a.checkpoint
        return {"throughput": a.throughput, "job_mtbf_s": c.mtbf_seconds, "checkpoint_s": c.checkpoint_seconds,
                "restart_s": c.restart_seconds, "young_s": c.young_seconds, "daly_s": c.daly_seconds,
                "best_goodput": c.best_goodput, "run_goodput": run.goodput if run else None,
                "failures": [f.__dict__ for f in run.failures] if run else [], "llama3_note": self.data.note,
                "measured": self._fault_result()}

    def _fault_result(self) -> dict | None:
        """The fault run, under ``measured``: a real run, so its seconds differ from one run to the next."""
        if self.fault_study is None:
            return None
        run = self.fault_study.run
        return {"fault_run": summary(self.fault_study), "fault_alarms": [a.__dict__ for a in run.alarms],
                "fault_actions": [a.__dict__ for a in run.actions]}

    def table(self) -> list[dict]:
        if self.analysis is None:
            return []
        c = self.analysis.checkpoint
        return [{"interval_min": float(x) / 60, "expected_goodput": float(g)}
                for x, g in zip(c.intervals_seconds, c.goodput)]

    def selftest(self) -> None:
        self.update_params(mfu_pct=45, checkpoint_min=5.0)
        c = self.analysis.checkpoint
        assert abs(self.analysis.throughput.mfu - 0.45) < 1e-9
        assert abs(c.daly_seconds - daly_interval(300, c.mtbf_seconds)) < 1e-6
        if not self.settle():
            raise RuntimeError(self.tasks.last_error or "the run simulation did not finish")
        spec = self.timeline()
        for zoom in ZOOM_INTERVALS:
            self.update_params(zoom_intervals=zoom)
            for i in (0, spec.n_frames // 2, spec.n_frames - 1):
                self.show_frame(i)
        self.update_params(zoom_intervals=ZOOM_INTERVALS[0])
        self.update_params(fault_kind="weight_flip", replicas=3, fault_replica=2)   # hidden page: nothing trains
        assert not self.jobs("faults").running and not self._fault_timer.isActive()
        self.update_params(fault_kind=Params().fault_kind, replicas=Params().replicas, fault_replica=Params().fault_replica)


def _simulation_call(analysis: ScaleAnalysis, data) -> EngineCall:
    return engine_call(simulate_failures, analysis.checkpoint, data)


def _fault_call(params: Params, device: str) -> EngineCall:
    config, faults = from_params(params)
    return engine_call(fault_study, config, faults, device)


PANEL = ScalePanel
