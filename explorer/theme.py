"""Themes for projectors and screens: colour-blind-safe palettes and a global font scale.

Okabe & Ito (2008), "Color Universal Design": eight colours distinguishable under the common
colour-vision deficiencies. Meaning is never carried by colour alone: panels also label, hatch or dash.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
# Dark backgrounds: the same hues, with the black slot swapped for light grey.
OKABE_ITO_DARK = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#3B9BE0", "#FF7A33", "#CC79A7", "#DDDDDD")

BASE_POINT_SIZE = 11.0  # at scale 1.0; presenter mode goes to 1.5–2.0


@dataclass(frozen=True)
class Theme:
    name: str
    bg: str
    fg: str
    panel_bg: str
    grid: str
    accent: str
    muted: str
    error: str
    palette: tuple[str, ...]
    font_scale: float = 1.0

    @property
    def point_size(self) -> float:
        return BASE_POINT_SIZE * self.font_scale

    def scaled(self, font_scale: float) -> "Theme":
        return replace(self, font_scale=max(0.6, min(3.0, font_scale)))

    def color(self, i: int) -> str:
        return self.palette[i % len(self.palette)]


THEMES: dict[str, Theme] = {
    # High-contrast light: white paper, black ink. Best for projectors in lit rooms.
    "light": Theme("light", bg="#FFFFFF", fg="#000000", panel_bg="#F4F4F4", grid="#BBBBBB", accent="#0072B2",
                   muted="#555555", error="#B00020", palette=OKABE_ITO),
    "dark": Theme("dark", bg="#1E1E1E", fg="#F2F2F2", panel_bg="#2A2A2A", grid="#555555", accent="#56B4E9",
                  muted="#AAAAAA", error="#FF6B6B", palette=OKABE_ITO_DARK),
}


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio (1 … 21) of two "#rrggbb" colours; text needs ≥ 4.5."""
    def lum(c: str) -> float:
        ch = [int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in ch]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ink_on(fill: str, theme: Theme) -> str:
    """The theme's text or background colour, whichever reads better on ``fill``."""
    return max((theme.fg, theme.bg), key=lambda c: contrast(c, fill))


def qt_palette(theme: Theme):
    """The theme's colours as a QPalette: how every widget gets its colours.

    Colours live here and not in a ``QWidget { background: … }`` stylesheet rule: such a rule puts
    every widget under the stylesheet engine, which made a full repaint of the window 4× slower.
    """
    from PySide6.QtGui import QColor, QPalette

    pal = QPalette()
    roles = {
        QPalette.Window: theme.bg, QPalette.WindowText: theme.fg, QPalette.Base: theme.bg,
        QPalette.AlternateBase: theme.panel_bg, QPalette.Text: theme.fg, QPalette.Button: theme.panel_bg,
        QPalette.ButtonText: theme.fg, QPalette.BrightText: theme.error, QPalette.Highlight: theme.accent,
        QPalette.HighlightedText: theme.bg, QPalette.ToolTipBase: theme.panel_bg, QPalette.ToolTipText: theme.fg,
        QPalette.PlaceholderText: theme.muted, QPalette.Link: theme.accent, QPalette.LinkVisited: theme.accent,
        QPalette.Light: theme.bg, QPalette.Midlight: theme.panel_bg, QPalette.Mid: theme.grid,
        QPalette.Dark: theme.muted, QPalette.Shadow: theme.fg,
    }
    for role, colour in roles.items():
        pal.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        pal.setColor(QPalette.Disabled, role, QColor(theme.muted))
    return pal


def stylesheet(theme: Theme) -> str:
    """Qt stylesheet for what a palette cannot say: tab, group-box and check-box shapes (Fusion's
    check-box frame vanishes on a dark background), a visible focus ring.

    Colours come from :func:`qt_palette`. Rules name specific widget classes so that plain widgets
    stay outside the (slow) stylesheet engine. Text size is *not* set here: the application font
    carries it (a stylesheet font-size would override every widget's own font, e.g. the big numbers
    on the overview cards).
    """
    from engines.core.assets import asset_path

    tick = asset_path("icons", f"check-{'FFFFFF' if theme.name == 'light' else '000000'}.svg").as_posix()
    return f"""
    QCheckBox::indicator {{ width: 0.95em; height: 0.95em; border: 2px solid {theme.fg}; background: {theme.bg}; }}
    QCheckBox::indicator:checked {{ background: {theme.accent}; image: url("{tick}"); }}
    QCheckBox::indicator:disabled {{ border-color: {theme.muted}; }}
    QTabBar::tab {{ padding: 6px 14px; background: {theme.panel_bg}; color: {theme.fg}; border: 1px solid {theme.grid}; }}
    QTabBar::scroller {{ width: 2.6em; }}
    QTabBar::tab:selected {{ background: {theme.bg}; font-weight: bold; border-bottom: 3px solid {theme.accent}; }}
    QGroupBox {{ border: 1px solid {theme.grid}; margin-top: 1.2em; padding-top: 0.3em; }}
    QGroupBox::title {{ subcontrol-origin: margin; left: 8px; padding: 0 4px; font-weight: bold; }}
    QPushButton {{ padding: 4px 10px; border: 1px solid {theme.grid}; background: {theme.panel_bg};
        color: {theme.fg}; }}
    QPushButton:checked {{ background: {theme.accent}; color: {theme.bg}; }}
    QPushButton:disabled {{ color: {theme.muted}; border-style: dashed; }}
    QLineEdit, QPlainTextEdit, QTextBrowser {{
        background: {theme.panel_bg}; color: {theme.fg}; border: 1px solid {theme.grid}; padding: 2px; }}
    *:focus {{ outline: 2px solid {theme.accent}; }}
    QPushButton:focus, QLineEdit:focus {{ border: 2px solid {theme.accent}; }}
    QLabel#error {{ color: {theme.error}; font-weight: bold; }}
    QLabel#muted {{ color: {theme.muted}; }}
    QStatusBar {{ border-top: 1px solid {theme.grid}; }}
    """
