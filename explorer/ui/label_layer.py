"""All text labels of one plot, painted by one item.

A pyqtgraph ``TextItem`` is a QGraphicsTextItem (a rich-text document with its own layout) that
re-computes its transform whenever the view moves. A chart with thirty of them spent about 12 ms of
a 45 ms scenario edit on setting, placing and painting labels. Here a label is a tuple; the layer
lays each line out once (a ``QStaticText``: shaped when set, not on every paint), maps each anchor
point from data to pixels when it paints and draws the text at screen size, so labels stay crisp
and readable whatever the zoom, as TextItems do.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen, QStaticText, QTransform

from explorer.ui.view_overlay import ViewOverlay

PAD = 3.0  # pixels of backing around a label's text


@dataclass(frozen=True)
class Label:
    """``text`` (lines split on newline) with its box's ``anchor`` point at data ``(x, y)``: anchor
    (0, 0) puts the box's top-left there, (0.5, 1) its bottom centre. ``fill`` backs the box."""

    text: str
    x: float
    y: float
    anchor: tuple[float, float]
    font: QFont
    color: str
    fill: QBrush | None = None


class LabelLayer(ViewOverlay):
    """Above the data."""

    def __init__(self, plot_item: pg.PlotItem) -> None:
        super().__init__(plot_item, z=1000)
        self.labels: list[Label] = []
        self._laid_out: list[tuple] = []
        self._metrics: dict[str, QFontMetricsF] = {}
        self._lines: dict[tuple[str, str], QStaticText] = {}   # laid-out lines of the labels shown

    def set_labels(self, labels: list[Label]) -> None:
        """Replace every label; repaints only when something differs. Text is measured here, once."""
        if labels == self.labels:
            return
        self.labels = list(labels)
        self._laid_out = []
        known, self._lines = self._lines, {}   # an edit changes some labels: keep the others' layouts
        for label in self.labels:
            font_key = label.font.key()
            fm = self._fm(label.font, font_key)
            lines = []
            for text in label.text.split("\n"):
                key = (text, font_key)
                line = self._lines[key] = self._lines.get(key) or known.get(key) or _static(text, label.font)
                lines.append(line)
            widths = [line.size().width() for line in lines]
            self._laid_out.append((label, lines, widths, max(widths) + 2 * PAD,
                                   fm.height() * len(lines) + 2 * PAD, fm.height()))
        self.update()

    def texts(self) -> list[str]:
        return [label.text for label in self.labels]

    def _fm(self, font: QFont, key: str) -> QFontMetricsF:
        fm = self._metrics.get(key)
        if fm is None:
            fm = self._metrics[key] = QFontMetricsF(font)
        return fm

    def rects(self) -> list[QRectF]:
        """Each label's box in this item's pixels, as painted (tests check that labels fit and keep apart)."""
        to_px = self.vb.childGroup.transform()
        out = []
        for label, _lines, _widths, w, h, _line_h in self._laid_out:
            px, py = to_px.map(label.x, label.y)
            out.append(QRectF(px - label.anchor[0] * w, py - label.anchor[1] * h, w, h))
        return out

    def drawn_texts(self) -> list[tuple[str, QRectF, QFont]]:
        """What the slide check reads: each label's text, box and font."""
        return [(label.text, box, label.font) for label, box in zip(self.labels, self.rects())]

    def paint(self, painter, *_args) -> None:
        pens: dict[str, QPen] = {}
        for (label, lines, widths, w, h, line_h), box in zip(self._laid_out, self.rects()):
            left, top = box.left(), box.top()
            if label.fill is not None and label.fill.style() != Qt.NoBrush:
                painter.fillRect(box, label.fill)
            pen = pens.get(label.color)
            if pen is None:
                pen = pens[label.color] = QPen(QColor(label.color))
            painter.setPen(pen)
            painter.setFont(label.font)
            for i, (line, lw) in enumerate(zip(lines, widths)):
                x = left + PAD + label.anchor[0] * (w - 2 * PAD - lw)  # lines align like the anchor
                painter.drawStaticText(QPointF(x, top + PAD + i * line_h), line)


def range_end_for_label(x: float, start: float, label_px: float, view_px: float, least_px: float) -> float:
    """The far end of a range (x to the right, y to the top) starting at ``start`` that leaves
    ``label_px`` pixels beyond data ``x`` in a view ``view_px`` long:
    ``end = start + (x − start) · view_px / (view_px − label_px)``. A label keeps its size in pixels,
    so a smaller chart gives it a larger share of the range; at least ``least_px`` stay for the data."""
    return start + (x - start) * view_px / max(view_px - label_px, least_px)


def _static(text: str, font: QFont) -> QStaticText:
    """One line of plain text, laid out for ``font`` at screen scale."""
    line = QStaticText(text)
    line.setTextFormat(Qt.PlainText)
    line.prepare(QTransform(), font)
    return line


def label_layer(plot) -> LabelLayer:
    """The plot's label layer, created on first use."""
    pi = plot.getPlotItem() if hasattr(plot, "getPlotItem") else plot
    layer = getattr(pi, "_label_layer", None)
    if layer is None:
        layer = pi._label_layer = LabelLayer(pi)
    return layer
