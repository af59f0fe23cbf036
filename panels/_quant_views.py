"""Drawing helpers for the quantization panel: labelled bar charts and step histograms."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer.fast_items import Bars
from explorer.widgets import brush, no_si_prefix, pen

HATCHES = (Qt.SolidPattern, Qt.BDiagPattern, Qt.Dense4Pattern, Qt.CrossPattern, Qt.FDiagPattern,
           Qt.Dense6Pattern, Qt.DiagCrossPattern)


def hatched(color: str, i: int):
    b = brush(color, 0.9)
    b.setStyle(HATCHES[i % len(HATCHES)])
    return b


def bar_chart(plot, theme, labels: list[str], values: list[float], fmt: str = "{:.3g}",
              colors: list[str] | None = None) -> None:
    """Vertical hatched bars, each with its value written on top and its name on the axis."""
    plot.clear()
    palette = colors or theme.palette
    for i, v in enumerate(values):
        plot.addItem(Bars(x=[i], height=[v], width=0.7, brush=hatched(palette[i % len(palette)], i),
                                     pen=pen(theme.fg, 1)))
        t = pg.TextItem(fmt.format(v), color=theme.fg, anchor=(0.5, 1.0))
        t.setPos(i, v)
        plot.addItem(t)
    plot.getAxis("bottom").setTicks([[(i, wrap(s)) for i, s in enumerate(labels)]])
    plot.getAxis("bottom").setHeight(int(theme.point_size * 6))
    plot.setXRange(-0.6, len(values) - 0.4, padding=0)
    plot.setYRange(0, max(values or [1]) * 1.25 or 1, padding=0)


def wrap(label: str, width: int = 13) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(label.replace("\n", " "), width)[:3])


def tidy(plot, theme, legend: bool = False):
    """No SI-prefix rescaling of axes (values are read as printed); optional readable legend."""
    for name in ("left", "bottom"):
        no_si_prefix(plot.getAxis(name))
    if legend:
        plot.addLegend(offset=(-10, 10), brush=brush(theme.bg, 0.85), labelTextColor=theme.fg,
                       pen=pen(theme.grid, 1))
    return plot


def step_hist(plot, edges, counts, color: str, name: str, style=Qt.SolidLine, width: float = 2.0):
    item = pg.PlotDataItem(edges, counts, stepMode="center", pen=pen(color, width, style), name=name)
    plot.addItem(item)
    return item
