"""A layout that places controls left to right and wraps them onto the next line when the panel is
narrow: a row of controls wider than the tab made the whole panel scroll sideways at presenter font
sizes, and a squeezed ``QHBoxLayout`` shrank its sliders to their handles.

Each item keeps its size hint (a labelled slider asks for a usable track); a line's items are centred
vertically on it. The layout reports the height it needs for a given width (``heightForWidth``), so
the panel's vertical layout gives it two lines when it wraps, and its minimum width is that of its
widest item, not of the whole row.
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLayoutItem, QSizePolicy, QStyle, QWidget


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = -1) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setContentsMargins(0, 0, 0, 0)
        if spacing >= 0:
            self.setSpacing(spacing)

    # --- the QLayout contract ------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt name)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        """Everything on one line."""
        shown = self._shown()
        gap = self._gap()
        width = sum(item.sizeHint().width() for item in shown) + gap * max(0, len(shown) - 1)
        height = max((item.sizeHint().height() for item in shown), default=0)
        m = self.contentsMargins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802
        """One item per line at worst: the widest item's width."""
        shown = self._shown()
        width = max((item.minimumSize().width() for item in shown), default=0)
        height = max((item.minimumSize().height() for item in shown), default=0)
        m = self.contentsMargins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    # --- placement ---------------------------------------------------------------------------------
    def _shown(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]   # hidden widgets take no room

    def _gap(self) -> int:
        gap = self.spacing()
        if gap >= 0:
            return gap
        parent = self.parentWidget()
        style = parent.style() if parent is not None else None
        if style is None:
            return 6
        return max(0, style.layoutSpacing(QSizePolicy.PushButton, QSizePolicy.PushButton, Qt.Horizontal,
                                          None, parent)) or style.pixelMetric(QStyle.PM_LayoutHorizontalSpacing)

    def _lines(self, width: int) -> list[list[tuple[QLayoutItem, QSize]]]:
        """Items with their sizes, broken into lines no wider than ``width`` (an item wider than the
        line gets a line of its own, shrunk to fit where its minimum allows)."""
        gap = self._gap()
        lines: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        used = 0
        for item in self._shown():
            hint = item.sizeHint()
            size = QSize(max(min(hint.width(), width), item.minimumSize().width()), hint.height())
            if lines[-1] and used + gap + size.width() > width:
                lines.append([])
                used = 0
            used += (gap if lines[-1] else 0) + size.width()
            lines[-1].append((item, size))
        return [line for line in lines if line]

    def _place(self, rect: QRect, apply: bool) -> int:
        """Lay the items out inside ``rect`` (only measure unless ``apply``); returns the height used."""
        m = self.contentsMargins()
        inner = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        gap = self._gap()
        y = inner.y()
        lines = self._lines(max(1, inner.width()))
        for n, line in enumerate(lines):
            line_h = max(size.height() for _, size in line)
            if apply:
                x = inner.x()
                for item, size in line:
                    item.setGeometry(QRect(QPoint(x, y + (line_h - size.height()) // 2), size))
                    x += size.width() + gap
            y += line_h + (gap if n < len(lines) - 1 else 0)
        return y - inner.y() + m.top() + m.bottom()


def keep_together(*widgets: QWidget) -> QWidget:
    """One flow item of several widgets (a caption and its control wrap as one)."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        row.addWidget(w)
    return box
