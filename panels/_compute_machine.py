"""D2 view: this machine measured (GEMM FLOP/s, copy bytes/s) beside datasheet peaks; a step's gradient
all-reduce over NVLink and over the network against its compute; market share and revenue, dated."""
from __future__ import annotations

import math
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QTableWidgetItem, QVBoxLayout, QWidget

from engines.compute import MachineMeasurement, StepNetwork
from explorer.ui.live_text import LiveText
from explorer.ui.whole_rows import WholeRowTable
from explorer.ui.widgets import make_plot, set_title
from panels._compute_common import SourcesBox, draw_bars, money, tag

LOG_FLOOR = 9.0   # bars start at 1 G(FLOP or B)/s on the log axis
PREFIX = {9: "1 G", 10: "10 G", 11: "100 G", 12: "1 T", 13: "10 T", 14: "100 T", 15: "1 P", 16: "10 P", 17: "100 P"}


def _rate_text(v: float, unit: str) -> str:
    for div, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if v >= div:
            return f"{v / div:,.3g} {p}{unit}"
    return f"{v:,.3g} {unit}"


class MachineView(QWidget):
    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.flops_plot = make_plot(theme, "Matrix multiply: measured here against datasheet peaks", "",
                                    "FLOP/s (log)")
        self.bytes_plot = make_plot(theme, "Memory: measured copy against datasheet bandwidth", "", "bytes/s (log)")
        self.net_plot = make_plot(theme, "One step: gradient all-reduce against compute", "", "seconds")
        for p, h in ((self.flops_plot, 320), (self.bytes_plot, 300), (self.net_plot, 230)):
            p.setMouseEnabled(x=False, y=False)
            p.setMinimumHeight(h)
        self.text = LiveText()
        self.text.reserve_lines(3)
        top, bottom = QHBoxLayout(), QHBoxLayout()   # two rows of two: the tab fits a 1080p projector
        top.addWidget(self.flops_plot)
        top.addWidget(self.bytes_plot)
        lay.addLayout(top, 3)
        lay.addWidget(self.text)
        bottom.addWidget(self.net_plot, 3)
        self.market = WholeRowTable(0, 4)
        self.market.rows_follow_width()              # rows as tall as their lines at the width shown
        self.market.setHorizontalHeaderLabels(["Figure", "Value", "Date", "How sure"])
        self.market.verticalHeader().setVisible(False)
        self.market.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.market.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.market.setWordWrap(True)
        self.market.setAccessibleName("Market share and data-centre revenue")
        self.market.setMinimumHeight(170)
        bottom.addWidget(self.market, 2)
        lay.addLayout(bottom, 2)
        self.sources = SourcesBox()
        lay.addWidget(self.sources)
        self.measured: MachineMeasurement | None = None
        self.network: StepNetwork | None = None
        self._context: dict = {}

    def _log_bars(self, plot, rows, unit: str) -> None:
        """Rate bars (``engines.compute.study.RateBar``) on a log axis from 1 G: measured rows in one
        style, the others in another; a row not measured yet says so instead of drawing a bar."""
        top = max([math.log10(r.value) for r in rows if r.value] + [12.0])
        bars = []
        for r in rows:
            if r.value is None or r.value <= 0:
                bars.append((f"{r.label}: not measured yet (press Measure)", LOG_FLOOR, 0.0, "", 1))
            else:
                x = r.below_peak
                times = f" (GPU peak {x:,.0f}×)" if x >= 100 else f" (GPU peak {x:.3g}×)" if x else ""
                bars.append((r.label, LOG_FLOOR, max(math.log10(r.value) - LOG_FLOOR, 0.02), _rate_text(r.value, unit)
                             + times, 1 if r.source == "measured" else 0))
        draw_bars(plot, self.theme, bars, (LOG_FLOOR, top + 1.4))
        plot.getAxis("bottom").setTicks([[(k, v) for k, v in PREFIX.items() if k <= top + 1.4], []])

    def show_result(self, machine, measured: MachineMeasurement | None) -> None:
        """``machine``: the study's :class:`engines.compute.study.MachineStudy`."""
        self.measured, self.network = measured, machine.network
        gpu, cpus, market, network = machine.gpu, machine.cpus, machine.share, machine.network
        gpu_label = gpu.label
        t = self.theme
        rates = machine.rates(measured)
        cpu_rate = rates.flops[0].value                 # this CPU's GEMM, measured (None until then)
        self._log_bars(self.flops_plot, rates.flops, "FLOP/s")
        self._log_bars(self.bytes_plot, rates.bytes, "B/s")
        # the all-reduce against the step's compute
        n = network
        rows = [(f"all-reduce over NVLink ({n.nvlink_bytes_per_s / 1e9:,.0f} GB/s each way)", n.nvlink_seconds),
                (f"all-reduce over the network ({n.network_bytes_per_s * 8 / 1e9:,.0f} Gb/s = "
                 f"{n.network_bytes_per_s / 1e9:,.0f} GB/s per GPU)", n.network_seconds),
                ("forward + backward compute", n.compute_seconds)]
        set_title(self.net_plot, f"One step on {n.n_gpus:,} GPUs: all-reduce of {n.grad_bytes / 1e9:,.0f} GB of "
                                 f"bf16 gradients against compute")
        draw_bars(self.net_plot, t, [(name, 0.0, v, f"{v:,.3g} s", 2 + i) for i, (name, v) in enumerate(rows)],
                  (0.0, max(v for _, v in rows) * 1.3))
        self.market.setRowCount(len(market))
        for i, m in enumerate(market):
            value = f"{m.value:.0%}" if m.unit == "share" else money(m.value)
            for j, c in enumerate((m.label, value, m.date, tag(m.confidence))):
                item = QTableWidgetItem(c)
                item.setToolTip(m.citation)
                item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                self.market.setItem(i, j, item)
        self.market.resizeRowsToContents()
        measured_text = (f"This machine's CPU multiplies at {_rate_text(cpu_rate, 'FLOP/s')} (fp32, measured), "
                         f"{rates.cpu_below_gpu:,.0f}× below one {escape(gpu_label)}'s bf16 peak; "
                         if cpu_rate and rates.cpu_below_gpu else
                         "Press Measure to time a matrix multiply and a copy on this machine. ")
        self.text.setText(
            measured_text +
            f"a server CPU with a matrix unit is still about an order of magnitude below, and HBM carries several times "
            f"DDR5's bytes. The {n.grad_bytes / 1e9:,.1f} GB of bf16 gradients take {n.nvlink_seconds:,.3g} s to "
            f"all-reduce over NVLink but {n.network_seconds:,.3g} s across {n.n_gpus:,} GPUs on the network, against "
            f"{n.compute_seconds:,.3g} s of compute: the fast fabric reaches only the {n.gpus_per_node} GPUs in a node.")
        rows = []
        for r in (measured.rates if measured else ()):
            rows.append((f"{r.device_name} {r.kind} {r.dtype}: {_rate_text(r.value, 'FLOP/s' if r.kind == 'gemm' else 'B/s')}",
                         f"measured here: median of {r.repeats} timed repeats, n = {r.size} ({'2n³ FLOP' if r.kind == 'gemm' else 'read + write counted, as STREAM'})"))
        rows.append((f"{gpu_label} peaks", gpu.source))
        rows += [(c.label, c.citation) for c in cpus]
        rows.append(("all-reduce times", n.source))
        rows.append(("compute time of a step", "step-time engine (PaLM FLOPs at the kernel efficiency you set)"))
        rows += [(m.label, m.citation) for m in market]
        self.sources.set_sources(rows)
