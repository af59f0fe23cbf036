"""Shared pieces of the compute panel's views: number formats and the "Sources" box that keeps every
figure's source one click away."""
from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtWidgets import QTextBrowser, QToolButton, QVBoxLayout, QWidget

from engines.compute import CONFIDENCE_LABELS
from explorer.ui.numbers import eng  # noqa: F401 (the compute views' formats live here)


def big(x: float, unit: str = "") -> str:
    """Thousands, millions, billions, trillions in words (readable on a projector)."""
    for div, word in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:,.3g}{word} {unit}".strip()
    return f"{x:,.3g} {unit}".strip()


def money(x: float) -> str:
    for div, word in ((1e9, " B"), (1e6, " M")):
        if abs(x) >= div:
            return f"${x / div:,.2f}{word}"
    return f"${x:,.2f}" if abs(x) < 1000 else f"${x:,.0f}"


def tag(confidence: str) -> str:
    """How sure a figure is, in words, for captions (estimates say so)."""
    return CONFIDENCE_LABELS.get(confidence, confidence)


class SourcesBox(QWidget):
    """A 'Sources' button that opens the list of every figure the view shows, with its citation."""

    def __init__(self, title: str = "Sources") -> None:
        super().__init__()
        self._title = title
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.button = QToolButton()
        self.button.setCheckable(True)
        self.button.setAccessibleName(f"{title}: show where every figure comes from")
        self.button.toggled.connect(self._toggle)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.text.setAccessibleName(title)
        self.text.setVisible(False)
        self.text.setMinimumHeight(120)
        lay.addWidget(self.button)
        lay.addWidget(self.text)
        self._rows: list[tuple[str, str]] = []
        self._label()

    def _label(self) -> None:
        arrow = "▾" if self.button.isChecked() else "▸"
        self.button.setText(f"{arrow} {self._title} ({len(self._rows)} figures): where each number comes from")

    def _toggle(self, on: bool) -> None:
        self.text.setVisible(on)
        self._label()

    def set_sources(self, rows: list[tuple[str, str]]) -> None:
        """``rows``: (the figure as shown, its citation). The same rows again change nothing (no re-layout)."""
        rows = list(rows)
        if rows == self._rows and self._rows:
            return
        self._rows = rows
        self.text.setHtml("<ul>" + "".join(f"<li><b>{escape(a)}</b>: {escape(b)}</li>" for a, b in rows) + "</ul>")
        self._label()

    def rows(self) -> list[tuple[str, str]]:
        return list(self._rows)


def draw_bars(plot, theme, rows: list[tuple[str, float, float, str, int]], x_range: tuple[float, float]) -> None:
    """Horizontal bars, one per row, first on top: each row's name written above its bar and its value
    just past the bar's end (long names need no axis column, so the bars keep the chart's width).
    ``rows``: (name, start, width, value text, style index: colour and hatch). The chart's bars are
    kept from one call to the next and given new sizes (an edit rebuilt them all: most of a redraw)."""
    from PySide6.QtGui import QFont

    from explorer.ui.bar_chart import hatched
    from explorer.ui.pool import ItemPool
    from explorer.ui.widgets import brush, pen

    pi = plot.getPlotItem()
    pool = getattr(pi, "_bars_pool", None)
    if pool is None:
        pool = pi._bars_pool = ItemPool(plot)
    font = QFont()
    font.setPointSizeF(theme.point_size * 0.85)
    fill = brush(theme.bg, 0.8)
    n = len(rows)
    pool.begin()
    for i, (name, x0, width, value, style) in enumerate(rows):
        y = n - 1 - i
        pool.bar(x0=[x0], y=[y - 0.15], width=[width], height=0.42, brush=hatched(theme.color(style), style),
                 pen=pen(theme.fg, 1))
        pool.text(name, (x_range[0], y + 0.08), (0.0, 1.0), font, theme.fg, fill)
        if value:
            pool.text(value, (x0 + width, y - 0.15), (0.0, 0.5), font, theme.fg, fill)
    pool.end()
    plot.getAxis("left").setStyle(showValues=False)
    plot.getAxis("left").setWidth(4)
    plot.setXRange(*x_range, padding=0)
    plot.setYRange(-0.55, n - 0.5, padding=0)


def watts(x: float) -> str:
    """Power given in watts, shown in MW, or kW below one megawatt."""
    return f"{x / 1e6:,.1f} MW" if x >= 1e6 else f"{x / 1e3:,.0f} kW"


def mwh(joules: float) -> str:
    """Energy given in joules, shown in MWh (3.6 GJ each)."""
    return big(joules / 3.6e9, "MWh")


def tonnes(kg: float) -> str:
    """A mass given in kilograms, shown in tonnes."""
    return big(kg / 1000, "t")


def megawatts(values):
    """Watts on a chart whose axis is in MW."""
    return np.asarray(values, float) / 1e6
