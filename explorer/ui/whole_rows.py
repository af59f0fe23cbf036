"""A holder that shows a table's rows and columns only whole.

A table taller or wider than its room shows a half row at its foot and a half column at its edge:
on a projected slide that reads as cut text (issue 38's check d), and a number in a half cell is
unreadable. The holder gives the table its room, then trims the table to the whole rows and
columns that fit; the rest scrolls into view a row (or column) at a time. Cheap: a few sums of
section sizes on a resize, a scroll or a section's resize, never in a paint.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, QTimer
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


def _whole(header: QHeaderView, room: int) -> int:
    """How much of ``room`` the whole sections from the first one in view take (``room`` when every
    section from there fits, or when not even one does: a trim would then hide it all)."""
    first = header.logicalIndexAt(0)
    if first < 0:
        return room
    used = 0
    for visual in range(header.visualIndex(first), header.count()):
        logical = header.logicalIndex(visual)
        if header.isSectionHidden(logical):
            continue
        size = header.sectionSize(logical)
        if used + size > room:
            return used if used > 0 else room
        used += size
    return room


class WholeRows(QWidget):
    """Holds ``table`` (reach it as ``.table``) and shows only rows and columns it can draw whole."""

    def __init__(self, table: QTableView) -> None:
        super().__init__()
        self.table = table
        table.setParent(self)
        self.setMinimumSize(table.minimumSize())   # the table's floor is the holder's: a trim may go below it
        table.setMinimumSize(0, 0)
        table.setVerticalScrollMode(QAbstractItemView.ScrollPerItem)     # a scroll shows the next row whole
        table.setHorizontalScrollMode(QAbstractItemView.ScrollPerItem)
        self.setSizePolicy(table.sizePolicy())
        self._busy = False
        self._later = QTimer(self)                 # section sizes settle after the resize: look again then
        self._later.setSingleShot(True)
        self._later.setInterval(0)
        self._later.timeout.connect(self.fit)
        for signal in (table.verticalScrollBar().valueChanged, table.horizontalScrollBar().valueChanged,
                       table.verticalHeader().sectionResized, table.horizontalHeader().sectionResized):
            signal.connect(self._later.start)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return self.table.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return self.table.minimumSizeHint()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self.fit()
        self._later.start()

    def fit(self) -> None:
        """The table fills the holder, less the part of a row or column it could show only in part."""
        if self._busy:
            return
        self._busy = True
        try:
            t = self.table
            t.setGeometry(0, 0, self.width(), self.height())
            port = t.viewport()
            cut_w = port.width() - _whole(t.horizontalHeader(), port.width())
            if cut_w:
                t.setGeometry(0, 0, self.width() - cut_w, self.height())
            cut_h = port.height() - _whole(t.verticalHeader(), port.height())
            if cut_h:
                t.setGeometry(0, 0, t.width(), self.height() - cut_h)
        finally:
            self._busy = False
