"""H3 view of the trading panel: a backtest straddling a model's training cutoff.

Pure drawing of :class:`engines.trading.LookaheadRun` (the simulation runs in the panel's job slot).
"""
from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QWidget

from engines.trading import MC_TOLERANCE_SE, REMEDIES, REMEDY_SOURCES, LookaheadRun, bonferroni_threshold
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import legend_below, make_plot, pen
from panels._trading_study import with_readout


class LookaheadView(QWidget):
    """Cumulative P&L and the rolling hit rate, both with the cutoff marked; the figures beside them."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        p = self.pnl_plot = make_plot(theme, "Cumulative P&L of the sign portfolio (per unit of book)",
                                      "P&L (%)", "trading day")
        p.setAccessibleName("Cumulative backtest return across the training cutoff")
        p.setMouseEnabled(x=False, y=False)
        self.pnl_curve = p.plot([], [])
        h = self.hit_plot = make_plot(theme, "Share of stocks called right (20-day mean)", "hit rate (%)",
                                      "trading day")
        h.setAccessibleName("Rolling hit rate across the training cutoff")
        h.setMouseEnabled(x=False, y=False)
        legend_below(h)
        self.hit_curve = h.plot([], [], name="simulated")
        self.hit_closed = h.plot([], [], name="closed form ½ + arcsin(a)/π")
        self.cutoffs = []
        for plot in (p, h):
            line = pg.InfiniteLine(angle=90, movable=False, label="training cutoff", labelOpts={"position": 0.92})
            plot.addItem(line)
            self.cutoffs.append(line)
        self.text = LiveText()
        self.text.reserve_lines(10)
        self.pnl_box, self.pnl_text = with_readout(p)
        self.hit_box, self.hit_text = with_readout(h)
        grid.addWidget(self.pnl_box, 0, 0)
        grid.addWidget(self.hit_box, 1, 0)
        grid.addWidget(self.text, 0, 1, 2, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self.result: LookaheadRun | None = None

    def show_stale(self, stale: bool) -> None:
        for plot in (self.pnl_plot, self.hit_plot):
            plot.setOpacity(0.4 if stale else 1.0)

    def show_result(self, r: LookaheadRun) -> None:
        self.result = r
        t = self.theme
        days = np.arange(len(r.daily))
        self.pnl_curve.setData(days, 100 * r.cumulative)
        self.pnl_curve.setPen(pen(t.color(5), 2))
        self.hit_curve.setData(days, 100 * r.rolling_hit)
        self.hit_curve.setPen(pen(t.color(0), 1))
        n = len(r.daily)
        self.hit_closed.setData([0, r.days_pre, r.days_pre, n], 100 * np.array(
            [r.closed_pre.hit, r.closed_pre.hit, r.closed_post.hit, r.closed_post.hit]))
        self.hit_closed.setPen(pen(t.fg, 2, Qt.DashLine))
        for line in self.cutoffs:
            line.setPos(r.days_pre)
            line.setPen(pen(t.fg, 2, Qt.DotLine))
            line.label.setColor(t.fg)
        for plot in (self.pnl_plot, self.hit_plot):
            plot.enableAutoRange()
        self.show_stale(False)
        self.pnl_text.setText(
            f"{r.n_stocks} stocks; correlation {r.a_pre_effective:.3f} for {r.days_pre} days, then {r.a_post:.3f} for "
            f"{r.days_post}. Closed-form Sharpe {r.closed_pre.sharpe:.2f} → <b>{r.closed_post.sharpe:.2f}</b>, "
            f"backtest {r.closed_backtest_sharpe:.2f}.")
        self.hit_text.setText(
            f"Closed form (dashed): <b>{100 * r.closed_pre.hit:.2f} %</b> right before the cutoff, "
            f"<b>{100 * r.closed_post.hit:.2f} %</b> after; this draw "
            f"{f'{100 * r.hit_pre:.2f} %' if r.days_pre else '—'} / {100 * r.hit_post:.2f} %.")
        remedy = REMEDIES[r.remedy]
        src = REMEDY_SOURCES[r.remedy]
        bt = (f"after the cutoff only, {r.days_post:,} days" if r.evaluated_from
              else f"over all {len(r.daily):,} days")
        deflate = (f"<b>Best of {r.n_prompts:,} prompts:</b> noise alone is expected to reach Sharpe "
                   f"{r.expected_max_noise_sharpe:.2f} (trial variance {r.trials_var:g}); the deflated Sharpe "
                   f"(probability the skill is real) is <b>{r.deflated:.2f}</b>; a Sharpe of 1 from that many tries "
                   f"needs {r.min_backtest_years:.1f} years of data (Bailey &amp; López de Prado 2014; Bailey et al. 2014)."
                   if r.n_prompts > 1 else
                   "<b>One prompt tried.</b> Raise \"Prompts tried\" to see what a search over prompts does to it.")
        pre = (f"<td>{r.sharpe_pre:.2f}</td><td>{r.closed_pre.sharpe:.2f}</td>" if r.days_pre >= 2
               else "<td colspan='2'>no days</td>")
        hit_pre = f"{100 * r.hit_pre:.2f} %" if r.days_pre else "—"
        self.text.setText(
            f"<b>Remedy:</b> {escape(remedy)}{': ' + escape(src) if src else ''}. Correlation used before the "
            f"cutoff {r.a_pre_effective:.3f}, after it {r.a_post:.3f}; {r.n_stocks} stocks, seed {r.seed}.<br>"
            f"<table cellspacing='4'><tr><th></th><th align='left'>simulated</th><th align='left'>closed form</th></tr>"
            f"<tr><td>Sharpe before cutoff</td>{pre}</tr>"
            f"<tr><td>Sharpe after cutoff</td><td>{r.sharpe_post:.2f}</td><td>{r.closed_post.sharpe:.2f}</td></tr>"
            f"<tr><td><b>Backtest Sharpe</b> ({bt})</td><td><b>{r.sharpe_backtest:.2f}</b></td>"
            f"<td>{r.closed_backtest_sharpe:.2f}</td></tr>"
            f"<tr><td><b>t after cutoff</b></td><td><b>{r.t_post:.2f}</b></td><td>{r.closed_t_post:.2f}</td></tr>"
            f"<tr><td>Hit rate before / after</td><td>{hit_pre} / {100 * r.hit_post:.2f} %</td>"
            f"<td>{100 * r.closed_pre.hit:.2f} % / {100 * r.closed_post.hit:.2f} %</td></tr></table>"
            f"Significant at 5 % (two-sided) means t &gt; {bonferroni_threshold(1):.2f}. "
            f"The memorised days inflate the backtest; only days after the cutoff measure skill. "
            f"The simulation is seeded and tested against the closed form to within {MC_TOLERANCE_SE:g} standard "
            f"errors; independent stocks make these Sharpe ratios an upper bound.<br>{deflate}")
