"""Horizontal labelled bar charts: long category names on the left axis, each value just past its bar,
refitted in pixels whenever the chart resizes or shows."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from explorer.ui.fast_items import Bars
from explorer.ui.label_layer import PAD, Label, label_layer
from explorer.ui.widgets import brush, pen

HATCHES = (Qt.SolidPattern, Qt.BDiagPattern, Qt.Dense4Pattern, Qt.CrossPattern, Qt.FDiagPattern,
           Qt.Dense6Pattern, Qt.DiagCrossPattern)


def hatched(color: str, i: int):
    b = brush(color, 0.9)
    b.setStyle(HATCHES[i % len(HATCHES)])
    return b


def bar_chart(plot, theme, labels: list[str], values: list[float], fmt: str = "{:.3g}",
              colors: list[str] | None = None) -> None:
    """Horizontal hatched bars, first label on top: each name on the left axis, each value written
    just past its bar's end. Category names here are long ("W8A8 per-channel W / per-token A"):
    under vertical bars they ran into each other at projector text sizes; a row keeps a whole line.
    The names' column and the value axis are fitted in pixels, again whenever the chart resizes.
    No labels clears the chart (its value labels too).

    The bars drawn last time are kept and only those that changed are updated: a new item per bar
    and a hatched brush each, on every call, was most of a redraw."""
    palette = colors or theme.palette
    n = len(values)
    pi = plot.getPlotItem()
    bars = [b for b in getattr(pi, "_bar_items", ()) if b in pi.items]
    if len(bars) != len(pi.items):   # other items on the chart (or it was cleared): it is the chart's alone
        plot.clear()
        bars = []
    while len(bars) > n:
        plot.removeItem(bars.pop())
    for i, v in enumerate(values):
        state = (n - 1 - i, float(v), palette[i % len(palette)], i % len(HATCHES), theme.fg)
        if i < len(bars) and bars[i]._bar_state == state:
            continue
        look = dict(x0=[0], y=[n - 1 - i], width=[v], height=0.62, brush=hatched(palette[i % len(palette)], i),
                    pen=pen(theme.fg, 1))
        if i < len(bars):
            bars[i].setOpts(**look)
        else:
            bars.append(Bars(**look))
            plot.addItem(bars[-1])
        bars[i]._bar_state = state
    pi._bar_items = bars
    font = QFont()
    font.setPointSizeF(theme.point_size * 0.9)
    pi._bar_chart = ([str(s) for s in labels], [float(v) for v in values], fmt, font, theme.fg)
    if not hasattr(pi, "_bar_chart_refit"):   # wired once per plot
        pi._bar_chart_refit = _RefitOnShow(plot)
        pi.getViewBox().sigResized.connect(lambda *_a: _fit_bar_chart(plot))
    _fit_bar_chart(plot)


class _RefitOnShow(QObject):
    """A chart in a hidden tab has no width to fit its names to yet: it fits them when it shows."""

    def __init__(self, plot) -> None:
        super().__init__(plot)
        self.plot = plot
        plot.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Show:
            _fit_bar_chart(self.plot)
        return False


NAME_SHARE = 0.5   # of the chart's width, at most, for the names' column (longer names wrap)


def _fit_bar_chart(plot) -> None:
    """Names wrapped to the room they have, the axis as wide as the widest line, value labels inside."""
    pi = plot.getPlotItem()
    if not plot.isVisible():
        return
    labels, values, fmt, font, color = pi._bar_chart
    fitted = (pi._bar_chart, plot.width(), plot.height(), pi.getViewBox().width())
    if getattr(pi, "_bar_chart_fitted", None) == fitted:   # shown again, same size: nothing to redo
        return
    pi._bar_chart_fitted = fitted
    axis = pi.getAxis("left")
    metrics = QFontMetricsF(axis.style["tickFont"] or QFont())
    names = [_wrap_px(s, metrics, max(plot.width() * NAME_SHARE, 80.0)) for s in labels]
    widest = max((metrics.horizontalAdvance(line) for name in names for line in name.split("\n")), default=0.0)
    width = int(widest + abs(axis.style["tickLength"]) + axis.style["tickTextOffset"][0] + 8)
    view_px = pi.getViewBox().width()
    if names and abs(axis.width() - width) > 1:
        view_px -= width - axis.width()     # the view narrows by what the axis grows (laid out later)
        axis.setWidth(width)
    n = len(values)
    _fit_rows(plot, n * _row_lines([name.count("\n") + 1 for name in names]) * metrics.height() * 1.2)
    axis.setTicks([[(n - 1 - i, name) for i, name in enumerate(names)]])
    texts = [fmt.format(v) for v in values]
    label_layer(plot).set_labels([Label(t, v, n - 1 - i, (0, 0.5), font, color)
                                  for i, (t, v) in enumerate(zip(texts, values))])
    if not n:
        return
    label_px = QFontMetricsF(font).horizontalAdvance  # each value label must end inside the view
    view_px = max(view_px, 120.0)
    low = min(0.0, min(values))
    high = max(max(values), 1e-12)
    right = max(high * 1.05, *(v + (v - low) * (label_px(t) + 2 * PAD + 6) / max(view_px - label_px(t) - 14, 40.0)
                                for v, t in zip(values, texts)))
    plot.setRange(xRange=(low, right), yRange=(-0.6, n - 0.4), padding=0)


def _row_lines(lines: list[int]) -> float:
    """Lines of text a row's spacing must hold so no name touches the next: two neighbours centred on
    their rows need the mean of their heights, the top and bottom names 0.6 of a row to the edge
    (the y range). One two-line name among one-line ones no longer doubles every row."""
    if not lines:
        return 1.0
    pairs = [(a + b) / 2 for a, b in zip(lines, lines[1:])]
    return max(1.0, *pairs, lines[0] / 1.2, lines[-1] / 1.2)


def _fit_rows(plot, rows_px: float) -> None:
    """At least ``rows_px`` of data height: a name wrapped over two lines needs two lines of its row.
    The minimum the panel set (its theme's) stays the floor; this raises it only as far as needed."""
    pi = plot.getPlotItem()
    if plot.minimumHeight() != getattr(pi, "_rows_minimum", None):   # set by the panel: the floor
        pi._rows_floor = plot.minimumHeight()
    frame = plot.height() - pi.getViewBox().height()                    # title, value axis, margins
    pi._rows_minimum = max(pi._rows_floor, int(rows_px + frame))
    if pi._rows_minimum != plot.minimumHeight():
        plot.setMinimumHeight(pi._rows_minimum)


def _wrap_px(text: str, metrics: QFontMetricsF, room: float) -> str:
    """``text`` broken at spaces into lines at most ``room`` pixels wide (a longer word keeps its line)."""
    lines: list[str] = []
    for word in text.replace("\n", " ").split():
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and metrics.horizontalAdvance(trial) <= room:
            lines[-1] = trial
        else:
            lines.append(word)
    return "\n".join(lines)
