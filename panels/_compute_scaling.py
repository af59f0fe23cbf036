"""D1 view: the Chinchilla frontier and iso-FLOP curves for the chosen fit, Kaplan's slope, the published
runs and the scenario's run (C = 6ND, GPU-hours, days). Pure drawing of :class:`engines.compute.ScalingStudy`."""
from __future__ import annotations

import math
from html import escape

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from engines.compute import FITS, KAPLAN, ScalingStudy, load_table
from engines.compute.study import CHINCHILLA_C, ISO_BUDGETS
from engines.core.hardware import gpu as gpu_spec
from explorer.ui.live_text import LiveText
from explorer.ui.pool import rename
from explorer.ui.whole_rows import WholeRowTable
from explorer.ui.widgets import Tabs, legend_below, log_axes, make_plot, pen
from panels._compute_common import SourcesBox, big, eng

X_RANGE = (18.0, 27.0)   # log10 FLOP shown
SHORT = {"hoffmann": "Hoffmann printed", "hoffmann-unrounded": "Hoffmann unrounded", "besiroglu": "Besiroglu refit"}
ScalingResult = ScalingStudy     # the name this view's result had before it moved into the engine


def _label_anchors(points: list[tuple[str, float, float]], char_w: float = 0.13,
                   line_h: float = 0.45) -> list[tuple[float, float]]:
    """A TextItem anchor for each point's name so that names of nearby points overlap as little as possible:
    greedy, largest model first, over eight positions around the point; each name's box is estimated in
    decades (``char_w`` per character wide, ``line_h`` high: the chart's scale at its font, when known)."""
    boxes: list[tuple[float, float, float, float]] = []
    out: dict[int, tuple[float, float]] = {}

    def overlap(a, b) -> float:
        return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))

    for i in sorted(range(len(points)), key=lambda i: -points[i][2]):
        text, c, n = points[i]
        x, y, w, h = math.log10(c), math.log10(n), char_w * len(text), line_h
        best = None
        for ax, ay in ((0, 1), (1, 1), (0, 0), (1, 0), (0, 0.5), (1, 0.5), (0.5, 1), (0.5, 0)):
            box = (x - ax * w, y - (1 - ay) * h, x + (1 - ax) * w, y + ay * h)
            cost = sum(overlap(box, b) for b in boxes) + (10.0 if box[2] > X_RANGE[1] else 0.0)
            if best is None or cost < best[0]:
                best = (cost, (ax, ay), box)
            if cost == 0:
                break
        boxes.append(best[2])
        out[i] = best[1]
    return [out[i] for i in range(len(points))]


def _item(text: str) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setToolTip(text)
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


