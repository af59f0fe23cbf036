"""Tables that show rows and columns only whole.

A table taller or wider than its room shows a half row at its foot and a half column at its edge:
on a projected slide that reads as cut text (issue 38's check d), and a number in a half cell is
unreadable. Two ways in, one rule (``_whole``): ``WholeRows`` holds any table view and trims its
geometry to the whole rows and columns that fit; ``WholeRowTable`` is a ``QTableWidget`` that keeps
its viewport above a partial row itself (and can wrap one long column so the others stay in view).
The rest scrolls into view a row at a time. Cheap: a few sums of section sizes on a resize, a
scroll or a section's resize, never in a paint.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, QTimer
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QTableWidget, QWidget


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
        table.viewport().installEventFilter(self)  # a scroll bar shown or hidden (a queued call) resizes it

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt name)
        """The viewport resized without the table (a scroll bar came or went): trim now, not a pass later."""
        if event.type() == QEvent.Resize and watched is self.table.viewport():
            self.fit()
        return False

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
            for header in (t.horizontalHeader(), t.verticalHeader()):
                header.resizeSections()     # stretched and to-contents sections now, not on the header's
            port = t.viewport()             # own timer: a slide read before it fired saw a half row
            cut_w = port.width() - _whole(t.horizontalHeader(), port.width())
            if cut_w:
                t.setGeometry(0, 0, self.width() - cut_w, self.height())
            cut_h = port.height() - _whole(t.verticalHeader(), port.height())
            if cut_h:
                t.setGeometry(0, 0, t.width(), self.height() - cut_h)
        finally:
            self._busy = False


WRAP_MIN_PX = 80      # a wrapping column never gets narrower than this


class WholeRowTable(QTableWidget):
    """A ``QTableWidget`` whose viewport holds whole rows. The bottom viewport margin is set where the
    view lays itself out (``QTableView.updateGeometries`` resets the margins to the headers' room, so
    margins set from outside do not hold), and again when rows change height or the view scrolls."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._fitting = False
        self._wrap_column: int | None = None
        self._rows_measured_at = -1
        self._follow, self._rows_width = False, -1
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.setInterval(0)
        self._later.timeout.connect(self.updateGeometries)
        self._rows_later = QTimer(self)
        self._rows_later.setSingleShot(True)
        self._rows_later.setInterval(0)
        self._rows_later.timeout.connect(self._measure_rows)
        self.verticalHeader().sectionResized.connect(self._later.start)
        self.verticalScrollBar().valueChanged.connect(self._later.start)

    def updateGeometries(self) -> None:  # noqa: N802 (Qt name)
        if self._fitting:              # the viewport resized by our own margin: finished below
            return
        super().updateGeometries()     # sets the margins to the headers' room (bottom 0)
        kept = self.viewportMargins()
        margin = self.partial_row_height(self.viewport().height() + kept.bottom())
        if margin == kept.bottom():
            return
        self._fitting = True
        try:
            self.setViewportMargins(kept.left(), kept.top(), kept.right(), margin)
            rows = self.verticalHeader()
            if not rows.isHidden():    # QTableView sizes it to the viewport it had
                g = rows.geometry()
                rows.setGeometry(g.x(), g.y(), g.width(), self.viewport().height())
            QAbstractItemView.updateGeometries(self)    # scroll ranges, without QTableView's margin reset
        finally:
            self._fitting = False

    def wrap_to_width(self, column: int) -> None:
        """Let ``column`` (long names) give up width, its text wrapping onto more lines, until every
        column fits the viewport: a slide cannot scroll sideways to the figures beyond it. Call again
        after the columns were re-measured (``resizeColumnsToContents``)."""
        self._wrap_column = column
        self._rows_measured_at = -1
        self.setWordWrap(True)
        self._fit_width()

    def rows_follow_width(self) -> None:
        """Re-measure the rows' heights whenever the viewport's width changes (once per width, not per
        edit): word-wrapped rows measured before the table was laid out, or at another window's width,
        are cut with an ellipsis or left several lines too tall."""
        self._rows_width = -1
        self._follow = True

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if self._wrap_column is not None:
            self._fit_width()
        elif self._follow and self.viewport().width() != self._rows_width:
            self._rows_later.start()           # after the header has stretched its columns to the new width

    def _measure_rows(self) -> None:
        self._rows_width = self.viewport().width()
        self.resizeRowsToContents()

    def _fit_width(self) -> None:
        j = self._wrap_column
        others = sum(self.columnWidth(c) for c in range(self.columnCount()) if c != j and not self.isColumnHidden(c))
        want = max(min(self.sizeHintForColumn(j), self.viewport().width() - others), WRAP_MIN_PX)
        if want != self.columnWidth(j):
            self.setColumnWidth(j, want)
        if want != self._rows_measured_at:       # rows measured at another width (or columns re-measured)
            self._rows_measured_at = want
            self.resizeRowsToContents()

    def partial_row_height(self, room: int) -> int:
        """The part of ``room`` (pixels) below the last row that fits whole from the first row shown: 0
        when every row fits, or when not even one does (a cut row is better than an empty table)."""
        return room - _whole(self.verticalHeader(), room)
