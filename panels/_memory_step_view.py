"""The memory panel's PyTorch-check step and cluster views: rank 0's bytes through one FSDP2 training
step (stacked bands over the tracker's snapshots; the app's shared timeline moves the cursor through
them, so play, the arrow keys and the timeline dock drive it like every animation), and the cluster page
(the copyable launch commands, a measurement file's ranks beside the prediction and the check).
Drawing only: every figure comes from the ``engines.memory`` result handed to ``show_result``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import (QHeaderView, QLabel, QPlainTextEdit, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.memory.cluster_run import LaunchCommands, MeasurementOverlay
from engines.memory.fake_timeline import STEP_GROUPS, StepTimeline
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import make_plot, pen

GROUP_COLOR = {"sharded": 2, "gathered": 5, "activations": 1, "temporaries": 6, "other": 7}
GROUP_PATTERN = {"sharded": Qt.Dense3Pattern, "gathered": Qt.BDiagPattern, "activations": Qt.Dense6Pattern,
                 "temporaries": Qt.CrossPattern, "other": Qt.HorPattern}
PATTERN_WORDS = {"sharded": "dense dots", "gathered": "hatched", "activations": "light dots",
                 "temporaries": "cross-hatched", "other": "lined"}
MAX_RANK_ROWS = 512


def _gb(x: float) -> str:
    return f"{x / 1e9:,.2f} GB"


class StepView(QWidget):
    """Rank 0's memory through the checked step: each band a group of FSDPMemTracker categories,
    the cursor on the timeline's frame (the panel forwards it to :meth:`show_frame`), and that frame's
    bytes in words."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        self.timeline: StepTimeline | None = None
        box = QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        # no x-axis title: the ticks name the phases, and its row is the chart's on a 1280×800 slide
        self.plot = make_plot(theme, "Rank 0 through one FSDP2 step, snapshot by snapshot (PyTorch's tracker)", "GB")
        self.plot.setAccessibleName("Memory through the checked step, stacked by group")
        self.plot.setMouseEnabled(x=False, y=False)
        # the short names on the slide (the chart keeps its height on a 1280×800 projector), the long
        # ones, as the readout's sentence uses them, in the tooltip
        self.key = QLabel("Bands, bottom to top: " + " · ".join(
            f"<b>{label.split(' (')[0]}</b> ({PATTERN_WORDS[k]})" for k, label, _ in STEP_GROUPS))
        self.key.setToolTip("<br>".join(f"<b>{label}</b>: {PATTERN_WORDS[k]}" for k, label, _ in STEP_GROUPS))
        self.key.setWordWrap(True)
        box.addWidget(self.key)
        box.addWidget(self.plot, 1)
        self.readout = QLabel("Run “Check with PyTorch”, then play or step through the memory of one training step with the timeline (Space, ← →).")
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextSelectableByMouse)
        box.addWidget(self.readout)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self._items: list = []
        self._drawn = False
        self.frame = 0


    def show_result(self, timeline: StepTimeline) -> None:
        """Draw a new check's step, opened on its peak (what must fit) until the timeline moves. A
        hidden view draws when shown: a tour step that re-sends a check to the hidden memory panel
        spent 30-40 ms laying out bands nobody saw (A1 step 1)."""
        self.timeline = timeline
        self._drawn = False
        if self.isVisible():
            self._draw()
        self.show_frame(timeline.peak_index)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self.timeline is not None and not self._drawn:
            self._draw()
        super().showEvent(event)

    def _draw(self) -> None:
        """Bands as curves on top of each other with fills between; the items are made once and given
        new data (making them anew cost tens of ms on the GUI thread when a check arrived)."""
        t, pi, th = self.timeline, self.plot.getPlotItem(), self.theme
        self._drawn = True
        if not self._items:
            lower = pg.PlotDataItem()
            self._items = [lower]
            for _group in STEP_GROUPS:
                upper = pg.PlotDataItem()
                self._items += [upper, pg.FillBetweenItem(lower, upper)]
                lower = upper
            for item in self._items:
                pi.addItem(item)
            pi.addItem(self.cursor)
        x = np.arange(len(t.frames), dtype=float)
        below = np.zeros_like(x)
        self._items[0].setData(x, below, pen=pen(th.fg, 1.0))
        for g, (key, _label, _cats) in enumerate(STEP_GROUPS):
            below = below + np.array([f.bytes[key] for f in t.frames], dtype=float) / 1e9
            colour = QColor(th.palette[GROUP_COLOR[key] % len(th.palette)])
            upper, fill = self._items[1 + 2 * g], self._items[2 + 2 * g]
            upper.setData(x, below, pen=pen(colour.name(), 1.5))
            fill.setBrush(QBrush(colour, GROUP_PATTERN[key]))
        self.cursor.setPen(pen(th.fg, 2.0, Qt.DashLine))
        axis = pi.getAxis("bottom")
        ends = [i for i, _ in t.chapters[1:]] + [len(t.frames)]
        axis.setTicks([[((i + end - 1) / 2, name) for (i, name), end in zip(t.chapters, ends) if name != "start"]])
        last = max(1, len(t.frames) - 1)
        pi.setXRange(0, last * 1.05, padding=0)     # room for the optimizer's label at the end
        pi.setYRange(0, t.peak.total / 1e9 * 1.08, padding=0)

    def show_frame(self, index: int) -> None:
        """Move the cursor to frame ``index`` and say what rank 0 holds there."""
        t = self.timeline
        if t is None:
            return
        f = t.frames[max(0, min(int(index), len(t.frames) - 1))]
        self.frame = f.index
        self.cursor.setValue(f.index)
        parts = ", ".join(f"{label.split(' (')[0]} {_gb(f.bytes[key])}" for key, label, _ in STEP_GROUPS
                          if f.bytes[key])
        peak = t.peak
        self.readout.setText(
            f"<b>{f.index + 1} of {len(t.frames)}</b> · {f.label}: <b>{_gb(f.total)}</b> on rank 0 of "
            f"{t.world_size} ({parts}). Highest snapshot {_gb(peak.total)} at {peak.index + 1}; the tracker's "
            f"own peak, inside a module between two snapshots, {_gb(t.tracker_peak)}. PyTorch "
            f"{t.torch_version}, fake tensors over a fake process group.")

    def apply_theme(self, theme) -> None:
        self.theme = theme
        if self.timeline is not None:
            self._drawn = False
            if self.isVisible():
                self._draw()
            self.show_frame(self.frame)


