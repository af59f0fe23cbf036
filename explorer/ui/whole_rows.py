"""Tables that show whole rows: the viewport stops above a row that would only partly fit, so a table
taller than its room ends on a row boundary instead of a row cut through its text (a slide or a
projector shows the cut half-line as garbage; the scroll bar still says there is more)."""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QAbstractItemView, QTableWidget


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
        first, rows = self.rowAt(0), self.rowCount()
        if first < 0:
            return 0
        bottom = self.rowViewportPosition(first)
        row = first
        while row < rows and bottom + self.rowHeight(row) <= room:
            bottom += self.rowHeight(row)
            row += 1
        return room - bottom if first < row < rows else 0
