"""Training at scale: MFU, the checkpoint interval, failures on a run timeline, and triage habits.

Analytic answers (MFU, Young/Daly, expected goodput, interruptions per day) are drawn at once on
every edit; the Monte Carlo check and the simulated run go to a background task, debounced so a
burst of edits simulates once, while the previous result stays visible (dimmed) until it lands.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QComboBox, QGridLayout, QGroupBox, QPushButton, QSpinBox,
                               QTextBrowser, QVBoxLayout, QWidget)

from engines.mfu import TrainingThroughput, training_throughput
from engines.reliability import (RunResult, daly_interval, expected_goodput, goodput_vs_cluster,
                                 interruptions_per_day, job_mtbf, llama3_interruptions, monte_carlo_goodput, simulate_run, young_interval)
from explorer.fast_items import Bars, Scatter
from explorer.flow_layout import FlowLayout
from explorer.label_layer import Label, label_layer
from explorer.panel import Panel, TimelineSpec
from explorer.tasks import Cancelled
from explorer.widgets import ErrorLabel, LabeledSlider, Tabs, brush, legend_below, log_axes, make_plot, pen
from explorer.live_text import LiveText, pin_size

KINDS = ("compute", "checkpoint", "lost", "restart")
KIND_LABELS = {"compute": "kept work", "checkpoint": "checkpoint write", "lost": "lost work", "restart": "restart"}
N_FRAMES = 240
MIN_SPAN_PX = 2.0   # narrowest span drawn on the run timeline, in pixels
DEBOUNCE_MS = 150
ZOOMS = (("view: 12 checkpoint intervals", 12), ("view: 60 checkpoint intervals", 60), ("view: whole run", 0))
STALE_OPACITY = 0.35
CLUSTER_SIZES = np.unique(np.geomspace(8, 131072, 40).astype(int))
REFERENCES = ((38, "Llama 3 405B 38–43%"), (46.2, "PaLM 46.2%"))

TRIAGE = """
<h3>When the loss spikes or a node goes quiet: a triage checklist</h3>
<ol>
<li><b>Is it the data?</b> Log the batch indices around the spike; replay them from the last checkpoint.
 A spike that recurs on the same batch is data (bad shard, tokenizer glitch); a spike that moves is the model or the hardware.
 <i>(OPT-175B logbook, Zhang et al. 2022, arXiv 2205.01068 §2.5)</i></li>
<li><b>Restart from before the spike and skip batches.</b> PaLM restarted ~100 steps before each spike and skipped
 200–500 batches; the spikes did not recur. <i>(Chowdhery et al. 2022, §5.1)</i></li>
<li><b>Lower the learning rate / tighten clipping</b> if spikes recur regardless of data; watch the gradient norm
 and the largest logits. <i>(OPT logbook; Wortsman et al. 2023, arXiv 2309.14322, small-scale proxies)</i></li>
<li><b>Suspect silent data corruption</b> when a loss or grad-norm jump coincides with one host: SDC caused 6 of
 Llama 3's 419 interruptions. Re-run the step on other GPUs, compare checksums of gradients across data-parallel
 replicas, and drain the host. <i>(Dubey et al. 2024, Table 5; Dixit et al., Meta 2021, arXiv 2102.11245)</i></li>
<li><b>Hangs are failures too.</b> NCCL watchdog timeouts (7 interruptions) need flight recorders and
 per-rank stack dumps to find the straggler. <i>(Dubey et al. 2024, §3.3.4)</i></li>
<li><b>Habits that finish runs:</b> checkpoint near the Young/Daly interval, asynchronously where possible;
 automate detection and restart (only 3 of 466 Llama 3 interruptions needed a human); keep hot spares;
 track goodput, not just MFU. <i>(Young 1974; Daly 2006; Dubey et al. 2024)</i></li>
