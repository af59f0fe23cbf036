"""H1 view of the trading panel: the stack's clocks on a log time axis, with one model call placed on it.

Pure drawing of :class:`engines.trading.StackPricing`; every number comes from the engine.
"""
from __future__ import annotations

import math
from html import escape

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGridLayout, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from engines.trading import BCS_FIBRE_RTT_S, BCS_MICROWAVE_RTT_S, STAGES, StackPricing
from explorer.ui.fast_items import Bars
from explorer.ui.live_text import LiveText
from explorer.ui.whole_rows import WholeRows
from explorer.ui.widgets import brush, make_plot, pen

TIME_TICKS = [(-6, "1 µs"), (-3, "1 ms"), (0, "1 s"), (math.log10(86_400), "1 day"),
              (math.log10(3.15e7), "1 year")]
VERDICT_PATTERN = {"too slow": Qt.BDiagPattern, "slow end only": Qt.Dense5Pattern, "fast enough": Qt.NoBrush}


def money(usd: float) -> str:
    return f"${usd:,.2f}" if usd >= 0.01 else f"${usd:.2e}"


class StackView(QWidget):
    """The clocks chart over the pricing readout."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.plot = make_plot(theme, "The stack's clocks against one model call (log time)", "",
                              "time scale of the stage (log)")
        self.plot.setAccessibleName("Trading stack stages on a time axis with the model's latency")
        self.plot.setMouseEnabled(x=False, y=False)
        self.bars = Bars(x0=[0] * len(STAGES), y=list(range(len(STAGES))), width=[1] * len(STAGES), height=0.6)
        self.plot.addItem(self.bars)
        self.llm_line = pg.InfiniteLine(angle=90, movable=False, label="one model call", labelOpts={"position": 0.97, "anchors": [(0, 0), (0, 0)]})
        self.race_lines = [pg.InfiniteLine(pos=math.log10(t), angle=90, movable=False, label=name,
                                           labelOpts={"position": 0.02, "anchors": [(0, 1), (0, 1)]})
                           for t, name in ((BCS_MICROWAVE_RTT_S, "Chicago–NY 8.1 ms"),)]
        # the fibre route's label to the left of its line, at the top: the microwave line's sits at the foot
        self.fibre_line = pg.InfiniteLine(pos=math.log10(BCS_FIBRE_RTT_S), angle=90, movable=False,
                                          label=f"2010 fibre {BCS_FIBRE_RTT_S * 1e3:.0f} ms",
                                          labelOpts={"position": 0.97, "anchors": [(1, 0), (1, 0)]})
        for item in (self.llm_line, *self.race_lines, self.fibre_line):
            self.plot.addItem(item)
        self.plot.getAxis("bottom").setTicks([TIME_TICKS, []])
        self.plot.setXRange(-7.0, 8.0, padding=0)
        self.plot.setYRange(-0.6, len(STAGES) - 0.4, padding=0)
        self.plot.setMinimumHeight(200)
        lay.addWidget(self.plot, 0, 0)
        self.text = LiveText()
        self.text.reserve_lines(5)
        lay.addWidget(self.text, 1, 0)      # the figures at full width: fewer lines on a slide
        self.stages = QTableWidget(len(STAGES), 3)
        self.stages.setHorizontalHeaderLabels(["Stage", "What a language model can do", "Source"])
        self.stages.setAccessibleName("Stages of a trading system and what a language model can do in each")
        self.stages.setWordWrap(True)
        self.stages.verticalHeader().setVisible(False)
        self.stages.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        for i, st in enumerate(reversed(STAGES)):      # top down as the chart lists them: execution first
            for j, text in enumerate((st.label, st.fit, st.source)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                self.stages.setItem(i, j, item)
        self.stages.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # rows follow the wrap
        lay.addWidget(WholeRows(self.stages), 2, 0)
        lay.setRowStretch(0, 1)
        lay.setRowStretch(2, 1)
        self.result: StackPricing | None = None

    def show_result(self, r: StackPricing) -> None:
        self.result = r
        t = self.theme
        colours = {"too slow": t.color(5), "slow end only": t.color(1), "fast enough": t.color(2)}
        x0 = [math.log10(v.stage.fastest_s) for v in r.verdicts]
        width = [math.log10(v.stage.slowest_s) - a for v, a in zip(r.verdicts, x0)]
        self.bars.setOpts(x0=x0, y=list(range(len(STAGES))), width=width, height=0.6,
                          brushes=[brush(colours[v.verdict], 0.55) for v in r.verdicts],
                          hatches=[QBrush(QColor(t.fg), VERDICT_PATTERN[v.verdict]) for v in r.verdicts],
                          pen=pen(t.fg, 1))
        self.plot.getAxis("left").setTicks([[(i, f"{v.stage.label}: {v.verdict}") for i, v in enumerate(r.verdicts)],
                                            []])
        self.llm_line.setPos(math.log10(r.latency_s))
        self.llm_line.setPen(pen(t.color(4), 3))
        self.llm_line.label.setFormat(
            f"one call {r.latency_s * 1e3:,.0f} ms\n{r.prompt_tokens} → {r.output_tokens} tokens")
        self.llm_line.label.setColor(t.fg)
        self.llm_line.label.fill = brush(t.bg, 0.85)   # backed: the labels sit over the bars
        for line in (*self.race_lines, self.fibre_line):
            line.setPen(pen(t.fg, 1, Qt.DashLine))
            if getattr(line, "label", None) is not None:
                line.label.setColor(t.fg)
                line.label.fill = brush(t.bg, 0.85)
        self.text.setText(
            f"<b>{escape(r.model_label)}</b> on {r.n_gpus} × {escape(r.gpu)} (serving roofline, an ideal lower bound): "
            f"one {r.prompt_tokens}-token prompt and {r.output_tokens} output tokens take <b>{r.latency_s * 1e3:,.0f} ms</b>"
            f" alone, {r.ratio_to_microwave:,.0f}× the 8.1 ms Chicago–New York microwave round trip "
            f"(Budish, Cramton &amp; Shim, QJE 2015). "
            f"In batches of {r.batch}: about {float(f'{r.docs_per_gpu_hour:.3g}'):,.0f} documents per GPU-hour, "
            f"<b>{money(r.self_hosted_usd_per_million)} per million documents</b> at {money(r.gpu_hour_usd)}/GPU-h "
            f"(your price). An API at {money(r.api_in_usd_per_m)}/{money(r.api_out_usd_per_m)} per million input/output "
            f"tokens: <b>{money(r.api_usd_per_million)} per million</b> (prices change monthly: enter today's). "
            f"A stage is too slow for a model when one call outlasts its slowest clock; the table says what else rules a model out.")
