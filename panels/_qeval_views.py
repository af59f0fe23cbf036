"""Views of the quantization-evaluation panel: the comparison, error compounding, tasks, ranking and
calibration. Pure drawing of :mod:`engines.qeval` results and :mod:`engines.qeval.compare` readings."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QGridLayout, QHeaderView, QSizePolicy, QTableWidget, QWidget

from engines.qeval.compare import (METRICS, Comparison, SurvivalCurve, baseline_of, find, floor_of, shown_rows,
                                   survival_curve)
from engines.qeval.config import QuantConfig
from engines.qeval.evaluate import DOMAINS
from explorer.ui.fast_items import Bars
from explorer.ui.live_text import LiveText
from explorer.ui.pool import kept_items
from explorer.ui.whole_rows import WholeRows
from explorer.ui.widgets import brush, legend_below, log_axes, make_plot, pen
from panels._qeval_tables import fill_table, make_table

SYMBOLS = ("o", "s", "t", "d", "+", "x", "star", "p")
TASK_ORDER = ("facts", "opposites", "language", "copy-4", "copy-8", "copy-16", "add-1", "add-2")
TASK_SHORT = {"facts": "capitals", "opposites": "opposites", "language": "language", "copy-4": "copy 4",
              "copy-8": "copy 8", "copy-16": "copy 16", "add-1": "add 1-digit", "add-2": "add 2-digit"}


def pct(x: float, digits: int = 1, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{100 * x:+.{digits}f} %" if sign else f"{100 * x:.{digits}f} %"


# ------------------------------------------------------------------------------------------ comparison


class CompareView(QWidget):
    """The configurations side by side, and 'looks fine' (perplexity) against 'is fine' (same output)."""

    HEADS = ["configuration", "bits /\nweight", "perplexity\nprose · code", "Δ perplexity", "top-1\nflips",
             "mean KL\n(nats)", "identical\n@32 · @128", "mean task\naccuracy", "measured"]

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.table = make_table("Configurations compared")
        self.table.verticalHeader().show()        # row numbers: the chart labels its points with them
        self.table.setMinimumHeight(self.table.fontMetrics().height() * 10)
        self.plot = make_plot(theme, "Looks fine vs is fine", "identical @128 (%)",
                              "perplexity change (%)")
        self.plot.setAccessibleName("Perplexity change against share of continuations still identical")
        self.plot.setMouseEnabled(x=False, y=False)
        # tall enough for its y title (a 1280x800 window squeezed it to a strip): a tour then folds the panel
        self.plot.setMinimumHeight(self.plot.fontMetrics().lineSpacing() * 12)
        log_axes(self.plot, x=True)                # labels on the decades only
        self.points = pg.ScatterPlotItem()
        self.plot.addItem(self.points)
        self.labels: list[pg.TextItem] = []       # the row numbers shown: the first of ``_pool``
        self._pool: list[pg.TextItem] = []
        self.plot.getPlotItem().vb.sigResized.connect(self._place_labels)
        self.note = LiveText()
        grid.addWidget(WholeRows(self.table), 0, 0, 1, 2)
        grid.addWidget(self.plot, 1, 0)
        grid.addWidget(self.note, 1, 1)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        grid.setRowStretch(0, 3)
        grid.setRowStretch(1, 2)

    def _place_labels(self, *_args) -> None:
        """Row numbers of crowded points (many sit at 0 % identical) stacked in lanes above them, each in
        the lowest lane where it covers no number placed before."""
        vb = self.plot.getPlotItem().vb
        (x0, x1), (y0, y1) = vb.viewRange()
        sx, sy = (vb.width() / (x1 - x0) if x1 > x0 else 0.0), (vb.height() / (y1 - y0) if y1 > y0 else 0.0)
        placed: list[QRectF] = []                   # in pixels, y downwards
        for label in sorted(self.labels, key=lambda item: item.pos().x()):
            box = label.textItem.boundingRect()
            left = (label.pos().x() - x0) * sx + 0.2 * box.width()
            base = (y1 - label.pos().y()) * sy
            lanes = [QRectF(left, base - (1.1 + k) * box.height(), box.width(), box.height()) for k in range(8)]
            lane = next((k for k, r in enumerate(lanes)      # never above the chart, over its title
                         if r.top() >= 0 and not any(r.intersects(other) for other in placed)), 0)
            placed.append(lanes[lane])
            label.setAnchor((-0.2, 1.1 + lane))

    def selected_config(self, shown) -> QuantConfig | None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return shown[rows[0]].config if rows and rows[0] < len(shown) else None

    def show_result(self, result: Comparison) -> None:
        """One row per configuration; bold where perplexity looks fine but the output is not the same."""
        rows, bold = [], set()
        for r, row in enumerate(result.rows):
            cfg, ev = row.config, row.evaluation
            if ev is None:
                rows.append([cfg.label(), "", "", "", "", "", "", "", "not measured at this budget: Run here"])
                continue
            d = ev.perplexity_by_domain
            rows.append([cfg.label(), f"{ev.bits_per_weight:.2f}",
                         " · ".join(f"{d[k]:.3f}" for k in DOMAINS if k in d) if d else f"{ev.perplexity:.3f}",
                         pct(row.ppl_change, 1, True), pct(ev.flip_rate), f"{ev.mean_kl:.4f}",
                         f"{ev.survival_at(32):.2f} · {ev.survival_at(128):.2f}", pct(row.mean_tasks, 0), row.where])
            if row.looks_fine_differs:
                bold.update({(r, 3), (r, 6)})
        fill_table(self.table, self.HEADS, rows, bold)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(False)   # provenance unelided; too wide, it scrolls
        self._draw_points(result)

    def _label(self, k: int) -> pg.TextItem:
        """The ``k``-th row-number label, made once and reused: making and adding two dozen on each
        draw took 20 ms of a tour step."""
        while len(self._pool) <= k:
            item = pg.TextItem("", anchor=(-0.2, 1.1))
            self.plot.addItem(item)
            self._pool.append(item)
        return self._pool[k]

    def _draw_points(self, result: Comparison) -> None:
        t = self.theme
        spots = []
        measured = [r for r in result.rows if r.evaluation is not None and result.baseline is not None]
        rows = {r.config: i + 1 for i, r in enumerate(result.rows)}
        for i, row in enumerate(measured):
            cfg, ev = row.config, row.evaluation
            # log mode: items added by hand take log10 coordinates; a change below 0.01 % sits at 0.01 %
            x, y = math.log10(max(100 * row.ppl_change, 0.01)), 100 * ev.survival_at(128)
            spots.append({"pos": (x, y), "symbol": SYMBOLS[i % len(SYMBOLS)], "size": 13,
                          "brush": brush(t.color(i), 0.9), "pen": pen(t.fg, 1)})
            label = self._label(i)
            label.setText(str(rows[cfg]), color=t.fg)           # the table's row number
            label.setPos(x, y)
            label.show()
        self.labels = self._pool[:len(measured)]
        for label in self._pool[len(measured):]:
            label.hide()
        self.points.setData(spots)
        self.plot.setYRange(-5, 115)          # room above 100 % for the row numbers
        xs = [s["pos"][0] for s in spots]
        if xs:                                # a known range: the labels are placed in pixels from it
            self.plot.setXRange(min(xs) - 0.25, max(xs) + 0.45, padding=0)
        else:
            self.plot.enableAutoRange(axis="x")
        self._place_labels()
        self.note.setText(
            "Each point is a table row (its number). Across: perplexity change (log scale). Up: greedy "
            "continuations still identical to the baseline's after 128 tokens. <b>Bold</b> cells: perplexity within 2 % while most long outputs differ. Different "
            "is not necessarily worse: the Tasks tab says which.")


# -------------------------------------------------------------------------------------- compounding


class CompoundView(QWidget):
    """Survival of greedy continuations with the (1 − p)^t prediction, and the flat flip rate along the text."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        s = self.survival_plot = make_plot(theme, "Identical after t tokens",
                                           "identical (%)", "tokens generated t")   # short: the axis is a legend's height shorter
        s.setAccessibleName("Survival of greedy continuations with the geometric prediction")
        s.setMouseEnabled(x=False, y=False)
        legend_below(s, most=2)
        self.curve = s.plot([], [], name="measured: chosen configuration")
        self.pred = s.plot([], [], name="(1 − p)^t from its flip rate p")
        self.floor = s.plot([], [], name="bf16 rounding (noise floor)")
        self.floor_pred = s.plot([], [], name="(1 − p)^t for bf16")
        f = self.profile_plot = make_plot(theme, "Flip rate along the text",
                                          "top-1 flips (%)", "position in the text (tokens)")
        f.setAccessibleName("Flip rate by position in the text")
        f.setMouseEnabled(x=False, y=False)
        legend_below(f, most=2)
        self.profile = f.plot([], [], name="chosen configuration")
        self.profile_floor = f.plot([], [], name="bf16 rounding")
        self.note = LiveText()
        grid.addWidget(s, 0, 0)
        grid.addWidget(f, 0, 1)
        grid.addWidget(self.note, 1, 0, 1, 2)
        grid.setRowStretch(0, 1)

    def show_result(self, curve: SurvivalCurve | None, floor: SurvivalCurve | None) -> None:
        """The chosen configuration's survival curve and the bf16 floor's (either may be unmeasured)."""
        t = self.theme
        ev, floor_ev = (curve.evaluation if curve else None), (floor.evaluation if floor else None)
        for item, c, color, style, width, measured in (
                (self.curve, curve, t.color(5), Qt.SolidLine, 3, True), (self.pred, curve, t.color(5), Qt.DashLine, 2, False),
                (self.floor, floor, t.color(4), Qt.SolidLine, 2, True),
                (self.floor_pred, floor, t.color(4), Qt.DotLine, 2, False)):
            if c is None:
                item.setData([], [])
                continue
            item.setData([0, *c.lengths], [100.0] + [100 * v for v in (c.measured if measured else c.predicted)])
            item.setPen(pen(color, width, style))
        for item, e, color, style in ((self.profile, ev, t.color(5), Qt.SolidLine),
                                      (self.profile_floor, floor_ev, t.color(4), Qt.DashLine)):
            if e is None or not e.flip_profile:
                item.setData([], [])
                continue
            xs = [(i + 0.5) * e.profile_bin for i in range(len(e.flip_profile))]
            item.setData(xs, [100 * v for v in e.flip_profile])
            item.setPen(pen(color, 3, style))
            item.setSymbol("o")
            item.setSymbolBrush(brush(color))
        self.survival_plot.setYRange(0, 102)
        self.survival_plot.enableAutoRange(axis="x")
        self.profile_plot.enableAutoRange()
        if ev is None:
            self.note.setText("The chosen configuration is not measured at this budget: press Run here.")
            return
        n = curve.lengths[-1]
        p = ev.flip_rate
        pred = curve.predicted[-1]
        floor_text = (f" bf16 rounding alone (flip rate {pct(floor_ev.flip_rate, 2)}) keeps {pct(floor_ev.survival_at(n), 0)} "
                      f"identical: below that line, a difference says nothing about quality." if floor_ev else "")
        self.note.setText(
            f"<b>{ev.config.label()}</b>: under teacher forcing {pct(p, 2)} of tokens flip, about evenly along the "
            f"text (right). Free-running, one flip sends the continuation down another path, so identical "
            f"continuations decay like (1 − p)^t: predicted {pct(pred, 0)} after {n} tokens, measured "
            f"{pct(ev.survival_at(n), 0)} of {ev.survival and len(ev.survival) and ''}the prompts.{floor_text} "
            f"p is measured on the held-out text, the curve on other prompts, so the two need not match exactly.")


