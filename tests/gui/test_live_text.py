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
