"""The slide check (issue 38): each check fails on a planted defect and passes without it, and every
shipped tour step passes at 1280×800 and 1920×1080, presenting and not, except the failures listed
in slide_known_failures.txt (visible work, not hidden: a listed check that passes is reported)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from explorer.lessons import lesson_tour, lessons
from explorer.lessons.checks import SIZES, check_slides, cited_numbers, read_allow_list, view_problems

ALLOW = Path(__file__).with_name("slide_known_failures.txt")
READY = [x.id for x in lessons() if x.ready]


def _slide(qtbot, text: str = "error 0.0615, 2,765× the median", px: int = 24, scrolled: bool = False):
    """A window 1280×800 holding a panel whose focus view is a chart and a readout."""
    win = QWidget()
    qtbot.addWidget(win)
    win.resize(1280, 800)
    panel = QWidget(win)
    panel.setGeometry(0, 0, 1280, 800)
    focus = QWidget()
    lay = QVBoxLayout(focus)
    plot = pg.PlotWidget()
    plot.plot([0, 1, 2, 3], [3, 1, 2, 0.5], pen=pg.mkPen("k", width=4))
    font = QFont()
    font.setPixelSize(px)
    for name in ("left", "bottom"):
        plot.getAxis(name).setStyle(tickFont=font)
    lay.addWidget(plot, 1)
    label = QLabel(text)
    label.setFont(font)
    lay.addWidget(label)
    outer = QVBoxLayout(panel)
    if scrolled:                      # the focus view taller than what its scroll area shows
        area = QScrollArea()
        focus.setMinimumHeight(1400)
        area.setWidget(focus)
        area.setWidgetResizable(True)
        outer.addWidget(area)
    else:
        outer.addWidget(focus)
    win.show()
    qtbot.waitExposed(win)
    return win, panel, focus


def _checks(problems) -> set[str]:
    return {p.check for p in problems}


def test_a_clean_slide_passes(qtbot):
    win, panel, focus = _slide(qtbot)
    assert view_problems(win, panel, focus, "The error is 0.0615, 2,765× the median.", presenter=True) == []


def test_a_caption_figure_that_is_not_drawn_fails(qtbot):
    win, panel, focus = _slide(qtbot)
    problems = view_problems(win, panel, focus, "The error falls to 0.0364 on an H100.", presenter=True)
    assert _checks(problems) == {"b"} and "0.0364" in str(problems[0]) and "100" not in str(problems[0])


def test_a_clipped_focus_view_fails(qtbot):
    win, panel, focus = _slide(qtbot, scrolled=True)
    assert "a" in _checks(view_problems(win, panel, focus, "", presenter=True))


def test_too_small_text_fails_in_presenter_mode_only(qtbot):
    win, panel, focus = _slide(qtbot, px=12)
    assert "e" in _checks(view_problems(win, panel, focus, "", presenter=True))
    assert "e" not in _checks(view_problems(win, panel, focus, "", presenter=False))


def test_a_cut_label_fails(qtbot):
    win, panel, focus = _slide(qtbot, text="a readout far too long for its place " * 8)
    label = focus.findChild(QLabel)
    label.setMaximumWidth(300)
    qtbot.wait(20)
    assert "d" in _checks(view_problems(win, panel, focus, "", presenter=False))


@pytest.mark.parametrize("fmt", ["rich", "plain"])
def test_a_rich_text_label_is_measured_as_its_document_lays_it_out(qtbot, fmt):
    """A label set to rich text wraps by its QTextDocument, whose entities (``&nbsp;``) draw as one
    character; measured by the font's metrics it would seem several lines taller than it is, and cut.
    The same text as plain text draws every character of ``&nbsp;`` and is cut at that height."""
    from PySide6.QtCore import Qt

    win, panel, focus = _slide(qtbot, text="word&nbsp;word " * 40)
    label = focus.findChild(QLabel)
    label.setWordWrap(True)
    label.setTextFormat(Qt.RichText)
    label.setFixedSize(400, label.heightForWidth(400))    # exactly what the rich-text layout needs
    label.setTextFormat(Qt.RichText if fmt == "rich" else Qt.PlainText)
    qtbot.wait(20)
    assert ("d" in _checks(view_problems(win, panel, focus, "", presenter=False))) == (fmt == "plain")


@pytest.mark.parametrize("row_fits", [True, False])
def test_a_word_wrapped_cell_is_cut_only_when_its_lines_do_not_fit(qtbot, row_fits):
    from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

    from explorer.lessons.slide_text import collect

    win = QWidget()
    qtbot.addWidget(win)
    win.resize(600, 400)
    table = QTableWidget(1, 1, win)
    table.setGeometry(0, 0, 600, 400)
    table.setWordWrap(True)
    text = "a figure of 0.34 % a day, written in a sentence far too long for one line of this narrow cell " * 2
    table.setColumnWidth(0, 200)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.Fixed)
    table.setItem(0, 0, QTableWidgetItem(text))
    table.setRowHeight(0, 360 if row_fits else 40)
    win.show()
    qtbot.waitExposed(win)
    cell = [t for t in collect(win) if t.kind == "cell" and "0.34" in t.text]
    assert len(cell) == 1 and cell[0].cut is not row_fits


def test_a_wrapped_table_cell_is_cut_only_when_its_lines_overflow(qtbot):
    from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

    win, panel, focus = _slide(qtbot)
    table = QTableWidget(1, 1)
    table.setWordWrap(True)
    table.setItem(0, 0, QTableWidgetItem("fp16 scale + zero per 128; de-quantized in the kernel"))
    table.setColumnWidth(0, 160)
    focus.layout().addWidget(table)
    table.setRowHeight(0, table.fontMetrics().height() * 5)      # room for every wrapped line
    qtbot.wait(20)
    assert "d" not in _checks(view_problems(win, panel, focus, "", presenter=False))
    table.setRowHeight(0, table.fontMetrics().height())          # one line shown: the rest is cut
    qtbot.wait(20)
    assert "d" in _checks(view_problems(win, panel, focus, "", presenter=False))


def test_cited_numbers_are_figures_not_names():
    text = "On 8 H100s (fp16, Llama-3-70B) LLM.int8() from 2022 keeps 1.0% of columns, 2,765× and 0.0615."
    assert cited_numbers(text) == ["8", "1.0", "2,765", "0.0615"]
    assert cited_numbers("FSDP2 (stage 3) over 8 GPUs, ZeRO Stage 2") == ["8"]     # a stage is a name
    # an article, its paragraphs and points are references, as § is: the figures are the others
    law = "Art 13(3)-(4), Arts 13-14 and Art 11(1)(g); Annex IV, point 2; presumption 1 of 3, kept 10 years"
    assert cited_numbers(law) == ["3", "10"]


FULL = os.environ.get("EXPLORER_SLIDE_CHECK") == "full"


@pytest.mark.slow
@pytest.mark.parametrize("lesson_id", READY)
def test_every_step_is_a_good_slide_or_a_listed_known_failure(window, lesson_id):
    """Each step presenting at 1280×800, the smallest common projector (about 1.3 s of CPU a step).
    ``EXPLORER_SLIDE_CHECK=full`` adds 1920×1080 and the normal window at both sizes, as
    scripts/check_slides.py does (about 5 s a step: too long for every CI run)."""
    sizes, modes = (SIZES, ("presenter", "window")) if FULL else (((1280, 800),), ("presenter",))
    allowed = {k for k in read_allow_list(ALLOW) if k.split()[0] == lesson_id
               and (FULL or k.split()[2:4] == ["presenter", "1280x800"])}
    found = set()
    for r in check_slides(window, [lesson_tour(lesson_id)], sizes=sizes, modes=modes):
        found |= {r.key(p) for p in r.problems}
    assert sorted(found - allowed) == [], "new slide failures"
    if allowed - found:     # a warning, not a failure: a few (d) checks differ from run to run (F1 8)
        warnings.warn(f"these pass now, remove them from {ALLOW.name}: {sorted(allowed - found)}", stacklevel=1)
