"""Cost view of the self-hosting panel: monthly cost against traffic (self-hosting steps at each replica,
the API a line, today's traffic marked) and the bill, break-evens and what an API price includes.
Pure drawing of :class:`engines.selfhost.Tco`."""
from __future__ import annotations

import math
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from engines.selfhost import INCLUDED_IN_API, Tco
from explorer.ui.live_text import LiveText
from explorer.ui.widgets import legend_below, make_plot, pen, set_title


def usd(x: float) -> str:
    if not math.isfinite(x):
        return "—"
    return f"${x:,.0f}" if abs(x) >= 100 else f"${x:,.2f}"


def pct(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.0%}"


class CostView(QWidget):
    """The chart (with what an API price includes) beside the verdict, the bill and the break-evens.
    The text column alone is the "bill" view: at presenter size on a 1280×800 screen the chart and
    the bill together need about 720 px of height and a slide has about 520."""

    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.verdict = LiveText()
        self.verdict.reserve_lines(2)
        left = QVBoxLayout()
        self.plot = make_plot(theme, "Monthly cost against traffic", "$ per month", "average traffic (req/s)")
        self.plot.setAccessibleName("Monthly cost of self-hosting and of the API against traffic")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMinimumHeight(240)
        legend_below(self.plot, 3)
        self.self_line = pg.PlotDataItem(name="self-hosted")
        self.api_line = pg.PlotDataItem(name="API")
        self.today = pg.InfiniteLine(angle=90, movable=False, label="today", labelOpts={"position": 0.93})
        self.cross = pg.InfiniteLine(angle=90, movable=False, label="self-hosting cheaper from here",
                                     labelOpts={"position": 0.8})
        for item in (self.self_line, self.api_line, self.today, self.cross):
            self.plot.addItem(item)
        left.addWidget(self.plot, 1)
        self.chart_note = LiveText()
        self.chart_note.reserve_lines(1)
        left.addWidget(self.chart_note)
        self.includes = LiveText()
        left.addWidget(self.includes)
        lay.addLayout(left, 1)
        right = QVBoxLayout()           # every figure the lesson cites, together: a slide of its own
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(self.verdict)
        self.bill = LiveText()
        right.addWidget(self.bill)
        self.even = LiveText()
        right.addWidget(self.even)
        right.addStretch(1)
        self.text_box = QWidget()
        self.text_box.setLayout(right)
        lay.addWidget(self.text_box, 1)
        self.apply_theme(theme)

    def apply_theme(self, theme) -> None:
        self.theme = theme
        t = theme
        self.self_line.setPen(pen(t.color(0), 3))
        self.api_line.setPen(pen(t.color(5), 3, Qt.DashLine))
        self.today.setPen(pen(t.fg, 1.5, Qt.DotLine))
        self.cross.setPen(pen(t.color(2), 2, Qt.DashDotLine))
        for line in (self.today, self.cross):
            line.label.setColor(t.fg)
        self.includes.setText("<b>An API price already pays for</b> " + "; ".join(escape(x) for x in INCLUDED_IN_API)
                              + ". Leave any of it out and the comparison is not like for like.")

    def show_result(self, r: Tco | None, ages: dict[str, str] | None = None) -> None:
        """``ages``: price-file row id → how old its price is (shown beside the price it gave)."""
        ages = ages or {}
        if r is None:
            return
        self.verdict.setText(f"<b>{escape(r.verdict())}</b>")
        if not r.feasible or r.curve is None:
            self.bill.setText("")
            self.self_line.setData([], [])
            self.api_line.setData([], [])
            return
        c = r.curve
        self.self_line.setData(c.traffic, c.self_hosted)
        self.api_line.setData(c.traffic, c.api)
        self.today.setPos(c.today)
        self.cross.setVisible(math.isfinite(c.cheaper_from))
        if math.isfinite(c.cheaper_from):
            self.cross.setPos(c.cheaper_from)
        top = float(np.nanmax(np.concatenate([c.self_hosted, c.api]))) * 1.05
        self.plot.setXRange(0, float(c.traffic[-1]), padding=0.02)
        self.plot.setYRange(0, max(top, 1.0), padding=0)
        set_title(self.plot, f"Monthly cost against traffic: {r.gpus_per_replica} GPU(s) per replica, "
                             f"{r.rate_per_replica:.2f} req/s per replica after η")
        cross = (f"Self-hosting stays cheaper from {c.cheaper_from:,.1f} req/s on average."
                 if math.isfinite(c.cheaper_from) else
                 "Self-hosting is never cheaper from 0 to 3× today's traffic.")
        self.chart_note.setText(cross + " Each step is one more replica.")
        gp = r.gpu_price
        rows = [
            ("Fleet", f"{r.replicas} replicas × {r.gpus_per_replica} GPU = {r.gpus} GPUs"),
            ("Per replica", f"{r.rate_per_replica:.2f} req/s = {r.tokens_per_replica:,.0f} output tok/s (steady × η)"),
            ("<b>Utilisation u</b>", f"<b>{pct(r.utilisation)}</b> of the fleet's capacity"),
            ("GPU price", f"${gp.usd_per_gpu_hour:.2f}/GPU-h: {escape(gp.words)}, {escape(ages.get(gp.row_id, ''))}"),
            ("Each month", f"{usd(r.gpu_monthly)} GPUs + {usd(r.staff_monthly)} people + {usd(r.other_monthly)} fixed"),
            ("<b>Self-hosted</b>", f"<b>{usd(r.self_monthly)}</b> a month, {usd(r.self_per_mtok)} per M output tok"),
            ("<b>API</b>", f"<b>{usd(r.api_monthly)}</b> a month: {escape(r.api.label)}, "
                           f"{escape(ages.get(r.api.id, ''))}"),
        ]
        html = "<table cellspacing='2'>" + "".join(f"<tr><td>{a}</td><td>&nbsp;{b}</td></tr>" for a, b in rows)
        html += "</table>"
        even = [
            ("API per M output tok", f"P_mix = {r.prompt_per_output:.1f} × ${r.api_price_in:.3g} + "
                                     f"${r.api_price_out:.3g} = {usd(r.price_mix)}"),
            ("Break-even u*", f"{pct(r.break_even_u)} GPUs only" + (", so no break-even at any load" if r.never else "")
             + f"; {pct(r.break_even_u_fixed)} with people and fixed"),
            ("Break-even volume", f"V* = {r.break_even_mtok:,.0f} M output tok a month; the fleet serves up to "
                                  f"{r.capacity_mtok:,.0f} M, today {r.output_mtok_per_month:,.0f} M"),
        ]
        self.even.setText("<table cellspacing='2'>" + "".join(f"<tr><td>{a}</td><td>&nbsp;<b>{b}</b></td></tr>"
                                                              for a, b in even) + "</table>")
        self.bill.setText(html)
