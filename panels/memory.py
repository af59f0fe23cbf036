"""Training memory: where every byte of a GPU goes under DP, ZeRO-1/2/3 and FSDP.

A thin view: numbers come from ``engines.memory`` (``study.memory_study``: analytic, synchronous),
``engines.memory.measure`` (one real torch step) and ``engines.memory.fsdp_probe`` (a real gloo
FSDP2 run); the charts are drawn by ``panels._memory_views``. The panel's own knob (fp32 gradient
accumulation) is ``engines.memory.params.Params``.
"""
from __future__ import annotations

import dataclasses

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QSpinBox, QTableWidgetItem

from engines.core.errors import ValidationError
from engines.memory import CATEGORY_LABELS, STRATEGY_LABELS
from engines.memory.params import Params
from engines.memory.step_time import step_time
from engines.memory.study import MemoryStudy, memory_study
from engines.core.scenario import RECOMPUTE, STRATEGIES
from explorer.binder import ParamBinder, quiet
from explorer.ui.flow_layout import FlowLayout, keep_together
from explorer.ui.live_text import LiveText
from explorer.panel import Panel, TimelineSpec
from explorer.ui.widgets import ErrorLabel
from explorer.ui.pool import ItemPool
from panels._memory_time_views import StepTimeCharts
from panels._memory_views import MemoryCharts

FSDP_CATEGORY_LABELS = {"params": "params (fp32 shard = master)", "grads": "grads (fp32 shard)",
                        "optimizer": "optimizer (Adam m, v)"}