# ---------------------------------------------------------------------------------------------- tasks


class TasksView(QWidget):
    """Accuracy per task with 95 % intervals, and accuracy against answer length."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.table = make_table("Task accuracy per configuration")
        p = self.length_plot = make_plot(theme, "Copying: accuracy against length", "exact match (%)",
                                         "words to copy")
        p.setAccessibleName("Copy accuracy against the number of words")
        p.setMouseEnabled(x=False, y=False)
        legend_below(p, most=2)
        self.curves: list = []
        self.note = LiveText()
        grid.addWidget(WholeRows(self.table), 0, 0)
        grid.addWidget(p, 0, 1)
        grid.addWidget(self.note, 1, 0, 1, 2)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        grid.setRowStretch(0, 1)

    def show_result(self, result: Comparison) -> None:
        """Accuracy cells with their intervals (from the engine), and copy accuracy against length."""
        evs = result.evaluations
        tasks = [k for k in TASK_ORDER if any(k in e.task_accuracy for e in evs)]
        tasks += sorted({k for e in evs for k in e.task_accuracy} - set(tasks))
        heads = ["configuration"] + [TASK_SHORT.get(k, k) for k in tasks]
        rows, tips = [], {}
        for r, (e, cells) in enumerate(zip(evs, result.tasks)):
            row = [e.config.label()]
            for c, k in enumerate(tasks, start=1):
                if k not in cells:
                    row.append("—")
                    continue
                cell = cells[k]
                row.append(f"{100 * cell.accuracy:.0f} [{100 * cell.low:.0f}–{100 * cell.high:.0f}]")
                tips[(r, c)] = f"{round(cell.accuracy * cell.items)} of {cell.items} items right; 95 % Wilson interval in brackets"
            rows.append(row)
        fill_table(self.table, heads, rows, tips=tips)
        t = self.theme
        plot = self.length_plot
        lengths = [(4, "copy-4"), (8, "copy-8"), (16, "copy-16")]
        picked = [e for e in evs if all(k in e.task_accuracy for _n, k in lengths)      # weights rounded alone
                  and e.config.method == "rtn" and e.config.k_bits == 16 and e.config.v_bits == 16][:6]
        names = [e.config.label() for e in picked]
        # other configurations: other lines and legend; the same ones: new data, no new items
        self.curves = kept_items(plot, tuple(names), lambda: [plot.plot(name=name) for name in names])
        for i, (c, e) in enumerate(zip(self.curves, picked)):
            c.setData([n for n, _k in lengths], [100 * e.task_accuracy[k] for _n, k in lengths],
                      pen=pen(t.color(i), 3, (Qt.SolidLine, Qt.DashLine, Qt.DotLine)[i % 3]),
                      symbol=SYMBOLS[i % len(SYMBOLS)], symbolBrush=brush(t.color(i)), symbolSize=11)
        plot.setYRange(0, 102)
        plot.getAxis("bottom").setTicks([[(4, "4"), (8, "8"), (16, "16")], []])
        n = max((max(e.task_items.values(), default=0) for e in evs), default=0)
        self.note.setText(
            f"Exact match of the greedy answer, percent, with a 95 % Wilson interval from {n} or fewer items "
            f"per task: with so few items, differences of a few points are noise. Copying longer passages and "
            f"adding longer numbers need every token right, so they fail before one-word facts do.")


# -------------------------------------------------------------------------------------------- ranking


class RankingView(QWidget):
    """Ranks under each metric; where a metric's rank is far from the perplexity rank, the cell is marked."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.table = make_table("Configurations ranked by each metric")
        self.note = LiveText()
        grid.addWidget(WholeRows(self.table), 0, 0)
        grid.addWidget(self.note, 1, 0)
        grid.setRowStretch(0, 1)

    def show_result(self, result: Comparison) -> None:
        rows = result.ranking
        if not rows:
            fill_table(self.table, ["configuration"], [])
            self.note.setText("Nothing measured at this budget yet.")
            return
        heads = ["configuration"] + [m.label for m in METRICS]
        cells, bold = [], set()
        for r, row in enumerate(rows):
            line = [row.label]
            for c, m in enumerate(METRICS, start=1):
                mark = " ≠" if m.key in row.disagrees else ""
                line.append(f"{row.ranks[m.key]}{mark}")
                if mark:
                    bold.add((r, c))
            cells.append(line)
        fill_table(self.table, heads, cells, bold)
        n_dis = sum(1 for row in rows if row.disagrees)
        self.note.setText(
            f"Rank 1 is closest to the baseline under that metric (ties share a rank); rows in order of perplexity. "
            f"A bold “≠” marks a configuration that this metric puts in the opposite order from perplexity against "
            f"two or more others: {n_dis} of {len(rows)} configurations. One headline number hides these swaps.")


