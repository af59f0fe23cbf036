"""Drawing pieces of the training-at-scale panel: the simulated run's timeline, the cluster-size chart
beside the triage checklist, and plain log-axis ticks.

Views: QWidgets that take frozen engine results (``RunResult``, ``CheckpointStudy``, ``Interruptions``)
and never compute domain numbers themselves; the panel builds them and hands them its results.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from engines.scale import CLUSTER_SIZES, SPAN_KINDS, CheckpointStudy, Interruptions, RunResult, interruptions_per_day
from explorer.ui.fast_items import Bars, Scatter
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import Tabs, brush, make_plot, pen

KIND_LABELS = {"compute": "kept work", "checkpoint": "checkpoint write", "lost": "lost work", "restart": "restart"}
MIN_SPAN_PX = 2.0   # narrowest span drawn on the run timeline, in pixels

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
<p>Try items 1–4 on a real run: the <b>Fault run and triage</b> page injects a bad batch, a learning-rate
 spike or a bit flip and shows which alarm fires and what each rollback costs.</p>
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


def gpus_label(v: float) -> str:
    return f"{v / 1000:g}K" if v >= 10_000 else f"{v:,.0f}"


class RunTimeline(QWidget):
    """One simulated run as spans per kind up to the cursor, failures as crosses, in a window that
    follows the cursor (``zoom`` checkpoint intervals) or shows the whole run (``zoom`` 0)."""

    def __init__(self, theme) -> None:
        super().__init__()
        tp = self.plot = make_plot(theme, "One simulated run (play the timeline)", "", "wall time (hours)")
        tp.setAccessibleName("Run timeline with failures, checkpoints and lost work")
        tp.getAxis("left").setTicks([[(i, KIND_LABELS[k]) for i, k in enumerate(SPAN_KINDS)] + [(4, "failure")]])
        tp.setMouseEnabled(x=False, y=False)
        tp.setYRange(-0.6, 4.6, padding=0)
        tp.setMinimumHeight(200)
        tp.getViewBox().sigResized.connect(lambda *_a: self.redraw())   # MIN_SPAN_PX in data units
        self.spans = {k: Bars(x0=[], y=[], width=[], height=0.7) for k in SPAN_KINDS}
        for item in self.spans.values():
            tp.addItem(item)
        self.failures = Scatter(symbol="x", size=14)
        tp.addItem(self.failures)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        tp.addItem(self.cursor)
        self.text = LiveText()
        self.text.reserve_lines(3)
        self.summary = LiveText()
        self.summary.reserve_lines(2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(tp, 1)
        lay.addWidget(self.text)
        lay.addWidget(self.summary)
        self.run: RunResult | None = None
        self._shown: tuple[RunResult, float, int] | None = None
        self._window = (0.0, 1.0)

    def show_result(self, run: RunResult) -> None:
        """A new run, not dimmed; drawn at the next :meth:`show` (the panel's frame)."""
        self.run = run
        self.set_opacity(1.0)

    def set_opacity(self, opacity: float) -> None:
        for item in (*self.spans.values(), self.failures):
            item.setOpacity(opacity)

    def redraw(self) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def show_at(self, now: float, zoom: int) -> None:
        """The run shown (if any) up to ``now`` seconds, in a ``zoom``-interval window."""
        if self.run is not None:
            self.show(self.run, now, zoom)

    def _view_window(self, run: RunResult, now: float, zoom: int) -> tuple[float, float]:
        """The x-range shown: the whole run, or ``zoom`` checkpoint intervals with the cursor at 80%."""
        width = zoom * (run.interval_seconds + run.checkpoint_seconds)
        if not zoom or width >= run.wall_seconds:
            return 0.0, run.wall_seconds
        lo = min(max(0.0, now - 0.8 * width), run.wall_seconds - width)
        return lo, lo + width

    def show(self, run: RunResult, now: float, zoom: int) -> None:
        """Per frame: O(log n) slicing of precomputed span arrays, then setOpts/setData on existing items."""
        self._shown = (run, now, zoom)
        lo, hi = self._view_window(run, now, zoom)
        # A one-minute checkpoint is a tenth of a pixel in a 60-hour view, so every span is drawn at least MIN_SPAN_PX wide (the text below gives the real durations).
        min_w = MIN_SPAN_PX * (hi - lo) * 1.02 / max(self.plot.getViewBox().width(), 1.0)
        for row, kind in enumerate(SPAN_KINDS):
            starts, ends = run.kind_arrays[kind]
            a = int(np.searchsorted(ends, lo, side="left"))      # first span ending inside the view
            b = int(np.searchsorted(starts, min(now, hi), side="left"))
            x0 = starts[a:b]
            w = np.maximum(np.minimum(ends[a:b], now) - x0, min_w)
            self.spans[kind].setOpts(x0=x0 / 3600, y=np.full(x0.size, float(row)), width=w / 3600)
        times = np.array([f.time for f in run.failures])
        seen = int(np.searchsorted(times, now, side="right"))
        self.failures.setData(times[:seen] / 3600, np.full(seen, 4.0))
        self.cursor.setPos(now / 3600)
        if (lo, hi) != self._window:
            self._window = (lo, hi)
            self.plot.setXRange(lo / 3600, hi / 3600, padding=0.01)
            self.plot.getViewBox().updateMatrix()
        done = run.progress_at(now)
        lost = run.time_in("lost", now)
        last = run.failures[seen - 1] if seen else None
        last_text = f"; last: {last.cause} during {last.during}" if last else ""
        self.text.setText(
            f"t = {now / 3600:,.1f} h (view {lo / 3600:,.0f}–{hi / 3600:,.0f} h) · kept {done / 3600:,.1f} h of work · "
            f"failures {seen} · lost {lost / 3600:,.2f} h{last_text}")
        self.summary.setText(
            f"Whole run: {run.wall_seconds / 3600:,.1f} h, {len(run.failures)} failures, goodput {run.goodput:.1%} "
            f"(causes sampled from Llama 3 Table 5).")

    def apply_theme(self, t) -> None:
        fills = {"compute": brush(t.color(2)), "checkpoint": brush(t.color(4)),
                 "lost": pg.mkBrush(t.color(5), style=Qt.BDiagPattern),
                 "restart": pg.mkBrush(t.color(0), style=Qt.Dense4Pattern)}
        for kind, item in self.spans.items():
            item.setOpts(brush=fills[kind], pen=pen(t.fg, 0.5) if kind in ("lost", "restart") else pg.mkPen(None))
        self.failures.setBrush(brush(t.color(5)))
        self.failures.setPen(pen(t.color(5), 2))
        self.cursor.setPen(pen(t.fg, 1.5))


class ClusterAndTriage(Tabs):
    """The cluster-size chart shares its cell with the triage checklist: below the charts the list
    got a strip of two lines (at presenter size a heading and half a line)."""

    def __init__(self, theme, data: Interruptions) -> None:
        super().__init__()
        cp = self.plot = make_plot(theme, "Cluster size against interruptions", "interruptions per day", "GPUs")
        cp.setAccessibleName("Cluster size against interruptions per day")
        cp.setLogMode(x=True, y=False)
        cp.setMouseEnabled(x=False, y=False)
        self.legend = cp.addLegend(offset=(10, 10))   # over the flat start of the curve
        self.curve = cp.plot([], [], name="interruptions/day = N × 86,400 / M_GPU")
        self.llama_point = cp.plot([data.gpus], [data.unexpected_per_day], pen=None, symbol="s", symbolSize=12,
                                   name="Llama 3: 419 in 54 days on 16,384")
        self.here_point = cp.plot([], [], pen=None, symbol="t", symbolSize=14, name="this scenario")
        cp.getAxis("bottom").setTicks(plain_log_ticks(CLUSTER_SIZES[0], CLUSTER_SIZES[-1], gpus_label))
        top = float(interruptions_per_day(CLUSTER_SIZES[-1], data.gpu_mtbf_seconds))   # the curve's own range
        cp.setXRange(math.log10(CLUSTER_SIZES[0]), math.log10(CLUSTER_SIZES[-1]), padding=0.03)
        cp.setYRange(0, top * 1.05, padding=0)
        self.text = LiveText()
        page = self.page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(cp, 1)
        lay.addWidget(self.text)
        self.addTab(page, "Cluster size")
        self.triage = QTextBrowser()
        self.triage.setOpenLinks(False)
        self.triage.setHtml(TRIAGE)
        self.triage.setAccessibleName("Loss-spike and silent-data-corruption triage checklist")
        self.addTab(self.triage, "Triage checklist")
        self._drawn = None   # the sweep the curve shows now

    def show_result(self, c: CheckpointStudy) -> None:
        sweep = c.cluster
        if sweep is not self._drawn:   # a GPU-count edit only moves the marker: keep the curve's cache
            self._drawn = sweep
            self.curve.setData(sweep.n_gpus, sweep.interruptions_per_day)
        self.here_point.setData([c.n_gpus], [c.interruptions_per_day])
        big = sweep.largest
        delta = c.checkpoint_seconds
        write = f"{delta:,.0f} s" if delta < 120 else f"{delta / 60:,.3g} min"
        self.text.setText(   # the step's whole set-up: a slide showing only this chart still names it
            f"▲ this scenario: {c.n_gpus:,} GPUs → {c.interruptions_per_day:,.2f} interruptions/day (job MTBF "
            f"{c.mtbf_seconds / 3600:,.1f} h), best goodput {c.goodput_at_daly:.1%} with a {write} checkpoint and a "
            f"{c.restart_seconds / 60:,.3g} min restart; at {big.n_gpus:,} GPUs: {big.interruptions_per_day:,.0f}/day, "
            f"{big.goodput:.1%}.")

    def apply_theme(self, t) -> None:
        self.plot.getAxis("left").setWidth(int(t.point_size * 4.5))   # fixed: new tick text never re-lays it out
        self.curve.setPen(pen(t.color(5), 3))
        for item, colour in ((self.llama_point, t.color(0)), (self.here_point, t.color(2))):
            item.setSymbolBrush(brush(colour))
            item.setSymbolPen(pen(t.fg, 1))
