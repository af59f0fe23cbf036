"""The tour bar's source line: cut to two lines at a word in presenter mode, whole otherwise."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

LONG = ("Zhao et al. 2023, PyTorch FSDP (VLDB, arXiv 2304.11277), §3.2–3.3; PyTorch docs, fully_shard and "
        "FSDPMemTracker; Rajbhandari et al. 2020, ZeRO (SC'20, arXiv 1910.02054), §3.1; Korthikanti et al. 2022 "
        "(arXiv 2205.05198), §4.1; Dao et al. 2022, FlashAttention (arXiv 2205.14135), §3")


def test_a_long_source_is_cut_to_its_lines_with_the_whole_in_the_tooltip(qtbot):
    from PySide6.QtGui import QFontMetricsF

    from explorer.lessons.tour_bar import SourceLine

    line = SourceLine()
    qtbot.addWidget(line)
    line.resize(420, 200)
    line.show()
    line.show_source(LONG, line.font().pointSizeF(), 2)
    shown = line.shown()
    assert shown.endswith(" …") and LONG.startswith(shown[:-2]) and len(shown) < len(LONG)
    assert line.toolTip() == LONG
    fm = QFontMetricsF(line.font())
    assert line.heightForWidth(420) <= 2 * fm.lineSpacing() + 4      # two lines, not five
    line.show_source(LONG, line.font().pointSizeF(), None)         # the normal window: all of it
    assert line.shown() == LONG and line.toolTip() == ""
    line.show_source("Kaplan et al. 2020", line.font().pointSizeF(), 2)   # short: as it is
    assert line.shown() == "Kaplan et al. 2020" and line.toolTip() == ""
