"""WholeRowTable (explorer/ui/whole_rows.py): a table taller than its room ends on a whole row, and a
wrapping column gives up width so every column stays in view."""
from __future__ import annotations

from PySide6.QtWidgets import QTableWidgetItem

from explorer.ui.whole_rows import WholeRowTable


def _last_row_is_whole(table: WholeRowTable) -> bool:
    room = table.viewport().height()
    cut = [r for r in range(table.rowCount())
           if table.rowViewportPosition(r) < room < table.rowViewportPosition(r) + table.rowHeight(r)]
    return not cut


def _table(rows: int, cols: int = 3) -> WholeRowTable:
    t = WholeRowTable(rows, cols)
    for r in range(rows):
        t.setRowHeight(r, 30)
        for c in range(cols):
            t.setItem(r, c, QTableWidgetItem(f"{r},{c}"))
    return t


def test_a_tall_table_stops_above_a_partial_row_and_keeps_doing_so_after_resizes(qapp, qtbot):
    t = _table(34)
    qtbot.addWidget(t)
    t.resize(400, 425)
    t.show()
    qapp.processEvents()
    assert t.viewportMargins().bottom() > 0 and _last_row_is_whole(t)
    for h in (437, 401, 390):                 # QTableView's own re-layout resets margins: they must come back
        t.resize(400, h)
        qapp.processEvents()
        assert _last_row_is_whole(t), h
    t.verticalScrollBar().setValue(5)
    qapp.processEvents()
    assert t.rowAt(0) == 5 and _last_row_is_whole(t)


def test_a_table_that_fits_keeps_its_whole_room(qapp, qtbot):
    t = _table(3)
    qtbot.addWidget(t)
    t.resize(400, 425)
    t.show()
    qapp.processEvents()
    assert t.viewportMargins().bottom() == 0
    assert t.partial_row_height(t.viewport().height()) == 0


def test_a_wrapping_column_gives_up_width_so_every_column_is_in_view(qapp, qtbot):
    t = _table(2, 4)
    t.item(0, 0).setText("a long name that would push the figures after it out of view " * 2)
    qtbot.addWidget(t)
    t.resize(500, 300)
    t.show()
    t.resizeColumnsToContents()
    qapp.processEvents()
    assert sum(t.columnWidth(c) for c in range(4)) > t.viewport().width()    # without it: past the edge
    t.wrap_to_width(0)
    qapp.processEvents()
    assert sum(t.columnWidth(c) for c in range(4)) <= t.viewport().width()
    assert t.rowHeight(0) > t.rowHeight(1)                                   # the long name wrapped


def test_rows_follow_the_width_they_are_shown_at(qapp, qtbot):
    from PySide6.QtWidgets import QHeaderView

    t = _table(2, 2)
    t.setWordWrap(True)
    t.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
    t.item(0, 0).setText("words that wrap onto several lines in a narrow table " * 3)
    t.rows_follow_width()
    qtbot.addWidget(t)
    t.resize(260, 400)
    t.show()
    qapp.processEvents()
    narrow = t.rowHeight(0)
    t.resize(1600, 400)
    qapp.processEvents()
    assert narrow > t.rowHeight(0) > 0          # measured again at the wider width, not kept from the narrow one
    t.resize(260, 400)
    qapp.processEvents()
    assert t.rowHeight(0) == narrow
