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

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QComboBox, QGridLayout, QGroupBox, QPushButton, QSpinBox, QVBoxLayout, QWidget

from engines.core.scenario import Scenario
from engines.scale.faults import FaultStudy, fault_study, from_params, summary
from engines.scale.params import FAULT_FIELDS
from engines.scale import (MFU_REFERENCES, ZOOM_INTERVALS, FailureSimulation, Params, RunResult, ScaleAnalysis,
                           daly_interval, llama3_interruptions, scale_analysis, simulate_failures)
from explorer.binder import ParamBinder, ScenarioBinder, param_slider
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.label_layer import Label, label_layer
from explorer.ui.live_text import LiveText, pin_size
from explorer.panel import Panel, TimelineSpec
from explorer.ui.widgets import ErrorLabel, Tabs, brush, legend_below, log_axes, make_plot, pen
from explorer.ui.fast_items import Bars
from panels._scale_faults import FAULT_NAMES, FaultRunView
from panels._scale_views import ClusterAndTriage, RunTimeline, plain_log_ticks

N_FRAMES = 240
DEBOUNCE_MS = 150
STALE_OPACITY = 0.35
SLIDERS = ("mfu_pct", "checkpoint_min", "restart_min")
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
        self._goodput_ticks = None  # the goodput axis ticks shown now
        self._label_font = QFont()  # the optimum labels (set to the theme's size in apply_theme)
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

        grid = QGridLayout()
        gauge = self._build_gauge()
        grid.addWidget(gauge, 0, 0)
        goodput = QWidget()                     # each chart with its readout is one view (a tour's focus)
        goodput.setLayout(self._build_goodput())
        grid.addWidget(goodput, 0, 1)
        self.run_view = RunTimeline(self.theme)
        run = QWidget()
        run.setLayout(self.run_view.layout)
        grid.addWidget(run, 1, 0)
        self.cluster_view = ClusterAndTriage(self.theme, self.data)
        grid.addWidget(self.cluster_view.tabs, 1, 1)
        for name, widget, title in (("mfu", gauge, "Model FLOPs utilization"),
                                    ("goodput", goodput, "Goodput against checkpoint interval"),
                                    ("run", run, "One simulated run"),
                                    ("cluster", self.cluster_view.page, "Cluster size against interruptions"),
                                    ("triage", self.cluster_view.triage, "Triage checklist"),
                                    ("gpus", self.gpus_spin, "Number of GPUs"),
                                    ("llama3", self.llama_button, "Llama 3 405B run"),
                                    ("faults", self.fault_view.page, "A real run with injected faults"),
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
        self.pages.addTab(self.fault_view.page, "Fault run and triage")
        self.pages.currentChanged.connect(lambda _i: self._maybe_run_faults())
        self.body.addWidget(self.pages, 1)

    # --- construction: every plot item is made once and updated in place ---------------------
    def _build_gauge(self) -> QGroupBox:
        box = QGroupBox("Model FLOPs utilization")
        lay = QVBoxLayout(box)
        self.gauge = make_plot(self.theme, "", "", "MFU (% of dense bf16 peak)")
        self.gauge.setAccessibleName("MFU gauge")
        self.gauge.setMouseEnabled(x=False, y=False)
        self.gauge.getAxis("left").setTicks([[]])
        self.gauge_bg = Bars(x0=[0], y=[0], width=[100], height=0.6)
        self.gauge_bar = Bars(x0=[0], y=[0], width=[40], height=0.6)
        self.gauge.addItem(self.gauge_bg)
        self.gauge.addItem(self.gauge_bar)
        self.gauge_refs = []
        for value, name in MFU_REFERENCES:
            line = pg.InfiniteLine(pos=value, angle=90)
            label = pg.TextItem(name, anchor=(0, 1.0 if value < 40 else 0.0))
            label.setPos(value, 0.32 if value < 40 else -0.32)
            label.setZValue(5)
            self.gauge.addItem(line)
            self.gauge.addItem(label)
            self.gauge_refs.append((line, label))
        self.gauge.setXRange(0, 100, padding=0.02)
        self.gauge.setYRange(-0.95, 0.95, padding=0)
        lay.addWidget(self.gauge)
        self.formula = LiveText()
        lay.addWidget(self.formula)
        return box

    def _build_goodput(self) -> QVBoxLayout:
        gp = self.goodput_plot = make_plot(self.theme, "Goodput against checkpoint interval", "goodput (%)",
                                           "checkpoint interval, compute (min)")
        gp.setAccessibleName("Goodput against checkpoint interval")
        log_axes(gp, x=True)
        gp.setMouseEnabled(x=False, y=False)
        self.goodput_legend = legend_below(gp)
        self.exact_curve = gp.plot([], [], name="Daly's expected goodput")
        self.mc_bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), height=np.zeros(0))
        gp.addItem(self.mc_bars)
        self.mc_points = gp.plot([], [], pen=None, symbol="o", name="Monte Carlo (mean ± sd)")
        self.optimum_marks = {}     # the two optimum lines; their labels go to the plot's label layer
        for key, style in (("young", Qt.DashLine), ("daly", Qt.DotLine)):
            line = pg.InfiniteLine(angle=90)
            line.setPen(pen("#000000", 2, style))
            gp.addItem(line)
            self.optimum_marks[key] = (line, style)
        self.optimum_labels = label_layer(gp)
        self.goodput_text = LiveText()
        lay = QVBoxLayout()
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(gp, 1)
        lay.addWidget(self.goodput_text)
        return lay

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

    def _current_sim(self) -> FailureSimulation | None:
        """The simulation, if it belongs to the analysis on screen."""
        a, sim = self.analysis, self.sim
        return sim if a is not None and sim is not None and sim.key == a.checkpoint.failure_key else None

    # --- background simulation --------------------------------------------------------------
    def _schedule_simulation(self) -> None:
        """Run at once the first time; afterwards wait for the edits to settle (the old result stays, dimmed)."""
        if self.sim is None and not self.tasks.running and not self._refresh.isActive():
            self._start_simulation()
            return
        self.tasks.cancel()
        for item in (self.mc_points, self.mc_bars):
            item.setOpacity(STALE_OPACITY)
        self.run_view.set_opacity(STALE_OPACITY)
        self._refresh.start()

    def _start_simulation(self) -> None:
        self._refresh.stop()
        if self.analysis is None:
            return
        study, data = self.analysis.checkpoint, self.data

        def work(progress, cancelled):
            return simulate_failures(study, data, progress, cancelled)

        self.tasks.run(work, self._simulated, label="simulating failures", on_error=self.error.show_error)

    def _simulated(self, sim: FailureSimulation) -> None:
        if self.analysis is None or sim.key != self.analysis.checkpoint.failure_key:
            return
        self.sim = sim
        self._draw_monte_carlo()
        self.run_view.set_opacity(1.0)
        self.timeline_changed.emit()
        self.show_frame(self._frame)

    # --- the fault run (its own page and job slot) ------------------------------------------
    def _fault_request(self):
        config, faults = from_params(self.params)
        return config, faults, self.ctx.device

    def _maybe_run_faults(self) -> None:
        """Debounce a fault run if its page is shown and the study on screen is not for these knobs."""
        if self.pages.currentWidget() is not self.fault_view.page or self._fault_request() == self._fault_key:
            return
        self.jobs("faults").cancel()
        self.fault_view.set_stale(self.fault_study is not None)
        self._fault_timer.start()

    def _start_fault_run(self) -> None:
        self._fault_timer.stop()
        if self.pages.currentWidget() is not self.fault_view.page:
            return
        request = self._fault_request()
        config, faults, device = request

        def work(progress, cancelled):
            return fault_study(config, faults, device, progress, cancelled)

        self.jobs("faults").run(work, lambda study: self._fault_done(request, study), label="training with faults",
                                on_error=self.error.show_error)

    def _fault_done(self, request, study: FaultStudy) -> None:
        self._fault_key, self.fault_study = request, study
        self.fault_view.draw(study)

    # --- drawing (updates existing items only) -------------------------------------------------
    def _draw(self) -> None:
        a = self.analysis
        if a is None:
            return
        th, c = a.throughput, a.checkpoint
        pct = th.mfu * 100
        if self.gauge_bar.opts["width"][0] != pct:
            self.gauge_bar.setOpts(width=[pct])
        s = self.ctx.scenario.value
        self.formula.setText(
            f"<b>MFU {pct:.0f}%</b> = tokens/s × FLOPs/token ÷ (GPUs × peak)<br>"
            f"FLOPs/token = 6N + 12·L·H·Q·T = {th.flops_per_token_6n:.3g} + "
            f"{th.attention_flops_per_token:.3g} = <b>{th.flops_per_token:.3g}</b> "
            f"(attention {th.attention_share:.1%} at T = {s.seq_len:,})<br>"
            f"{th.n_gpus:,} × {th.peak_flops_per_gpu / 1e12:,.0f} TFLOP/s → <b>{th.tokens_per_second:,.0f} tokens/s</b> "
            f"({th.tokens_per_second_per_gpu:,.0f} per GPU, {th.achieved_tflops_per_gpu:.0f} TFLOP/s each); "
            f"HFU with {s.recompute} recompute {th.hfu:.0%}; step {th.step_seconds:.2f} s; "
            f"15T tokens in {th.days_for_tokens:,.0f} days. <i>(PaLM App. B)</i>")

        gp = self.goodput_plot
        minutes = c.intervals_seconds / 60
        self.exact_curve.setData(minutes, c.goodput * 100)
        ticks = plain_log_ticks(minutes[0], minutes[-1])
        if ticks != self._goodput_ticks:            # setTicks re-renders the axis even for the same ticks
            self._goodput_ticks = ticks
            gp.getAxis("bottom").setTicks(ticks)
        labels = []
        optima = {"young": c.young_seconds, "daly": c.daly_seconds}
        left = "young" if c.young_seconds <= c.daly_seconds else "daly"   # the left line's label goes left of it
        for key, name in (("young", "Young √(2δM)"), ("daly", "Daly")):
            anchor = (1.08, 0) if key == left else (-0.08, 0)   # a gap each side of the lines between them
            line, _style = self.optimum_marks[key]
            x = np.log10(optima[key] / 60)
            line.setPos(x)
            labels.append(Label(f"{name}\n{optima[key] / 60:.1f} min", float(x), c.best_goodput * 100 - 1, anchor,
                                self._label_font, self.theme.fg))
        self.optimum_labels.set_labels(labels)
        x_lo, x_hi = np.log10(minutes[0]), np.log10(minutes[-1])
        self._goodput_range(x=(x_lo - 0.02 * (x_hi - x_lo), x_hi + 0.02 * (x_hi - x_lo)))  # one range change
        self.goodput_text.setText(
            f"Job MTBF {c.mtbf_seconds / 3600:,.1f} h (= per-GPU MTBF ÷ {c.n_gpus:,} GPUs), checkpoint δ "
            f"{c.checkpoint_seconds / 60:.1f} min, restart R {c.restart_seconds / 60:.0f} min: best expected goodput "
            f"{c.best_goodput:.2%} near Daly's interval.")
        self.cluster_view.draw(c)

    def _goodput_range(self, x: tuple[float, float] | None = None) -> None:
        """The y range holds the optimum, 15 points below it and the simulated points, in 5 % steps
        (it stays put on small edits); with ``x``, both axes change in one step (each separate change
        re-lays out the view and its axes)."""
        best, sim = self.analysis.checkpoint.best_goodput, self._current_sim()
        lo = best - 0.15        # the optimum and its neighbourhood; the far tails may leave the plot
        if sim is not None:
            lo = min(lo, float(sim.mean.min()))
        y_lo, y_hi = max(0, 5 * math.floor(lo * 20)), min(100, 5 * math.ceil(best * 20 + 0.4))  # 5 % steps
        pad = self.goodput_plot.getViewBox().suggestPadding(1) * (y_hi - y_lo)
        self.goodput_plot.setRange(xRange=x, yRange=(y_lo - pad, y_hi + pad), padding=0)

    def _draw_monte_carlo(self) -> None:
        sim = self._current_sim()
        if sim is None:
            return
        x = sim.probes_seconds / 60
        self.mc_points.setData(x, sim.mean * 100)
        self.mc_bars.setData(x=np.log10(x), y=sim.mean * 100, height=2 * sim.std * 100)
        for item in (self.mc_points, self.mc_bars):
            item.setOpacity(1.0)
        self._goodput_range()

    def timeline(self) -> TimelineSpec | None:
        chapters = [(0, "start")]
        if self.run is not None:
            for f in self.run.failures[:12]:
                chapters.append((int(f.time / self.run.wall_seconds * (N_FRAMES - 1)), f"failure: {f.cause}"))
        return TimelineSpec(n_frames=N_FRAMES, chapters=chapters, fps=12.0, start=N_FRAMES - 1)  # the whole run

    def show_frame(self, index: int) -> None:
        self._frame = max(0, min(int(index), N_FRAMES - 1))
        if self.run is not None:
            self.run_view.show(self.run, self.run.wall_seconds * self._frame / (N_FRAMES - 1),
                               self.params.zoom_intervals)

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        t = theme
        pin_size(self.tasks.widget(), 40)
        self.gauge.setMinimumHeight(int(t.point_size * 8))    # the bar, a label line above and below it and
        self.gauge.setMaximumHeight(int(t.point_size * 16))   # the axis, at any text size
        for plot in (self.goodput_plot, self.cluster_view.plot):   # fixed width: new tick text never re-lays it out
            plot.getAxis("left").setWidth(int(t.point_size * 4.5))
        self.gauge_bg.setOpts(brush=brush(t.grid, 0.35), pen=pen(t.fg, 1))
        self.gauge_bar.setOpts(brush=brush(t.color(4)), pen=pen(t.fg, 1))
        for line, label in self.gauge_refs:
            line.setPen(pen(t.fg, 1.5, Qt.DashLine))
            label.setColor(t.fg)
        self.exact_curve.setPen(pen(t.color(4), 3))
        self.mc_points.setSymbolBrush(brush(t.color(0)))
        self.mc_points.setSymbolPen(pen(t.fg, 1))
        self.mc_bars.setData(pen=pen(t.fg, 1))
        for line, style in self.optimum_marks.values():
            line.setPen(pen(t.color(5), 2, style))
        self._label_font = QFont()
        self._label_font.setPointSizeF(t.point_size)
        self._draw()     # the optimum labels in the new colour and size
        self.cluster_view.apply_theme(t)
        self.run_view.apply_theme(t)
        self.fault_view.apply_theme(t)

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


PANEL = ScalePanel
