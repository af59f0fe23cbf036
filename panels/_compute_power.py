"""D3 views: the cluster's megawatts, energy, bill and CO2 with its power trace through steps and
checkpoints; and what connecting it waits for (lead times) beside the gas and nuclear deals."""
from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTableWidgetItem, QVBoxLayout, QWidget

from engines.compute import GridStudy, PowerBudget, PowerStudy, PowerTrace
from explorer.ui.bar_chart import hatched
from explorer.ui.fast_items import Bars
from explorer.ui.live_text import LiveText
from explorer.ui.pool import kept_items
from explorer.ui.whole_rows import WholeRowTable
from explorer.ui.widgets import legend_below, make_plot, pen, set_title
from panels._compute_common import SourcesBox, big, draw_bars, megawatts, money, mwh, tag, tonnes, watts

PHASE_NAMES = {"compute": "computing", "communicate": "waiting on collectives / bubble", "checkpoint": "checkpoint"}


def _item(text: str, tip: str) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setToolTip(tip)
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


class PowerView(QWidget):
    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.levels = make_plot(theme, "From GPU boards to the building", "", "MW")
        self.levels.setMouseEnabled(x=False, y=False)
        self.trace = make_plot(theme, "The cluster's draw through training steps", "facility MW", "seconds")
        self.trace.setMouseEnabled(x=False, y=False)
        legend_below(self.trace, 3)
        self.levels.setMinimumHeight(170)
        self.trace.setMinimumHeight(270)
        self.text = LiveText()
        self.text.reserve_lines(4)
        lay.addWidget(self.levels, 2)
        lay.addWidget(self.text)
        lay.addWidget(self.trace, 3)
        self.sources = SourcesBox()
        lay.addWidget(self.sources)
        self.budget: PowerBudget | None = None
        self.trace_result: PowerTrace | None = None

    def show_result(self, s: PowerStudy) -> None:
        b, tr, run_label = s.budget, s.trace, s.run_label
        self.budget, self.trace_result = b, tr
        t = self.theme
        rows = [("GPU boards (TDP × GPUs)", b.gpu_w), ("IT load: whole nodes (CPUs, switches, NICs, fans)", b.it_w),
                (f"facility: IT × PUE {b.pue:.2f}", b.facility_w)]
        bars = megawatts([v for _, v in rows])
        year = float(f"{b.annual_j / 3.6e9:.3g}")          # MWh, to the three figures a caption rounds to
        set_title(self.levels, f"{b.n_gpus:,} GPUs, from boards to the building: a year at {b.load_factor:.0%} "
                               f"of nameplate is about {year:,.0f} MWh")
        draw_bars(self.levels, t, [(n, 0.0, float(v), watts(w), i) for i, ((n, w), v) in enumerate(zip(rows, bars))],
                  (0.0, float(bars[-1]) * 1.3))
        # the trace: a step function, one colour and pattern per phase kind
        p = self.trace
        kinds = [k for k in PHASE_NAMES if k in tr.phase]

        def build() -> list:
            items = [p.plot(name="facility MW")]
            legend = p.getPlotItem().legend
            for kind in kinds:
                items.append(Bars(x0=[0.0], y=[0.0], width=[0.0], height=[0.0]))
                p.addItem(items[-1])
                if legend is not None:
                    legend.addItem(items[-1], PHASE_NAMES[kind])
            return items

        line, *bars = kept_items(p, tuple(kinds), build)
        line.setData(np.repeat(tr.t, 2)[1:-1], np.repeat(megawatts(tr.w), 2), pen=pen(t.fg, 2))
        for item, kind in zip(bars, kinds):
            i = list(PHASE_NAMES).index(kind)          # one colour and pattern per phase kind
            idx = [j for j, ph in enumerate(tr.phase) if ph == kind]
            item.setOpts(x0=tr.t[idx], y=[0] * len(idx), width=np.diff(tr.t)[idx], height=megawatts(tr.w[idx]) * 2,
                         brush=hatched(t.color(i), i), pen=pen(t.fg, 0.5))
        set_title(p, f"The draw of {b.n_gpus:,} GPUs through training steps: {watts(tr.busy_w)} ↔ "
                     f"{watts(tr.waiting_w)}")
        p.setYRange(0, float(megawatts(tr.busy_w)) * 1.15, padding=0)
        p.setXRange(0, float(tr.t[-1]), padding=0.01)
        self.text.setText(
            f"{b.n_gpus:,} GPUs: boards {watts(b.gpu_w)}, whole nodes {watts(b.it_w)} of IT load, "
            f"<b>{watts(b.facility_w)}</b> at the meter. A year at {b.load_factor:.0%} of nameplate: "
            f"<b>{mwh(b.annual_j)}</b>, {money(b.annual_cost)} at {b.price_per_kwh * 100:.2f} ¢/kWh, "
            f"{tonnes(b.annual_co2_kg)} CO2 at {b.grid_t_per_mwh * 1000:,.0f} kg/MWh. {escape(run_label)}: "
            f"{big(b.run_gpu_hours)} GPU-hours → {mwh(b.run_j)}, {money(b.run_cost)}, {tonnes(b.run_co2_kg)} CO2. "
            f"Every GPU waits at the same moment, so the draw swings by <b>{watts(tr.swing_w)}</b> "
            f"({watts(tr.busy_w)} ↔ {watts(tr.waiting_w)}) within every {tr.step_seconds:.2f} s step and at each checkpoint.")
        self.sources.set_sources(list(s.sources))


