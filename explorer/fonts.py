"""The app's fonts, shipped in assets/fonts: every machine draws the same glyphs.

The system's choice varies: layout and fit tests measure text, and a desktop's monospace font
may be one Qt does not report as fixed pitch (Noto Sans Mono), so nothing here asks the system."""
from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetrics, QFontMetricsF
from PySide6.QtWidgets import QApplication

TEXT_FAMILY = "DejaVu Sans"
MONO_FAMILY = "DejaVu Sans Mono"
NARROW_AND_WIDE = "iWm."   # a fixed-width font draws these with one advance

_bundled: set[str] = set()


def register_bundled_fonts() -> None:
    """Register assets/fonts and make DejaVu Sans the application font (the frozen app cannot
    rely on the system's fonts)."""
    from engines.core.assets import asset_path

    folder = asset_path("fonts")
    if folder.is_dir():
        for f in sorted(folder.glob("*.ttf")):
            _bundled.update(QFontDatabase.applicationFontFamilies(QFontDatabase.addApplicationFont(str(f))))
    if TEXT_FAMILY in QFontDatabase.families():
        QApplication.instance().setFont(QFont(TEXT_FAMILY))


def mono_font(point_size: float | None = None) -> QFont:
    """The fixed-width font for code and YAML, where columns carry meaning (indentation is syntax).

    The style hint only matters if the bundled family is missing: then the system's monospace."""
    font = QFont(MONO_FAMILY)
    font.setStyleHint(QFont.Monospace)
    if point_size:
        font.setPointSizeF(point_size)
    return font


def draws_fixed_width(font: QFont) -> bool:
    """Whether narrow and wide glyphs get one advance: what a reader sees, unlike Qt's fixedPitch
    flag (False for Noto Sans Mono, whose glyphs all have the same advance)."""
    metrics = QFontMetricsF(font)
    return len({round(metrics.horizontalAdvance(c), 3) for c in NARROW_AND_WIDE}) == 1


def font_problems() -> list[str]:
    """Fonts can fail silently (every glyph a box); these are the checks that catch it."""
    problems = []
    f = QFont()
    if not QFontInfo(f).family():
        problems.append("no usable font: QFontInfo(QFont()).family() is empty")
    if not QFontMetrics(f).inFont("A"):
        problems.append("the default font has no glyph for 'A'")
    if not set(QFontDatabase.families()) - {"Monospace", "Sans Serif", "Serif"}:
        problems.append("only generic font aliases are available")
    missing = {TEXT_FAMILY, MONO_FAMILY} - _bundled
    if missing:
        problems.append(f"not registered from assets/fonts: {', '.join(sorted(missing))}")
    if not draws_fixed_width(mono_font()):
        problems.append(f"the fixed-width font draws {NARROW_AND_WIDE!r} at different widths")
    return problems
