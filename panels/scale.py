"""Training at scale: MFU, the checkpoint interval, failures on a run timeline, and triage habits."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QTextBrowser,
                               QVBoxLayout)

from engines.mfu import TrainingThroughput, training_throughput
from engines.reliability import (RunResult, daly_interval, expected_goodput, goodput_vs_cluster, job_mtbf,
                                 llama3_interruptions, monte_carlo_goodput, simulate_run, young_interval)
from explorer.panel import Panel, TimelineSpec
from explorer.widgets import ErrorLabel, LabeledSlider, brush, make_plot, pen

KINDS = ("compute", "checkpoint", "lost", "restart")
KIND_LABELS = {"compute": "kept work", "checkpoint": "checkpoint write", "lost": "lost work", "restart": "restart"}
N_FRAMES = 240

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
        self._frame = 0

        controls = QHBoxLayout()
        self.mfu_slider = LabeledSlider("Assumed MFU", 5, 80, 40, 1, 0, "%")
        self.ckpt_slider = LabeledSlider("Checkpoint write δ", 0.1, 30, 1.0, 0.1, 1, "min")
        self.restart_slider = LabeledSlider("Restart R", 0, 60, 5, 1, 0, "min")
        for w in (self.mfu_slider, self.ckpt_slider, self.restart_slider):
            controls.addWidget(w, 1)
            w.valueCommitted.connect(lambda _v: self._recompute())
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setRange(1, 1_000_000)
        self.gpus_spin.setPrefix("GPUs: ")
        self.gpus_spin.setKeyboardTracking(False)
        self.gpus_spin.setAccessibleName("Number of GPUs in the cluster")
        self.gpus_spin.valueChanged.connect(self._set_gpus)
        controls.addWidget(self.gpus_spin)
        self.llama_button = QPushButton("Llama 3 405B run")
        self.llama_button.setToolTip("16,384 H100s, TP 8 × PP 16, 8K sequences (Dubey et al. 2024, Table 4)")
        self.llama_button.clicked.connect(self._llama3_preset)
        controls.addWidget(self.llama_button)
        self.body.addLayout(controls)
        self.error = ErrorLabel()
        self.body.addWidget(self.error)

        grid = QGridLayout()
        mfu_box = QGroupBox("Model FLOPs utilization")
        mb = QVBoxLayout(mfu_box)
        self.gauge = make_plot(ctx.theme, "", "", "MFU (% of dense bf16 peak)")
        self.gauge.setAccessibleName("MFU gauge")
        self.gauge.setMouseEnabled(x=False, y=False)
        self.gauge.getAxis("left").setTicks([[]])
        self.gauge_bg = pg.BarGraphItem(x0=[0], y=[0], width=[100], height=0.6)
        self.gauge_bar = pg.BarGraphItem(x0=[0], y=[0], width=[40], height=0.6)
        self.gauge.addItem(self.gauge_bg)
        self.gauge.addItem(self.gauge_bar)
        self.gauge_refs = []
        self.gauge.setMaximumHeight(150)
        mb.addWidget(self.gauge)
        self.formula = QLabel()
        self.formula.setWordWrap(True)
        self.formula.setTextFormat(Qt.RichText)
        mb.addWidget(self.formula)
        grid.addWidget(mfu_box, 0, 0)

        self.goodput_plot = make_plot(ctx.theme, "Goodput against checkpoint interval", "goodput (%)",
                                      "compute time between checkpoints (min, log scale)")
        self.goodput_plot.setAccessibleName("Goodput against checkpoint interval")
        self.goodput_plot.setLogMode(x=True, y=False)
        self.goodput_legend = self.goodput_plot.addLegend(offset=(-10, -10))
        grid.addWidget(self.goodput_plot, 0, 1)

        self.timeline_plot = make_plot(ctx.theme, "One simulated run (play the timeline)", "", "wall time (hours)")
        self.timeline_plot.setAccessibleName("Run timeline with failures, checkpoints and lost work")
        self.timeline_plot.getAxis("left").setTicks([[(i, KIND_LABELS[k]) for i, k in enumerate(KINDS)] + [(4, "failure")]])
        self.timeline_plot.setMouseEnabled(x=False, y=False)
        self.span_items = {k: pg.BarGraphItem(x0=[], y=[], width=[], height=0.7) for k in KINDS}
        for item in self.span_items.values():
            self.timeline_plot.addItem(item)
        self.fail_scatter = pg.ScatterPlotItem(symbol="x", size=14)
        self.timeline_plot.addItem(self.fail_scatter)
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self.timeline_plot.addItem(self.cursor)
        self.run_text = QLabel()
        self.run_text.setWordWrap(True)
        tl_box = QVBoxLayout()
        tl_box.addWidget(self.timeline_plot, 1)
        tl_box.addWidget(self.run_text)
        grid.addLayout(tl_box, 1, 0)

        self.cluster_plot = make_plot(ctx.theme, "Cluster size against interruptions", "interruptions per day",
                                      "GPUs (log scale)")
        self.cluster_plot.setAccessibleName("Cluster size against interruptions per day")
        self.cluster_plot.setLogMode(x=True, y=False)
        self.cluster_legend = self.cluster_plot.addLegend(offset=(10, 10))
        grid.addWidget(self.cluster_plot, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self.body.addLayout(grid, 3)

        self.triage = QTextBrowser()
        self.triage.setOpenLinks(False)
        self.triage.setHtml(TRIAGE)
        self.triage.setAccessibleName("Loss-spike and silent-data-corruption triage checklist")
        self.body.addWidget(self.triage, 1)

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
        grid = np.geomspace(daly / 10, daly * 10, 160)
        exact = expected_goodput(grid, d, m, r)
        probe = np.array([daly / 4, daly / 2, daly, 2 * daly, 4 * daly])
        work = 20 * m
        mc_mean, mc_std = monte_carlo_goodput(probe, work, d, r, m, runs=60, seed=1)
        self.run = simulate_run(work, daly, d, r, m, seed=7, causes=self.data)
        sizes = np.unique(np.geomspace(8, 131072, 40).astype(int))
        scale = goodput_vs_cluster(sizes, gpu_mtbf, d, r)
        self._curve = dict(mtbf=m, delta=d, restart=r, young=young, daly=daly, grid=grid, exact=exact, probe=probe,
                           mc_mean=mc_mean, mc_std=mc_std, scale=scale, best=float(exact.max()))
        self._draw()
        self.timeline_changed.emit()
        self.show_frame(min(self._frame, N_FRAMES - 1))

    # --- drawing ----------------------------------------------------------------------------
    def _draw(self) -> None:
        t, th, c = self.theme, self.throughput, self._curve
        if th is None or not c:
            return
        pct = th.mfu * 100
        self.gauge_bg.setOpts(x0=[0], y=[0], width=[100], height=0.6, brush=brush(t.grid, 0.35), pen=pen(t.fg, 1))
        self.gauge_bar.setOpts(x0=[0], y=[0], width=[pct], height=0.6, brush=brush(t.color(4)), pen=pen(t.fg, 1))
        for item in self.gauge_refs:
            self.gauge.removeItem(item)
        self.gauge_refs = []
        for value, name in ((38, "Llama 3 405B 38–43%"), (46.2, "PaLM 46.2%")):
            line = pg.InfiniteLine(pos=value, angle=90, pen=pen(t.fg, 1.5, Qt.DashLine))
            label = pg.TextItem(name, color=t.fg, anchor=(0, 1.0 if value < 40 else 0.0))
            label.setPos(value, 0.32 if value < 40 else -0.32)
            label.setZValue(5)
            self.gauge.addItem(line)
            self.gauge.addItem(label)
            self.gauge_refs += [line, label]
        self.gauge.setXRange(0, 100, padding=0.02)
        self.gauge.setYRange(-0.95, 0.95, padding=0)
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
        gp.clear()
        for legend in (self.goodput_legend, self.cluster_legend):
            legend.setLabelTextColor(t.fg)
        minutes = c["grid"] / 60
        gp.plot(minutes, c["exact"] * 100, pen=pen(t.color(4), 3), name="Daly's expected goodput")
        err = pg.ErrorBarItem(x=np.log10(c["probe"] / 60), y=c["mc_mean"] * 100, height=2 * c["mc_std"] * 100, pen=pen(t.fg, 1))
        gp.addItem(err)
        gp.plot(c["probe"] / 60, c["mc_mean"] * 100, pen=None, symbol="o", symbolBrush=brush(t.color(0)),
                symbolPen=pen(t.fg, 1), name="Monte Carlo (mean ± sd)")
        for x, name, style, anchor in ((c["young"], "Young √(2δM)", Qt.DashLine, (1, 0)),
                                       (c["daly"], "Daly", Qt.DotLine, (0, 0))):
            line = pg.InfiniteLine(pos=np.log10(x / 60), angle=90, pen=pen(t.color(5), 2, style))
            gp.addItem(line)
            label = pg.TextItem(f"{name}\n{x / 60:.1f} min", color=t.fg, anchor=anchor)
            label.setPos(np.log10(x / 60), c["best"] * 100 - 1)
            gp.addItem(label)
        lo = float(min(c["exact"].min(), c["mc_mean"].min())) * 100
        gp.setYRange(max(0, lo - 3), min(100, c["best"] * 100 + 2))
        gp.setTitle(f"Goodput against checkpoint interval (job MTBF {c['mtbf'] / 3600:,.1f} h, δ {c['delta'] / 60:.1f} min, "
                    f"R {c['restart'] / 60:.0f} min)", color=t.fg)

        cp = self.cluster_plot
        cp.clear()
        pts = c["scale"]
        n = np.array([p.n_gpus for p in pts], dtype=float)
        per_day = np.array([p.interruptions_per_day for p in pts])
        cp.plot(n, per_day, pen=pen(t.color(5), 3), name="interruptions/day = N × 86,400 / M_GPU")
        cp.plot([self.data.gpus], [self.data.unexpected / self.data.days], pen=None, symbol="s", symbolSize=12,
                symbolBrush=brush(t.color(0)), symbolPen=pen(t.fg, 1), name="Llama 3: 419 in 54 days on 16,384")
        here = next((p for p in pts if p.n_gpus >= s.n_gpus), pts[-1])
        now = job_mtbf(s.n_gpus, self.data.gpu_mtbf_seconds)
        cp.plot([s.n_gpus], [86400 / now], pen=None, symbol="t", symbolSize=14, symbolBrush=brush(t.color(2)),
                symbolPen=pen(t.fg, 1), name=f"this scenario: {s.n_gpus:,} GPUs")
        best_here = expected_goodput(daly_interval(c["delta"], now), c["delta"], now, c["restart"])
        cp.setTitle(f"Cluster size against interruptions: {86400 / now:,.2f}/day here, best goodput {best_here:.1%} "
                    f"(at 131K GPUs: {pts[-1].goodput:.1%})", color=t.fg)
        del here

    def timeline(self) -> TimelineSpec | None:
        if self.run is None:
            return None
        chapters = [(0, "start")]
        for f in self.run.failures[:12]:
            chapters.append((int(f.time / self.run.wall_seconds * (N_FRAMES - 1)), f"failure: {f.cause}"))
        return TimelineSpec(n_frames=N_FRAMES, chapters=chapters, fps=12.0)

    def show_frame(self, index: int) -> None:
        run, t = self.run, self.theme
        if run is None:
            return
        self._frame = max(0, min(int(index), N_FRAMES - 1))
        now = run.wall_seconds * self._frame / (N_FRAMES - 1)
        fills = {"compute": brush(t.color(2)), "checkpoint": brush(t.color(4)),
                 "lost": pg.mkBrush(t.color(5), style=Qt.BDiagPattern), "restart": pg.mkBrush(t.color(0), style=Qt.Dense4Pattern)}
        for row, kind in enumerate(KINDS):
            spans = [(s.start, min(s.end, now)) for s in run.spans if s.kind == kind and s.start < now]
            x0 = np.array([a for a, _ in spans]) / 3600
            w = np.array([b - a for a, b in spans]) / 3600
            self.span_items[kind].setOpts(x0=x0, y=np.full(len(spans), row), width=w, height=0.7, brush=fills[kind],
                                          pen=pen(t.fg, 0.5) if kind in ("lost", "restart") else pg.mkPen(None))
        seen = [f for f in run.failures if f.time <= now]
        self.fail_scatter.setData([f.time / 3600 for f in seen], [4] * len(seen), brush=brush(t.color(5)),
                                  pen=pen(t.color(5), 2))
        self.cursor.setPen(pen(t.fg, 1.5))
        self.cursor.setPos(now / 3600)
        self.timeline_plot.setXRange(0, run.wall_seconds / 3600, padding=0.01)
        self.timeline_plot.setYRange(-0.6, 4.6, padding=0)
        done = run.progress_at(now)
        lost = sum(min(s.end, now) - s.start for s in run.spans if s.kind == "lost" and s.start < now)
        last = f"; last: {seen[-1].cause} during {seen[-1].during}" if seen else ""
        self.run_text.setText(
            f"t = {now / 3600:,.1f} h of {run.wall_seconds / 3600:,.1f} h · kept {done / 3600:,.1f} h of work · "
            f"failures {len(seen)} · lost {lost / 3600:,.2f} h{last}. Whole run: goodput {run.goodput:.1%} "
            f"(causes sampled from Llama 3 Table 5).")

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self._draw()
        self.show_frame(self._frame)

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
        spec = self.timeline()
        for i in (0, spec.n_frames // 2, spec.n_frames - 1):
            self.show_frame(i)


PANEL = ScalePanel