class MemoryPanel(MemoryCharts, StepTimeCharts, Panel):
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
        self.breakdowns: dict = {}           # strategy → MemoryBreakdown (None: does not apply here)
        self.sweep_result = None
        self.frames: tuple = ()
        self.chapters: tuple = ()
        self.measured = None
        self.fsdp = None
        self._frame = 0
        self._style_cache: dict = {}
        self._drawn: dict[str, object] = {}  # view → the inputs it shows (skip redraws that change nothing)
        self._spec: tuple | None = None
        self._build_controls()
        self._build_views()
        self._build_time_views()
        self._pools = {name: ItemPool(plot) for name, plot in (("bars", self.bars_plot), ("shard", self.shard_plot),
                                                             ("sweep", self.sweep_plot), ("comm", self.comm_plot))}

    # --- construction -----------------------------------------------------------------------
    def _build_controls(self) -> None:
        row = FlowLayout()
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
        spec = Params.spec("fp32_grad_accum")          # the panel's own knob: label and tip from its field
        self.fp32_acc = QCheckBox(spec["label"])
        self.fp32_acc.setToolTip(spec["tip"])
        offload = keep_together(QLabel("Offload:"), self.offload_opt, self.offload_par, self.offload_to)
        for w in (self.strategy_combo, self.gpus_spin, self.recompute_combo, self.fp32_acc, offload):
            row.addWidget(w)                    # wraps onto more lines where the tab is narrow
        self.body.addLayout(row)
        self.control_row = row                  # the step-time controls join it (panels._memory_time_views)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)
        self.binder = ParamBinder(self, {"fp32_grad_accum": self.fp32_acc}, error=self.error.show_error)
        self.verdict = LiveText(min_lines=3)
        self.verdict.setAccessibleName("Fit verdict")
        self.body.addWidget(self.verdict)
        for name, widget, title in (("strategy", self.strategy_combo, "Sharding strategy"),
                                    ("gpus", self.gpus_spin, "Number of GPUs"),
                                    ("recompute", self.recompute_combo, "Activation recomputation"),
                                    ("offload", offload, "Offload controls"),
                                    ("verdict", self.verdict, "Fit verdict")):
            self.name_view(name, widget, title)    # what a tour step can point at

    # --- scenario and parameters ------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self.scenario = scenario
        for w, val in ((self.strategy_combo, scenario.strategy), (self.recompute_combo, scenario.recompute),
                       (self.offload_to, scenario.offload_target)):
            with quiet(w):
                w.setCurrentIndex(w.findData(val))
        for w, val in ((self.gpus_spin, scenario.n_gpus),):
            with quiet(w):
                w.setValue(val)
        for w, val in ((self.offload_opt, scenario.offload_optimizer), (self.offload_par, scenario.offload_params)):
            with quiet(w):
                w.setChecked(val)
        self._recompute()

    def params_updated(self, changed: frozenset[str]) -> None:
        self._recompute()

    def _update(self, **changes) -> None:
        self.error.show_error(self.ctx.scenario.try_update(**changes))

    def _recompute(self) -> None:
        """One analytic engine call (about a millisecond), then redraw what changed and is visible."""
        try:
            study = memory_study(self.scenario, self.params.options, previous=self.study)
        except ValidationError as exc:
            self.error.show_error(str(exc))
            return
        self.study, self.breakdowns, self.sweep_result = study, study.by_strategy(), study.sweep
        self.frames, self.chapters = study.frames, study.chapters
        self.error.show_error(None)
        self._redraw()
        self._redraw_time()
        spec = (len(self.frames), self.chapters)
        if spec != self._spec:  # the player restarts on a new spec: only tell it when the spec changed
            self._spec = spec
            self.timeline_changed.emit()
        self.show_frame(study.default_frame if self._frame == 0 else min(self._frame, len(self.frames) - 1))

    # --- measured mode: each job calls one engine function --------------------------------------
    def run_measurement(self) -> None:
        scenario, device = self.scenario, self.ctx.device
        self.lower_tabs.setCurrentWidget(self.measure_box)

        def work(progress, cancelled):
            from engines.memory.measure import measure_training_step

            return measure_training_step(scenario, device, progress=progress, cancelled=cancelled)

        self.jobs("measure").run(work, self._show_measurement, label="One real training step…",
                                 on_error=self._task_failed)

    def run_fsdp(self) -> None:
        arch = self.scenario.arch
        self.lower_tabs.setCurrentWidget(self.measure_box)

        def work(progress, cancelled):
            from engines.memory.fsdp_probe import run_fsdp_probe

            return run_fsdp_probe(arch, 2, progress=progress, cancelled=cancelled)

        self.jobs("measure").run(work, self._show_fsdp, label="FSDP2 on 2 gloo ranks…", on_error=self._task_failed)

    def _task_failed(self, text: str) -> None:
        self.measure_note.setText("Failed: " + text.strip().splitlines()[-1])

    def _fill_table(self, rows: list[list[str]], headers: list[str]) -> None:
        t = self.measure_table
        t.setColumnCount(len(headers))
        t.setHorizontalHeaderLabels(headers)
        t.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, val in enumerate(row):
                t.setItem(i, j, QTableWidgetItem(val))

    @staticmethod
    def _row_cells(name: str, row) -> list[str]:
        return [name, f"{row.analytic / 1e6:,.3f} MB", f"{row.measured / 1e6:,.3f} MB", f"{row.diff_pct:+.2f}%",
                row.why]

    def _show_measurement(self, result) -> None:
        self.measured = result
        self._fill_table([self._row_cells(CATEGORY_LABELS[r.category], r) for r in result.rows()],
                         ["category", "analytic", "measured", "diff", "why they differ"])
        arch = result.arch
        peak = f"; CUDA peak allocated {result.peak_allocated / 1e6:,.1f} MB" if result.peak_allocated else ""
        self.measure_note.setText(
            f"{arch.label}: {arch.layers} layers, h {arch.hidden}, {arch.heads} heads / {arch.kv_heads} KV, "
            f"ffn {arch.ffn}, vocab {arch.vocab}, Ψ = {arch.param_count():,}; seq {result.config.seq_len} × "
            f"batch {result.config.micro_batch}; {result.precision} + {result.optimizer} on {result.device} "
            f"in {result.seconds:.1f} s{peak}. " + " ".join(result.notes))

    def _show_fsdp(self, result) -> None:
        self.fsdp = result
        self._fill_table([self._row_cells(f"rank {r.rank}: {FSDP_CATEGORY_LABELS[r.category]}", r)
                          for r in result.rows()],
                         ["rank / category", "Ψ/N split", "measured", "diff", "why they differ"])
        self.measure_note.setText(
            f"torch FSDP2 fully_shard on {result.world_size} CPU processes (gloo), Ψ = {result.param_count:,}, "
            f"{result.seconds:.1f} s: each rank holds 4 + 4 + 8 = 16 B per parameter / N — ZeRO-3's total with "
            f"the fp32 shard as master copy. {result.note}. Measured collective: one all-gather of the 16-bit "
            f"weights ({result.allgather_buffer_bytes / 1e6:,.1f} MB) took {result.allgather_seconds * 1e3:,.1f} ms, "
            f"{result.allgather_gbps:,.2f} GB/s per rank over gloo (the step-time model's link would need that rate "
            f"to match).")

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.time_readout.reset_height()
        for plot, lines in ((self.time_plot, 7), (self.tput_plot, 11)):   # title and axis leave the data room
            plot.setMinimumHeight(max(int(theme.point_size * lines), 130))   # (the time page also holds its readout)
        self.tput_legend.setLabelTextColor(theme.fg)
        self.tput_legend.row_height = QFontMetrics(self._font(0.85)).height() * 1.15 + 10
        self.tput_legend.setColumnCount(3)   # two rows: fits beside the long "◀ yours" entry at any width
        self.tput_legend.updateSize()
        if self.breakdowns:
            self._redraw_time()

    # --- shell hooks ---------------------------------------------------------------------------
    def timeline(self) -> TimelineSpec | None:
        if not self.frames:
            return None
        return TimelineSpec(len(self.frames), list(self.chapters), fps=12.0,
                            start=self.study.default_frame)   # opens on the scenario's own ZeRO stage

    def result(self) -> object:
        b = self.breakdowns.get(self.scenario.strategy)
        if b is None:
            return None
        out = {"breakdown": dataclasses.asdict(b), "total": b.total, "fits": b.fits,
               "per_strategy": self.study.per_strategy(), "smallest_fit": self.sweep_result.smallest_fit}
        if self.measured is not None:
            out["measured"] = {"measured": self.measured.measured, "analytic": self.measured.analytic}
        if self.fsdp is not None:
            out["fsdp"] = dataclasses.asdict(self.fsdp)
        own = step_time(self.scenario, None, self.params.time_knobs)
        if own is not None:
            out["step_time"] = {**dataclasses.asdict(own), "total": own.total, "tokens_per_second": own.tokens_per_second,
                                "mfu": own.mfu}
        if self.step_measured is not None:
            out["step_measured"] = dataclasses.asdict(self.step_measured)
        return out

    def table(self) -> list[dict]:
        return self.study.table() if self.study is not None else []

    def selftest(self) -> None:
        self.set_scenario(self.ctx.scenario.value)
        for i in (0, len(self.frames) // 2, len(self.frames) - 1):
            self.show_frame(i)
        self.fp32_acc.setChecked(True)
        self.fp32_acc.setChecked(False)
        for i in (*range(self.lower_tabs.count()), 0):   # each lower chart draws when its tab shows
            self.lower_tabs.setCurrentIndex(i)


PANEL = MemoryPanel
