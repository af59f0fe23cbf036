"""Prices view of the self-hosting panel: every row of the price file with its age (stale rows marked in
words), its source and confidence, the buttons that ask for another file (their signals go to the
panel, which reads, checks and saves it) and the editor that validates a changed file before it is used."""
from __future__ import annotations

import os
from datetime import date
from html import escape
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHeaderView, QLabel, QPlainTextEdit,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.selfhost import PriceBook, age_days, age_words, is_stale, parse_price_text
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.whole_rows import WholeRowTable
from explorer.ui.widgets import ErrorLabel

PRICE_FILE = "selfhost-prices.json"

COLUMNS = ("what", "age", "price", "observed", "confidence", "kind", "source")
WRAPPED_SHARE = {"what": 0.17, "age": 0.11, "price": 0.13, "kind": 0.09}   # of the width; the source takes the rest


def book_rows(book: PriceBook, today: date) -> list[dict]:
    """One flat row per price (the table and the CSV export)."""
    rows = []
    for a in book.api:
        rows.append({"kind": "API", "id": a.id, "what": a.label,
                     "price": f"${a.input_per_mtok:g} in / ${a.output_per_mtok:g} out per M tok",
                     "observed": a.date, "age_days": age_days(a.date, today),
                     "stale": is_stale(a.date, today), "confidence": a.confidence, "source": a.source})
    for g in book.gpu_rental:
        rows.append({"kind": f"GPU rental ({g.term})", "id": g.id, "what": f"{g.gpu}: {g.label}",
                     "price": f"${g.usd_per_gpu_hour:g} per GPU-hour", "observed": g.date,
                     "age_days": age_days(g.date, today), "stale": is_stale(g.date, today),
                     "confidence": g.confidence, "source": g.source})
    for h in book.hardware:
        rows.append({"kind": "Hardware", "id": h.id, "what": f"{h.gpu}: {h.item}",
                     "price": f"${h.capex_usd_per_server:,.0f} per {h.gpus_per_server}-GPU server, {h.server_kw:g} kW",
                     "observed": h.date, "age_days": age_days(h.date, today),
                     "stale": is_stale(h.date, today), "confidence": h.confidence, "source": h.source})
    return rows


class PriceTable(QWidget):
    """The table, the file it came from and the licence of the extracted rows."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.where = QLabel()
        self.where.setWordWrap(True)
        lay.addWidget(self.where)
        self.table = WholeRowTable(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([c.capitalize() for c in COLUMNS])
        self.table.setAccessibleName("Price file rows with their dates, ages and sources")
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        # long offers, ages and sources wrap in their share of the width instead of being cut with "…" or
        # pushing the columns after them out of view (a projected slide cannot scroll sideways)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)          # row numbers: width the sources need more
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        for j in (COLUMNS.index("observed"), COLUMNS.index("confidence")):
            header.setSectionResizeMode(j, QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        self._fitted_width = -1
        lay.addWidget(self.table, 1)
        self.licence = QLabel()
        self.licence.setWordWrap(True)
        self.licence.setObjectName("muted")
        lay.addWidget(self.licence)
        self._filled: tuple | None = None

    def show_book(self, book: PriceBook, today: date, where: str, used: set[str]) -> None:
        """Fill the table. Refilling hundreds of cells (each re-measured for its column) took 40 ms on
        the GUI thread, and a tour step or an edit mostly re-sends the same book: then only the ▶ marks
        of the rows in use change."""
        rows = book_rows(book, today)
        stale = sum(r["stale"] for r in rows)
        self.where.setText(f"<b>Prices from</b> {escape(where)} — {len(rows)} rows, {stale} older than a year "
                           f"(marked STALE). Rows marked ▶ are the ones the cost view uses now.")
        filled = (book, today, self.table.font().toString())     # the font: stale rows' bold cells
        if filled != self._filled:
            self._filled = filled
            self._fill(rows)
        for i, r in enumerate(rows):
            text = ("▶ " if r["id"] in used else "") + r["what"]
            if self.table.item(i, 0).text() != text:
                self.table.item(i, 0).setText(text)
        self.licence.setText(escape(book.licence))

    def _fill(self, rows: list[dict]) -> None:
        header = self.table.horizontalHeader()
        modes = [header.sectionResizeMode(j) for j in range(len(COLUMNS))]
        for j in range(len(COLUMNS)):
            header.setSectionResizeMode(j, QHeaderView.Fixed)       # measured once, below, not per cell
        self.table.setRowCount(len(rows))
        bold = QFont()
        bold.setBold(True)
        for i, r in enumerate(rows):
            values = (r["what"], age_words(r["observed"], self._filled[1]).split(", ", 1)[1], r["price"],
                      r["observed"], r["confidence"], r["kind"], r["source"])
            for j, v in enumerate(values):
                item = QTableWidgetItem(v)
                if r["stale"] and COLUMNS[j] == "age":
                    item.setFont(bold)
                item.setToolTip(r["source"] if COLUMNS[j] == "source" else v)
                self.table.setItem(i, j, item)
        for j, mode in enumerate(modes):
            header.setSectionResizeMode(j, mode)
        self._fitted_width = -1
        self._fit_columns()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Give the wrapping columns their share of the width and the rows the height of their lines,
        once per width (not per edit: an edit only moves the ▶ marks)."""
        width = self.table.viewport().width()
        if width == self._fitted_width or not self.table.rowCount():
            return
        self._fitted_width = width
        for name, share in WRAPPED_SHARE.items():
            self.table.setColumnWidth(COLUMNS.index(name), int(width * share))
        self.table.resizeRowsToContents()


