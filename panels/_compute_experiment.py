"""D1 view: the scaling-law experiment. The panel shows the run shipped from the build machine at once;
"Run it here" asks the panel (``run_requested``, with the seed) to repeat it on this machine in its
"experiment" job slot (progress, cancel, cached), "Show the build machine's run" asks for the shipped
one back (``shipped_requested``). Draws the measured held-out losses, the law fitted to them and its
compute-optimal frontier beside the published Chinchilla fits. Every number comes from
:mod:`engines.compute.experiment` or :mod:`engines.compute.scaling`."""
from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QPushButton, QSpinBox, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from engines.compute.experiment import CORPUS_SOURCE, ExperimentResult, Params, late_speedup
from engines.compute.scaling import FITS, chinchilla_frontier, optimum_exponents
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import ErrorLabel, legend_below, log_axes, make_plot, pen
from panels._compute_common import SourcesBox, big, eng

SYMBOLS = ("o", "s", "t", "d", "star", "h")
DASHES = (Qt.DashLine, Qt.DotLine, Qt.DashDotLine)      # the published fits differ by line style, not colour alone
SHORT = {"hoffmann": "Hoffmann printed", "hoffmann-unrounded": "Hoffmann unrounded", "besiroglu": "Besiroglu refit"}
METHOD_SOURCE = ("Hoffmann et al. 2022, arXiv 2203.15556, §3.3 and App. D.2 (Huber loss δ = 10⁻³ on log-loss, "
                 "L-BFGS from a grid of starts); caveats on the refit: Besiroglu et al. 2024, arXiv 2404.10102")


def _item(text: str) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


