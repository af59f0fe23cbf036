"""Inference serving: one replica's memory, static vs continuous batching, load curves, sizing, real decode."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.core.result_cache import EngineCall, engine_call
from engines.core.scenario import Scenario
from engines.serving import (DeploymentStudy, ReplicaMemory, SimResult, batching_runs,
                             deployment_study, replica_memory)
from engines.serving.params import Params, study_workload, timeline_workload
from explorer.binder import ParamBinder, ScenarioBinder, fields_of, param_slider
from explorer.ui.fast_items import Bars
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.panel import Panel, TimelineSpec
from explorer.ui.live_text import LiveText, pin_size
from explorer.ui.widgets import ErrorLabel, Tabs, brush, make_plot, pen, set_title
from panels._serving_views import LoadChart, ReplicaMemoryChart, SizingBox, draw_sizing, sizing_words

N_FRAMES = 200
BITS = {"bf16 (16-bit)": 16, "8-bit (fp8/int8)": 8, "int4 (g128)": 4}
DEBOUNCE_MS = 150


class ServingPanel(Panel):
    key = "serving"
    title = "Inference serving"
    order = 70
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "weight_bits", "kv_bits", "serve_batch", "serve_context"})
    lesson = "serving.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # job slots: "main" (self.tasks) the simulations, "bench" the torch decode timing (its button only)
        self.memory: ReplicaMemory | None = None
        self.sims: dict[str, SimResult] = {}
        self.study: DeploymentStudy | None = None
        self.bench = None
        self._frame = 0
        self._drawn: dict[str, SimResult] | None = None   # the simulations show_frame last drew
        self._pending: set[str] = set()
        self._running_parts: set[str] = set()
        self._refresh = self.debounce(self._start_simulations, DEBOUNCE_MS)
        self._ranges: dict = {}

        row = FlowLayout()          # wraps at presenter font sizes instead of pushing the panel sideways
        self.weight_combo, self.kv_combo = QComboBox(), QComboBox()
        for combo, name in ((self.weight_combo, "Weights"), (self.kv_combo, "KV cache")):
            combo.addItems(list(BITS))
            combo.setAccessibleName(f"{name} format")
            row.addWidget(keep_together(QLabel(name + ":"), combo))
        self.batch_spin, self.context_spin = QSpinBox(), QSpinBox()
        self.batch_spin.setRange(*Scenario.limits("serve_batch"))      # the scenario's own limits: the panel
        self.batch_spin.setPrefix("batch slots: ")                     # and the dock always show the same value
        self.context_spin.setRange(*Scenario.limits("serve_context"))
        self.context_spin.setSingleStep(1024)
        self.context_spin.setPrefix("context: ")
        self.context_spin.setSuffix(" tokens")
        for spin, field in ((self.batch_spin, "serve_batch"), (self.context_spin, "serve_context")):
            spin.setKeyboardTracking(False)
            spin.setAccessibleName(field)
            row.addWidget(spin)
        self.sliders = {name: param_slider(Params, name) for name in fields_of(Params)}
        for w in self.sliders.values():
            row.addWidget(w)
        row.addWidget(self.tasks.widget())
        self.body.addLayout(row)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.binder = ParamBinder(self, self.sliders, error=self.error.show_error)
        formats = {v: k for k, v in BITS.items()}     # scenario fields edited here too: the dock's binding
        self.scenario_binder = ScenarioBinder(
            self.ctx.scenario, {"weight_bits": self.weight_combo, "kv_bits": self.kv_combo,
                                "serve_batch": self.batch_spin, "serve_context": self.context_spin}, self,
            choices={"weight_bits": formats, "kv_bits": formats}, error=self.error.show_error)

        grid = QGridLayout()
        self.replica = ReplicaMemoryChart(ctx.theme)
        grid.addWidget(self.replica, 0, 0)

        self.batch_plots = {}
        self.batch_box = QWidget()          # both timelines and their figures: one view a tour can focus on
        bbox = QVBoxLayout(self.batch_box)
        bbox.setContentsMargins(0, 0, 0, 0)
        for policy in ("static", "continuous"):
            plot = make_plot(ctx.theme, "", "slot", "time (s)")
            plot.setAccessibleName(f"{policy} batching timeline")
            plot.setToolTip("Static: a batch runs until its longest request ends. Continuous (Orca): a freed slot "
                            "is refilled at the next iteration. Hatched = prefill (prompt), solid = decoding.")
            plot.setMouseEnabled(x=False, y=False)
            bars = {k: Bars(x0=[], y=[], width=[], height=0.8) for k in ("prefill", "decode")}
            for item in bars.values():
                plot.addItem(item)
            cursor = pg.InfiniteLine(angle=90, movable=False)
            plot.addItem(cursor)
            self.batch_plots[policy] = (plot, bars, cursor)
            bbox.addWidget(plot, 1)
        self.batch_text = LiveText()
        self.batch_text.reserve_lines(2)
        bbox.addWidget(self.batch_text)
        grid.addWidget(self.batch_box, 0, 1)

        self.load = LoadChart(ctx.theme)
        grid.addWidget(self.load, 1, 0)

        # Sizing and the decode measurement share one tabbed cell: side by side they needed more
        # height than a 1080p projector gives the panel at presenter text size.
        self.side_tabs = Tabs()
        size_box = SizingBox(ctx.theme)
        self.sizing_text, self.sizing_plot = size_box.text, size_box.plot
        self.side_tabs.addTab(size_box, "Sizing for the traffic estimate")
        bench_box = QWidget()
        bb = QVBoxLayout(bench_box)
        self.bench_button = QPushButton(f"Measure decode steps on {ctx.device.upper()}")
        self.bench_button.clicked.connect(self._start_bench)
        run_row = QHBoxLayout()
        run_row.addWidget(self.bench_button)
        run_row.addWidget(self.jobs("bench").widget(), 1)
        bb.addLayout(run_row)
        self.bench_table = QTableWidget(0, 6)
        self.bench_table.setHorizontalHeaderLabels(["model", "batch", "measured ms", "roofline ms",
                                                    "ratio", "tok/s"])
        self.bench_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # headers never cut
        self.bench_table.horizontalHeader().setStretchLastSection(True)
        self.bench_table.setAccessibleName("Measured against modelled decode step time")
        bb.addWidget(self.bench_table, 1)
        self.bench_text = QLabel("Real decode steps of a small Llama-style decoder (and SmolLM2-135M if installed) "
                                 "beside this device's roofline.")
        self.bench_text.setToolTip("The roofline column uses this device's own measured copy bandwidth and matmul rate.")
        self.bench_text.setWordWrap(True)
        bb.addWidget(self.bench_text)
        self.side_tabs.addTab(bench_box, "Measured decode")
        grid.addWidget(self.side_tabs, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 1)
        grid.setRowStretch(1, 1)
        self.body.addLayout(grid, 1)
        for name, widget, title in (
                ("replica_memory", self.replica, "One replica's memory"),
                ("batching", self.batch_box, "Static against continuous batching"),
                ("load", self.load, "Latency and throughput against load"),
                ("sizing", size_box, "Sizing for the traffic estimate"),
                ("measured_decode", bench_box, "Measured decode steps"),
                ("weight_format", self.weight_combo, "Weight format"),
                ("kv_format", self.kv_combo, "KV-cache format"),
                ("batch_slots", self.batch_spin, "Batch slots"),
                ("context", self.context_spin, "Context")):
            self.name_view(name, widget, title)

    # --- scenario ---------------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        """Cheap and synchronous: replica memory (an analytic engine call); simulations are scheduled.
        The scenario's own controls follow through ``self.scenario_binder``."""
        self.memory = replica_memory(scenario)
        self._draw_memory()
        self._schedule({"timeline", "curves"})

    def params_updated(self, changed: frozenset[str]) -> None:
        parts = {"curves"}
        if changed & {"arrivals_per_s", "prompt_tokens", "output_tokens"}:
            parts.add("timeline")
        if changed == {"arrivals_per_s"}:
            parts = {"timeline"}
        self._schedule(parts)

    # --- background simulations: debounced, the previous result stays until the new one lands ----
    def _schedule(self, parts: set[str]) -> None:
        self._pending |= parts
        if not self.sims and not self.tasks.running and not self._refresh.isActive():
            self._start_simulations()                 # first draw: no old result to keep showing
            return
        if self.tasks.running:                        # its answer would be stale: stop it, redo its parts
            self._pending |= self._running_parts
            self.tasks.cancel()
        self._refresh.start()

    def _start_simulations(self) -> None:
        self._refresh.stop()
        parts, self._pending = self._pending, set()
        if self.memory is None or not parts:
            return
        if "timeline" in parts:
            self._run_timeline(follow_with_curves="curves" in parts)
        else:
            self._run_curves()

    def unbind(self) -> None:
        self.jobs("bench").cancel()
        super().unbind()

    def _run_timeline(self, follow_with_curves: bool) -> None:
        s = self.ctx.scenario.value
        try:
            work = _timeline_call(s, self.params)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return

        def done(sims) -> None:
            self._running_parts = set()
            self.error.show_error(None)
            self.sims = sims
            self._notes = " · ".join(
                f"{p}: p90 TTFT {r.percentile('ttft', 90):.2f} s, p90 TPOT {r.percentile('tpot', 90) * 1e3:.1f} ms, "
                f"{r.throughput_tokens_per_s:,.0f} tok/s" for p, r in sims.items())
            self._drawn = None
            self.timeline_changed.emit()          # the window draws the frame it places (shown panel) ...
            if self._drawn is not sims:           # ... else (hidden, or no window) it is drawn here, once
                self.show_frame(self._frame)
            if follow_with_curves:
                self._run_curves()

        self._running_parts = {"timeline", "curves"} if follow_with_curves else {"timeline"}
        self.tasks.run(work, done, label="simulating batching", on_error=self._failed)

    def _run_curves(self) -> None:
        try:
            work = _curves_call(self.ctx.scenario.value, self.params)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self._running_parts = {"curves"}
        self.tasks.run(work, self._curves_done, label="simulating load", on_error=self._failed)

    @classmethod
    def planned_jobs(cls, scenario, params, tabs, device) -> list[EngineCall]:
        return [_timeline_call(scenario, params), _curves_call(scenario, params)]   # what set_scenario runs

    def _failed(self, text: str) -> None:
        self._running_parts = set()
        self.error.show_error(text.splitlines()[0])

    def _curves_done(self, study: DeploymentStudy) -> None:
        self._running_parts = set()
        self.study = study
        self._draw_curves()

    @property
    def sizing(self):
        return self.study.sizing if self.study is not None else None

    # --- drawing: existing items are updated, never recreated --------------------------------
    def _draw_memory(self) -> None:
        if self.memory is not None:
            self.replica.draw(self.memory, self.ctx.scenario.value)

    def _draw_curves(self) -> None:
        self.load.draw(self.study)
        if self.study is not None:
            text, tip = sizing_words(self.study)
            self.sizing_text.setText(text)
            self.sizing_text.setToolTip(tip)
        draw_sizing(self.sizing_plot, self.ctx.theme, self.study)

    def timeline(self) -> TimelineSpec | None:
        if self.memory is None:
            return None
        return TimelineSpec(n_frames=N_FRAMES, chapters=[(0, "arrivals begin"), (N_FRAMES // 2, "halfway")], fps=15.0,
                            start=N_FRAMES - 1)   # opens on the finished run; Play starts it from the beginning

    def show_frame(self, index: int) -> None:
        """Per frame: boolean masks over 48 requests and setOpts on the existing bars."""
        self._frame = max(0, min(int(index), N_FRAMES - 1))
        if not self.sims:
            return
        end = max(float(r.finish.max()) for r in self.sims.values())
        now = end * self._frame / (N_FRAMES - 1)
        for policy, (plot, bars, cursor) in self.batch_plots.items():
            r = self.sims[policy]
            started = r.start < now
            pre_end = np.minimum(r.first_token, now)
            dec_end = np.minimum(r.finish, now)
            bars["prefill"].setOpts(x0=r.start[started], y=r.slot[started], width=(pre_end - r.start)[started])
            dec = started & (r.first_token < now)
            bars["decode"].setOpts(x0=r.first_token[dec], y=r.slot[dec], width=(dec_end - r.first_token)[dec])
            cursor.setPos(now)
            if self._ranges.get(policy) != (end, r.max_batch):
                self._ranges[policy] = (end, r.max_batch)
                plot.setXRange(0, end, padding=0.01)
                plot.setYRange(-0.6, r.max_batch - 0.4, padding=0)
                last = r.max_batch - 1   # the first and last slot: every other one ran into its neighbours
                plot.getAxis("left").setTicks([[(0, "0"), (last, str(last))] if last else [(0, "0")], []])
                plot.getViewBox().updateMatrix()
            waiting = int(((r.arrival <= now) & (r.start > now)).sum())
            done = int((r.finish <= now).sum())
            set_title(plot, f"{policy} batching: {done}/{r.arrival.size} done, {waiting} waiting")
        self.batch_text.setText("Hatched = prefill, solid = decode. " + self._notes)
        self._drawn = self.sims

    # --- real measurement ---------------------------------------------------------------------
    def _start_bench(self) -> None:
        device = self.ctx.device

        def work(progress, cancelled):
            from engines.serving.decode_bench import run_decode_bench

            return run_decode_bench(device, batches=(1, 4, 16), context=256, steps=8, progress=progress,
                                    cancelled=cancelled)

        self.jobs("bench").run(work, self._bench_done, label=f"timing decode steps on {device}",
                               on_error=lambda text: self.bench_text.setText("⚠ " + text.splitlines()[0]))

    def _bench_done(self, result) -> None:
        self.bench = result
        self.bench_table.setRowCount(len(result.rows))
        for i, row in enumerate(result.rows):
            for j, val in enumerate((row.model, str(row.batch), f"{row.measured_ms:.2f}", f"{row.modelled_ms:.2f}",
                                     f"{row.ratio:.1f}×", f"{row.tokens_per_s:,.1f}")):
                self.bench_table.setItem(i, j, QTableWidgetItem(val))
        self.bench_text.setText(
            f"{result.device_name}, {result.dtype}: measured copy bandwidth {result.bandwidth_gbps:,.1f} GB/s, "
            f"matmul {result.matmul_tflops:,.2f} TFLOP/s; model {result.params / 1e6:,.0f}M parameters. "
            + " ".join(result.notes))

    # --- shell hooks ------------------------------------------------------------------------
    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        t = theme
        pin_size(self.tasks.widget(), 40)
        self.replica.apply_theme(t)
        self.load.apply_theme(t)
        for policy, (plot, bars, cursor) in self.batch_plots.items():
            plot.setMinimumHeight(int(t.point_size * 9))   # title, slots and time axis readable at any text size
            bars["prefill"].setOpts(brush=pg.mkBrush(t.color(0), style=Qt.BDiagPattern), pen=pen(t.fg, 0.8))
            bars["decode"].setOpts(brush=brush(t.color(4) if policy == "continuous" else t.color(5), 0.85),
                                   pen=pen(t.fg, 0.8))
            cursor.setPen(pen(t.fg, 1.5))

    def result(self) -> object:
        return {"replica_memory": self.memory, "sizing": self.sizing,
                "load_curves": self.study.curves if self.study is not None else None,
                "timeline_summary": {p: r.summary() for p, r in self.sims.items()},
                "measurement": self.bench}

    def table(self) -> list[dict]:
        return [r.summary() for r in self.sims.values()]

    def selftest(self) -> None:
        for bits in ("int4 (g128)", "bf16 (16-bit)"):
            self.weight_combo.setCurrentText(bits)
            assert self.memory is not None and self.memory.weight_bits == BITS[bits]
        self.sliders["arrivals_per_s"].setValue(8)
        self.sliders["arrivals_per_s"].valueCommitted.emit(8.0)
        assert self.params.arrivals_per_s == 8
        if not self.settle():
            raise RuntimeError(self.tasks.last_error or "the batching simulations did not finish")
        assert set(self.sims) == {"static", "continuous"}
        for i in (0, N_FRAMES // 2, N_FRAMES - 1):
            self.show_frame(i)


def _timeline_call(s: Scenario, params: Params) -> EngineCall:
    """The batching timeline's job (one engine call; ValueError for a workload out of range)."""
    return engine_call(batching_runs, s, timeline_workload(params, s.serve_context), takes_progress=False)


def _curves_call(s: Scenario, p: Params) -> EngineCall:
    """The load curves' and sizing job."""
    return engine_call(deployment_study, s, study_workload(p, s.serve_context), p.target, p.traffic_per_s,
                       p.max_utilisation_pct / 100)


PANEL = ServingPanel
