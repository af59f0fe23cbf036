"""Grid lines sit at the axes' own ticks, drawn by the view (the axes stay small cached strips)."""
import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QImage, QPainter

from explorer.theme import THEMES
from explorer.ui.tick_grid import _tick_levels
from explorer.ui.widgets import make_plot


def _render(plot) -> QImage:
    img = QImage(plot.size(), QImage.Format_ARGB32)
    img.fill(0)
    painter = QPainter(img)
    plot.render(painter)
    painter.end()
    return img


def test_grid_follows_ticks_and_survives_clear(qtbot):
    plot = make_plot(THEMES["light"], "t", "y", "x")
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    pi = plot.getPlotItem()
    assert pi.getAxis("left").grid is False and pi.getAxis("bottom").grid is False  # not pyqtgraph's grid
    plot.plot([0, 10], [0, 100])
    plot.setRange(xRange=(0, 10), yRange=(0, 100), padding=0)
    qtbot.wait(20)
    grid = pi._tick_grid
    vb = pi.getViewBox()
    ys = _tick_levels(pi.getAxis("left"), vb.height())[0]
    assert ys == list(pi.getAxis("left").tickValues(0, 100, vb.height())[0][1])
    # a major horizontal line is drawn at each major y tick: darker than the background there
    img = _render(plot)
    bg = QColor(THEMES["light"].bg).lightness()
    for y in ys[1:-1]:
        local = vb.childGroup.transform().map(5.0, float(y))
        scene = vb.mapToScene(local[0] + 40, local[1])       # beside the data line
        px = plot.mapFromScene(scene)
        darkest = min(QColor(img.pixel(px.x(), px.y() + d)).lightness() for d in (-1, 0, 1))
        assert darkest < bg, y
    pi.getAxis("bottom").setTicks([[(2.5, "a"), (7.5, "b")]])
    assert _tick_levels(pi.getAxis("bottom"), vb.width()) == [[2.5, 7.5]]
    plot.clear()                                                # panels clear and redraw their items
    assert grid.parentItem() is vb and grid.scene() is not None
    dark = THEMES["dark"]
    from explorer.ui.widgets import style_plot
    style_plot(plot, dark)
    assert pi._tick_grid is grid and grid.pens[0].color().name() == QColor(dark.fg).name()
    assert np.isclose(grid.pens[0].color().alphaF(), 0.25, atol=0.01)