class GridView(QWidget):
    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.timeline = make_plot(theme, "What a large new load waits for (published lead times)", "", "years")
        self.timeline.setMouseEnabled(x=False, y=False)
        self.timeline.setMinimumHeight(360)
        lay.addWidget(self.timeline, 3)
        self.text = LiveText()
        self.text.reserve_lines(2)
        lay.addWidget(self.text)
        self.deals = WholeRowTable(0, 6)
        self.deals.rows_follow_width()              # rows as tall as their lines at the width shown
        self.deals.setHorizontalHeaderLabels(["Date", "Who", "What", "MW", "Fuel", "How sure"])
        self.deals.verticalHeader().setVisible(False)
        self.deals.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.deals.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.deals.horizontalHeader().setSectionResizeMode(2, QHeaderView.Stretch)
        self.deals.setWordWrap(True)
        self.deals.setAccessibleName("Gas and nuclear deals for data centres")
        self.deals.setMinimumHeight(190)
        lay.addWidget(self.deals, 2)
        self.sources = SourcesBox()
        lay.addWidget(self.sources)
        self.rows = ()
        self._drawn = None

    def show_result(self, g: GridStudy) -> None:
        """The text that follows the scenario (and the tables, if not drawn yet)."""
        world = {c.id: c for c in g.consumption}
        self.text.setText(
            f"The cluster needs {watts(g.facility_w)}. The longest waits are the grid's (queue, hook-up, large "
            f"transformers), not the equipment inside; the servers it will power are written off in 5–6 years. "
            f"Data centres used about {world['world-2024'].twh:,.0f} TWh in 2024 and may use {world['world-2030'].twh:,.0f} "
            f"TWh in 2030 (IEA base case, an estimate); so builders sign for gas and nuclear themselves (table).")
        self.show_tables(g)

    def show_tables(self, g: GridStudy) -> None:
        """The chart and tables, which come from data files, not from edits: drawn once per theme, even
        while hidden, so the deals table's rows keep the heights they get before the tab is laid out."""
        t, lead_times, deals, consumption = self.theme, g.lead_times, g.deals, g.consumption
        if (lead_times, deals, t) == self._drawn:
            return
        self._drawn = (lead_times, deals, t)
        rows = list(lead_times)
        self.rows = rows
        bars = []
        for i, r in enumerate(rows):
            lo = r.lo if r.hi > r.lo else 0.0
            span = (f"up to {r.hi:g} years" if r.lo == 0 else f"{r.lo:g}–{r.hi:g} years") if r.hi > r.lo \
                else f"about {r.hi:g} years"
            bars.append((r.label, lo, max(r.hi - lo, 0.05), f"{span} ({tag(r.confidence)})",
                         7 if r.id == "server-life" else i % 6))
        draw_bars(self.timeline, t, bars, (0.0, max(r.hi for r in rows) * 1.6))
        self.deals.setUpdatesEnabled(False)
        self.deals.setRowCount(len(deals))
        for i, d in enumerate(deals):
            for j, c in enumerate((d.date, d.parties, d.what, d.mw, d.fuel, tag(d.confidence))):
                self.deals.setItem(i, j, _item(c, d.citation))
        self.deals.resizeRowsToContents()
        self.deals.setUpdatesEnabled(True)
        self.sources.set_sources([(r.label, r.citation) for r in rows] + [(c.label, c.citation) for c in consumption]
                                 + [(f"{d.date} {d.parties}", d.citation) for d in deals])
