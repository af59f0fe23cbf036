"""Read-only tables of the quantization-evaluation panel's views: one look for every tab."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem


def fill_table(table: QTableWidget, heads: list[str], rows: list[list[str]], bold: set[tuple[int, int]] = frozenset(),
               tips: dict[tuple[int, int], str] | None = None) -> None:
    """Read-only cells; ``bold`` marks (row, column) cells that carry a finding (never colour alone)."""
    table.clear()
    table.setColumnCount(len(heads))
    table.setRowCount(len(rows))
    table.setHorizontalHeaderLabels(heads)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemIsEditable)
            if (r, c) in bold:
                f = item.font()
                f.setBold(True)
                item.setFont(f)
            item.setToolTip((tips or {}).get((r, c), text))
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)


class FitTable(QTableWidget):
    """A table whose columns follow its font: presenter mode enlarges the text after the cells were
    filled, and widths measured in the old font elided every number ('48 …')."""

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.FontChange, QEvent.StyleChange) and self.columnCount():
            QTimer.singleShot(0, self.resizeColumnsToContents)


def make_table(name: str) -> QTableWidget:
    t = FitTable()
    t.setAccessibleName(name)
    t.verticalHeader().hide()
    t.setWordWrap(False)            # one line a configuration: a narrow panel scrolls sideways instead
    t.setSelectionBehavior(QTableWidget.SelectRows)
    return t
