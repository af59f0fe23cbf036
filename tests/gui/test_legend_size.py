"""A floating legend is as wide as its entries at the current text size."""
from __future__ import annotations


def test_a_three_column_legend_shrinks_back_with_the_text(qapp, qtbot):
    """After presenter text (2.4×) the A3 stage-memory legend kept its wide columns in the window and
    its last column ran past the plot's edge (slide check, window 1920×1080)."""
    from explorer.theme import THEMES
    from explorer.ui.widgets import make_plot, style_legend

    theme = THEMES["light"]
    plot = make_plot(theme)
    qtbot.addWidget(plot)
    plot.resize(900, 500)
    legend = plot.getPlotItem().addLegend(colCount=3)
    for name in ("weights", "gradients", "optimizer", "activations", "buffers + reserve"):
        plot.plot([0, 1], [0, 1], name=name)
    plot.show()
    style_legend(legend, theme)
    qtbot.wait(20)
    normal = legend.boundingRect().width()
    style_legend(legend, theme.scaled(2.4))
    qtbot.wait(20)
    assert legend.boundingRect().width() > 1.8 * normal
    style_legend(legend, theme)
    qtbot.wait(20)
    assert legend.boundingRect().width() < 1.1 * normal
