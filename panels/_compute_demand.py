"""D1 view: cumulative training compute against the compute of serving the model, the day inference
overtakes training, and the companies' own dated statements on the split."""
from __future__ import annotations

from html import escape

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QHeaderView, QTableWidgetItem, QWidget

from engines.compute import Demand
from explorer.ui.live_text import LiveText
from explorer.ui.pool import kept_items, rename
from explorer.ui.whole_rows import WholeRowTable
from explorer.ui.widgets import legend_below, make_plot, pen
from panels._compute_common import SourcesBox, big, eng, tag


class DemandView(QWidget):
    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.plot = make_plot(theme, "Training once against serving every day", "cumulative compute (FLOP)",
                              "days of serving after training")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMinimumHeight(230)
        legend_below(self.plot, 3)
        lay.addWidget(self.plot, 0, 0)
        self.text = LiveText()
        self.text.reserve_lines(3)
        lay.addWidget(self.text, 1, 0)
        self.table = WholeRowTable(0, 4)
        self.table.setHorizontalHeaderLabels(["Who", "When", "What they said (our summary)", "How sure"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.Stretch)
        self.table.setWordWrap(True)
        self.table.rows_follow_width()              # rows as tall as their lines at the width shown
        self.table.setAccessibleName("Statements by companies on training and inference")
        self.table.setMinimumHeight(140)
        lay.addWidget(self.table, 2, 0)
        self.sources = SourcesBox()
        lay.addWidget(self.sources, 3, 0)
        lay.setRowStretch(0, 3)
        lay.setRowStretch(2, 1)
        self.result: Demand | None = None
        self._statements_shown = None

    def show_result(self, d: Demand, label: str, traffic: tuple[float, int] | None = None) -> None:
        """``traffic``: (requests per second, tokens per request), the knobs behind ``d.tokens_per_day``,
        named in the inference curve's legend so the chart alone says what is served."""
        self.result = d
        t, plot = self.theme, self.plot
        served = f": {traffic[0]:,.0f} req/s × {traffic[1]:,} tokens" if traffic else ", cumulative"
        crosses = d.crossover_days <= d.days[-1]

        def build() -> list:
            items = [plot.plot(name=name) for name in ("training once", "inference", "both")]
            if crosses:
                items.append(pg.InfiniteLine(angle=90, movable=False, label=" ",
                                             labelOpts={"position": 0.9, "color": t.fg}))
                plot.addItem(items[-1])
            return items

        train, infer, both, *line = kept_items(plot, (crosses, t), build)
        train.setData(d.days, [d.train_flop] * len(d.days), pen=pen(t.color(0), 3))
        infer.setData(d.days, d.inference_cumulative, pen=pen(t.color(1), 3, Qt.DashLine))
        both.setData(d.days, d.cumulative_total, pen=pen(t.color(2), 2, Qt.DotLine))
        rename(plot, train, f"training once: {eng(d.train_flop, 'FLOP')}")
        rename(plot, infer, f"inference{served}")
        if line:
            line[0].setPen(pen(t.fg, 1, Qt.DashLine))
            line[0].setPos(d.crossover_days)
            line[0].label.setFormat(f"inference overtakes training: day {d.crossover_days:,.0f}")
        plot.setXRange(0, float(d.days[-1]), padding=0.02)
        when = (f"on <b>day {d.crossover_days:,.0f}</b> ({d.crossover_years:,.1f} years)"
                if d.crossover_days != float("inf") else "never (nothing is served)")
        self.text.setText(
            f"Training {escape(label)} takes C = 6ND = <b>{eng(d.train_flop, 'FLOP')}</b>, once. Serving "
            f"{big(d.tokens_per_day)} tokens a day at 2N FLOP per token adds {eng(d.inference_flop_per_day, 'FLOP')} "
            f"every day, so cumulative inference passes training {when}: 6ND/(2N·T) = 3D/T, whatever the model's size. "
            f"After {d.days[-1]:,.0f} days inference is {d.inference_share_after:.0%} of all the compute. "
            f"Attention and batching overheads are left out of both; the traffic is your assumption.")
        rows = d.statements
        if rows != self._statements_shown:     # a data file's rows: the same for every edit
            self._statements_shown = rows
            self.table.setRowCount(len(rows))
            for i, s in enumerate(rows):
                for j, c in enumerate((s.who, s.date, s.statement, tag(s.confidence))):
                    item = QTableWidgetItem(c)
                    item.setToolTip(s.citation)
                    item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                    self.table.setItem(i, j, item)
            self.table.resizeRowsToContents()
        self.sources.set_sources(
            [("C = 6ND training, 2N per token inference", "Kaplan et al. 2020, arXiv 2001.08361, §2.1, Table 1"),
             (f"{big(d.tokens_per_day)} tokens a day", "requests per second × tokens per request × 86,400: your assumption "
                                                        "(the serving panel's traffic can be taken over)")]
            + [(f"{s.who} ({s.date})", s.citation) for s in rows])
