"""The bundled fonts: registered from assets/fonts, so text and code look (and measure) the same on
every machine, whatever the desktop's own monospace font is."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetricsF

from explorer.fonts import MONO_FAMILY, TEXT_FAMILY, draws_fixed_width, font_problems, mono_font


def _advances(font: QFont) -> dict[str, float]:
    metrics = QFontMetricsF(font)
    return {c: metrics.horizontalAdvance(c) for c in "iWm."}


@pytest.mark.parametrize("points", [8.0, 11.0, 17.6])
def test_mono_font_draws_narrow_and_wide_glyphs_alike(ctx, points):
    font = mono_font(points)
    advances = _advances(font)
    assert max(advances.values()) - min(advances.values()) < 0.01, advances
    assert QFontInfo(font).family() == MONO_FAMILY
    assert abs(font.pointSizeF() - points) < 0.01


def test_fixed_width_check_tells_proportional_text_apart(ctx):
    advances = _advances(QFont(TEXT_FAMILY))
    assert advances["W"] > 2 * advances["i"]
    assert not draws_fixed_width(QFont(TEXT_FAMILY))
    assert draws_fixed_width(mono_font())


def test_both_families_ship_in_assets(ctx):
    """The frozen bundle copies assets/ whole (build.spec): a family found only on this machine
    would be missing from it."""
    from engines.core.assets import asset_path

    shipped = set()
    for f in asset_path("fonts").glob("*.ttf"):
        shipped.update(QFontDatabase.applicationFontFamilies(QFontDatabase.addApplicationFont(str(f))))
    assert {TEXT_FAMILY, MONO_FAMILY} <= shipped
    assert font_problems() == []
    assert QFontInfo(QFont()).family() == TEXT_FAMILY


def test_lesson_code_is_in_the_mono_font(ctx, qtbot):
    from explorer.ui.widgets import LessonView

    view = LessonView("Set `replicas: 3` here.\n\n```\nkind: Pod\n```\n\n    indented: code\n")
    qtbot.addWidget(view)
    code, text = [], []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            (code if QFontInfo(fragment.charFormat().font()).family() == MONO_FAMILY else text).append(fragment.text())
            it += 1
        block = block.next()
    assert code == ["replicas: 3", "kind: Pod", "indented: code"]
    assert text == ["Set ", " here."]