class PriceEditor(QDialog):
    """The price file as JSON text; Save is refused, with the field named, until the text is valid."""

    def __init__(self, text: str, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit the price file")
        self.book: PriceBook | None = None
        lay = QVBoxLayout(self)
        hint = QLabel("Each row needs its observation date (YYYY-MM-DD or YYYY-MM), a source and a confidence. "
                      "Nothing changes until the whole file is valid.")
        hint.setWordWrap(True)
        lay.addWidget(hint)
        self.edit = QPlainTextEdit(text)
        self.edit.setLineWrapMode(QPlainTextEdit.NoWrap)
        mono = QFont("DejaVu Sans Mono")
        self.edit.setFont(mono)
        lay.addWidget(self.edit, 1)
        self.error = ErrorLabel()
        lay.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.try_accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(900, 640)
        self.setAttribute(Qt.WA_DeleteOnClose, False)

    def try_accept(self) -> None:
        try:
            self.book = parse_price_text(self.edit.toPlainText())
        except ValueError as exc:
            self.error.show_error(str(exc))
            return
        self.accept()


def user_price_path() -> Path:
    """Where an edited price file is kept: the app's configuration folder (EXPLORER_CONFIG_DIR in tests)."""
    folder = os.environ.get("EXPLORER_CONFIG_DIR") or QStandardPaths.writableLocation(QStandardPaths.AppConfigLocation)
    return Path(folder) / PRICE_FILE


class PricesView(QWidget):
    """The price file's buttons, its error line and its table. Each button asks through a signal (an
    opened file's path with ``open_requested``); the panel reads, checks, saves and shows the result."""

    edit_requested = Signal()
    open_requested = Signal(str)
    save_requested = Signal()
    restore_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        buttons = FlowLayout()                  # wraps rather than widening the panel
        edit = QPushButton("Edit the price file…")
        edit.clicked.connect(self.edit_requested)
        open_btn = QPushButton("Open a price file…")
        open_btn.clicked.connect(self._open_dialog)
        self.save_prices_btn = QPushButton("Save the price file as…")
        self.save_prices_btn.setToolTip("Write the prices in use (shipped or your edited copy) to a file of your choice")
        self.save_prices_btn.clicked.connect(self.save_requested)
        restore = QPushButton("Restore the shipped prices")
        restore.clicked.connect(self.restore_requested)
        for b in (edit, open_btn, self.save_prices_btn, restore):
            buttons.addWidget(b)
        lay.addLayout(buttons)
        self.price_error = ErrorLabel()
        lay.addWidget(self.price_error)
        self.price_table = PriceTable()
        lay.addWidget(self.price_table, 1)

    def _open_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open a price file", "", "Price files (*.json)")
        if name:
            self.open_requested.emit(name)

    def show_result(self, book: PriceBook, today: date, where: str, used: set[str]) -> None:
        """The book in use, where it came from, and the rows the cost view uses now (marked ▶)."""
        self.price_table.show_book(book, today, where, used)