class ExperimentView(QWidget):
    """The experiment tab; ``progress`` is the panel's job bar of its "experiment" slot."""

    run_requested = Signal(int)
    shipped_requested = Signal()

    def __init__(self, theme, progress: QWidget) -> None:
        super().__init__()
        self.theme = theme
        self.result: ExperimentResult | None = None
        self._shipped = False                    # the run shown is the build machine's
        self._has_shipped = False                # the build machine's run could be read
        self._running = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.header = LiveText()
        self.header.reserve_lines(2)
        lay.addWidget(self.header)
        row = FlowLayout()
        self.run_button = QPushButton("Run it here")
        self.run_button.setToolTip("Train the same six models on this machine (a few minutes on a CPU); "
                                   "a run done before with the same seed is shown at once")
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.seed.value()))
        self.seed = QSpinBox()
        self.seed.setRange(0, Params.spec("seed")["hi"])
        self.seed.setPrefix("seed ")
        self.seed.setAccessibleName("Seed of the run here")
        self.seed.setToolTip("Same seed, same device: the same losses, bit for bit")
        self.shipped_button = QPushButton("Show the build machine's run")
        self.shipped_button.clicked.connect(self.shipped_requested)
        for w in (self.run_button, self.seed, self.shipped_button):
            row.addWidget(w)
        lay.addLayout(row)
        lay.addWidget(progress)
        self.error = ErrorLabel()
        lay.addWidget(self.error)
        self.loss_plot = make_plot(self.theme, "Held-out loss against training compute", "loss (nats/char)",
                                   "training compute C = 6ND (FLOP)")
        log_axes(self.loss_plot, x=True)
        legend_below(self.loss_plot, 3)
        self.frontier_plot = make_plot(self.theme, "Compute-optimal model size: fitted here and published",
                                       "parameters N", "training compute C (FLOP)")
        log_axes(self.frontier_plot, x=True, y=True)
        legend_below(self.frontier_plot, 2)
        self.readout = LiveText()
        self.readout.reserve_lines(4)
        charts = QHBoxLayout()                   # side by side: the tab fits a 1080p projector in presenter mode
        for w in (self.loss_plot, self.frontier_plot):
            w.setMinimumHeight(300)              # the legend below takes a third of it at presenter sizes
            w.setMouseEnabled(x=False, y=False)
            charts.addWidget(w)
        lay.addLayout(charts, 3)
        lay.addWidget(self.readout)
        self.table = QTableWidget(0, 8)
        self.table.setHorizontalHeaderLabels(["Model", "N (non-embedding)", "Steps", "D (characters)", "C = 6ND",
                                              "Held-out loss", "Training loss", "Seconds"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.setAccessibleName("Measured points")
        self.table.setMinimumHeight(110)
        lay.addWidget(self.table, 1)
        self.sources = SourcesBox()
        lay.addWidget(self.sources)

    def show_running(self, running: bool) -> None:
        """Whether a run here is under way (its button waits)."""
        self._running = running
        self._buttons()

    def _buttons(self) -> None:
        self.run_button.setEnabled(not self._running)
        self.shipped_button.setEnabled(self._has_shipped and not self._shipped)

    # --- drawing -----------------------------------------------------------------------------------
    def show_result(self, r: ExperimentResult | None, shipped: bool = False, has_shipped: bool = True) -> None:
        """The run ``r`` (``shipped``: the build machine's); ``has_shipped`` says the shipped run can be shown."""
        self.result, self._shipped, self._has_shipped = r, shipped, has_shipped
        self._buttons()
        if r is None:
            return
        where = "the build machine" if r.where == "build machine" else "this machine"
        self.header.setText(
            f"<b>Measured on {where}</b>, {escape(r.date)}, {escape(r.device_name)}, torch {escape(r.torch_version)}, "
            f"seed {r.params.seed}: {len(r.points)} runs in {r.seconds / 60:,.1f} min. "
            f"Six GPT-style models of {big(min(p.n_params for p in r.points))}–{big(max(p.n_params for p in r.points))} "
            f"parameters read Shakespeare one character at a time, each for {r.params.n_budgets} token budgets.")
        self._draw_losses(r)
        self._draw_frontier(r)
        self._fill_readout(r)
        self._fill_table(r)
        self._fill_sources(r)

    def _sizes(self, r: ExperimentResult) -> list[int]:
        return sorted({p.n_params for p in r.points})

    def _draw_losses(self, r: ExperimentResult) -> None:
        t, plot, fit = self.theme, self.loss_plot, r.fit
        plot.clear()
        if plot.getPlotItem().legend is not None:
            plot.getPlotItem().legend.clear()
        for i, n in enumerate(self._sizes(r)):
            pts = sorted((p for p in r.points if p.n_params == n), key=lambda p: p.flops)
            c = np.geomspace(pts[0].flops / 1.5, pts[-1].flops * 1.5, 40)
            plot.plot(c, [fit.loss(n, x / (6.0 * n)) for x in c], pen=pen(t.color(i), 2, Qt.DashLine),
                      name="fitted law, each size" if i == 0 else None)
            plot.plot([p.flops for p in pts], [p.loss for p in pts], pen=None, symbol=SYMBOLS[i % len(SYMBOLS)],
                      symbolSize=13, symbolBrush=t.color(i), symbolPen=pen(t.fg, 1),
                      name=f"{pts[0].size}, N = {big(n)}")
        c, _, _, loss = zip(*r.frontier)
        plot.plot(c, loss, pen=pen(t.fg, 4), name="fitted optimum (best size per C)")

    def _draw_frontier(self, r: ExperimentResult) -> None:
        t, plot = self.theme, self.frontier_plot
        plot.clear()
        if plot.getPlotItem().legend is not None:
            plot.getPlotItem().legend.clear()
        c = np.array([row[0] for row in r.frontier])
        for i, key in enumerate(FITS):
            n, _, _ = chinchilla_frontier(c, key)
            plot.plot(c, n, pen=pen(t.color(i + 1), 2.5, DASHES[i % len(DASHES)]),
                      name=f"{SHORT[key]} (N ∝ C^{optimum_exponents(key)[0]:.2f})")
        plot.plot(c, [row[1] for row in r.frontier], pen=pen(t.fg, 4),
                  name=f"fitted here (N ∝ C^{r.fit.a:.2f})")
        plot.plot([p.flops for p in r.points], [p.n_params for p in r.points], pen=None, symbol="o", symbolSize=9,
                  symbolBrush=t.bg, symbolPen=pen(t.fg, 1.5), name="runs measured")

    def _fill_readout(self, r: ExperimentResult) -> None:
        f = r.fit
        c_max = max(p.flops for p in r.points)
        n_opt, d_opt = f.optimum(c_max)
        published = ", ".join(f"{SHORT[k]} {optimum_exponents(k)[0]:.2f}" for k in FITS)
        smallest = min(p.n_params for p in r.points)
        speeding = late_speedup(r.points)
        early = (f" In {len(speeding)} of the {len(self._sizes(r))} sizes the loss fell faster over the last doubling of "
                 f"data than over the one before: these runs stop while training still speeds up, which no sum of "
                 f"power laws can follow, so the exponents describe this early stage." if speeding else "")
        beyond = (f" That is smaller than any model trained here ({big(smallest)}): the fit extrapolates."
                  if n_opt < smallest else "")
        self.readout.setText(
            f"<b>Fitted here:</b> L = {f.E:.3f} + {f.A:.4g}/N<sup>{f.alpha:.3f}</sup> + {f.B:.4g}/D<sup>{f.beta:.3f}</sup> "
            f"(nats per character; the fit misses the points by {f.rmse_log:.1%} rms). "
            f"Its optimum grows the model as C<sup>{f.a:.2f}</sup> and the data as C<sup>{f.b:.2f}</sup>; the published "
            f"exponents for N are {published}. At the largest budget measured, {eng(c_max, 'FLOP')}, the fit would "
            f"train N = {big(n_opt)} on D = {big(d_opt)} characters ({d_opt / n_opt:,.0f} per parameter).{beyond} "
            f"<i>Read with care:</i> characters are not tokens, the models are tiny and the runs short, and with "
            f"{f.n_points} points A and B trade off against α and β, as Besiroglu et al. found for Chinchilla's own fit."
            f"{early}")

    def _fill_table(self, r: ExperimentResult) -> None:
        self.table.setRowCount(len(r.points))
        for i, p in enumerate(sorted(r.points, key=lambda p: (p.n_params, p.tokens))):
            cells = (p.size, f"{p.n_params:,}", f"{p.steps:,}", big(p.tokens), eng(p.flops), f"{p.loss:.4f}",
                     f"{p.train_loss:.4f}", f"{p.seconds:,.1f}")
            for j, text in enumerate(cells):
                self.table.setItem(i, j, _item(text))

    def _fill_sources(self, r: ExperimentResult) -> None:
        where = "the build machine" if r.where == "build machine" else "this machine"
        rows = [(f"Held-out losses of {len(r.points)} runs", f"measured on {where} {r.date}, {r.device_name}, torch "
                 f"{r.torch_version}, seed {r.params.seed} (engines/compute/experiment.py); text: {CORPUS_SOURCE}"),
                ("Fitted E, A, B, α, β", METHOD_SOURCE + " (computed here)"),
                ("Fitted optimum N_opt, D_opt", "Hoffmann et al. 2022, Eq. 4, from the fitted constants (computed here)"),
                ("N without embeddings, C = 6ND", "Kaplan et al. 2020, arXiv 2001.08361, §2.1"),
                ("Learning-rate schedule: warm-up, constant, linear cool-down per budget",
                 "Hu et al. 2024 (MiniCPM), arXiv 2404.06395; Hägele et al. 2024, arXiv 2405.18392"),
                ("Model: GPT-2 style pre-norm blocks", "Radford et al. 2019; Kaplan et al. 2020, Table 1 parameter count")]
        rows += [(f"{SHORT[k]} frontier", FITS[k].source) for k in FITS]
        self.sources.set_sources(rows)
