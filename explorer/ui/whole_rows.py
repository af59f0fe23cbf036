"""Tables that show whole rows: the viewport stops above a row that would only partly fit, so a table
taller than its room ends on a row boundary instead of a row cut through its text (a slide or a
projector shows the cut half-line as garbage; the scroll bar still says there is more)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTableView


class _WholeRows(QObject):
    """Re-fits the table's bottom viewport margin when the table, its rows or its scroll position change."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        table.viewport().installEventFilter(self)     # the view's own layout resets the margins: re-fit after it
        table.verticalHeader().sectionResized.connect(self.fit)
        table.verticalScrollBar().valueChanged.connect(self.fit)
        model = table.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset, model.layoutChanged):
            signal.connect(self.fit)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Resize:
            self.fit()
        return False

    def fit(self, *_args) -> None:
        """Bottom margin = the part of the room below the last row that fits whole (none when every row
        below the first shown fits, or when not even one does: then the cut row is better than nothing)."""
        t = self.table
        kept = t.viewportMargins()                     # the headers' room, left and top
        room = t.viewport().height() + kept.bottom()
        first = t.rowAt(0)
        margin = 0
        if first >= 0:
            top = t.rowViewportPosition(first)
            bottom = top
            row = first
            while row < t.model().rowCount() and bottom + t.rowHeight(row) <= room:
                bottom += t.rowHeight(row) if not t.isRowHidden(row) else 0
                row += 1
            if row < t.model().rowCount() and row > first:
                margin = room - bottom
        if margin != kept.bottom():
            t.setViewportMargins(kept.left(), kept.top(), kept.right(), margin)


def whole_rows(table: QTableView) -> QTableView:
    """Make ``table`` show whole rows only (see the module's docstring); returns it."""
    if getattr(table, "_whole_rows", None) is None:
        table._whole_rows = _WholeRows(table)
    return table