class ClusterView(QWidget):
    """Measured on your cluster: the launch commands for the current scenario (copyable), the
    button that opens a measurement file, and its ranks beside our prediction and PyTorch's check."""

    open_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.commands: LaunchCommands | None = None
        box = QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        row = FlowLayout()                    # the buttons wrap on a narrow or presenter screen
        self.copy_buttons = {}
        for key, text in (("torchrun", "Copy torchrun"), ("slurm", "Copy Slurm script"),
                          ("kubernetes", "Copy Kubernetes Job")):
            b = QPushButton(text)
            b.clicked.connect(lambda _c=False, k=key: self.copy(k))
            row.addWidget(b)
            self.copy_buttons[key] = b
        self.open_button = QPushButton("Open measurement…")
        self.open_button.clicked.connect(self.open_requested)
        row.addWidget(self.open_button)
        box.addLayout(row)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Commands that measure this scenario on your cluster")
        self.text.setLineWrapMode(QPlainTextEdit.NoWrap)
        box.addWidget(self.text, 1)
        self.table = QTableWidget(0, 7)
        self.table.setHorizontalHeaderLabels(["rank", "host", "measured peak", "reserved", "step",
                                              "ours (predicted)", "PyTorch check"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.setAccessibleName("Measured peak per rank beside the prediction")
        box.addWidget(self.table, 1)
        self.note = QLabel("Save the scenario (File ▸ Save scenario as…) as s.json, run one of the commands, "
                           "then File ▸ Open measurement… to lay the result over the prediction.")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextSelectableByMouse)
        box.addWidget(self.note)

    def show_result(self, result: LaunchCommands | MeasurementOverlay) -> None:
        if isinstance(result, LaunchCommands):
            self.commands = result
            self.text.setPlainText(
                f"# one machine or each node ({result.nodes} × {result.gpus_per_node} processes)\n"
                f"{result.torchrun}\n\n# Slurm (sbatch this file)\n{result.slurm}\n\n"
                f"# Kubernetes (kubectl apply -f this file)\n{result.kubernetes}\n")
        else:
            self._show_overlay(result)

    def _show_overlay(self, o: MeasurementOverlay) -> None:
        ranks = o.measurement.ranks[:MAX_RANK_ROWS]
        self.table.setRowCount(len(ranks))
        check = "—" if o.pytorch_peak is None else _gb(o.pytorch_peak)
        for i, r in enumerate(ranks):
            cells = (str(r.rank), r.host, _gb(r.peak_allocated), _gb(r.peak_reserved), f"{r.step_seconds:.3f} s",
                     _gb(o.predicted) if r.rank == 0 else "", check if r.rank == 0 else "")
            for j, val in enumerate(cells):
                self.table.setItem(i, j, QTableWidgetItem(val))
        more = (f" Showing the first {MAX_RANK_ROWS} of {o.measurement.world_size} ranks."
                if o.measurement.world_size > MAX_RANK_ROWS else "")
        self.note.setText(f"<b>{o.source}</b>: {o.machine}. Largest peak {_gb(o.measurement.peak_allocated)} "
                          f"({o.measurement.memory_kind}); ours {_gb(o.predicted)} per GPU without the reserve"
                          f"{'' if o.pytorch_peak is None else '; PyTorch check ' + _gb(o.pytorch_peak)}."
                          f"{more} " + " ".join(o.notes))

    def show_error(self, text: str) -> None:
        """One line, nothing else changes: the table keeps the last good measurement."""
        self.note.setText("Not opened: " + text.strip().splitlines()[-1])

    def copy(self, key: str) -> None:
        if self.commands is not None:
            QGuiApplication.clipboard().setText(getattr(self.commands, key))
