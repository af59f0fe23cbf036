"""Plot items reused across redraws: a chart that redraws a varying number of bars and lines asks the
pool for them each time instead of creating items (updating is far cheaper than re-creating, which
keeps a timeline frame within a few milliseconds)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFont

from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import Label, label_layer


class ItemPool:
    """Plot items reused across redraws: updating is far cheaper than re-creating, which keeps a
    timeline frame within a few milliseconds. Labels go to the plot's one LabelLayer."""

    def __init__(self, plot) -> None:
        self.plot = plot
        self.items: dict[str, list] = {"bar": [], "line": []}
        self.z = {"bar": 0, "line": 5}
        self.used = dict.fromkeys(self.items, 0)
        self.layer = label_layer(plot)
        self.labels: list[Label] = []

    def begin(self) -> None:
        self.used = dict.fromkeys(self.items, 0)
        self.labels = []

    def _next(self, kind: str, make):
        pool = self.items[kind]
        if self.used[kind] == len(pool):
            item = make()
            item.setZValue(self.z[kind])
            self.plot.addItem(item)
            pool.append(item)
        item = pool[self.used[kind]]
        self.used[kind] += 1
        item.show()
        return item

    def bar(self, **opts):
        item = self._next("bar", lambda: Bars(**opts))  # a plot always uses the same keys
        if getattr(item, "_pool_opts", None) != opts:   # the same bars again: no repaint
            item._pool_opts = opts
            item.setOpts(**opts)
        return item

    def text(self, text: str, pos: tuple[float, float], anchor: tuple[float, float], font: QFont, color: str,
             fill=None) -> None:
        self.labels.append(Label(text, float(pos[0]), float(pos[1]), anchor, font, color, fill))

    def line(self, pos: float, angle: int, line_pen):
        item = self._next("line", lambda: pg.InfiniteLine(angle=angle, movable=False))
        if getattr(item, "_pool_opts", None) != (pos, angle, line_pen):   # unchanged: no repaint
            item._pool_opts = (pos, angle, line_pen)
            item.setAngle(angle)
            item.setPen(line_pen)
            item.setPos(pos)
        return item

    def end(self) -> None:
        for kind, pool in self.items.items():
            for item in pool[self.used[kind]:]:
                item.hide()
        self.layer.set_labels(self.labels)


def kept_items(plot, shape, build) -> list:
    """The chart's items for a drawing of this ``shape`` (whatever decides how many items it has and
    what its legend names): ``build()`` adds them to the chart, cleared with its legend first, only
    when the shape differs from last time's (or something cleared the chart since); otherwise the
    items made then come back, to be given new data. Rebuilding items and legend rows on every
    edit cost up to half of a tour step's redraw."""
    pi = plot.getPlotItem()
    kept = getattr(pi, "_kept_items", None)
    if kept is None or kept[0] != shape or any(item not in pi.items for item in kept[1]):
        plot.clear()
        if pi.legend is not None:
            pi.legend.clear()
        kept = pi._kept_items = (shape, list(build()))
    return kept[1]


def rename(plot, item, name: str) -> None:
    """Give a kept item a new legend name (the legend row keeps its place)."""
    legend = plot.getPlotItem().legend
    for sample, label in (legend.items if legend is not None else ()):
        if sample.item is item and label.text != name:
            label.setText(name)