# ---------------------------------------------------------------------------------------- calibration


class CalibrationView(QWidget):
    """GPTQ and AWQ against plain rounding, per evaluation domain, by calibration text and size."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.table = make_table("Calibrated configurations by evaluation domain")
        p = self.plot = make_plot(theme, "Perplexity change on each held-out domain", "Δ perplexity (%)",
                                  "table row")
        p.setAccessibleName("Perplexity change per domain for each calibrated configuration")
        p.setMouseEnabled(x=False, y=False)
        legend_below(p, most=2)
        self.bars: list = []
        self.legend_items: list = []
        self.note = LiveText()
        self.note.setToolTip("Build other calibrated configurations on the Configurations tab.")
        self.table.verticalHeader().show()        # row numbers name the chart's bars
        # The table beside the bars, every row in view: above them it had room for two rows at 1280×800
        # presenter size, and the bars are read by their row numbers. The note runs under both.
        self.table.setSizeAdjustPolicy(QTableWidget.AdjustToContents)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.table.setSizePolicy(QSizePolicy.Minimum, QSizePolicy.Preferred)
        grid.addWidget(WholeRows(self.table), 0, 0)
        grid.addWidget(p, 0, 1)
        grid.addWidget(self.note, 1, 0, 1, 2)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 1)

    def show_result(self, result: Comparison) -> None:
        rows = result.calibration
        domains = [d for d in DOMAINS if any(d in r.change_by_domain for r in rows)]
        # the label already names the calibration text and size ("W3 g128 GPTQ (prose 256)"): no columns repeat it
        heads = ["configuration"] + [f"Δ perplexity\non {d}" for d in domains]
        fill_table(self.table, heads, [[r.label] + [pct(r.change_by_domain.get(d, float('nan')), 1, True)
                                                    for d in domains] for r in rows])
        self.table.horizontalHeader().setStretchLastSection(False)      # as wide as its columns, no wider
        t, plot = self.theme, self.plot
        for b in self.bars:
            plot.removeItem(b)
        legend = plot.getPlotItem().legend
        for item in self.legend_items:
            legend.removeItem(item)
        self.bars, self.legend_items = [], []
        width = 0.8 / max(1, len(domains))
        for j, d in enumerate(domains):
            b = Bars(x=[i + (j - (len(domains) - 1) / 2) * width for i in range(len(rows))],
                     height=[100 * r.change_by_domain.get(d, 0.0) for r in rows], width=width * 0.95)
            fill = brush(t.color(j), 0.85)
            if j:
                fill.setStyle(Qt.BDiagPattern)
            b.setOpts(brush=fill, pen=pen(t.fg, 1))
            plot.addItem(b)
            self.bars.append(b)
            sample = plot.plot([], [], name=f"evaluated on {d}", pen=pen(t.color(j), 8, Qt.SolidLine if not j else Qt.DashLine))
            self.bars.append(sample)
            self.legend_items.append(sample)
        plot.getAxis("bottom").setTicks([[(i, str(i + 1)) for i in range(len(rows))], []])
        plot.enableAutoRange()
        self.note.setText(
            "GPTQ and AWQ fit the rounding to a calibration text; plain RTN uses none. Each bar pair is a table "
            "row on both held-out domains; the one it was not calibrated on shows the mismatch. GPTQ fits "
            "each layer's outputs to that text; AWQ only takes per-channel scales from it, so AWQ is reported to "
            "depend less on it (Lin et al. 2024, arXiv 2306.00978, §4). At 3 bits GPTQ even moves with the CPU "
            "thread count: compare rows measured alike.")


__all__ = ["CompareView", "CompoundView", "TasksView", "RankingView", "CalibrationView", "shown_rows", "baseline_of",
           "floor_of", "find", "survival_curve", "fill_table", "make_table", "pct"]