def test_new_tick_text_at_the_same_places_does_not_repaint_the_plot_area(qtbot):
    """A category axis whose last tick text changes ("GPU 63" → "GPU 127") re-renders only the
    axis: the grid lines did not move, so the plot area (bars, labels) is not painted again."""
    plot = make_plot(THEMES["light"], "t", "y", "x")
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    pi = plot.getPlotItem()
    axis = pi.getAxis("bottom")
    axis.setTicks([[(0, "GPU 0"), (1, "GPU 63")]])
    plot.setRange(xRange=(-0.5, 1.5), yRange=(0, 1), padding=0)
    qtbot.wait(30)
    painted = []

    class Exposed(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.Paint:
                painted.append(event.region().boundingRect())
            return False

    watcher = Exposed()
    plot.viewport().installEventFilter(watcher)
    axis.setTicks([[(0, "GPU 0"), (1, "GPU 127")]])   # the axis's text room grows once: one re-layout
    qtbot.wait(30)
    painted.clear()
    vb_height = pi.getViewBox().height()
    axis.setTicks([[(0, "GPU 0"), (1, "GPU 12")]])
    qtbot.wait(30)
    assert painted and max(r.height() for r in painted) < vb_height / 3   # the axis strip only
    assert axis._tickLevels[0][1][1] == "GPU 12"
    painted.clear()
    axis.setTicks([[(0, "GPU 0"), (0.5, "GPU 1"), (1, "GPU 127")]])   # a grid line more: the plot repaints
    qtbot.wait(30)
    assert max(r.height() for r in painted) >= vb_height


def test_label_layer_draws_text_at_its_anchor_and_skips_equal_updates(qtbot):
    from PySide6.QtGui import QFont

    from explorer.ui.label_layer import Label, label_layer

    plot = make_plot(THEMES["light"], "t", "y", "x")
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    plot.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    layer = label_layer(plot)
    assert label_layer(plot) is layer
    font = QFont()
    font.setPointSize(14)
    labels = [Label("MMMM", 5.0, 5.0, (0.5, 0.5), font, "#000000")]
    layer.set_labels(labels)
    qtbot.wait(20)
    img = _render(plot)
    vb = plot.getPlotItem().getViewBox()
    centre = plot.mapFromScene(vb.mapToScene(*vb.childGroup.transform().map(5.0, 5.0)))
    dark = [QColor(img.pixel(centre.x() + dx, centre.y() + dy)).lightness() < 128
            for dx in range(-20, 21, 2) for dy in range(-6, 7, 2)]
    assert sum(dark) >= 5                                   # glyph strokes around the anchor point
    far = plot.mapFromScene(vb.mapToScene(*vb.childGroup.transform().map(1.5, 8.5)))   # off the grid lines
    assert QColor(img.pixel(far.x(), far.y())).lightness() > 200
    layer.update = lambda *a: (_ for _ in ()).throw(AssertionError("repainted"))  # noqa: E731
    layer.set_labels(list(labels))                           # equal labels: nothing to repaint
    plot.clear()
    assert layer.parentItem() is vb and layer.texts() == ["MMMM"]


def _tick_texts(axis) -> list[str]:
    """The tick strings the axis would draw now (pyqtgraph's own draw specs)."""
    img = QImage(10, 10, QImage.Format_ARGB32)
    painter = QPainter(img)
    try:
        return [spec[2] for spec in axis.generateDrawSpecs(painter)[2]]
    finally:
        painter.end()


def test_an_axis_restyled_while_its_range_is_below_one_keeps_plain_values(qtbot):
    """A theme change that lands before a plot's data (range 0–0.5) must not freeze a milli- prefix
    scale on an axis without units: its 0–10 s values later read 0–10000 (seen in presenter mode)."""
    from explorer.ui.widgets import style_plot

    plot = make_plot(THEMES["light"], "t", "p90 TTFT (s)", "x")
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    plot.setRange(yRange=(0, 0.5), padding=0)
    qtbot.wait(10)
    style_plot(plot, THEMES["dark"])          # the theme changes while the range is still small
    plot.setRange(yRange=(0, 10), padding=0)  # then the data arrives
    qtbot.wait(10)
    texts = _tick_texts(plot.getAxis("left"))
    assert "10" in texts and "0" in texts and not any(t.endswith("000") for t in texts), texts


def test_a_long_title_is_cut_to_the_plot_width_and_a_panel_tooltip_stays(qtbot):
    from explorer.ui.widgets import set_title

    plot = make_plot(THEMES["light"], "A title far too long to fit a plot this narrow, by design", "y", "x")
    qtbot.addWidget(plot)
    plot.resize(220, 200)
    plot.show()
    qtbot.wait(10)
    pi = plot.getPlotItem()
    assert pi.titleLabel.text.endswith("…") and plot.toolTip().startswith("A title far too long")
    assert pi.minimumWidth() <= plot.width()                   # the chart fits its widget: no axis cut off
    plot.resize(1200, 200)
    qtbot.wait(10)
    assert pi.titleLabel.text.startswith("A title far too long") and plot.toolTip() == ""
    plot.setToolTip("what the chart shows")                    # a panel's own tooltip is left alone
    set_title(plot, "Another title far too long to fit a plot this narrow, by design")
    plot.resize(220, 200)
    qtbot.wait(10)
    assert pi.titleLabel.text.endswith("…") and plot.toolTip() == "what the chart shows"


def test_bottom_tick_text_keeps_its_descenders_in_a_cached_axis(qtbot):
    """pyqtgraph sizes a bottom axis for 80% of its tick text; cached (cache_static), the rest was cut:
    "hybrid" read "hvbrid". The axis now has room for the whole line below the tick offset."""
    from PySide6.QtGui import QFontMetricsF

    for scale in (1.0, 1.8):
        theme = THEMES["light"].scaled(scale)
        plot = make_plot(theme, "t", "y", "")
        qtbot.addWidget(plot)
        plot.resize(500, 300)
        plot.show()
        axis = plot.getAxis("bottom")
        axis.setTicks([[(0, "hybrid"), (1, "gyp")]])
        plot.setXRange(-0.5, 1.5, padding=0)
        _render(plot)                 # the axis measures its text when it first paints
        qtbot.wait(20)
        line = QFontMetricsF(axis.style["tickFont"]).height()
        assert axis.height() >= line + axis.style["tickTextOffset"][1] - 0.5, (scale, axis.height(), line)
        heights = []                                   # pyqtgraph re-sizes the axis after every re-render:
        set_max = axis.setMaximumHeight                # never through a different height (a re-layout)
        axis.setMaximumHeight = lambda h: (heights.append(h), set_max(h))
        axis.setTicks([[(0, "gyp"), (1, "hybrid")]])
        _render(plot)
        assert heights and set(heights) == {axis.height()}, heights


def test_a_left_axis_keeps_its_title_clear_of_the_tick_text(qtbot):
    """pyqtgraph gives a left axis 80% of its rotated title's height and draws the title whole at
    its left edge: in presenter type the title ran into the tick labels ("count (log)" over 10³)."""
    for scale in (1.0, 1.8, 2.4):
        theme = THEMES["light"].scaled(scale)
        plot = make_plot(theme, "t", "count (log)", "x")
        qtbot.addWidget(plot)
        plot.resize(600, 400)
        plot.show()
        axis = plot.getAxis("left")
        axis.setTicks([[(0, "10²"), (1, "10³")]])
        plot.setYRange(-0.5, 1.5, padding=0)
        _render(plot)
        qtbot.wait(20)
        title = axis.label.mapRectToParent(axis.label.boundingRect())          # rotated: its width is across
        text_left = axis.width() - max(0, axis.style["tickLength"]) - axis.style["tickTextOffset"][0] - axis.textWidth
        assert axis.textWidth > 0 and title.right() <= text_left, (scale, title.right(), text_left)


def test_legends_follow_the_theme_and_a_legend_below_fits_the_plot_width(qtbot):
    """Legend text scales with the theme (pyqtgraph's fixed 9 pt is unreadable when projected), and a
    legend under the axes takes only as many columns as the plot's width holds."""
    from explorer.ui.widgets import LEGEND_SCALE, legend_below, style_plot

    big = THEMES["light"].scaled(1.8)
    plot = make_plot(THEMES["light"], "t", "y", "x")
    qtbot.addWidget(plot)
    legend = legend_below(plot)
    for i in range(4):
        plot.plot([0, 1], [i, i + 1], name=f"a fairly long legend entry number {i}")
    plot.resize(420, 400)
    plot.show()
    style_plot(plot, big)
    qtbot.wait(20)
    size = f"{big.point_size * LEGEND_SCALE:.1f}pt"
    assert len(legend.items) == 4 and all(label.opts["size"] == size for _s, label in legend.items)
    assert legend.columnCount == 1                       # two long entries side by side would not fit
    plot.resize(1800, 400)
    qtbot.wait(20)
    assert legend.columnCount > 1                        # a wide plot puts them side by side again
    floating = make_plot(THEMES["light"], "t", "y", "x")
    qtbot.addWidget(floating)
    floating.addLegend()
    floating.plot([0, 1], [0, 1], name="curve")
    style_plot(floating, big)
    assert [label.opts["size"] for _s, label in floating.getPlotItem().legend.items] == [size]


@pytest.mark.parametrize("decade_labels", [False, True])
def test_a_log_axis_over_absurdly_many_decades_gets_a_bounded_set_of_ticks(qtbot, decade_labels):
    """A log view spanning 40,000 decades (a range set in linear units) made a tick list per decade,
    360,000 values; it now gets pyqtgraph's ticks at whole-decade spacings, and a sane span is untouched."""
    import pyqtgraph as pg

    from explorer.theme import THEMES
    from explorer.ui.widgets import log_axes, make_plot

    plot = make_plot(THEMES["light"])
    qtbot.addWidget(plot)             # closed and deleted by pytest-qt, not by a later collection
    if decade_labels:
        log_axes(plot, x=True)
    else:
        plot.setLogMode(x=True)
    axis = plot.getAxis("bottom")
    wide = axis.tickValues(-5.0, 40_000.0, 800)
    assert 0 < sum(len(v) for _s, v in wide) < 100 and all(s >= 1.0 for s, _v in wide)
    assert axis.logMode
    sane = axis.tickValues(0.0, 3.0, 800)
    assert sane == pg.AxisItem.tickValues(axis, 0.0, 3.0, 800)            # pyqtgraph's own answer
    assert any(v and abs(v[0] - round(v[0])) > 0.01 for _s, v in sane)   # with the 2…9 multiples
