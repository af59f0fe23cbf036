"""Prices view of the self-hosting panel: every row of the price file with its age (stale rows marked in
words), its source and confidence, and the editor that validates a changed file before it is used."""
from __future__ import annotations

import logging
import os
from datetime import date
from html import escape
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHeaderView, QLabel, QPlainTextEdit,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.selfhost import PriceBook, age_days, age_words, dump_prices, is_stale, load_prices, parse_price_text
from explorer.exports import save_document, write_document
from explorer.files import FileProblem, atomic_write_text, read_text_limited
from explorer.ui.widgets import ErrorLabel

PRICE_FILE = "selfhost-prices.json"

COLUMNS = ("what", "age", "price", "observed", "confidence", "kind", "source")

log = logging.getLogger(__name__)


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
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([c.capitalize() for c in COLUMNS])
        self.table.setAccessibleName("Price file rows with their dates, ages and sources")
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.Interactive)    # long offers must not push the age away
        self.table.setColumnWidth(0, 300)
        lay.addWidget(self.table, 1)
        self.licence = QLabel()
        self.licence.setWordWrap(True)
        self.licence.setObjectName("muted")
        lay.addWidget(self.licence)

    def show_book(self, book: PriceBook, today: date, where: str, used: set[str]) -> None:
        rows = book_rows(book, today)
        stale = sum(r["stale"] for r in rows)
        self.where.setText(f"<b>Prices from</b> {escape(where)} — {len(rows)} rows, {stale} older than a year "
                           f"(marked STALE). Rows marked ▶ are the ones the cost view uses now.")
        self.table.setRowCount(len(rows))
        bold = QFont()
        bold.setBold(True)
        for i, r in enumerate(rows):
            mark = "▶ " if r["id"] in used else ""
            values = (mark + r["what"], age_words(r["observed"], today).split(", ", 1)[1], r["price"], r["observed"],
                      r["confidence"], r["kind"], r["source"])
            for j, v in enumerate(values):
                item = QTableWidgetItem(v)
                if r["stale"] and COLUMNS[j] == "age":
                    item.setFont(bold)
                item.setToolTip(r["source"] if COLUMNS[j] == "source" else v)
                self.table.setItem(i, j, item)
        self.licence.setText(escape(book.licence))


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


class PriceFileMixin:
    """The self-hosting panel's price file: the user's edited copy (checked before it is used, saved
    atomically), another file opened, or the shipped one restored. Needs ``price_error``, ``params``,
    ``ctx``, ``_fill_choices`` and ``_schedule`` on the panel."""

    def _load_book(self) -> tuple[PriceBook, str]:
        path = user_price_path()
        if path.exists():
            try:
                return load_prices(path), f"your edited file {path}"
            except Exception as exc:   # noqa: BLE001 — whatever is in the user's file, the panel opens
                log.warning("the price file %s is set aside: %s", path, exc)
                self._startup_problem = f"your price file {path} is not used (kept as it is): {exc}"
        return load_prices(), "the shipped file assets/selfhost/prices.json"

    def use_price_text(self, text: str, where: str) -> str | None:
        """Validate ``text`` as a price file; only if valid, save it as the user's copy and use it."""
        try:
            book = parse_price_text(text)
            self._check_choices(book)
        except ValueError as exc:
            self.price_error.show_error(f"{where}: {exc} — nothing changed.")
            return str(exc)
        try:
            atomic_write_text(user_price_path(), dump_prices(book), make_parents=True)
        except OSError as exc:
            self.price_error.show_error(f"cannot save the price file: {exc} — nothing changed.")
            return str(exc)
        self.price_error.show_error(None)
        self.book, self.book_where = book, f"your edited file {user_price_path()} (from {where})"
        self._fill_choices()
        self._schedule()
        return None

    def _check_choices(self, book: PriceBook) -> None:
        """A new file must still hold the rows the current view uses (else the view could not be drawn)."""
        book.api_row(self.params.api)
        if self.params.ownership != "own":
            book.rental_row(self.params.gpu_offer, self.ctx.scenario.value.gpu)

    def edit_prices(self) -> None:
        dlg = PriceEditor(dump_prices(self.book), self)
        if dlg.exec() and dlg.book is not None:
            self.use_price_text(dlg.edit.toPlainText(), "the editor")

    def _open_prices_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open a price file", "", "Price files (*.json)")
        if name:
            self.open_price_file(name)

    def export_prices(self, path: str | Path) -> Path:
        """Write the price file in use, as the editor shows it (atomically)."""
        return write_document(path, dump_prices(self.book))

    def _save_prices_dialog(self) -> None:
        save_document(self, "Save the price file", "prices.json", "Price files (*.json)", self.export_prices,
                      self.price_error.show_error)

    def open_price_file(self, path: str) -> str | None:
        try:
            text = read_text_limited(path, 2_000_000)
        except FileProblem as exc:
            self.price_error.show_error(f"{exc} — nothing changed.")
            return str(exc)
        return self.use_price_text(text, Path(path).name)

    def restore_prices(self) -> None:
        try:
            user_price_path().unlink(missing_ok=True)
        except OSError as exc:
            self.price_error.show_error(f"cannot remove {user_price_path()}: {exc}")
            return
        self.book, self.book_where = load_prices(), "the shipped file assets/selfhost/prices.json"
        self.price_error.show_error(None)
        self._fill_choices()
        self._schedule()
