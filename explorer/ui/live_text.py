"""Word-wrapped text that changes on every edit or frame without repainting the whole panel.

``QLabel.setText`` always calls ``updateGeometry()``; the layout request climbs to the main
window's ``QTabWidget``, whose ``setUpLayout()`` calls ``update()`` on itself, so every plot on the
panel repaints (tens of ms) even when the label kept its size. ``LiveText`` asks its layout for
room only when its wrapped height really changes and otherwise repaints just itself.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, QSize, QTimer
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument, Qt
from PySide6.QtWidgets import QSizePolicy, QWidget


class LiveText(QWidget):
    """A QLabel-like text view (``setText``/``text``, rich text detected like QLabel) for live readouts."""

    def __init__(self, text: str = "", parent: QWidget | None = None, min_lines: int = 0) -> None:
        super().__init__(parent)
        self._doc = QTextDocument(self)
        self._doc.setDocumentMargin(0)
        self._doc.setDefaultFont(self.font())  # kept in step by changeEvent
        self._source = None
        self._lines = 0
        self._wanted = -1
        self._floor = (0, 0)   # (width, height): at this width the readout never gets shorter
        self._heights: dict[int, float] = {}   # the text's wrapped height by width, until it changes
        policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.reserve_lines(min_lines)
        self.setText(text)

    def text(self) -> str:
        return self._doc.toPlainText()

    def setText(self, text: str) -> None:  # noqa: N802 (QLabel's name)
        if text == self._source:
            return
        self._source = text
        if Qt.mightBeRichText(text):
            self._doc.setHtml(text)
        else:
            self._doc.setPlainText(text)
        self._heights.clear()
        self.setAccessibleDescription(self._doc.toPlainText())
        old, self._wanted = self._wanted, self.heightForWidth(self.width())
        self._floor = (self.width(), self._wanted)
        if self._wanted != old:              # the layout only needs to hear about a new height
            self.updateGeometry()
        self.update()

    def reserve_lines(self, lines: int) -> None:
        """Keep room for ``lines`` lines, so a readout that varies in length does not re-lay out the panel."""
        self._lines = lines
        self.setMinimumHeight(int(math.ceil(self.fontMetrics().lineSpacing() * lines)) if lines else 0)

    def reset_height(self) -> None:
        """Re-measure after a theme or font change."""
        self._floor = (0, 0)
        self._heights.clear()
        self.reserve_lines(self._lines)
        self._wanted = self.heightForWidth(self.width())
        self.updateGeometry()

    # --- size: height follows width, like a word-wrapped QLabel -------------------------------
    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        """The wrapped text's height, but never less than the tallest text shown at this width: a
        readout whose text alternates between two and three lines would otherwise re-lay out the
        whole panel (every chart resized and repainted) on every edit."""
        height = max(int(math.ceil(self._wrapped_height(max(1, width)))), self.minimumHeight())
        floor_width, floor_height = self._floor
        return max(height, floor_height) if width == floor_width else height

    def resizeEvent(self, event) -> None:  # noqa: N802
        if event.size().width() != event.oldSize().width():
            self._floor = (0, 0)             # a new width: measure afresh
        old, self._wanted = self._wanted, self.heightForWidth(self.width())
        self._floor = (self.width(), self._wanted)
        if self._wanted != old:              # the minimum the layout holds for it is for the old width
            self.updateGeometry()
        super().resizeEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802
        width = self.fontMetrics().averageCharWidth() * 40      # independent of the text: no layout churn
        return QSize(width, self.heightForWidth(max(width, self.width())))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        width = self.fontMetrics().averageCharWidth() * 12
        return QSize(width, self.heightForWidth(max(width, self.width())))

    def changeEvent(self, event) -> None:  # noqa: N802
        if event.type() in (QEvent.FontChange, QEvent.StyleChange):
            self._doc.setDefaultFont(self.font())
            self._floor = (0, 0)
            self._heights.clear()
            self.reserve_lines(self._lines)
            self.updateGeometry()
        super().changeEvent(event)

    def _wrapped_height(self, width: int) -> float:
        """Laying the text out is the costly part (a panel's fit asks at several widths per edit,
        each a new layout): each width is laid out once per text."""
        height = self._heights.get(width)
        if height is None:
            self._set_width(width)
            height = self._heights[width] = self._doc.size().height()
            if len(self._heights) > 32:
                self._heights = {width: height}
        return height

    def _set_width(self, width: int) -> None:
        if self._doc.textWidth() != width:   # setting the same width still re-lays the text out
            self._doc.setTextWidth(width)

    def paintEvent(self, _event) -> None:  # noqa: N802
        painter = QPainter(self)
        self._set_width(self.width())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.Text, self.palette().color(QPalette.WindowText))
        self._doc.documentLayout().draw(painter, ctx)
        painter.end()


def pin_size(widget: QWidget, chars: int = 0, longest: str = "") -> QWidget:
    """Give a widget whose text changes often (a task bar, a frame counter) a fixed size: its updates
    then stay local. Room for ``chars`` average characters or for the ``longest`` text it will show,
    measured again whenever its font changes (presenter mode on or off).

    A widget with equal minimum and maximum sizes does not pass layout requests to its parent.
    """
    repin = widget.findChild(_Repin, options=Qt.FindDirectChildrenOnly) or _Repin(widget)
    repin.chars, repin.longest = chars, longest
    repin.fit()
    return widget


class _Repin(QObject):
    """Keeps a pinned widget's size in step with its font. A theme change reaches the parent before
    its children, so a size measured then (``apply_theme``) is the old text size's: once measured in
    presenter mode a task bar kept its 1.6x width in the window and widened the panel past its tab
    (measured by its size hint, it also took the width of whatever status it showed then).
    A hidden widget's children are re-styled only when shown, so it is measured again then too."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.chars, self.longest = 0, ""
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(0)              # after the new font has reached the children too
        self._soon.timeout.connect(self.fit)
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() in (QEvent.FontChange, QEvent.Show) and not self._soon.isActive():
            self._soon.start()
        return False

    def fit(self) -> None:
        widget = self.parent()
        hint = widget.sizeHint()
        fm = widget.fontMetrics()
        # the room asked for, not the hint: that grows with the status text shown at the moment
        asked = max(fm.averageCharWidth() * self.chars, fm.horizontalAdvance(self.longest) + 4 if self.longest else 0)
        widget.setFixedSize(asked or hint.width(), hint.height())
