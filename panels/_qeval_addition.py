"""The hard-task view: the self-trained addition model's exact match by sum length at each bit width.

Pure drawing of :class:`engines.qeval.addition.HardTaskRun`.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QHeaderView, QTableWidget, QVBoxLayout, QWidget

from explorer.ui.live_text import LiveText
from explorer.ui.whole_rows import WholeRows
from explorer.ui.widgets import brush, fit_legend_columns, legend_below, make_plot, pen
from panels._qeval_tables import fill_table, make_table
from panels._qeval_views import SYMBOLS

STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.SolidLine)


class AdditionView(QWidget):
    """Exact match against the number of digits, one line per bit width, and the answer perplexity."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        p = self.plot = make_plot(theme, "Addition: exact match by length", "exact match (%)",
                                  "digits per operand")
        p.setAccessibleName("Exact match of the addition model by number of digits at each bit width")
        p.setMouseEnabled(x=False, y=False)
        legend_below(p, most=3)
        self.curves: list = []
        self.table = make_table("Addition model at each bit width")
        self.facts = LiveText()
        self.note = LiveText()
        side = QVBoxLayout()
        side.addWidget(self.facts)
        side.addWidget(self.note)
        side.addStretch(1)
        grid.addWidget(p, 0, 0)
        grid.addLayout(side, 0, 1)
        self.table_box = WholeRows(self.table)
        grid.addWidget(self.table_box, 1, 0, 1, 2)
        grid.setColumnStretch(0, 1)     # the text as wide as the chart: fewer lines, and the rows below fit a slide
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 1)
        # every bit width's row in view where the room allows and the table no taller: the chart above
        # takes what is left; a slide too small shows the rows that fit whole
        self.table.setSizeAdjustPolicy(QTableWidget.AdjustToContents)
        self.table.verticalHeader().sectionResized.connect(lambda *_a: self._fit_table())

    def hideEvent(self, event) -> None:
        """A hidden tab asks for no height: the panel's other tabs need not make room for these rows."""
        super().hideEvent(event)
        self.table_box.setMinimumHeight(0)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._fit_table()

    def _fit_table(self) -> None:
        t = self.table
        if not self.isVisible():
            return
        rows = t.verticalHeader()    # a row at least; the rest as the room allows (whole, in the holder)
        least = sum(rows.sectionSize(i) for i in range(min(1, rows.count())))
        self.table_box.setMinimumHeight(least + t.horizontalHeader().height() + 2 * t.frameWidth()
                                        + (t.horizontalScrollBar().sizeHint().height() if t.horizontalScrollBar().isVisible() else 0))

    def show(self, run) -> None:
        t, plot = self.theme, self.plot
        legend = plot.getPlotItem().legend
        for c in self.curves:
            plot.removeItem(c)
            legend.removeItem(c)
        self.curves = []
        base_ppl = run.rows[0].score.answer_perplexity
        for i, row in enumerate(run.rows):
            em = row.score.exact_match()
            change = row.score.answer_perplexity / base_ppl - 1
            name = f"{row.label}: ppl {100 * change:+.1f} %"     # perplexity's change; its value is in the table
            color = t.color(i)
            c = plot.plot(list(em), [100 * v for v in em.values()], name=name, pen=pen(color, 3, STYLES[i % len(STYLES)]),
                          symbol=SYMBOLS[i % len(SYMBOLS)], symbolBrush=brush(color), symbolPen=pen(t.fg, 1),
                          symbolSize=12)
            self.curves.append(c)
        fit_legend_columns(plot)     # entries added after the plot was last resized
        plot.getAxis("bottom").setTicks([[(n, str(n)) for n in range(1, 7)], []])
        lows = [min(r.score.exact_match().values()) for r in run.rows]
        plot.setYRange(max(0.0, 100 * min(lows) - 5), 101)
        plot.setXRange(0.7, 6.3)
        heads = ["weights", "answer\nperplexity", "Δ"] + [f"{n}-digit" for n in range(1, 7)]
        rows = []
        for row in run.rows:
            em = row.score.exact_match()
            rows.append([row.label, f"{row.score.answer_perplexity:.4f}",
                         f"{100 * (row.score.answer_perplexity / base_ppl - 1):+.1f} %"] +
                        [f"{100 * em[n]:.1f}" for n in range(1, 7)])
        fill_table(self.table, heads, rows)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self._fit_table()
        n = run.rows[0].score.by_length[0].problems
        origin = ("the checkpoint that ships with the app" if run.shipped else "a model retrained here")
        self.facts.setText(
            f"<b>Seed {run.seed}</b>, {run.steps:,} training steps: {origin}. Trained {run.trained}"
            f"{f' in {run.train_seconds:.0f} s' if run.train_seconds else ''}; "
            f"{'measured on the build machine' if run.shipped and 'build' not in run.measured else 'measured'} "
            f"{run.measured}. {n:,} held-out sums per length.")
        worst, quiet = run.rows[-1], run.narrowest_quiet(0.10)
        em_w = worst.score.exact_match()
        lead = ""
        if quiet is not None and quiet is not worst:
            em_q = quiet.score.exact_match()
            lead = (f"At {quiet.label} its answer perplexity moves {100 * run.perplexity_change(quiet):+.1f} % while "
                    f"exact match goes from {100 * em_q[1]:.0f} % on 1-digit to {100 * em_q[6]:.0f} % on 6-digit sums. ")
        unlearned = run.unlearned_lengths()
        if unlearned:
            em_f = run.rows[0].score.exact_match()
            lead = (f"<b>This seed did not learn to add {unlearned[0]}-digit numbers</b> (float32 gets "
                    f"{100 * em_f[unlearned[0]]:.0f} % right): {run.steps:,} steps do not converge for every seed, so "
                    f"read the rounding only where float32 is near 100 %, or retrain with another seed. " + lead)
        self.note.setText(
            f"A two-layer transformer (about 0.4 M parameters, digit-place embeddings after McLeish et al. 2024, "
            f"arXiv 2405.17399) learned to add; its weights are then rounded (RTN) at each width. {lead}"
            f"At {worst.label}: perplexity {100 * run.perplexity_change(worst):+.1f} %, exact match "
            f"{100 * em_w[1]:.1f} % → {100 * em_w[6]:.1f} % from 1 to 6 digits. An answer is right only if every digit "
            f"is, and a wrong digit's carry spoils the next.")