class ScalingView(QWidget):
    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.frontier_plot = make_plot(theme, "Optimal model size and data against compute", "parameters N, tokens D",
                                       "training compute C (FLOP)")
        log_axes(self.frontier_plot, x=True, y=True)
        legend_below(self.frontier_plot, 4)
        self.iso_plot = make_plot(theme, "Loss at fixed compute (iso-FLOP)", "predicted loss",
                                  "parameters N")
        log_axes(self.iso_plot, x=True)
        legend_below(self.iso_plot, 3)
        for p in (self.frontier_plot, self.iso_plot):
            p.setMinimumHeight(340)
            p.setMouseEnabled(x=False, y=False)
        self.text = LiveText()
        self.text.reserve_lines(3)
        # the star's run in one short line under its chart, in the same box: presenter mode shows only the
        # box, and a readout beside the chart squashed it at 1280 px
        self.frontier_box = QWidget()
        box = QVBoxLayout(self.frontier_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        self.run_line = LiveText()
        box.addWidget(self.frontier_plot, 1)
        box.addWidget(self.run_line)
        charts = QHBoxLayout()             # side by side: the tab fits a 1080p projector in presenter mode
        charts.addWidget(self.frontier_box)
        charts.addWidget(self.iso_plot)
        lay.addLayout(charts, 3)
        lay.addWidget(self.text)
        self.tables = Tabs()
        self.runs_table = WholeRowTable(0, 8)
        self.runs_table.setHorizontalHeaderLabels(["Run", "N", "D (tokens)", "6ND", "Reported C", "GPU-hours",
                                                   "Implied MFU", "How sure"])
        self.fits_table = WholeRowTable(0, 9)
        self.fits_table.setHorizontalHeaderLabels(["Fit", "E", "A", "B", "α", "β", f"N_opt at {CHINCHILLA_C:g}",
                                                   "D_opt", "Tokens per param"])
        for t, name in ((self.runs_table, "Published runs"), (self.fits_table, "The three fits at Chinchilla's budget")):
            t.verticalHeader().setVisible(False)
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
            t.setAccessibleName(name)
            self.tables.addTab(t, name)
        self.tables.setMinimumHeight(200)
        lay.addWidget(self.tables, 1)
        self.sources = SourcesBox()
        lay.addWidget(self.sources)
        self.result: ScalingStudy | None = None

    # --- drawing ---------------------------------------------------------------------------------
    def show_result(self, r: ScalingStudy) -> None:
        self.result = r
        if getattr(self, "_items_theme", None) is not self.theme:
            self._build_items()
        curves = (r.fit, r.runs, r.scenario.point)       # all the two charts depend on
        if curves != self._curves_shown:                 # an edit that moves none of it repaints neither chart
            self._curves_shown = curves
            self._draw_frontier(r)
            self._draw_iso(r)
        s = r.scenario
        p = s.point
        fit = FITS[r.fit]
        self.run_line.setText(f"★ C = 6ND = <b>{eng(p.flop_6nd, 'FLOP')}</b> = {big(s.gpu_hours)} GPU-hours at "
                              f"{s.mfu:.0%} MFU = <b>{s.days:,.1f} days</b> on {s.n_gpus:,} GPUs")
        self.text.setText(
            f"<b>{escape(p.label)}</b>: N = {big(p.N)} parameters on D = {big(p.D)} tokens "
            f"({p.tokens_per_param:,.0f} tokens per parameter), trained on {escape(gpu_spec(s.gpu).label)}: "
            f"its compute and days are the ★ line under the chart. "
            f"The chosen fit ({escape(fit.label)}) would spend this compute on N = {big(p.optimum_N)} and D = {big(p.optimum_D)} "
            f"({r.optimum_tokens_per_param:,.0f} tokens per parameter); predicted loss here {p.predicted_loss:.3f}. "
            f"{escape(fit.note)}")
        self._fill_tables(r)
        self._fill_sources(r)

    # Items are made once per theme and then only given new data: rebuilding some sixty pyqtgraph
    # items and their legend rows cost most of an edit.
    def _build_items(self) -> None:
        t = self.theme
        f, i = self.frontier_plot, self.iso_plot
        for plot in (f, i):
            plot.clear()
            plot.getPlotItem().legend.clear()
        self.fit_lines = {key: f.plot([], [], name=SHORT[key]) for key in FITS}
        self.d_line = f.plot([], [], name="its tokens D_opt")
        self.kaplan_line = f.plot([], [], pen=pen(t.fg, 2, Qt.DotLine), name=f"Kaplan N ∝ C^{KAPLAN.a:g}")
        self.runs_dots = f.plot([], [], pen=None, symbol="o", symbolSize=11, symbolBrush=t.color(3),
                                symbolPen=pen(t.fg, 1), name="published runs")
        self.star = f.plot([], [], pen=None, symbol="star", symbolSize=20, symbolBrush=t.color(4),
                           symbolPen=pen(t.fg, 1), name="scenario")
        self.run_labels: list = []
        if not getattr(self, "_placing_on_resize", False):
            f.getViewBox().sigResized.connect(self._place_run_labels)
            self._placing_on_resize = True
        n_budgets = len(ISO_BUDGETS) + 1
        self.iso_curves, self.iso_marks = [], []
        for k in range(n_budgets):
            scen = k == n_budgets - 1
            colour = t.color(4) if scen else t.color(k)
            self.iso_curves.append(i.plot([], [], pen=pen(colour, 4 if scen else 2, Qt.DashLine if scen else Qt.SolidLine),
                                          name=f"budget {k}"))
            self.iso_marks.append(i.plot([], [], pen=None, symbol="d", symbolSize=12, symbolBrush=colour,
                                         symbolPen=pen(t.fg, 1)))
        self.kaplan_loss = i.plot([], [], pen=pen(t.fg, 2, Qt.DotLine), name="Kaplan L(N), slope only")
        self.iso_star = i.plot([], [], pen=None, symbol="star", symbolSize=20, symbolBrush=t.color(4),
                               symbolPen=pen(t.fg, 1))
        self.iso_label = pg.TextItem("scenario", color=t.fg, anchor=(0, 1))
        i.addItem(self.iso_label)
        self._items_theme = t
        self._runs_shown = self._curves_shown = None

    def _draw_frontier(self, r: ScalingStudy) -> None:
        t, plot = self.theme, self.frontier_plot
        for k, line in enumerate(r.frontier):
            item = self.fit_lines[line.fit]
            item.setData(line.flop, line.params)
            item.setPen(pen(t.color(k), 4 if line.chosen else 2, Qt.SolidLine if line.chosen else Qt.DashLine))
            rename(plot, item, f"{SHORT[line.fit]}{' (chosen)' if line.chosen else ''}")
            if line.chosen:
                self.d_line.setData(line.flop, line.tokens)
                self.d_line.setPen(pen(t.color(k), 3, Qt.DashDotLine))
        self.kaplan_line.setData(r.kaplan_flop, r.kaplan_params)
        self.runs_dots.setData([x.flop for x in r.runs], [x.N for x in r.runs])
        p = r.scenario.point
        self.star.setData([p.flop_6nd], [p.N])
        points = [(x.short, x.flop, x.N) for x in r.runs] + [("scenario", p.flop_6nd, p.N)]
        while len(self.run_labels) < len(points):
            label = pg.TextItem("", color=t.fg)
            plot.addItem(label)
            self.run_labels.append(label)
        for label, (text, c, n) in zip(self.run_labels, points):
            label.setText(text)
            label.setPos(math.log10(c), math.log10(n))
        self._label_points = points
        plot.setXRange(*X_RANGE, padding=0.02)
        plot.setYRange(7.5, 13.5, padding=0.02)
        self._place_run_labels()

    def _place_run_labels(self, *_args) -> None:
        """Anchor the names with boxes measured at the chart's present scale: a presenter font on a small
        chart needs other sides than the window's (re-run when the chart is resized, ten points)."""
        points = getattr(self, "_label_points", None)
        if not points:
            return
        dx, dy = self.frontier_plot.getViewBox().viewPixelSize()
        fm = QFontMetricsF(self.run_labels[0].textItem.font())
        sized = dx > 0 and dy > 0 and self.frontier_plot.isVisible()
        anchors = _label_anchors(points, fm.averageCharWidth() * 1.1 * dx, fm.height() * dy) if sized \
            else _label_anchors(points)
        for label, anchor in zip(self.run_labels, anchors):
            label.setAnchor(anchor)

    def _draw_iso(self, r: ScalingStudy) -> None:
        for item, mark, c in zip(self.iso_curves, self.iso_marks, r.iso):
            item.setData(c.params, c.loss)
            rename(self.iso_plot, item, f"{'scenario ' if c.scenario else ''}C = {eng(c.flop)}")
            mark.setData([c.optimum_params], [c.optimum_loss])
        self.kaplan_loss.setData(r.kaplan_loss_params, r.kaplan_loss)
        p = r.scenario.point
        self.iso_star.setData([p.N], [p.predicted_loss])
        self.iso_label.setPos(math.log10(p.N), p.predicted_loss)
        self.iso_plot.setYRange(r.iso_loss_low - 0.05, r.iso_loss_high, padding=0.02)

    def _fill_tables(self, r: ScalingStudy) -> None:
        if self._runs_shown != r.runs:
            self._runs_shown = r.runs
            self._fill(self.runs_table, [((x.label, big(x.N), big(x.D), eng(x.flop_6nd),
                                           eng(x.reported_flop) if x.reported_flop else "—",
                                           f"{x.gpu_hours / 1e6:,.2f}M" if x.gpu_hours else "—",
                                           f"{x.implied_mfu:.1%}" if x.implied_mfu else "—", x.confidence), x.source)
                                         for x in r.runs])
            self._add_notes(self.runs_table, _runs_notes())
        self._fill(self.fits_table, [((o.constants.label + (" (chosen)" if o.chosen else ""), f"{o.constants.E:.4g}",
                                        f"{o.constants.A:.5g}", f"{o.constants.B:.6g}", f"{o.constants.alpha:.4g}",
                                        f"{o.constants.beta:.4g}", big(o.params), big(o.tokens),
                                        f"{o.tokens_per_param:.1f}"), o.constants.source) for o in r.optima])
        self.fits_table.wrap_to_width(0)           # the fits' names wrap: every figure stays in view

    @staticmethod
    def _fill(table: QTableWidget, rows) -> None:
        """Set every cell (tooltip: the row's source) with one resize at the end, not one per cell."""
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        table.setUpdatesEnabled(False)
        table.setRowCount(len(rows))
        for i, (cells, source) in enumerate(rows):
            for j, c in enumerate(cells):
                item = table.item(i, j)
                if item is None:
                    item = _item(c)
                    table.setItem(i, j, item)
                item.setText(c)
                item.setToolTip(source)
        table.resizeColumnsToContents()
        table.setUpdatesEnabled(True)

    @staticmethod
    def _add_notes(table: QTableWidget, notes: list[str]) -> None:
        """Rows under the data, each one cell across the table (in the table: a note below it made the
        tallest tab page taller, and every other page with it)."""
        for note in notes:
            row = table.rowCount()
            table.setRowCount(row + 1)
            table.setItem(row, 0, _item(note))
            table.setSpan(row, 0, 1, table.columnCount())
        table.resizeRowsToContents()

    def _fill_sources(self, r: ScalingStudy) -> None:
        rows = [(f"{f.label}: E, A, B, α, β", f.source) for f in FITS.values()]
        rows.append(("Optimum N_opt = G·(C/6)^a, D_opt = C/(6N_opt)", "Hoffmann et al. 2022, arXiv 2203.15556, "
                                                                    "Eq. 4 (computed here)"))
        rows.append((f"Kaplan slope N ∝ C^{KAPLAN.a:g}", KAPLAN.source + "; drawn through GPT-3's point as an illustration"))
        rows.append(("C = 6ND", "Kaplan et al. 2020, arXiv 2001.08361, §2.1 (computed here)"))
        rows.append(("Kaplan L(N) = (8.8e13/N)^0.076", KAPLAN.source + "; N non-embedding, loss on WebText2 tokens: "
                                                         "only its slope compares with the Chinchilla curves"))
        rows += [(f"{x.label}: N, D, compute, GPU-hours", x.source) for x in r.runs]
        s = r.scenario
        rows.append((f"{s.gpu} dense bf16 peak {s.peak_flops / 1e12:,.1f} TFLOP/s", "GPU catalogue, assets/presets/gpus.json"))
        rows.append((f"MFU {s.mfu:.0%}", "the panel's MFU (default: Llama 3 reached 38–43%, arXiv 2407.21783 Table 4)"))
        rows.append(("GPU-hours = C/(peak × MFU × 3600); implied MFU = C/(GPU-hours × 3600 × peak)",
                     "PaLM (Chowdhery et al. 2022) App. B definition of MFU (computed here)"))
        self.sources.set_sources(rows)


def _runs_notes() -> list[str]:
    """What the implied MFU divides by (each logged GPU's bf16 peak, from the GPU catalogue) and the
    MFU the Llama 3 paper measured (the MFU assumption's source row), one line each."""
    logged = sorted({row.gpu for row in load_table("runs.json")["rows"] if row.gpu_hours and row.gpu})
    peaks = ", ".join(f"{gpu_spec(g).label} {gpu_spec(g).peak_flops('bf16') / 1e12:,.0f} TFLOP/s" for g in logged)
    mfu = next(a for a in load_table("assumptions.json")["rows"] if a.id == "mfu")
    return [f"Implied MFU = reported C ÷ (GPU-hours × 3,600 s × dense bf16 peak)\n{peaks}",
            "For comparison: " + mfu.source.replace("; ", ";\n")]
