"""The memory panel's measured view: buttons that ask the panel for a real run (one training step,
an FSDP2 run on gloo ranks, timed steps), the run's progress, and its result as analytic beside
measured. Drawing only: each result is an ``engines.memory`` dataclass the panel hands over."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHBoxLayout, QHeaderView, QLabel, QPushButton, QScrollArea,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.memory import CATEGORY_LABELS
from engines.memory.fake_check import PyTorchCheck
from engines.memory.fsdp_probe import FsdpProbeResult
from engines.memory.measure import MeasuredMemory
from engines.memory.step_measure import StepTimingCheck
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import Tabs

FSDP_CATEGORY_LABELS = {"params": "params (fp32 shard = master)", "grads": "grads (fp32 shard)",
                        "optimizer": "optimizer (Adam m, v)"}


class MeasuredView(QWidget):
    """Analytic against measured, one row per category (or quantity), and a note on the run.
    ``progress`` is the job slot's progress bar and Cancel button, placed after the buttons."""

    measure_requested = Signal()
    fsdp_requested = Signal()
    timing_requested = Signal()
    check_requested = Signal()

    def __init__(self, progress: QWidget | None = None, pages: tuple[tuple[QWidget, str], ...] = ()) -> None:
        super().__init__()
        bl = QVBoxLayout(self)
        bl.setContentsMargins(4, 4, 4, 4)
        buttons = FlowLayout()                # four buttons wrap rather than widen the panel
        self.measure_button = QPushButton("Measure one step")
        self.measure_button.setToolTip("Scaled-down model of this scenario's shape; one real mixed-precision "
                                       "training step on the compute device, every byte counted")
        self.fsdp_button = QPushButton("FSDP2 run (2 ranks)")
        self.fsdp_button.setToolTip("torch fully_shard on 2 CPU processes over gloo; per-rank shard bytes")
        self.step_button = QPushButton("Time real steps")
        self.step_button.setToolTip("Scaled-down model of this scenario's family: forward and backward timed on the "
                                    "compute device, with and without full recomputation, against the step-time model")
        self.check_button = QPushButton("Check with PyTorch")
        self.check_button.setToolTip("This scenario at full size: two FSDP2 training steps on fake tensors over a fake "
                                     "process group of DP ranks, every byte of rank 0 attributed by PyTorch's "
                                     "FSDPMemTracker, beside our figures")
        for button, signal in ((self.measure_button, self.measure_requested), (self.fsdp_button, self.fsdp_requested),
                               (self.step_button, self.timing_requested), (self.check_button, self.check_requested)):
            button.clicked.connect(signal)
            buttons.addWidget(button)
        if progress is not None:              # beside the buttons where the row has room: a row of its own
            buttons.addWidget(progress)       # took the height the table's last rows needed in a window
        bl.addLayout(buttons)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["category", "analytic", "measured", "diff", "why they differ"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)
        self.table.setAccessibleName("Measured against analytic bytes per category")
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_reason(row))
        # why a row differs, for the row picked (each row's reason is also its tooltip): wrapped in the
        # table, the reasons made rows four lines tall and hid all but three of eight on a slide
        self.reason = LiveText()
        self.reason.setAccessibleName("Why the row picked differs")
        self._reasons: list[tuple[str, str]] = []
        self.note = QLabel("Runs in the background with progress and Cancel.")
        self.note.setWordWrap(True)
        table_page = QWidget()
        tl = QVBoxLayout(table_page)
        tl.setContentsMargins(0, 0, 0, 0)
        beside = QHBoxLayout()
        beside.addWidget(self.table, 3)
        beside.addWidget(self.reason, 2)
        tl.addLayout(beside, 1)
        tl.addWidget(self.note)
        if not pages:
            bl.addWidget(table_page, 1)
            return
        # the check's step and the cluster page sit beside the table, under the same buttons
        self.pages = Tabs()
        for page, title in ((table_page, "Table"), *pages):   # a page scrolls rather than make the panel taller
            area = QScrollArea()
            area.setWidget(page)
            area.setWidgetResizable(True)
            area.setFrameShape(QFrame.NoFrame)
            self.pages.addTab(area, title)
        bl.addWidget(self.pages, 1)

    def show_page(self, page: QWidget) -> None:
        self.pages.setCurrentWidget(next(a for a in self._areas() if a.widget() is page))

    def current_page(self) -> QWidget:
        return self.pages.currentWidget().widget()

    def _areas(self) -> list[QScrollArea]:
        return [self.pages.widget(i) for i in range(self.pages.count())]

    def show_error(self, text: str) -> None:
        self.note.setText("Failed: " + text.strip().splitlines()[-1])

    def show_result(self, result: MeasuredMemory | FsdpProbeResult | StepTimingCheck | PyTorchCheck) -> None:
        if isinstance(result, PyTorchCheck):
            self._show_check(result)
        elif isinstance(result, MeasuredMemory):
            self._show_measurement(result)
        elif isinstance(result, FsdpProbeResult):
            self._show_fsdp(result)
        else:
            self._show_step_timing(result)

    def _fill(self, rows: list[list[str]], headers: list[str], picked: int = 0) -> None:
        """``rows`` end with the reason they differ: shown beside the table for row ``picked`` (or the row
        the user picks), and as each row's tooltip."""
        t = self.table
        t.setColumnCount(len(headers) - 1)
        t.setHorizontalHeaderLabels(headers[:-1])
        t.setRowCount(len(rows))
        self._reasons = [(row[0], row[-1]) for row in rows]
        for i, row in enumerate(rows):
            for j, val in enumerate(row[:-1]):
                item = QTableWidgetItem(val)
                item.setToolTip(row[-1])
                t.setItem(i, j, item)
        t.resizeRowsToContents()
        one = t.fontMetrics().height()      # the style pads each row ~5 px: at 1280×800 in presenter mode that
        for i in range(t.rowCount()):       # padding pushed the total row of the PyTorch check out of view
            t.setRowHeight(i, max(1, round((t.rowHeight(i) - 5) / one)) * one + 3)
        if rows:
            t.setCurrentCell(picked, 0)
        self._show_reason(picked if rows else -1)

    def _show_reason(self, row: int) -> None:
        if 0 <= row < len(self._reasons):
            name, why = self._reasons[row]
            self.reason.setText(f"<b>Why {escape(name)} differs</b>: {escape(why)}")
        else:
            self.reason.setText("")

    @staticmethod
    def _row_cells(name: str, row) -> list[str]:
        return [name, f"{row.analytic / 1e6:,.3f} MB", f"{row.measured / 1e6:,.3f} MB", f"{row.diff_pct:+.2f}%",
                row.why]

    def _show_measurement(self, result: MeasuredMemory) -> None:
        self._fill([self._row_cells(CATEGORY_LABELS[r.category], r) for r in result.rows()],
                   ["category", "analytic", "measured", "diff", "why they differ"])
        arch = result.arch
        peak = f"; CUDA peak allocated {result.peak_allocated / 1e6:,.1f} MB" if result.peak_allocated else ""
        self.note.setText(
            f"{arch.label}: {arch.layers} layers, h {arch.hidden}, {arch.heads} heads / {arch.kv_heads} KV, "
            f"ffn {arch.ffn}, vocab {arch.vocab}, Ψ = {arch.param_count():,}; seq {result.config.seq_len} × "
            f"batch {result.config.micro_batch}; {result.precision} + {result.optimizer} on {result.device} "
            f"in {result.seconds:.1f} s{peak}. " + " ".join(result.notes))

    def _show_fsdp(self, result: FsdpProbeResult) -> None:
        self._fill([self._row_cells(f"rank {r.rank}: {FSDP_CATEGORY_LABELS[r.category]}", r) for r in result.rows()],
                   ["rank / category", "Ψ/N split", "measured", "diff", "why they differ"])
        self.note.setText(
            f"torch FSDP2 fully_shard on {result.world_size} CPU processes (gloo), Ψ = {result.param_count:,}, "
            f"{result.seconds:.1f} s: each rank holds 4 + 4 + 8 = 16 B per parameter / N — ZeRO-3's total with "
            f"the fp32 shard as master copy. {result.note}. Measured collective: one all-gather of the 16-bit "
            f"weights ({result.allgather_buffer_bytes / 1e6:,.1f} MB) took {result.allgather_seconds * 1e3:,.1f} ms, "
            f"{result.allgather_gbps:,.2f} GB/s per rank over gloo (the step-time model's link would need that rate "
            f"to match).")

    def _show_check(self, check: PyTorchCheck) -> None:
        rows = [[d.category, f"{d.ours / 1e9:,.3f} GB", f"{d.pytorch / 1e9:,.3f} GB",
                 f"{d.relative * 100:+.1f}%" if d.ours else "—", d.reason] for d in check.diffs]
        # the widest gap is the one to explain first (the total only sums the others)
        widest = max(range(len(check.diffs)), key=lambda i: -1.0 if check.diffs[i].category == "total"
                     else abs(check.diffs[i].difference))
        self._fill(rows, ["category", "ours", "PyTorch (FSDP2)", "diff", "why they differ"], widest)
        f = check.fake
        self.note.setText(
            f"PyTorch {f.torch_version}: FSDP2 over {f.world_size} fake ranks, {f.layers} layers, Ψ = "
            f"{f.param_count:,}, {f.recompute} recomputation; rank 0 peaks at {f.peak_total / 1e9:,.2f} GB "
            f"({len(f.snapshots)} snapshots through the step), checked in {f.seconds:.1f} s. " + " ".join(f.notes))

    def _show_step_timing(self, check: StepTimingCheck) -> None:
        r = check.measured
        eff = "—" if r.efficiency is None else f"{r.efficiency:.3f}"
        rows = [["backward ÷ forward", f"{check.backward_ratio_model:.2f}", f"{r.backward_ratio:.2f}",
                 f"{r.backward_ratio_diff_pct:+.1f}%",
                 "the model counts 4N backward FLOPs against 2N forward; small models spend more on the embedding, "
                 "norms and softmax, whose backward is cheaper"],
                ["full recompute ÷ plain step", f"{r.recompute_ratio_model:.3f}", f"{r.recompute_ratio:.3f}",
                 f"{r.recompute_diff_pct:+.1f}%",
                 "the blocks' forward runs again in backward; embedding and head are not recomputed"],
                ["model FLOP/s delivered", "—", f"{r.achieved_flops / 1e9:,.1f} G", "",
                 "PaLM FLOPs per token × tokens ÷ measured forward + backward seconds"],
                ["efficiency (of the catalogue peak)", f"{check.efficiency_set:.3f} (set)", eff, "",
                 "set the Efficiency control to the measured value to price this device" if r.efficiency is not None
                 else "no catalogue peak for this device"]]
        self._fill(rows, ["quantity", "step-time model", "measured", "diff", "why they differ"])
        self.note.setText(
            f"{r.arch.label}: {r.arch.layers} layers, h {r.arch.hidden}, seq {r.config.seq_len} × batch "
            f"{r.config.micro_batch}, {r.dtype} on {r.device_name}; median of {r.config.repeats} steps after a "
            f"warm-up: forward {r.forward * 1e3:,.1f} ms, backward {r.backward * 1e3:,.1f} ms, checkpointed "
            f"backward {r.backward_recompute * 1e3:,.1f} ms. " + " ".join(r.notes))
