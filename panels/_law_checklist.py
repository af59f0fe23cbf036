"""A checklist table the law panel's Annex I and Annex VII tabs share: one row per point, read-only
point and summary cells, a status combo box, and editable note and evidence cells. The tab that owns
it reads :meth:`answers` and writes :meth:`show`; the table itself holds no rules."""
from __future__ import annotations

import html
from typing import Callable, Iterable, Mapping

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QAbstractItemView, QComboBox, QHeaderView, QTableWidgetItem

from explorer.binder import quiet
from explorer.ui.whole_rows import WholeRowTable

FIXED = Qt.ItemIsSelectable | Qt.ItemIsEnabled
CHARS = [None, 16, None, 14, 12]    # the fixed columns' widths in average characters: they grow with the font
EXTRA_CHARS = 30


class ChecklistTable(WholeRowTable):
    """``rows``: (id, point label, summary, tooltip, choices); ``choices`` are (value, label) pairs.
    ``extra`` names read-only columns after the evidence column. ``changed()`` fires on user edits.
    Rows show only whole (a slide never ends on half a row) and fixed widths are counted in characters,
    so presenter mode's larger text does not cut the summaries to a word each."""

    def __init__(self, rows, columns: list[str], changed: Callable[[], None], extra: int = 0) -> None:
        super().__init__(len(rows), len(columns))
        self.ids = [r[0] for r in rows]
        self._changed = changed
        self._filling = False
        self.setHorizontalHeaderLabels(columns)
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # rows follow column widths
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setWordWrap(True)
        head = self.horizontalHeader()
        self._chars = (CHARS + [EXTRA_CHARS] * extra) if extra else []
        if extra:       # extra text columns: fixed widths that scroll sideways, the last one filling a wide table
            for col, chars in enumerate(self._chars):
                head.setSectionResizeMode(col, QHeaderView.ResizeToContents if chars is None
                                          else QHeaderView.Interactive)
            self._size_columns()
            head.setStretchLastSection(True)
        else:           # evidence as wide as its references ("DoC-2027-001"): shown whole at presenter sizes
            for col, mode in enumerate((QHeaderView.ResizeToContents, QHeaderView.Stretch,
                                        QHeaderView.ResizeToContents, QHeaderView.Stretch,
                                        QHeaderView.ResizeToContents)):
                head.setSectionResizeMode(col, mode)
        self.boxes: list[QComboBox] = []
        for row, (_id, point, summary, tip, choices) in enumerate(rows):
            for col, text in ((0, point), (1, summary)):
                cell = QTableWidgetItem(text)
                cell.setFlags(FIXED)
                cell.setToolTip(tip)
                self.setItem(row, col, cell)
            box = QComboBox()
            for value, text in choices:
                box.addItem(text, value)
            box.setAccessibleName(f"Status of {point}")
            box.currentIndexChanged.connect(lambda _i: self._user_edit())
            self.setCellWidget(row, 2, box)
            self.boxes.append(box)
            for col in range(3, 5 + extra):
                cell = QTableWidgetItem("")
                if col >= 5:
                    cell.setFlags(FIXED)
                self.setItem(row, col, cell)
        self.itemChanged.connect(lambda cell: self._user_edit() if cell.column() in (3, 4) else None)

    def _size_columns(self) -> None:
        em = self.fontMetrics().averageCharWidth()
        for col, chars in enumerate(self._chars):
            if chars:
                self.horizontalHeader().resizeSection(col, chars * em + 12)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if event.type() == QEvent.FontChange and self._chars:
            self._size_columns()

    def _user_edit(self) -> None:
        if not self._filling:
            self._changed()

    def answers(self) -> tuple[tuple[str, str, str, str], ...]:
        """(id, status, note, evidence) of every row with a status or text (an open row keeps its text)."""
        out = []
        for row, key in enumerate(self.ids):
            status = self.boxes[row].currentData()
            note, evidence = (self.item(row, c).text().strip() for c in (3, 4))
            if status or note or evidence:
                out.append((key, status, note, evidence))
        return tuple(out)

    def show(self, rows) -> None:
        """``rows``: (status, note, evidence, marker, marker tip, extra texts) per row, in row order."""
        self._filling = True
        with quiet(self):
            for row, (status, note, evidence, marker, tip, extra) in enumerate(rows):
                box = self.boxes[row]
                with quiet(box):
                    box.setCurrentIndex(max(0, box.findData(status)))
                for col, text in ((3, note), (4, evidence), *((5 + i, t) for i, t in enumerate(extra))):
                    if self.item(row, col).text() != text:
                        self.item(row, col).setText(text)
                self.item(row, 0).setText(marker)
                self.item(row, 0).setToolTip(tip)
        self._filling = False


def counts_html(counts: Mapping[str, int]) -> str:
    """A checklist's tally in bold: "3 in the file, 2 missing"."""
    return "<b>" + ", ".join(f"{n} {t}" for t, n in counts.items()) + "</b>"


def todo_html(items: Iterable[str], done: str) -> str:
    """What is still to do as a list, or ``done`` when nothing is."""
    items = list(items)
    if not items:
        return done
    return "<b>Still to do</b><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in items) + "</ul>"


def detail_html(point: str, ours: str, source: str, quote: str) -> str:
    """One point in our words above the Official Journal text it paraphrases (``quote`` is plain text)."""
    return (f"<b>{point}</b>, in our words: {html.escape(ours)}<br><br>"
            f"<b>Article text</b> ({source}):<br><i>“{html.escape(quote)}”</i>")
