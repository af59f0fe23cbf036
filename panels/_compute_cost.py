"""D2 view: what one GPU-hour costs, part by part, a run's bill, and how a campus's capital splits."""
from __future__ import annotations

from html import escape

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QVBoxLayout, QWidget

from engines.compute import PART_LABELS, PARTS, CostStudy
from engines.compute.cost import GROUPS
from explorer.ui.bar_chart import hatched
from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import Label, label_layer
from explorer.ui.live_text import LiveText
from explorer.ui.pool import kept_items
from explorer.ui.widgets import brush, fit_legend_columns, legend_below, make_plot, pen
from panels._compute_common import SourcesBox, big, money

CostResult = CostStudy           # the name this view's result had before it moved into the engine


class CostView(QWidget):
    def __init__(self, theme) -> None:
        super().__init__()
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.bar_plot = make_plot(theme, "One GPU-hour, part by part", "", "$ per utilised GPU-hour")
        self.campus_plot = make_plot(theme, "A campus's capital: this cluster against the published split", "",
                                     "share of capital")
        for p, h in ((self.bar_plot, 200), (self.campus_plot, 270)):
            p.setMouseEnabled(x=False, y=False)
            p.setMinimumHeight(h)
            legend_below(p, 4)
        self.text = LiveText()
        self.text.reserve_lines(3)
        lay.addWidget(self.bar_plot, 1)
        lay.addWidget(self.text)
        lay.addWidget(self.campus_plot, 2)
        self.sources = SourcesBox()
        lay.addWidget(self.sources)
        self.result: CostStudy | None = None

    def _stack(self, plot, rows: list[tuple[str, list[tuple[str, float]]]], fmt) -> None:
        """Horizontal stacked bars, one per row with its name above it; each part hatched, named in the legend
        and, where wide enough, labelled with its value."""
        t = self.theme
        shape = tuple(tuple(part for part, _ in parts) for _, parts in rows)

        def build() -> list:
            legend, items, named = plot.getPlotItem().legend, [], set()
            for _, parts in rows:
                for part, _ in parts:
                    items.append(Bars(x0=[0.0], y=[0.0], width=[0.0], height=0.45))
                    plot.addItem(items[-1])
                    if part not in named:
                        named.add(part)
                        legend.addItem(items[-1], part)
            return items

        items = iter(kept_items(plot, shape, build))
        font = QFont()
        font.setPointSizeF(t.point_size * 0.85)
        fill = brush(t.bg, 0.85)
        total = max(sum(v for _, v in rows[0][1]), 1e-12)
        labels = []
        for r, (name, parts) in enumerate(rows):
            y = len(rows) - 1 - r
            # hung from the top of the row's band: a short chart cannot push the name out above the plot
            labels.append(Label(name, 0.0, y + 0.4, (0.0, 0.0), font, t.fg, fill))
            x0 = 0.0
            for i, (part, v) in enumerate(parts):
                next(items).setOpts(x0=[x0], y=[y - 0.1], width=[v], height=0.45, brush=hatched(t.color(i), i),
                                    pen=pen(t.fg, 1))
                if v >= 0.1 * total:
                    labels.append(Label(fmt(v), x0 + v / 2, y - 0.1, (0.5, 0.5), font, t.fg, fill))
                x0 += v
        plot.getAxis("left").setStyle(showValues=False)
        plot.getAxis("left").setWidth(4)
        plot.setYRange(-0.45, len(rows) - 0.6, padding=0)
        label_layer(plot).set_labels(labels)
        fit_legend_columns(plot)     # entries added after the plot was last resized (drawn when its tab is shown)

    def show_result(self, r: CostStudy, inputs: tuple[float, float, int] | None = None) -> None:
        """``inputs``: the knobs behind the figures (PUE, ¢/kWh, MFU %), named on the bar so a slide that
        shows only the chart still says what it assumed."""
        self.result = r
        b = r.breakdown
        shares = b.shares()
        name = f"one utilised GPU-hour: ${b.total:,.2f}"
        if inputs is not None:
            pue, cents, mfu = inputs
            name += (f" at PUE {pue:g} and {cents:g} ¢/kWh\n× {big(r.run_gpu_hours)} GPU-hours of "
                     f"{r.run_label} at {mfu}% MFU = {money(r.run_dollars)}")
        self._stack(self.bar_plot, [(name, [(PART_LABELS[p], b.parts()[p]) for p in PARTS])],
                    lambda v: f"${v:,.2f} ({v / b.total:.0%})" if b.total else "$0")
        self.bar_plot.setXRange(0, b.total * 1.02 if b.total > 0 else 1, padding=0)
        c = r.campus
        published = dict((lab, s) for lab, s, _ in c.published_split)
        self._stack(self.campus_plot, [(f"this cluster ({c.n_gpus:,} GPUs, {money(c.total)})", list(c.grouped())),
                                       ("McKinsey, Apr 2025 (an estimate for all AI data centres to 2030)",
                                        list(zip(GROUPS, published.values())))],
                    lambda v: f"{v:.0%}")
        self.campus_plot.setXRange(0, 1.0, padding=0.01)
        self.text.setText(
            f"<b>${b.total:,.2f} per utilised GPU-hour</b>: server {shares['server']:.0%}, building "
            f"{shares['facility']:.0%}, electricity {shares['power']:.0%}, operations {shares['opex']:.0%} "
            f"(node {r.node.kw_per_gpu:.2f} kW per GPU). × {big(r.run_gpu_hours)} GPU-hours of {escape(r.run_label)} = "
            f"<b>{money(r.run_dollars)}</b>, of which electricity {money(r.run_power_dollars)}. The chips dominate; the "
            f"electricity bill is small, so power is scarce because of grid access, not its price.")
        self.sources.set_sources(list(r.sources)
                                 + [(f"building part: {lab}", cite) for lab, _, cite in c.facility_parts]
                                 + [("this cluster's groups", "servers; the building's critical power and cooling; "
                                                             "the rest of the building (shell, site, fit-out, back of house)")]
                                 + [(f"published split: {lab} {s:.0%}", cite) for lab, s, cite in c.published_split])
