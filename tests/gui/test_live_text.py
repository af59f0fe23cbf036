"""LiveText: a live readout repaints itself, not the panel around it."""
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.ui.live_text import LiveText


def test_a_readout_alternating_between_two_and_three_lines_keeps_its_height(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    text = LiveText()
    below = QLabel("a chart would sit here")
    layout.addWidget(text)
    layout.addWidget(below, 1)
    host.resize(300, 400)
    host.show()
    short, long = "one short line", " ".join(["a much longer readout that wraps"] * 4)
    text.setText(short)
    qtbot.wait(20)
    one_line = text.height()
    text.setText(long)
    qtbot.wait(20)
    tall = text.height()
    assert tall > one_line                      # it grows to show the whole text
    moves = []
    below.moveEvent = lambda e: moves.append(e.pos().y())
    for _ in range(3):                          # an edit that toggles the text back and forth
        text.setText(short)
        qtbot.wait(10)
        assert text.height() == tall
        text.setText(long)
        qtbot.wait(10)
    assert text.height() == tall and moves == []   # nothing below it re-laid out
    host.resize(600, 400)                       # a new width measures afresh
    qtbot.wait(20)
    text.setText(short)
    qtbot.wait(20)
    assert text.height() < tall


def test_the_wrapped_height_follows_a_new_text_and_a_new_font(qapp):
    """Heights are remembered per width: a new text or font must measure afresh."""
    from PySide6.QtGui import QFont

    from explorer.ui.live_text import LiveText

    text = LiveText("one line")
    short = text.heightForWidth(200)
    text.setText("many words that wrap " * 20)
    tall = text.heightForWidth(200)
    assert tall > 3 * short
    font = QFont(text.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    text.setFont(font)
    assert text.heightForWidth(200) > 1.5 * tall


def test_a_pinned_widget_takes_the_room_asked_at_its_present_font(qtbot):
    """pin_size's width follows the font (presenter mode on, then off), not the status shown when
    measured: a task bar pinned in presenter mode kept its 1.6x width in the window."""
    from PySide6.QtWidgets import QLabel

    from explorer.ui.live_text import pin_size

    label = QLabel("idle")
    qtbot.addWidget(label)
    pin_size(label, chars=20)
    small = label.minimumWidth()
    label.setText("a status far longer than the twenty characters of room asked for " * 2)
    pin_size(label, chars=20)
    assert label.minimumWidth() == small
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    qtbot.waitUntil(lambda: label.minimumWidth() > 1.6 * small, timeout=2000)
    assert label.maximumWidth() == label.minimumWidth()
