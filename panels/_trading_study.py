"""H2 view of the trading panel: the headline study's figures by version, and the statistics that read it.

Pure drawing of :class:`engines.trading.Study` and :data:`engines.trading.FIGURES`.
"""
from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGridLayout, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from engines.trading import FIGURES, LLT_REPORTED_COSTS, LLT_REPORTED_NET_SHARPE, Study
from engines.trading.study import MP_OUT_OF_SAMPLE, MP_POST_PUBLICATION
from explorer.ui.fast_items import Bars
from explorer.ui.live_text import LiveText
from explorer.ui.whole_rows import WholeRows
from explorer.ui.widgets import Tabs, brush, legend_below, make_plot, pen


def with_readout(plot, lines: int = 2) -> tuple[QWidget, LiveText]:
    """A chart with a readout line under it, one view: a slide of the chart then shows the figures it is
    about (presenter mode folds the panel down to the named view)."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(2)
    readout = LiveText()
    readout.reserve_lines(lines)
    lay.addWidget(plot, 1)
    lay.addWidget(readout)
    return box, readout


class ShareTable(QTableWidget):
    """Columns that keep fixed shares of the width: equal shares wrapped the long source and qualifier
    cells to five lines, so a 1280x800 window showed one figure of the study. The shares are of the
    width with the vertical scroll bar's room set aside, whether it shows or not: shares of the
    viewport changed the rows' wrap when the bar came or went, which showed or hid the bar again, and
    the table (trimmed to whole rows by ``WholeRows``) laid itself out for ever."""

    SHARES = (0.2, 0.18, 0.3, 0.32)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        width = self.width() - 2 * self.frameWidth() - self.verticalScrollBar().sizeHint().width()
        widths = [int(width * share) for share in self.SHARES[:-1]]
        for c, w in enumerate(widths + [max(0, width - sum(widths))]):
            self.setColumnWidth(c, w)


class StudyView(QWidget):
    """Cumulative return and net Sharpe against cost on top; the decline by period and the figures below."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        c = self.cum_plot = make_plot(theme, "Cumulative return, with volatility drag",
                                      "return (%)", "trading day")
        c.setAccessibleName("Cumulative return before and after costs")
        c.setMouseEnabled(x=False, y=False)
        legend_below(c)
        self.gross_curve = c.plot([], [], name="before costs")
        self.net_curve = c.plot([], [], name="after costs")
        self.zero_line = pg.InfiniteLine(pos=0, angle=0, movable=False)
        c.addItem(self.zero_line)
        s = self.cost_plot = make_plot(theme, "Net Sharpe against round-trip cost", "net Sharpe",
                                       "round-trip cost (bp)")
        s.setAccessibleName("Net Sharpe against round-trip cost")
        s.setMouseEnabled(x=False, y=False)
        legend_below(s)
        self.cost_curve = s.plot([], [], name="this turnover")
        self.reported = s.plot([], [], pen=None, symbol="s", symbolSize=11, name="reported [secondary]")
        self.chosen = s.plot([], [], pen=None, symbol="o", symbolSize=12, name="your cost")
        self.break_even = pg.InfiniteLine(angle=90, movable=False, label="break-even", labelOpts={"position": 0.12})
        s.addItem(self.break_even)
        self.cost_zero = pg.InfiniteLine(pos=0, angle=0, movable=False)
        s.addItem(self.cost_zero)
        d = self.decay_plot = make_plot(theme, "Sharpe by period ± 2 SE (Lo 2002)", "annual Sharpe", "")
        d.setAccessibleName("Sharpe ratio by period with error bars")
        d.setMouseEnabled(x=False, y=False)
        self.decay_bars = Bars(x=[0, 1, 2, 3], height=[0, 0, 0, 0], width=0.6)
        self.decay_err = pg.ErrorBarItem(x=np.arange(4.0), y=np.zeros(4), height=np.zeros(4), beam=0.2)
        d.addItem(self.decay_bars)
        d.addItem(self.decay_err)
        self.decay_zero = pg.InfiniteLine(pos=0, angle=0, movable=False)
        d.addItem(self.decay_zero)
        self.tabs = Tabs()
        self.stats_text = LiveText()
        self.stats_text.reserve_lines(8)
        stats_page = QWidget()
        sl = QVBoxLayout(stats_page)
        sl.addWidget(self.stats_text)
        sl.addStretch(1)
        self.tabs.addTab(stats_page, "Statistics")
        self.figures = ShareTable(len(FIGURES), 4)
        self.figures.setHorizontalHeaderLabels(["Figure", "Value", "Where / status", "The authors' qualifier"])
        self.figures.setAccessibleName("The study's figures with version, status and qualifiers")
        self.figures.setWordWrap(True)
        self.figures.verticalHeader().setVisible(False)
        for i, f in enumerate(FIGURES):
            for j, text in enumerate((f.label, f.value, f"{f.where}; {f.status}", f.qualifier or "—")):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                self.figures.setItem(i, j, item)
        self.figures.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # rows follow the wrap
        figures_page = QWidget()
        fl = QVBoxLayout(figures_page)
        fl.setContentsMargins(0, 0, 0, 0)
        note = QLabel("Lopez-Lira & Tang, arXiv 2304.07619. \"secondary\": from a third-party transcription, "
                      "not checked against the paper's PDF here; \"checked\": read in the version's abstract.")
        note.setWordWrap(True)
        fl.addWidget(note)
        fl.addWidget(WholeRows(self.figures), 1)
        self.tabs.addTab(figures_page, "The study's figures")
        self.cum_box, self.cum_text = with_readout(c)
        self.cost_box, self.cost_text = with_readout(s)
        self.decay_box, self.decay_text = with_readout(d)
        grid.addWidget(self.cum_box, 0, 0)
        grid.addWidget(self.cost_box, 0, 1)
        grid.addWidget(self.decay_box, 1, 0)
        grid.addWidget(self.tabs, 1, 1)
        grid.setRowStretch(0, 1)
        grid.setRowStretch(1, 1)
        grid.setColumnStretch(0, 2)       # the statistics' long text the wider column: a 1080p slide holds it
        grid.setColumnStretch(1, 3)
        self.result: Study | None = None

    def showEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """Room for the first two figures (the non-tradable reaction and the tradable drift, which H2
        compares): a window too short for it scrolls, and a tour then folds the panel around the tabs."""
        super().showEvent(event)
        self.tabs.setMinimumHeight(self.tabs.fontMetrics().lineSpacing() * 17)

    def hideEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """Hidden, it asks for no height: the panel's other tabs need not make room for it."""
        super().hideEvent(event)
        self.tabs.setMinimumHeight(0)

    def show_result(self, st: Study) -> None:
        self.result = st
        t = self.theme
        self.gross_curve.setData(st.day_axis, 100 * st.gross_path)
        self.gross_curve.setPen(pen(t.color(0), 2, Qt.DashLine))
        self.net_curve.setData(st.day_axis, 100 * st.net_path)
        self.net_curve.setPen(pen(t.color(5), 3))
        self.cost_curve.setData(st.cost_axis_bp, st.net_sharpe_by_cost)
        self.cost_curve.setPen(pen(t.color(5), 3))
        self.reported.setData([c for c, _ in LLT_REPORTED_NET_SHARPE], [v for _, v in LLT_REPORTED_NET_SHARPE])
        self.reported.setSymbolBrush(brush(t.bg))
        self.reported.setSymbolPen(pen(t.fg, 2))
        self.chosen.setData([st.cost_bp], [st.net_sharpe])
        self.chosen.setSymbolBrush(brush(t.color(4)))
        self.chosen.setSymbolPen(pen(t.fg, 1))
        in_range = st.break_even_bp <= float(st.cost_axis_bp[-1])
        self.break_even.setVisible(in_range)
        if in_range:
            self.break_even.setPos(st.break_even_bp)
            self.break_even.label.setFormat(f"break-even {st.break_even_bp:.1f} bp")
        self.break_even.setPen(pen(t.fg, 1, Qt.DashLine))
        self.break_even.label.setColor(t.fg)
        for line in (self.zero_line, self.cost_zero, self.decay_zero):
            line.setPen(pen(t.grid, 1))
        periods = st.periods
        self.decay_bars.setOpts(x=list(range(len(periods))), height=[p.sharpe for p in periods], width=0.6,
                                brushes=[brush(t.color(0), 0.6)] * len(periods), pen=pen(t.fg, 1))
        self.decay_err.setData(x=np.arange(len(periods), dtype=float), y=np.array([p.sharpe for p in periods]),
                               height=np.array([4 * p.se for p in periods]), pen=pen(t.fg, 2))
        self.decay_plot.getAxis("bottom").setTicks([[(i, f"{p.label}\nt = {p.t:.2f}") for i, p in enumerate(periods)],
                                                    []])
        self._readouts(st)
        be = "never" if st.break_even_bp == float("inf") else f"{st.break_even_bp:.1f} bp"
        self.stats_text.setText(
            f"<b>Gross:</b> {100 * st.mean_daily:.2f} %/day, Sharpe {st.sharpe:.2f} over {st.days} days "
            f"(v6 Table 1, transcribed [secondary]). "
            f"<b>Net at {st.cost_bp:.1f} bp × {100 * st.turnover:.0f} %/day:</b> {100 * st.net_mean_daily:.3f} %/day, "
            f"Sharpe {st.net_sharpe:.2f}, {100 * st.net_cumulative:,.0f} % over the sample "
            f"(gross {100 * st.gross_cumulative:,.0f} %); break-even cost {be}. "
            f"The authors: only traders with very low costs, such as market makers, could use it.<br>"
            f"<b>Significance:</b> SE of the Sharpe {st.sharpe_se:.2f} (Lo 2002, annualised), so "
            f"Sharpe/SE = {st.sharpe_t:.2f} (IID t of the mean {st.t_iid:.2f}); the annual Sharpe put in the "
            f"per-period formula with T in years would give {st.pitfall_se:.2f}. Days for t = 2: "
            f"{st.days_for_t2:,.0f}; for t = 3: {st.days_for_t3:,.0f}.<br>"
            f"<b>Multiple testing:</b> after {st.m_tests:,} {'try' if st.m_tests == 1 else 'tries'} the Bonferroni bar is t > {st.bonferroni_t:.2f} "
            f"(two-sided, 5 %); Harvey, Liu &amp; Zhu's own hurdle is t > {st.hlz_t:.1f} (RFS 2016). "
            f"This t {'clears' if st.clears_bonferroni else 'fails'} the Bonferroni bar and "
            f"{'clears' if st.clears_hlz else 'fails'} theirs, but both speak of gross returns: tradability "
            f"is the net line above.<br>"
            f"<b>After publication:</b> McLean &amp; Pontiff (J. Finance 2016) found published predictors earned "
            f"{100 * MP_OUT_OF_SAMPLE:.0f} % less out of sample and {100 * MP_POST_PUBLICATION:.0f} % less after publication; "
            f"{100 * st.post_publication_mean:.3f} %/day gross gives a net Sharpe of "
            f"{st.post_publication_net_sharpe:.2f} at this cost. "
            f"<i>Decline by period (bars): the study's time-variation figures [secondary]; the last period's "
            f"error bar spans zero.</i> Not investment advice.")
        self.cum_plot.enableAutoRange()
        self.cost_plot.enableAutoRange()
        self.decay_plot.enableAutoRange()

    def _readouts(self, st: Study) -> None:
        self.cum_text.setText(
            f"Gross {100 * st.mean_daily:.2f} %/day, daily volatility {100 * st.sd_daily:.2f} %: "
            f"<b>{100 * st.gross_cumulative:+,.0f} %</b> over {st.days} days (reported "
            f"{escape(LLT_REPORTED_COSTS[0][1])}); net {100 * st.net_cumulative:+,.0f} %.")
        reported = ", ".join(f"{v:.2f} at {bp:g} bp" for bp, v in LLT_REPORTED_NET_SHARPE)
        self.cost_text.setText(
            f"{st.cost_bp:.1f} bp × {100 * st.turnover:.0f} %/day ({st.turnover:.1f} bp a day per bp): "
            f"{100 * st.mean_daily:.2f} → {100 * st.net_mean_daily:.2f} %/day, <b>Sharpe {st.net_sharpe:.2f}</b>, {100 * st.net_cumulative:+,.0f} %. "
            f"Reported: {reported}.")
        self.decay_text.setText("Sharpe by period: " + "; ".join(
            f"{escape(p.label)} {p.sharpe:.2f} ({p.days} days, t = {p.t:.2f})" for p in st.periods) + ".")
