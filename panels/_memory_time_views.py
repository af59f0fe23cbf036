"""The memory panel's time views (mixed into ``MemoryPanel``): the step-time model's controls, a
stacked time bar per strategy beside the memory bars' verdict, and throughput against GPU count
with the memory verdict on each point. Drawing only: every number comes from
``engines.memory.step_time``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QGraphicsItem, QLabel, QHBoxLayout,
                               QPushButton, QVBoxLayout, QWidget)

from engines.core.scenario import STRATEGIES
from engines.memory import STRATEGY_SHORT
from engines.memory.params import Params
from engines.memory.step_time import (BACKWARD_OVER_FORWARD, PART_LETTERS, PARTS, step_times, throughput_sweep,
                                      time_verdict)
from panels._memory_sweep_views import _nice_ceil
from explorer.binder import ParamBinder
from explorer.ui.flow_layout import keep_together
from explorer.ui.label_layer import range_end_for_label
from explorer.ui.live_text import LiveText
from explorer.ui.pool import ItemPool
from explorer.ui.widgets import RowLegend, cache_static, make_plot

PART_COLOR = {"compute": 4, "recompute": 1, "bubble": 7, "tp_comm": 5, "dp_comm": 0, "offload": 6, "optimizer": 2}
PART_PATTERN = {"compute": Qt.NoBrush, "recompute": Qt.Dense6Pattern, "bubble": Qt.Dense7Pattern,
                "tp_comm": Qt.HorPattern, "dp_comm": Qt.BDiagPattern, "offload": Qt.CrossPattern,
                "optimizer": Qt.FDiagPattern}
PART_SHORT = {"compute": "compute", "recompute": "recompute", "bubble": "bubble", "tp_comm": "TP comm",
              "dp_comm": "DP/ZeRO comm", "offload": "offload", "optimizer": "optimizer step"}
WRAP_LABELS = {1: "1 block", 2: "2 blocks", 4: "4 blocks", 8: "8 blocks", 0: "whole stage"}
COLLECTIVE_LABELS = {"ring": "flat ring", "hierarchical": "hierarchical"}
LINE_STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.SolidLine, Qt.DashDotDotLine)
SYMBOLS = ("o", "s", "t", "d", "x", "+")


def _rate(x: float) -> str:
    return f"{x / 1e6:,.2f} M" if x >= 1e6 else f"{x / 1e3:,.1f} k"


class StepTimeCharts:
    """Step time per strategy and throughput over GPU count, in two tabs of the panel's lower row."""

    def _build_time_views(self) -> None:
        th = self.theme
        spin = {}
        for name in ("efficiency", "nvme_gbps", "cpu_gbps"):
            m = Params.spec(name)
            box = QDoubleSpinBox()
            box.setRange(m["lo"], m["hi"])
            box.setDecimals(m["decimals"])
            box.setSingleStep(m["step"])
            box.setPrefix(m["label"] + ": ")
            box.setSuffix(" " + m["unit"])
            box.setValue(getattr(Params(), name))
            box.setKeyboardTracking(False)
            box.setToolTip(m["tip"])
            box.setAccessibleName(m["label"])
            spin[name] = box
        self.eff_slider = spin["efficiency"]
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
        # the knobs join the panel's control row: the FSDP unit and prefetch change the memory bars too, and a
        # row in the panel's body wraps with its width (a tab page is not given the height wrapping needs)
        for w in (wrap, self.eff_slider, links):
            self.control_row.addWidget(w)
        offload_rates = self.offload_rates = QWidget()   # only offload reads them: shown while offload is on
        rates = QHBoxLayout(offload_rates)
        rates.setContentsMargins(0, 0, 0, 0)
        rates.addWidget(QLabel("Offload rates:"))
        rates.addWidget(spin["nvme_gbps"])
        rates.addWidget(spin["cpu_gbps"])
        rates.addStretch(1)
        self.time_binder = ParamBinder(
            self, {"efficiency": self.eff_slider, "wrap_blocks": self.wrap_combo, "forward_prefetch": self.fwd_prefetch,
                   "backward_prefetch": self.bwd_prefetch, "collective": self.coll_combo, **spin},
            choices={"wrap_blocks": WRAP_LABELS, "collective": COLLECTIVE_LABELS}, error=self.error.show_error)
        self.time_readout = LiveText(min_lines=3)
        self.time_readout.setAccessibleName("Step time of your strategy")
        self.time_plot = make_plot(th, "Seconds per optimizer step by strategy", "", "seconds per step")
        self.time_plot.setAccessibleName("Stacked step time for every strategy")
        self.time_plot.setMouseEnabled(x=False, y=False)
        page = self.time_page = QWidget()
        box = QVBoxLayout(page)
        box.setContentsMargins(2, 2, 2, 0)     # the page sits in a row that must fit a projector at 1080p
        box.setSpacing(2)
        box.addWidget(offload_rates)
        box.addWidget(self.time_readout)
        box.addWidget(self.time_plot, 1)
        self.tput_plot = make_plot(th, "Throughput per GPU against GPU count; solid = fits in memory, dotted = does "
                                       "not", "tokens / s per GPU", "GPUs")
        self.tput_plot.setAccessibleName("Tokens per second per GPU over GPU count for every strategy, "
                                         "solid where it fits")
        self.tput_plot.setLogMode(x=True, y=False)
        self.tput_legend = RowLegend(colCount=6, frame=False)
        self.tput_curves: list[tuple[pg.PlotDataItem, pg.PlotDataItem, pg.ScatterPlotItem]] = []
        for s in STRATEGIES:
            fit, over, marks = pg.PlotDataItem(), pg.PlotDataItem(), pg.ScatterPlotItem()
            for item in (fit, over, marks):
                self.tput_plot.addItem(item)
            self.tput_legend.addItem(fit, STRATEGY_SHORT[s])
            self.tput_curves.append((fit, over, marks))
            for item in (fit.curve, over.curve):
                item.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self.tput_plot.getPlotItem().layout.addItem(self.tput_legend, 5, 1)
        self.tput_marker = pg.InfiniteLine(angle=90, movable=False)
        self.tput_plot.addItem(self.tput_marker)
        measured = self.lower_tabs.indexOf(self.measure_box)
        self.lower_tabs.insertTab(measured, page, "Step time")
        self.lower_tabs.insertTab(measured + 1, self.tput_plot, "Throughput against GPU count")
        for plot in (self.time_plot, self.tput_plot):
            cache_static(plot)
        self._time_pool = ItemPool(self.time_plot)
        self.time_plot.getViewBox().sigResized.connect(lambda *_a: self._time_resized())
        self.lower_tabs.currentChanged.connect(lambda _i: self._redraw_time())
        for name, widget, title in (("time", page, "Seconds per step by strategy"),
                                    ("time_bars", self.time_plot, "Stacked step time"),
                                    ("time_verdict", self.time_readout, "Step time of your strategy"),
                                                                        ("wrapping", wrap, "FSDP wrapping unit and prefetch"),
                                    ("throughput", self.tput_plot, "Throughput against GPU count")):
            self.name_view(name, widget, title)
        self.times: dict = {}
        self.tput = None
        self.step_button = QPushButton("Time real steps")
        self.step_button.setToolTip("Scaled-down model of this scenario's family: forward and backward timed on the "
                                    "compute device, with and without full recomputation, against the step-time model")
        self.step_button.clicked.connect(self.run_step_timing)
        self.measure_box.layout().itemAt(0).layout().addWidget(self.step_button)   # beside the other measurements
        self.step_measured = None

    def run_step_timing(self) -> None:
        scenario, device = self.scenario, self.ctx.device
        self.lower_tabs.setCurrentWidget(self.measure_box)

        def work(progress, cancelled):
            from engines.memory.step_measure import measure_step_time

            return measure_step_time(scenario, device, progress=progress, cancelled=cancelled)

        self.jobs("measure").run(work, self._show_step_timing, label="Timing real steps…", on_error=self._task_failed)

    def _show_step_timing(self, r) -> None:
        self.step_measured = r
        eff = "—" if r.efficiency is None else f"{r.efficiency:.3f}"
        rows = [["backward ÷ forward", f"{BACKWARD_OVER_FORWARD:.2f}", f"{r.backward_ratio:.2f}",
                 f"{r.backward_ratio_diff_pct:+.1f}%",
                 "the model counts 4N backward FLOPs against 2N forward; small models spend more on the embedding, "
                 "norms and softmax, whose backward is cheaper"],
                ["full recompute ÷ plain step", f"{r.recompute_ratio_model:.3f}", f"{r.recompute_ratio:.3f}",
                 f"{r.recompute_diff_pct:+.1f}%",
                 "the blocks' forward runs again in backward; embedding and head are not recomputed"],
                ["model FLOP/s delivered", "—", f"{r.achieved_flops / 1e9:,.1f} G", "",
                 "PaLM FLOPs per token × tokens ÷ measured forward + backward seconds"],
                ["efficiency (of the catalogue peak)", f"{self.params.efficiency:.3f} (set)", eff, "",
                 "set the Efficiency control to the measured value to price this device" if r.efficiency is not None
                 else "no catalogue peak for this device"]]
        self._fill_table(rows, ["quantity", "step-time model", "measured", "diff", "why they differ"])
        self.measure_note.setText(
            f"{r.arch.label}: {r.arch.layers} layers, h {r.arch.hidden}, seq {r.config.seq_len} × batch "
            f"{r.config.micro_batch}, {r.dtype} on {r.device_name}; median of {r.config.repeats} steps after a "
            f"warm-up: forward {r.forward * 1e3:,.1f} ms, backward {r.backward * 1e3:,.1f} ms, checkpointed "
            f"backward {r.backward_recompute * 1e3:,.1f} ms. " + " ".join(r.notes))

    # --- computing (one engine call each) and drawing -------------------------------------------
    def _redraw_time(self) -> None:
        """Both time views follow the scenario and the knobs; each computes only while its tab shows."""
        if not self.breakdowns:
            return
        self.offload_rates.setVisible(self.scenario.offload_optimizer or self.scenario.offload_params)
        shown = self.lower_tabs.currentWidget()
        knobs = self.params.time_knobs
        if shown is self.time_page:
            key = (self.scenario, knobs)
            if self._changed("time-data", key):
                self.times = step_times(self.scenario, knobs)
            self._draw_time()
        elif shown is self.tput_plot:
            key = (self.scenario.with_changes(n_gpus=self.scenario.tp * self.scenario.pp), knobs,
                   self.sweep_result.totals.tobytes())
            if self._changed("tput-data", key):
                self.tput = throughput_sweep(self.scenario, knobs)
                self._draw_tput()
            self.tput_marker.setPos(np.log10(self.scenario.n_gpus))

    def _time_resized(self) -> None:
        self._drawn.pop("time", None)
        if self.times and self.lower_tabs.currentWidget() is self.time_page:
            self._draw_time()

    def _part_brushes(self, part: str) -> tuple[QBrush, QBrush]:
        key = ("time-brush", part, self.theme.name)
        if key not in self._style_cache:
            c = QColor(self.theme.color(PART_COLOR[part]))
            c.setAlphaF(0.9)
            overlay = QColor(self.theme.fg)
            overlay.setAlphaF(0.45)
            self._style_cache[key] = (QBrush(c), QBrush(overlay, PART_PATTERN[part]))
        return self._style_cache[key]

    def _draw_time(self) -> None:
        shown = [s for s in STRATEGIES if self.times.get(s) is not None and self.breakdowns.get(s) is not None]
        if not shown or not self._changed("time", (tuple(shown), tuple(self.times[s] for s in shown))):
            return
        fits = {s: self.breakdowns[s].fits for s in shown}
        own = self.scenario.strategy
        verdict = time_verdict({s: self.times[s] for s in shown}, fits, own)
        self._time_text(self.times[own], verdict)
        p, pool = self.time_plot, self._time_pool
        pool.begin()
        ys = list(range(len(shown)))[::-1]
        blocks = {"x0": [], "y": [], "width": [], "fill": [], "hatch": []}
        top = max(self.times[s].total for s in shown)
        metrics = QFontMetrics(self._font(0.7))
        px_per_s = max(p.getViewBox().width(), 200.0) / (top * 1.6)
        for y, s in zip(ys, shown):
            x = 0.0
            for part in PARTS:
                w = getattr(self.times[s], part)
                if w <= 0:
                    continue
                fill, hatch = self._part_brushes(part)
                for key, val in (("x0", x), ("y", y), ("width", w), ("fill", fill), ("hatch", hatch)):
                    blocks[key].append(val)
                label = next((t for t in (f"{PART_LETTERS[part]} {w:,.2f}", PART_LETTERS[part])
                              if w * px_per_s > metrics.horizontalAdvance(t) + 8), None)
                if label:
                    pool.text(label, (x + w / 2, y), (0.5, 0.5), self._font(0.7), self.theme.fg)
                x += w
        pool.bar(x0=blocks["x0"], y=blocks["y"], width=blocks["width"], height=0.6, brushes=blocks["fill"],
                 hatches=blocks["hatch"], pen=self._pen(self.theme.fg, 1))
        width_px = max(p.getViewBox().width(), 200.0)
        x_max = top * 1.15
        label_metrics = QFontMetrics(self._font(0.72))
        for y, s in zip(ys, shown):
            st = self.times[s]
            text = (f"{st.total:,.2f} s · {_rate(st.tokens_per_second)}tok/s · MFU {st.mfu * 100:.0f}% · "
                    f"{'fits' if fits[s] else 'too big'}{' ◀ yours' if s == own else ''}")
            pool.text(text, (st.total + top * 0.01, y), (0, 0.5), self._font(0.72), self.theme.fg)
            x_max = max(x_max, range_end_for_label(st.total, 0.0, label_metrics.horizontalAdvance(text) + 16,
                                                   width_px, 0.2 * width_px))
        pool.end()
        self._set_axes(p, "time", left=[(y, STRATEGY_SHORT[s]) for y, s in zip(ys, shown)],
                       x_range=(0, x_max), y_range=(-0.6, len(ys) - 0.4))

    _time_key = " · ".join(f"<b>{PART_LETTERS[p]}</b> {PART_SHORT[p]}" for p in PARTS)

    def _time_text(self, st, verdict) -> None:
        hidden = st.dp_comm_total - st.dp_comm
        compare = ""
        if verdict.fastest_fitting is None:
            compare = "No strategy fits in GPU memory at this count."
        elif verdict.fastest_fitting == st.strategy:
            compare = f"{STRATEGY_SHORT[st.strategy]} is the fastest strategy that fits here."
        else:
            word = "slower" if verdict.slower_pct >= 0 else "faster"
            fits_own = "fits but" if self.breakdowns[st.strategy].fits else "does not fit and"
            compare = (f"{STRATEGY_SHORT[st.strategy]} {fits_own} is {abs(verdict.slower_pct):.0f}% {word} than "
                       f"{STRATEGY_SHORT[verdict.fastest_fitting]}, the fastest that fits.")
        pcie = f"; PCIe {st.pcie_bytes / 1e9:,.1f} GB" if st.pcie_bytes else ""
        nvme = f"; NVMe {st.nvme_bytes / 1e9:,.1f} GB" if st.nvme_bytes else ""
        self.time_readout.setText(
            f"<b>{STRATEGY_SHORT[st.strategy]}: "
            f"{st.total:,.3f} s per step → {st.tokens_per_second:,.0f} tokens/s, MFU {st.mfu * 100:.1f}% "
            f"(HFU {st.hfu * 100:.1f}%)</b>. {compare}<br>Global batch {st.global_batch:,} sequences "
            f"({st.global_tokens:,} tokens); DP traffic {st.comm_bytes / 1e9:,.2f} GB per step, "
            f"{st.comm_bytes_per_sample / 1e6:,.1f} MB per sequence, {hidden:,.2f} s of it hidden behind compute (not drawn)"
            f"{pcie}{nvme}." + (" <i>(notes: hover)</i>" if st.notes else "")
            + f"<br><small>{self._time_key}</small>")
        self.time_readout.setToolTip("; ".join(st.notes))

    def _draw_tput(self) -> None:
        sw = self.tput
        own = self.scenario.strategy
        finite = []
        for row, s in enumerate(sw.strategies):
            fit, over, marks = self.tput_curves[row]
            y = sw.per_gpu[row]
            ok = np.isfinite(y)
            fits = ok & self.study.fits_at(s, sw.n_gpus)   # the bars' bytes, at every count drawn
            color = self.theme.color(row if row != 3 else 7)
            width = 2.5 if s == own else 1.8
            # the whole curve dotted, the counts where the strategy fits drawn over it in its own line
            over.setData(sw.n_gpus[ok], y[ok], pen=self._pen(color, 1.4, Qt.DotLine))
            fit.setData(sw.n_gpus, np.where(fits, y, np.nan), pen=self._pen(color, width, LINE_STYLES[row]),
                        connect="finite")
            xs, ys = sw.n_gpus[ok], y[ok]
            marks.setData(x=np.log10(xs), y=ys, symbol=SYMBOLS[row], size=8,
                          brush=[pg.mkBrush(color) if f else pg.mkBrush(self.theme.bg) for f in fits[ok]],
                          pen=self._pen(color, 1.5))
            label = self.tput_legend.getLabel(fit)
            if label is not None:
                label.setText(f"{STRATEGY_SHORT[s]}{' ◀ yours' if s == own else ''}", color=self.theme.fg,
                              size=f"{self.theme.point_size * 0.85:.1f}pt")
            finite.append(ys)
        vals = np.concatenate(finite) if finite else np.array([1.0])
        hi = _nice_ceil(float(vals.max()) * 1.1)
        step = hi / 5
        self._set_axes(self.tput_plot, "tput", left=[(v, f"{v:,.0f}") for v in np.arange(0, hi + step / 2, step)],
                       bottom=[(np.log10(v), str(int(v))) for v in sw.n_gpus],
                       x_range=(np.log10(sw.n_gpus[0]) - 0.08, np.log10(sw.n_gpus[-1]) + 0.12), y_range=(0, hi))
