"""WholeRows: a table in a room too small for it shows no half row or half column."""
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from explorer.ui.whole_rows import WholeRows


def _table(rows: int, cols: int) -> QTableWidget:
    t = QTableWidget(rows, cols)
    for r in range(rows):
        for c in range(cols):
            t.setItem(r, c, QTableWidgetItem(f"cell {r}.{c}"))
        t.setRowHeight(r, 30)
    for c in range(cols):
        t.setColumnWidth(c, 100)
    return t


def _ends(header) -> list[int]:
    """Where each section in view ends, in viewport coordinates."""
    return [header.sectionViewportPosition(i) + header.sectionSize(i) for i in range(header.count())
            if header.sectionViewportPosition(i) + header.sectionSize(i) > 0
            and header.sectionViewportPosition(i) < header.length()]


def test_a_room_that_cuts_a_row_and_a_column_shows_only_whole_ones(qtbot):
    holder = WholeRows(_table(20, 8))
    qtbot.addWidget(holder)
    holder.resize(455, 315)                  # neither rows (30 px) nor columns (100 px) divide the room
    holder.show()
    qtbot.wait(30)
    t = holder.table
    port = t.viewport()
    rows, cols = _ends(t.verticalHeader()), _ends(t.horizontalHeader())
    assert rows and max(e for e in rows if e - 30 < port.height()) <= port.height()
    assert cols and max(e for e in cols if e - 100 < port.width()) <= port.width()
    assert port.height() > 315 - 2 * 30 - 60 and port.width() > 455 - 2 * 100 - 40   # trimmed by < a row / column
    t.verticalScrollBar().setValue(5)        # scrolled: still whole rows
    qtbot.wait(30)
    assert t.rowViewportPosition(5) == 0
    assert max(e for e in _ends(t.verticalHeader()) if e - 30 < port.height()) <= port.height()


def test_a_table_that_fits_keeps_the_whole_room(qtbot):
    holder = WholeRows(_table(3, 2))
    qtbot.addWidget(holder)
    holder.resize(400, 300)
    holder.show()
    qtbot.wait(30)
    assert holder.table.size() == holder.size()
