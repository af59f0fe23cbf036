"""Training memory: where every byte of a GPU goes under DP, ZeRO-1/2/3 and FSDP.

A thin panel: numbers come from ``engines.memory`` (``study``, synchronous; ``measure``, ``fsdp_probe``,
``step_measure`` and ``fake_check``: torch runs in the "measure" job slot); the ``panels._memory_*``
views draw what they are handed. The panel's own knobs are ``engines.memory.params.Params``.
"""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QFileDialog, QGridLayout, QLabel, QSpinBox

from engines.core.errors import ValidationError
from engines.core.result_cache import EngineCall, engine_call
from engines.core.scenario import RECOMPUTE, STRATEGIES
from engines.memory.cluster_run import launch_commands, overlay, read_measurement
from engines.memory import CATEGORIES, CATEGORY_LABELS, CATEGORY_LETTERS, STRATEGY_LABELS
from engines.memory.params import Params
from engines.memory.study import (MemoryStudy, StepTimeStudy, ThroughputStudy, memory_export, memory_study,
                                  memory_table, step_time_study, throughput_study)
from explorer.binder import ParamBinder, quiet
from explorer.panel import Panel, TimelineSpec
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.widgets import ErrorLabel, Tabs
from panels._memory_measure_view import FSDP_CATEGORY_LABELS, MeasuredView  # noqa: F401 (importable here)
from panels._memory_step_view import ClusterView, StepView
from panels._memory_sweep_views import SweepView, TrafficView
from panels._memory_time_views import COLLECTIVE_LABELS, WRAP_LABELS, StepTimeView, ThroughputView, param_spin
from panels._memory_views import BarsView, ShardingView, VerdictView


