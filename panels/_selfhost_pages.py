"""Tab pages of the self-hosting panel that claim room only while shown. A stack of pages is as tall
as its tallest: Qt's QStackedLayout takes the largest minimum size (unless a page's policy says
Ignored) and the largest height-for-width of all its pages, shown or not. In a scroll area the panel
is sized by its height-for-width, so the wrapped text of a hidden page (the cost page at presenter
size) made the privacy tree 1,069 px tall in an 800 px window."""
from __future__ import annotations

from PySide6.QtWidgets import QSizePolicy, QTabWidget, QVBoxLayout, QWidget


class Page(QWidget):
    """A tab page whose height for a width counts only while it is shown (hidden: -1, "none")."""

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt name)
        return super().heightForWidth(width) if not self.isHidden() else -1


def page_around(inner: QWidget) -> Page:
    """``inner`` as the one widget of a :class:`Page`, edge to edge."""
    page = Page()
    lay = QVBoxLayout(page)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(inner)
    return page


def on_top(inner: QWidget) -> Page:
    """``inner`` at the top of a :class:`Page`, the rest blank: a view of text only as tall as its text."""
    page = Page()
    lay = QVBoxLayout(page)
    lay.addWidget(inner)
    lay.addStretch(1)
    return page


def size_by_current_page(tabs: QTabWidget) -> None:
    """Only the page shown counts toward ``tabs``' minimum height. A stack is as tall as its tallest
    page: the retirement text wrapped at presenter size (744 px) pushed every other page's view, the
    day's charts included, past a 1280×800 window. Hidden pages ignore their size hint; the shown
    one keeps it, so its own text is never squeezed."""
    def follow(current: int) -> None:
        for i in range(tabs.count()):
            page = tabs.widget(i)
            policy = page.sizePolicy()
            policy.setVerticalPolicy(QSizePolicy.Preferred if i == current else QSizePolicy.Ignored)
            page.setSizePolicy(policy)
        tabs.updateGeometry()

    tabs.currentChanged.connect(follow)
    follow(tabs.currentIndex())
