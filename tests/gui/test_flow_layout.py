"""Control rows wrap instead of pushing a panel sideways or squeezing sliders to their handles."""
from contextlib import contextmanager

import pytest
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import LabeledSlider


@contextmanager
def shown_at(window, size: tuple[int, int], presenter: bool = True):
    """The window at ``size``, in presenter mode for the block; left afterwards even when an assertion
    fails (the application font is global: later tests expect the default)."""
    window.resize(*size)
    if presenter:
        window.set_presenter(True, full_screen=False)
    try:
        yield window
    finally:
        if presenter:
            window.set_presenter(False)


def test_items_wrap_onto_lines_and_the_height_follows_the_width(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host, spacing=6)
    buttons = [QPushButton(f"control number {i}") for i in range(6)]
    for b in buttons:
        flow.addWidget(b)
    one_line = flow.sizeHint().width()
    widest = max(b.sizeHint().width() for b in buttons)
    assert flow.minimumSize().width() == widest                        # narrow panels: one item per line
    assert flow.heightForWidth(one_line) < flow.heightForWidth(one_line // 2) < flow.heightForWidth(widest)
    host.resize(one_line // 2, flow.heightForWidth(one_line // 2))
    host.show()
    QApplication.processEvents()
    rows = sorted({b.geometry().top() for b in buttons})
    assert len(rows) > 1
    for b in buttons:
        assert b.geometry().right() < host.width() and b.width() == b.sizeHint().width()  # none cut, none squeezed
    buttons[0].hide()                                                 # hidden controls take no room
    assert flow.heightForWidth(widest) < len(buttons) * buttons[1].sizeHint().height() + 5 * 6


def test_a_labelled_slider_keeps_a_usable_track_at_any_text_size(qtbot):
    slider = LabeledSlider("Arrivals", 0.1, 200, 4, 0.1, 1, "req/s")
    qtbot.addWidget(slider)
    small = slider.slider.minimumWidth()
    assert small >= slider.fontMetrics().averageCharWidth() * 10
    font = slider.font()
    font.setPointSizeF(font.pointSizeF() * 1.6)
    slider.setFont(font)
    assert slider.slider.minimumWidth() > small


@pytest.mark.parametrize("key", ["serving", "scale"])
def test_presenter_mode_needs_no_sideways_scrolling(window, key):
    """At 1600×1000 in presenter mode the control rows wrap: the panel fits its tab's width."""
    panel = window.show_panel(key)
    with shown_at(window, (1600, 1000)):
        QApplication.processEvents()
        host = window._hosts[key]
        assert panel.width() <= host.viewport().width() + 1
        assert not host.horizontalScrollBar().isVisible()


def test_the_scenario_dock_fits_its_width(window):
    """Long choices are cut and rows wrap, so the editor never scrolls sideways in its dock."""
    window.resize(1600, 1000)
    QApplication.processEvents()
    editor = window.editor
    assert editor.widget().minimumSizeHint().width() <= editor.viewport().width()
    assert not editor.horizontalScrollBar().isVisible()
    gpu = editor.widgets["gpu"]
    assert gpu.currentText().startswith("NVIDIA") and gpu.width() >= gpu.fontMetrics().averageCharWidth() * 8


@pytest.mark.parametrize("presenter,size", [(False, (1600, 1000)), (True, (1600, 1000)), (True, (1280, 800))])
def test_no_wrapped_text_is_cut_off(window, qtbot, presenter, size):
    """Every word-wrapped readout gets the height its text needs at its width, in the default layout
    and at presenter fonts (a chart's large preferred height once made Qt squeeze a grid's rows; on a
    1280×800 projector a form's rows were not counted and law's due dates were cut off)."""
    from PySide6.QtWidgets import QLabel

    from explorer.ui.live_text import LiveText

    with shown_at(window, size, presenter=presenter):
        for cls in window.panel_classes:
            panel = window.show_panel(cls.key)
            qtbot.wait(400)                  # debounced background results land and lay out
            panel.settle(60_000)
            qtbot.wait(100)
            texts = panel.findChildren(LiveText) + [w for w in panel.findChildren(QLabel) if w.wordWrap()]
            for text in texts:
                if text.isVisible():
                    assert text.height() + 1 >= text.heightForWidth(text.width()), (cls.key, text.text()[:40])


def test_presenter_mode_at_1080p_fits_every_panel_and_squeezes_no_chart(window, qtbot):
    """A lecturer projects at 1920×1080: in presenter mode every panel fits its tab without scrolling,
    and no chart is squeezed into its neighbour (a tab widget's preferred height once took a grid row's
    room, and two charts above it overlapped)."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPoint, QRect

    from PySide6.QtWidgets import QTabWidget

    with shown_at(window, (1920, 1080)):
        for cls in window.panel_classes:
            panel = window.show_panel(cls.key)
            qtbot.wait(300)
            panel.settle(60_000)
            qtbot.wait(100)
            host = window._hosts[cls.key]
            assert panel.height() <= host.viewport().height() + 1, cls.key
            for tabs in [t for t in panel.findChildren(QTabWidget) if t.isVisible()]:
                for i in range(tabs.count()):       # a page fills its content when first shown
                    tabs.setCurrentIndex(i)
                    qtbot.wait(150)
                    panel.settle(60_000)
                    assert panel.height() <= host.viewport().height() + 1, (cls.key, tabs.tabText(i))
                tabs.setCurrentIndex(0)
                qtbot.wait(50)
            charts = [c for c in panel.findChildren(pg.GraphicsView) if c.isVisible()]
            rects = [QRect(c.mapTo(panel, QPoint(0, 0)), c.size()) for c in charts]
            for chart in charts:
                assert chart.height() >= chart.minimumHeight(), (cls.key, chart.accessibleName())
            for i, a in enumerate(rects):
                for b in rects[i + 1:]:
                    assert not a.intersects(b), (cls.key, a, b)


def test_presenter_mode_on_a_1280x800_projector_needs_no_sideways_scrolling(window, qtbot):
    """Common classroom projectors are 1280×800: at 1.6× text every panel still fits the tab's width
    (control rows wrap; long combo entries do not set the width); it may scroll down, never sideways."""
    with shown_at(window, (1280, 800)):
        for cls in window.panel_classes:
            panel = window.show_panel(cls.key)
            qtbot.wait(100)
            host = window._hosts[cls.key]
            assert panel.width() <= host.viewport().width() + 1, cls.key
            assert not host.horizontalScrollBar().isVisible(), cls.key
        editor = window.editor                                   # nor does the scenario dock beside them
        assert editor.widget().minimumSizeHint().width() <= editor.viewport().width()
        assert not editor.horizontalScrollBar().isVisible()
        card = window.show_panel("overview").cards["params"]     # and a big number stays on one line
        qtbot.wait(100)
        one_line = card.value.heightForWidth(10_000)
        assert card.value.heightForWidth(card.value.width()) < 1.5 * one_line


def test_law_clocks_show_every_due_date_on_a_1280x800_projector(window, qtbot):
    """The CRA and PLD results sit in form rows: the tab's least height counts them, so at presenter
    size on a small screen the tab scrolls instead of cutting "Final report due" off."""
    with shown_at(window, (1280, 800)):
        panel = window.show_panel("law")
        panel.tabs.setCurrentIndex(1)
        qtbot.wait(200)
        for label in (panel.clock_tab.cra_result, panel.clock_tab.pld_result):
            assert "due" in label.text() or "expire" in label.text()
            assert label.height() + 1 >= label.heightForWidth(label.width()), label.text()[:40]