class MemoryPanel(Panel):
    key = "memory"
    title = "Training memory"
    order = 10
    Params = Params
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "gpus_per_node", "tp", "pp", "internode_gbps", "strategy",
                       "micro_batch", "seq_len", "grad_accum", "precision", "optimizer", "recompute",
                       "sequence_parallel", "offload_optimizer", "offload_params", "offload_target"})
    lesson = "memory.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scenario = ctx.scenario.value
        self.study: MemoryStudy | None = None
        self._stale = False                  # a recompute is on its way: the study is the last scenario's
        self.breakdowns: dict = {}           # strategy → MemoryBreakdown (None: does not apply here)
        self.sweep_result = None
        self.frames: tuple = ()
        self.chapters: tuple = ()
        self.times: StepTimeStudy | None = None
        self.tput: ThroughputStudy | None = None
        self.measured = self.fsdp = self.step_measured = None     # the real runs' results, for the export
        self.check = self.opened = None      # the last PyTorch check; the measurement opened and its file name
        self._frame = 0
        self._spec: tuple | None = None
        self._animation = "sharding"         # which animation the timeline drives: "sharding" or "step"
        self._build_controls()
        self._build_views()

    # --- construction -----------------------------------------------------------------------
    def _build_controls(self) -> None:
        row = self.control_row = FlowLayout()       # wraps onto more lines where the tab is narrow
        self.strategy_combo = QComboBox()
        for s in STRATEGIES:
            self.strategy_combo.addItem(STRATEGY_LABELS[s], s)
        self.strategy_combo.setAccessibleName("Sharding strategy")
        self.strategy_combo.currentIndexChanged.connect(
            lambda _i: self._update(strategy=self.strategy_combo.currentData()))
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setRange(1, 1_000_000)
        self.gpus_spin.setPrefix("GPUs: ")
        self.gpus_spin.setKeyboardTracking(False)
        self.gpus_spin.setAccessibleName("Number of GPUs")
        self.gpus_spin.valueChanged.connect(lambda v: self._update(n_gpus=int(v)))
        self.recompute_combo = QComboBox()
        for r in RECOMPUTE:
            self.recompute_combo.addItem(f"recompute: {r}", r)
        self.recompute_combo.setAccessibleName("Activation recomputation")
        self.recompute_combo.currentIndexChanged.connect(
            lambda _i: self._update(recompute=self.recompute_combo.currentData()))
        self.offload_opt = QCheckBox("optimizer states")
        self.offload_opt.setToolTip("ZeRO-Offload: fp32 master + optimizer states (and fp32 grads) in CPU RAM")
        self.offload_opt.toggled.connect(lambda v: self._update(offload_optimizer=bool(v)))
        self.offload_par = QCheckBox("parameters (stage 3)")
        self.offload_par.setToolTip("ZeRO-3 / FSDP parameter shards wait in CPU RAM (stage 3 only)")
        self.offload_par.toggled.connect(lambda v: self._update(offload_params=bool(v)))
        self.offload_to = QComboBox()
        for value, text in (("cpu", "to CPU RAM"), ("nvme", "to NVMe")):
            self.offload_to.addItem(text, value)
        self.offload_to.setAccessibleName("Where offloaded states live")
        self.offload_to.setToolTip("CPU RAM (ZeRO-Offload) or NVMe (ZeRO-Infinity, Rajbhandari et al. 2021)")
        self.offload_to.currentIndexChanged.connect(
            lambda _i: self._update(offload_target=self.offload_to.currentData()))
        spec = Params.spec("fp32_grad_accum")          # the panel's own knobs: label and tip from their fields
        self.fp32_acc = QCheckBox(spec["label"])
        self.fp32_acc.setToolTip(spec["tip"])
        offload = keep_together(QLabel("Offload:"), self.offload_opt, self.offload_par, self.offload_to)
        # the step-time knobs join the row: the FSDP unit and prefetch change the memory bars too
        self.eff_slider = param_spin("efficiency")
        self.rate_spins = {name: param_spin(name) for name in ("nvme_gbps", "cpu_gbps")}   # on the step-time page
        self.wrap_combo, self.coll_combo = QComboBox(), QComboBox()
        for combo, labels, name in ((self.wrap_combo, WRAP_LABELS, "wrap_blocks"),
                                    (self.coll_combo, COLLECTIVE_LABELS, "collective")):
            combo.addItems(list(labels.values()))
            combo.setToolTip(Params.spec(name)["tip"])
            combo.setAccessibleName(Params.spec(name)["label"])
        self.fwd_prefetch = QCheckBox(Params.spec("forward_prefetch")["label"])
        self.bwd_prefetch = QCheckBox(Params.spec("backward_prefetch")["label"])
        for box, name in ((self.fwd_prefetch, "forward_prefetch"), (self.bwd_prefetch, "backward_prefetch")):
            box.setToolTip(Params.spec(name)["tip"])
        wrap = keep_together(QLabel("FSDP unit:"), self.wrap_combo, self.fwd_prefetch, self.bwd_prefetch)
        links = keep_together(QLabel("Collectives:"), self.coll_combo)
        for w in (self.strategy_combo, self.gpus_spin, self.recompute_combo, self.fp32_acc, offload, wrap,
                  self.eff_slider, links):
            row.addWidget(w)
        self.body.addLayout(row)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.binder = ParamBinder(
            self, {"fp32_grad_accum": self.fp32_acc, "efficiency": self.eff_slider, "wrap_blocks": self.wrap_combo,
                   "forward_prefetch": self.fwd_prefetch, "backward_prefetch": self.bwd_prefetch,
                   "collective": self.coll_combo, **self.rate_spins},
            choices={"wrap_blocks": WRAP_LABELS, "collective": COLLECTIVE_LABELS}, error=self.error.show_error)
        self.verdict = VerdictView(self.theme)
        self.body.addWidget(self.verdict)
        for name, widget, title in (("strategy", self.strategy_combo, "Sharding strategy"),
                                    ("gpus", self.gpus_spin, "Number of GPUs"),
                                    ("recompute", self.recompute_combo, "Activation recomputation"),
                                    ("offload", offload, "Offload controls"),
                                    ("verdict", self.verdict, "Fit verdict"),
                                    ("wrapping", wrap, "FSDP wrapping unit and prefetch")):
            self.name_view(name, widget, title)    # what a tour step can point at

    def _build_views(self) -> None:
        th = self.theme
        key = "   ".join(f"<b>{CATEGORY_LETTERS[c]}</b> = {CATEGORY_LABELS[c]}" for c in CATEGORIES)
        self.key_label = QLabel(f"Blocks (letter, pattern and colour): {key}. ▼ marks your strategy. "
                                "GB = 10⁹ bytes.")
        self.key_label.setWordWrap(True)
        self.body.addWidget(self.key_label)
        self.bars_view, self.sharding_view = BarsView(th), ShardingView(th)
        grid = QGridLayout()
        grid.addWidget(self.bars_view, 0, 0)
        grid.addWidget(self.sharding_view, 0, 1)
        # The lower row is one full-width tab widget: the sweep gets the whole width (its legend one
        # row) instead of a quarter of the panel, and a chart redraws only while its tab shows.
        self.sweep_view, self.traffic_view = SweepView(th), TrafficView(th)
        self.time_view = StepTimeView(th, tuple(self.rate_spins.values()))
        self.tput_view = ThroughputView(th)
        self.step_view, self.cluster_view = StepView(th), ClusterView()
        self.cluster_view.open_requested.connect(self.open_measurement_dialog)
        self.measure_view = MeasuredView(self.jobs("measure").widget(),   # the real runs share one slot
                                         ((self.step_view, "Through the step"), (self.cluster_view, "Your cluster")))
        self.measure_view.measure_requested.connect(self.run_measurement)
        self.measure_view.fsdp_requested.connect(self.run_fsdp)
        self.measure_view.timing_requested.connect(self.run_step_timing)
        self.measure_view.check_requested.connect(self.run_pytorch_check)
        self.lower_tabs = Tabs()
        for view, title in ((self.sweep_view, "Memory against GPU count"),
                            (self.traffic_view, "Communication per step"),
                            (self.time_view, "Step time"), (self.tput_view, "Throughput against GPU count"),
                            (self.measure_view, "Measured vs analytic (real torch)")):
            self.lower_tabs.addTab(view, title)
        self.lower_tabs.currentChanged.connect(lambda _i: self.once(self._redraw))   # a chart draws when shown
        self.lower_tabs.currentChanged.connect(lambda _i: self._follow_animation())
        self.measure_view.pages.currentChanged.connect(lambda _i: self._follow_animation())
        grid.addWidget(self.lower_tabs, 1, 0, 1, 2)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 1)
        grid.setRowStretch(1, 1)
        self.body.addLayout(grid, 1)
        for name, widget, title in (("bars", self.bars_view, "Per-GPU memory by strategy"),
                                    ("sharding", self.sharding_view, "Sharding, DP → ZeRO-3"),
                                    ("sweep", self.sweep_view, "Per-GPU memory against GPU count"),
                                    ("traffic", self.traffic_view, "Data-parallel traffic per step"),
                                    ("measured", self.measure_view, "Measured against analytic bytes"),
                                    ("step", self.step_view, "Memory through the checked step"),
                                    ("cluster", self.cluster_view, "Measured on your cluster"),
                                    ("time", self.time_view, "Seconds per step by strategy"),
                                    ("time_bars", self.time_view.chart, "Stacked step time"),
                                    ("time_verdict", self.time_view.readout, "Step time of your strategy"),
                                    ("throughput", self.tput_view, "Throughput against GPU count")):
            self.name_view(name, widget, title)

    # --- scenario and parameters ------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self.scenario = scenario
        for w, val in ((self.strategy_combo, scenario.strategy), (self.recompute_combo, scenario.recompute),
                       (self.offload_to, scenario.offload_target)):
            with quiet(w):
                w.setCurrentIndex(w.findData(val))
        with quiet(self.gpus_spin):
            self.gpus_spin.setValue(scenario.n_gpus)
        for w, val in ((self.offload_opt, scenario.offload_optimizer), (self.offload_par, scenario.offload_params)):
            with quiet(w):
                w.setChecked(val)
        self._stale = True
        self.once(self._recompute)
        self.cluster_view.show_result(launch_commands(scenario))
        if self.params.pytorch_check:
            self.once(self.run_pytorch_check)

    def params_updated(self, changed: frozenset[str]) -> None:
        self._stale = True
        self.once(self._recompute)
        if "pytorch_check" in changed and self.params.pytorch_check:
            self.once(self.run_pytorch_check)

    def _update(self, **changes) -> None:
        self.error.show_error(self.ctx.scenario.try_update(**changes))

    def _recompute(self) -> None:
        """One analytic engine call (about a millisecond), then redraw what changed and is visible."""
        self._stale = False
        try:
            study = memory_study(self.scenario, self.params.options, previous=self.study)
        except ValidationError as exc:
            self.error.show_error(str(exc))
            return
        self.study, self.breakdowns, self.sweep_result = study, study.by_strategy(), study.sweep
        self.frames, self.chapters = study.frames, study.chapters
        self.error.show_error(None)
        self._redraw()
        self.sharding_view.show_result(study)
        spec = (len(self.frames), self.chapters)
        if spec != self._spec:  # the player restarts on a new spec: only tell it when the spec changed
            self._spec = spec
            if self._animation == "sharding":
                self.timeline_changed.emit()
        self._show_sharding(study.default_frame if self._frame == 0 else min(self._frame, len(self.frames) - 1))

    def _redraw(self) -> None:
        """Hand each view its result; a view in the lower tabs only while its tab shows (the step-time
        and throughput results are computed only then). Views skip redraws that change nothing. None
        while a recompute is on its way: a tour step's tab switch, held with its new scenario, drew
        the chart it showed for the last step's scenario first."""
        study = self.study
        if study is None or self._stale:
            return
        self.verdict.show_result(study)
        self.bars_view.show_result(study)
        self.time_view.show_offload_rates(study.offloads)
        shown, knobs = self.lower_tabs.currentWidget(), self.params.time_knobs
        if shown is self.sweep_view:
            self.sweep_view.show_result(study)
        elif shown is self.traffic_view:
            self.traffic_view.show_result(study)
        elif shown is self.time_view:
            self.times = step_time_study(study, knobs, previous=self.times)
            self.time_view.show_result(self.times)
        elif shown is self.tput_view:
            self.tput = throughput_study(study, knobs, previous=self.tput)
            self.tput_view.show_result(self.tput, study.scenario)

    def show_frame(self, index: int) -> None:
        """The shared timeline's frame, to the checked step while its page shows, else to sharding."""
        self.step_view.show_frame(index) if self._animation == "step" else self._show_sharding(index)

    def _show_sharding(self, index: int) -> None:
        if not self.frames:
            return
        self._frame = max(0, min(int(index), len(self.frames) - 1))
        self.sharding_view.show_frame(self._frame)

    def _follow_animation(self, new_step: bool = False) -> None:
        """The timeline drives the step view while its page shows a check, else the sharding animation;
        the shell binds the new spec when it changed (``new_step``: a new check, new frames)."""
        step = (self.check is not None and self.lower_tabs.currentWidget() is self.measure_view
                and self.measure_view.current_page() is self.step_view)
        animation = "step" if step else "sharding"
        if animation != self._animation or (new_step and step):
            self._animation = animation
            self.timeline_changed.emit()

    # --- measured mode: each job calls one engine function --------------------------------------
    def _run_measure_job(self, work, on_done, label: str) -> None:
        self.lower_tabs.setCurrentWidget(self.measure_view)
        self.jobs("measure").run(work, on_done, label=label, on_error=self.measure_view.show_error)

    def run_measurement(self) -> None:
        scenario, device = self.scenario, self.ctx.device

        def work(progress, cancelled):
            from engines.memory.measure import measure_training_step

            return measure_training_step(scenario, device, progress=progress, cancelled=cancelled)

        self._run_measure_job(work, self._show_measurement, "One real training step…")

    def run_fsdp(self) -> None:
        from engines.memory.fsdp_probe import run_fsdp_probe   # imports no torch: the ranks are processes

        arch = self.scenario.arch
        self._run_measure_job(lambda progress, cancelled: run_fsdp_probe(arch, 2, progress=progress,
                                                                         cancelled=cancelled),
                              self._show_fsdp, "FSDP2 on 2 gloo ranks…")

    def run_pytorch_check(self) -> None:
        self._run_measure_job(_check_call(self.scenario, self.params), self._show_check,
                              "PyTorch checks this scenario…")

    @classmethod
    def planned_jobs(cls, scenario, params, tabs, device) -> list[EngineCall]:   # the check takes ~30 s
        return [_check_call(scenario, params)] if params.pytorch_check else []

    def _show_check(self, check) -> None:
        self.check = check
        self.measure_view.show_result(check)
        self.step_view.show_result(check.timeline)
        self._follow_animation(new_step=True)
        if self.opened:      # a measurement already open gains the check's peak when it is of its scenario
            self.cluster_view.show_result(overlay(*self.opened, check, self.params.options))

    # --- measured on your cluster: File ▸ Open measurement ---------------------------------------
    def open_measurement_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open measurement", "", "Measurement (*.json)")
        if path:
            self.open_measurement(path)

    def open_measurement(self, path: str) -> str | None:
        """Overlay the measurement file at ``path``; a broken file leaves everything as it was and
        returns (and shows) one line naming the file and the field."""
        from pathlib import Path

        self.lower_tabs.setCurrentWidget(self.measure_view)
        self.measure_view.show_page(self.cluster_view)
        try:
            opened = (read_measurement(path), Path(path).name)
            shown = overlay(*opened, self.check, self.params.options)
        except (ValidationError, OSError) as exc:
            text = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            text = text if Path(path).name in text else f"{Path(path).name}: {text}"
            self.cluster_view.show_error(text)
            return text
        self.opened = opened
        self.cluster_view.show_result(shown)
        return None

    def run_step_timing(self) -> None:
        scenario, device, efficiency = self.scenario, self.ctx.device, self.params.efficiency

        def work(progress, cancelled):
            from engines.memory.step_measure import check_step_time

            return check_step_time(scenario, device, efficiency, progress=progress, cancelled=cancelled)

        self._run_measure_job(work, self._show_step_timing, "Timing real steps…")

    # each run's result is kept for the export and shown
    def _show_measurement(self, result) -> None:
        self.measured = result
        self.measure_view.show_result(result)

    def _show_fsdp(self, result) -> None:
        self.fsdp = result
        self.measure_view.show_result(result)

    def _show_step_timing(self, check) -> None:
        self.step_measured = check.measured
        self.measure_view.show_result(check)

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        for view in (self.verdict, self.bars_view, self.sharding_view, self.sweep_view, self.traffic_view,
                     self.time_view, self.tput_view, self.step_view):
            view.apply_theme(theme)
        if self.study is not None:
            self._redraw()
            self._show_sharding(self._frame)

    # --- shell hooks ---------------------------------------------------------------------------
    def timeline(self) -> TimelineSpec | None:
        if self._animation == "step":          # opens on the step's peak: what must fit
            t = self.check.timeline
            return TimelineSpec(len(t.frames), list(t.chapters), fps=6.0, start=t.peak_index, name="step")
        if not self.frames:
            return None
        return TimelineSpec(len(self.frames), list(self.chapters), fps=12.0,
                            start=self.study.default_frame)   # opens on the scenario's own ZeRO stage

    def result(self) -> object:
        if self.study is None:
            return None
        return memory_export(self.study, self.params.time_knobs, self.measured, self.fsdp, self.step_measured,
                             self.check)

    def table(self) -> list[dict]:
        return memory_table(self.study, self.check) if self.study is not None else []

    def selftest(self) -> None:
        self.set_scenario(self.ctx.scenario.value)
        for i in (0, len(self.frames) // 2, len(self.frames) - 1):
            self.show_frame(i)
        self.fp32_acc.setChecked(True)
        self.fp32_acc.setChecked(False)
        for i in (*range(self.lower_tabs.count()), 0):   # each lower chart draws when its tab shows
            self.lower_tabs.setCurrentIndex(i)


def _check_call(scenario, params: Params) -> EngineCall:
    from engines.memory.fake_check import pytorch_check

    return engine_call(pytorch_check, scenario, params)


PANEL = MemoryPanel
