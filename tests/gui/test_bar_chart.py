"""The horizontal bar chart keeps its bars between calls and changes only what changed."""
from __future__ import annotations

import pyqtgraph as pg


def _bars(plot):
    from explorer.ui.fast_items import Bars

    return [item for item in plot.getPlotItem().items if isinstance(item, Bars)]


def _widths(plot):
    return [float(b.opts["width"][0]) for b in _bars(plot)]


def test_a_redraw_updates_the_same_bars(qapp, qtbot):
    from explorer.theme import THEMES
    from explorer.ui.bar_chart import bar_chart
    from explorer.ui.widgets import make_plot

    theme = THEMES["light"]
    plot = make_plot(theme)
    qtbot.addWidget(plot)
    plot.show()
    bar_chart(plot, theme, ["a", "b", "c"], [1.0, 2.0, 3.0])
    first = _bars(plot)
    assert len(first) == 3
    brushes = [b.opts["brush"] for b in first]

    bar_chart(plot, theme, ["a", "b", "c"], [1.0, 5.0, 3.0])          # one value moved
    assert _bars(plot) == first and _widths(plot) == [1.0, 5.0, 3.0]
    assert first[0].opts["brush"] is brushes[0] and first[1].opts["brush"] is not brushes[1]   # only it changed

    bar_chart(plot, theme, ["a", "b"], [4.0, 2.0])                  # fewer bars: the spare one goes
    assert _bars(plot) == first[:2] and _widths(plot) == [4.0, 2.0]
    assert [float(b.opts["y"][0]) for b in first[:2]] == [1.0, 0.0]   # first label on top
    assert first[2].scene() is None

    bar_chart(plot, theme, ["a", "b", "c", "d"], [1.0, 1.0, 1.0, 1.0])   # more: new ones are added after
    assert _bars(plot)[:2] == first[:2] and len(_bars(plot)) == 4

    bar_chart(plot, theme, [], [])                                  # no labels: an empty chart
    assert _bars(plot) == []


def test_anything_else_on_the_chart_is_cleared_as_before(qapp, qtbot):
    from explorer.theme import THEMES
    from explorer.ui.bar_chart import bar_chart
    from explorer.ui.widgets import make_plot

    theme = THEMES["dark"]
    plot = make_plot(theme)
    qtbot.addWidget(plot)
    bar_chart(plot, theme, ["a"], [1.0])
    stray = pg.PlotDataItem([0, 1], [0, 1])
    plot.addItem(stray)
    bar_chart(plot, theme, ["a"], [2.0])
    assert stray not in plot.getPlotItem().items and _widths(plot) == [2.0]


def test_one_wrapped_name_widens_its_neighbours_rows_not_every_row():
    """Rows are evenly spaced, so the spacing must hold the tallest pair of neighbours (their mean
    height) and the end names to the range's edge (0.6 of a row), not the tallest name twice over."""
    from explorer.ui.bar_chart import _row_lines

    assert _row_lines([1, 2, 1, 1, 1]) == 1.5       # a two-line name among one-line ones
    assert _row_lines([2, 2, 1]) == 2.0             # two two-line neighbours need two lines
    assert _row_lines([1, 1, 3]) == 2.5             # the bottom name: 1.5 lines to the edge = 0.6 of 2.5
    assert _row_lines([1, 1]) == 1.0 and _row_lines([]) == 1.0