</ol>
"""


def plain_log_ticks(lo: float, hi: float, fmt=lambda v: f"{v:,.0f}" if v >= 1 else f"{v:g}") -> list:
    """Major ticks for a log10 axis at 1–2–5 (or 1–3 when the span is wide) × 10ᵏ, labelled as plain numbers.

    pyqtgraph's own log ticks label the minor steps too ("3·10¹ 4·10¹ …"), which overlap.
    """
    lo, hi = max(lo, 1e-12), max(hi, lo * 1.0001)
    steps = (1, 2, 5) if math.log10(hi / lo) < 1.6 else (1, 3) if math.log10(hi / lo) < 3.5 else (1,)
    ticks = []
    for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in steps:
            v = m * 10.0 ** k
            if lo <= v <= hi:
                ticks.append((math.log10(v), fmt(v)))
    return [ticks, []]


def _decades(lo: float, hi: float) -> tuple[float, float]:
    """``lo`` and ``hi`` widened to whole powers of ten."""
    return 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi))


def _gpus(v: float) -> str:
    return f"{v / 1000:g}K" if v >= 10_000 else f"{v:,.0f}"


class ScalePanel(Panel):
    key = "scale"
    title = "Training at scale"
    order = 60
    reads = frozenset({"model", "arch", "gpu", "n_gpus", "tp", "pp", "seq_len", "micro_batch", "grad_accum",
                       "recompute", "precision"})
    lesson = "scale.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.data = llama3_interruptions()
        self.throughput: TrainingThroughput | None = None
        self.run: RunResult | None = None
        self._curve: dict = {}
        self._scale_key = None
        self._cluster_drawn = None  # the sweep the cluster curve shows now
        self._goodput_ticks = None  # the goodput axis ticks shown now
        self._label_font = QFont()  # the optimum labels (set to the theme's size in apply_theme)
        self._frame = 0
        self._window = (0.0, 1.0)
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(DEBOUNCE_MS)
        self._refresh.timeout.connect(self._start_simulation)

        controls = FlowLayout()     # wraps at presenter font sizes instead of pushing the panel sideways
        self.mfu_slider = LabeledSlider("Assumed MFU", 5, 80, 40, 1, 0, "%")
        self.ckpt_slider = LabeledSlider("Checkpoint write δ", 0.1, 30, 1.0, 0.1, 1, "min")
        self.restart_slider = LabeledSlider("Restart R", 0, 60, 5, 1, 0, "min")
        for w in (self.mfu_slider, self.ckpt_slider, self.restart_slider):
            controls.addWidget(w)
            w.valueCommitted.connect(lambda _v: self._recompute())
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setRange(1, 1_000_000)
        self.gpus_spin.setPrefix("GPUs: ")
        self.gpus_spin.setKeyboardTracking(False)
        self.gpus_spin.setAccessibleName("Number of GPUs in the cluster")
        self.gpus_spin.valueChanged.connect(self._set_gpus)
        self.llama_button = QPushButton("Llama 3 405B run")
        self.llama_button.setToolTip("16,384 H100s, TP 8 × PP 16, 8K sequences (Dubey et al. 2024, Table 4)")
        self.llama_button.clicked.connect(self._llama3_preset)
        self.zoom_box = QComboBox()
        for text, n in ZOOMS:
            self.zoom_box.addItem(text, n)
        self.zoom_box.setAccessibleName("Run timeline zoom around the cursor")
        self.zoom_box.setToolTip("The run is long: follow the cursor with a window of this many checkpoint "
                                 "intervals, or show the whole run")
        self.zoom_box.currentIndexChanged.connect(lambda _i: self.show_frame(self._frame))
        for w in (self.gpus_spin, self.llama_button, self.zoom_box, self.tasks.widget()):
            controls.addWidget(w)
        self.body.addLayout(controls)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)

        grid = QGridLayout()
        grid.addWidget(self._build_gauge(), 0, 0)
        grid.addLayout(self._build_goodput(), 0, 1)
        grid.addLayout(self._build_timeline(), 1, 0)
        grid.addWidget(self._build_cluster_and_triage(), 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self.body.addLayout(grid, 1)


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
        for value, name in REFERENCES:
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
        lay.addWidget(gp, 1)
        lay.addWidget(self.goodput_text)
        return lay

    def _build_timeline(self) -> QVBoxLayout:
        tp = self.timeline_plot = make_plot(self.theme, "One simulated run (play the timeline)", "",
                                            "wall time (hours)")
        tp.setAccessibleName("Run timeline with failures, checkpoints and lost work")
        tp.getAxis("left").setTicks([[(i, KIND_LABELS[k]) for i, k in enumerate(KINDS)] + [(4, "failure")]])
        tp.setMouseEnabled(x=False, y=False)
        tp.setYRange(-0.6, 4.6, padding=0)
        tp.setMinimumHeight(200)
        tp.getViewBox().sigResized.connect(lambda *_a: self.show_frame(self._frame))  # MIN_SPAN_PX in data units
        self.span_items = {k: Bars(x0=[], y=[], width=[], height=0.7) for k in KINDS}
        for item in self.span_items.values():
            tp.addItem(item)
        self.fail_scatter = Scatter(symbol="x", size=14)
        tp.addItem(self.fail_scatter)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        tp.addItem(self.cursor)
        self.run_text = LiveText()
        self.run_text.reserve_lines(3)
        self.run_summary = LiveText()
        self.run_summary.reserve_lines(2)
        lay = QVBoxLayout()
        lay.addWidget(tp, 1)
        lay.addWidget(self.run_text)
        lay.addWidget(self.run_summary)
        return lay

    def _build_cluster_and_triage(self) -> Tabs:
        """The cluster chart shares its cell with the triage checklist: below the charts the list
        got a strip of two lines (at presenter size a heading and half a line)."""
        tabs = self.lower_tabs = Tabs()
        page = QWidget()
        lay = self._build_cluster()
        lay.setContentsMargins(0, 0, 0, 0)
        page.setLayout(lay)
        tabs.addTab(page, "Cluster size")
        self.triage = QTextBrowser()
        self.triage.setOpenLinks(False)
        self.triage.setHtml(TRIAGE)
        self.triage.setAccessibleName("Loss-spike and silent-data-corruption triage checklist")
        tabs.addTab(self.triage, "Triage checklist")
        return tabs

    def _build_cluster(self) -> QVBoxLayout:
        cp = self.cluster_plot = make_plot(self.theme, "Cluster size against interruptions",
                                           "interruptions per day", "GPUs")
        cp.setAccessibleName("Cluster size against interruptions per day")
        cp.setLogMode(x=True, y=False)
        cp.setMouseEnabled(x=False, y=False)
        self.cluster_legend = cp.addLegend(offset=(10, 10))   # over the flat start of the curve
        self.cluster_curve = cp.plot([], [], name="interruptions/day = N × 86,400 / M_GPU")
        self.llama_point = cp.plot([self.data.gpus], [self.data.unexpected / self.data.days], pen=None, symbol="s",
                                   symbolSize=12, name="Llama 3: 419 in 54 days on 16,384")
        self.here_point = cp.plot([], [], pen=None, symbol="t", symbolSize=14, name="this scenario")
        cp.getAxis("bottom").setTicks(plain_log_ticks(CLUSTER_SIZES[0], CLUSTER_SIZES[-1], _gpus))
        top = float(interruptions_per_day(CLUSTER_SIZES[-1], self.data.gpu_mtbf_seconds))  # the curve's own range
        cp.setXRange(math.log10(CLUSTER_SIZES[0]), math.log10(CLUSTER_SIZES[-1]), padding=0.03)
        cp.setYRange(0, top * 1.05, padding=0)
        self.cluster_text = LiveText()
        lay = QVBoxLayout()
        lay.addWidget(cp, 1)
        lay.addWidget(self.cluster_text)
        return lay

    # --- scenario ---------------------------------------------------------------------------
    def set_scenario(self, scenario) -> None:
        self.gpus_spin.blockSignals(True)
        self.gpus_spin.setValue(scenario.n_gpus)
        self.gpus_spin.blockSignals(False)
        self._recompute()

    def _set_gpus(self, n: int) -> None:
        self.error.show_error(self.ctx.scenario.try_update(n_gpus=int(n)))

    def _llama3_preset(self) -> None:
        err = self.ctx.scenario.try_update(model="llama3-405b", gpu="h100-sxm", n_gpus=16384, tp=8, pp=16,
                                           seq_len=8192, micro_batch=1, grad_accum=16)
        self.error.show_error(err)

    def _recompute(self) -> None:
        """The analytic part (a few ms): throughput, optima, expected goodput; then schedule the simulation."""
        s = self.ctx.scenario.value
        try:
            self.throughput = training_throughput(s, self.mfu_slider.value() / 100)
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.error.show_error(None)
        gpu_mtbf = self.data.gpu_mtbf_seconds
        m = job_mtbf(s.n_gpus, gpu_mtbf)
        d = self.ckpt_slider.value() * 60
        r = self.restart_slider.value() * 60
        young, daly = young_interval(d, m), daly_interval(d, m)
        grid = np.geomspace(*_decades(daly / 10, daly * 10), 160)  # whole decades: the axes stay put on
        #                                           small edits and the optimum visibly moves along them
        exact = expected_goodput(grid, d, m, r)
        if self._scale_key != (d, r):        # the cluster sweep depends only on δ and R
            self._scale_key, self._scale = (d, r), goodput_vs_cluster(CLUSTER_SIZES, gpu_mtbf, d, r)
        old = self._curve
        self._curve = dict(mtbf=m, delta=d, restart=r, young=young, daly=daly, grid=grid, exact=exact,
                           probe=np.array([daly / 4, daly / 2, daly, 2 * daly, 4 * daly]), scale=self._scale,
                           best=float(exact.max()))
        if old and (old["mtbf"], old["delta"], old["restart"]) == (m, d, r):
            for k in ("mc_mean", "mc_std"):        # MFU-only edits keep the simulation
                if k in old:
                    self._curve[k] = old[k]
            self._draw()
            return
        self._draw()
        self._schedule_simulation()

    # --- background simulation --------------------------------------------------------------
    def _schedule_simulation(self) -> None:
        """Run at once the first time; afterwards wait for the edits to settle (the old result stays, dimmed)."""
        if self.run is None and not self.tasks.running and not self._refresh.isActive():
            self._start_simulation()
            return
        self.tasks.cancel()
        for item in (self.mc_points, self.mc_bars, *self.span_items.values(), self.fail_scatter):
            item.setOpacity(STALE_OPACITY)
        self._refresh.start()

    def _start_simulation(self) -> None:
        self._refresh.stop()
        c, causes = self._curve, self.data
        if not c:
            return
        m, d, r, daly, probe = c["mtbf"], c["delta"], c["restart"], c["daly"], c["probe"]
        work_seconds = 20 * m

        def work(progress, cancelled):
            means, stds = [], []
            for i, tau in enumerate(probe):       # one probe at a time so Cancel is prompt
                if cancelled():
                    raise Cancelled()
                progress(0.1 + 0.15 * i, "Monte Carlo goodput")
                mean, std = monte_carlo_goodput([tau], work_seconds, d, r, m, runs=60, seed=1 + i)
                means.append(mean[0])
                stds.append(std[0])
            progress(0.85, "simulating one run")
            run = simulate_run(work_seconds, daly, d, r, m, seed=7, causes=causes)
            run.kind_arrays  # noqa: B018 (build the per-kind arrays here, off the GUI thread)
            return (m, d, r), np.array(means), np.array(stds), run

        self.tasks.run(work, self._simulated, label="simulating failures", on_error=self.error.show_error)

    def _simulated(self, out) -> None:
        key, mean, std, run = out
        c = self._curve
        if (c["mtbf"], c["delta"], c["restart"]) != key:
            return
        c["mc_mean"], c["mc_std"] = mean, std
        self.run = run
        self._draw_monte_carlo()
        for item in (*self.span_items.values(), self.fail_scatter):
            item.setOpacity(1.0)
        self.timeline_changed.emit()
        self.show_frame(self._frame)

    def wait_simulation(self, timeout_ms: int = 120_000) -> bool:
        """Start a pending (debounced) simulation now and block until it is drawn: for tests and the self-test."""
        if self._refresh.isActive():
            self._start_simulation()
        return self.tasks.wait(timeout_ms)

    def unbind(self) -> None:
        self._refresh.stop()
        super().unbind()

    # --- drawing (updates existing items only) -------------------------------------------------
    def _draw(self) -> None:
        th, c = self.throughput, self._curve
        if th is None or not c:
            return
        pct = th.mfu * 100
        if self.gauge_bar.opts["width"][0] != pct:
            self.gauge_bar.setOpts(width=[pct])
        s = self.ctx.scenario.value
        self.formula.setText(
            f"<b>MFU {pct:.0f}%</b> = tokens/s × FLOPs/token ÷ (GPUs × peak)<br>"
            f"FLOPs/token = 6N + 12·L·H·Q·T = {th.flops_per_token_6n:.3g} + "
            f"{th.flops_per_token - th.flops_per_token_6n:.3g} = <b>{th.flops_per_token:.3g}</b> "
            f"(attention {th.attention_share:.1%} at T = {s.seq_len:,})<br>"
            f"{th.n_gpus:,} × {th.peak_flops_per_gpu / 1e12:,.0f} TFLOP/s → <b>{th.tokens_per_second:,.0f} tokens/s</b> "
            f"({th.tokens_per_second_per_gpu:,.0f} per GPU, {th.achieved_tflops_per_gpu:.0f} TFLOP/s each); "
            f"HFU with {s.recompute} recompute {th.hfu:.0%}; step {th.step_seconds:.2f} s; "
            f"15T tokens in {th.days_for_tokens:,.0f} days. <i>(PaLM App. B)</i>")

        gp = self.goodput_plot
        minutes = c["grid"] / 60
        self.exact_curve.setData(minutes, c["exact"] * 100)
        ticks = plain_log_ticks(minutes[0], minutes[-1])
        if ticks != self._goodput_ticks:            # setTicks re-renders the axis even for the same ticks
            self._goodput_ticks = ticks
            gp.getAxis("bottom").setTicks(ticks)
        labels = []
        left = "young" if c["young"] <= c["daly"] else "daly"   # the left line's label goes left of it: never overlap
        for key, name in (("young", "Young √(2δM)"), ("daly", "Daly")):
            anchor = (1.08, 0) if key == left else (-0.08, 0)   # a gap each side of the lines between them
            line, _style = self.optimum_marks[key]
            x = np.log10(c[key] / 60)
            line.setPos(x)
            labels.append(Label(f"{name}\n{c[key] / 60:.1f} min", float(x), c["best"] * 100 - 1, anchor,
                                self._label_font, self.theme.fg))
        self.optimum_labels.set_labels(labels)
        x_lo, x_hi = np.log10(minutes[0]), np.log10(minutes[-1])
        self._goodput_range(x=(x_lo - 0.02 * (x_hi - x_lo), x_hi + 0.02 * (x_hi - x_lo)))  # one range change
        self.goodput_text.setText(
            f"Job MTBF {c['mtbf'] / 3600:,.1f} h (= per-GPU MTBF ÷ {s.n_gpus:,} GPUs), checkpoint δ "
            f"{c['delta'] / 60:.1f} min, restart R {c['restart'] / 60:.0f} min: best expected goodput "
            f"{c['best']:.2%} near Daly's interval.")

        pts = c["scale"]
        if pts is not self._cluster_drawn:  # a GPU-count edit only moves the marker: keep the curve's cache
            self._cluster_drawn = pts
            self.cluster_curve.setData([p.n_gpus for p in pts], [p.interruptions_per_day for p in pts])
        now = c["mtbf"]
        per_day = float(interruptions_per_day(s.n_gpus, self.data.gpu_mtbf_seconds))
        self.here_point.setData([s.n_gpus], [per_day])
        best_here = expected_goodput(c["daly"], c["delta"], now, c["restart"])
        self.cluster_text.setText(
            f"▲ this scenario: {s.n_gpus:,} GPUs → {per_day:,.2f} interruptions/day, best goodput "
            f"{best_here:.1%}; at {pts[-1].n_gpus:,} GPUs: {pts[-1].interruptions_per_day:,.0f}/day, "
            f"{pts[-1].goodput:.1%}.")

    def _goodput_range(self, x: tuple[float, float] | None = None) -> None:
        """The y range holds the optimum, 15 points below it and the simulated points, in 5 % steps
        (it stays put on small edits); with ``x``, both axes change in one step (each separate change
        re-lays out the view and its axes)."""
        c = self._curve
        lo = c["best"] - 0.15        # the optimum and its neighbourhood; the far tails may leave the plot
        if "mc_mean" in c:
            lo = min(lo, float(c["mc_mean"].min()))
        y_lo, y_hi = max(0, 5 * math.floor(lo * 20)), min(100, 5 * math.ceil(c["best"] * 20 + 0.4))  # 5 % steps
        pad = self.goodput_plot.getViewBox().suggestPadding(1) * (y_hi - y_lo)
        self.goodput_plot.setRange(xRange=x, yRange=(y_lo - pad, y_hi + pad), padding=0)

    def _draw_monte_carlo(self) -> None:
        c = self._curve
        if "mc_mean" not in c:
            return
        x = c["probe"] / 60
        self.mc_points.setData(x, c["mc_mean"] * 100)
        self.mc_bars.setData(x=np.log10(x), y=c["mc_mean"] * 100, height=2 * c["mc_std"] * 100)
        for item in (self.mc_points, self.mc_bars):
            item.setOpacity(1.0)
        self._goodput_range()

    def timeline(self) -> TimelineSpec | None:
        chapters = [(0, "start")]
        if self.run is not None:
            for f in self.run.failures[:12]:
                chapters.append((int(f.time / self.run.wall_seconds * (N_FRAMES - 1)), f"failure: {f.cause}"))
        return TimelineSpec(n_frames=N_FRAMES, chapters=chapters, fps=12.0, start=N_FRAMES - 1)  # the whole run

    def _view_window(self, now: float) -> tuple[float, float]:
        """The x-range shown: the whole run, or ``n`` checkpoint intervals with the cursor at 80%."""
        run = self.run
        n = self.zoom_box.currentData()
        width = n * (run.interval_seconds + run.checkpoint_seconds)
        if not n or width >= run.wall_seconds:
            return 0.0, run.wall_seconds
        lo = min(max(0.0, now - 0.8 * width), run.wall_seconds - width)
        return lo, lo + width

    def show_frame(self, index: int) -> None:
        """Per frame: O(log n) slicing of precomputed span arrays, then setOpts/setData on existing items."""
        self._frame = max(0, min(int(index), N_FRAMES - 1))
        run = self.run
        if run is None:
            return
        now = run.wall_seconds * self._frame / (N_FRAMES - 1)
        lo, hi = self._view_window(now)
        # A one-minute checkpoint is a tenth of a pixel in a 60-hour view and was not drawn at all:
        # every span is drawn at least MIN_SPAN_PX wide (the text below gives the real durations).
        min_w = MIN_SPAN_PX * (hi - lo) * 1.02 / max(self.timeline_plot.getViewBox().width(), 1.0)
        for row, kind in enumerate(KINDS):
            starts, ends = run.kind_arrays[kind]
            a = int(np.searchsorted(ends, lo, side="left"))      # first span ending inside the view
            b = int(np.searchsorted(starts, min(now, hi), side="left"))
            x0 = starts[a:b]
            w = np.maximum(np.minimum(ends[a:b], now) - x0, min_w)
            self.span_items[kind].setOpts(x0=x0 / 3600, y=np.full(x0.size, float(row)), width=w / 3600)
        times = np.array([f.time for f in run.failures])
        seen = int(np.searchsorted(times, now, side="right"))
        self.fail_scatter.setData(times[:seen] / 3600, np.full(seen, 4.0))
        self.cursor.setPos(now / 3600)
        if (lo, hi) != self._window:
            self._window = (lo, hi)
            self.timeline_plot.setXRange(lo / 3600, hi / 3600, padding=0.01)
            self.timeline_plot.getViewBox().updateMatrix()
        done = run.progress_at(now)
        lost = run.time_in("lost", now)
        last = run.failures[seen - 1] if seen else None
        last_text = f"; last: {last.cause} during {last.during}" if last else ""
        self.run_text.setText(
            f"t = {now / 3600:,.1f} h (view {lo / 3600:,.0f}–{hi / 3600:,.0f} h) · kept {done / 3600:,.1f} h of work · "
            f"failures {seen} · lost {lost / 3600:,.2f} h{last_text}")
        self.run_summary.setText(
            f"Whole run: {run.wall_seconds / 3600:,.1f} h, {len(run.failures)} failures, goodput {run.goodput:.1%} "
            f"(causes sampled from Llama 3 Table 5).")

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        t = theme
        pin_size(self.tasks.widget(), 40)
        self.gauge.setMinimumHeight(int(t.point_size * 8))    # the bar, a label line above and below it and
        self.gauge.setMaximumHeight(int(t.point_size * 16))   # the axis, at any text size
        for plot in (self.goodput_plot, self.cluster_plot):   # fixed width: new tick text never re-lays the plot out
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
        if self._curve:
            self._draw()     # the optimum labels in the new colour and size
        self.cluster_curve.setPen(pen(t.color(5), 3))
        for item, colour in ((self.llama_point, t.color(0)), (self.here_point, t.color(2))):
            item.setSymbolBrush(brush(colour))
            item.setSymbolPen(pen(t.fg, 1))
        fills = {"compute": brush(t.color(2)), "checkpoint": brush(t.color(4)),
                 "lost": pg.mkBrush(t.color(5), style=Qt.BDiagPattern),
                 "restart": pg.mkBrush(t.color(0), style=Qt.Dense4Pattern)}
        for kind, item in self.span_items.items():
            item.setOpts(brush=fills[kind], pen=pen(t.fg, 0.5) if kind in ("lost", "restart") else pg.mkPen(None))
        self.fail_scatter.setBrush(brush(t.color(5)))
        self.fail_scatter.setPen(pen(t.color(5), 2))
        self.cursor.setPen(pen(t.fg, 1.5))

    def result(self) -> object:
        c = self._curve
        if not c:
            return None
        return {"throughput": self.throughput, "job_mtbf_s": c["mtbf"], "checkpoint_s": c["delta"],
                "restart_s": c["restart"], "young_s": c["young"], "daly_s": c["daly"],
                "best_goodput": c["best"], "run_goodput": self.run.goodput if self.run else None,
                "failures": [f.__dict__ for f in self.run.failures] if self.run else [],
                "llama3_note": self.data.note}

    def table(self) -> list[dict]:
        c = self._curve
        if not c:
            return []
        return [{"interval_min": float(x) / 60, "expected_goodput": float(g)} for x, g in zip(c["grid"], c["exact"])]

    def selftest(self) -> None:
        self.mfu_slider.setValue(45)
        self.ckpt_slider.setValue(5)
        self._recompute()
        assert self.throughput is not None and abs(self.throughput.mfu - 0.45) < 1e-9
        assert abs(self._curve["daly"] - daly_interval(300, self._curve["mtbf"])) < 1e-6
        if not self.wait_simulation():
            raise RuntimeError(self.tasks.last_error or "the run simulation did not finish")
        spec = self.timeline()
        for zoom in range(self.zoom_box.count()):
            self.zoom_box.setCurrentIndex(zoom)
            for i in (0, spec.n_frames // 2, spec.n_frames - 1):
                self.show_frame(i)
        self.zoom_box.setCurrentIndex(0)


PANEL = ScalePanel
