"""The law panel's "Annex I checklist" tab: every CRA Annex I item with its point and plain words; the
user marks it met / not met / not applicable with a note and an evidence reference. The answers are
the ``annex_i`` field of the panel's ``Params`` (saved with the view); engines.law.annex checks them,
says what each still lacks and writes the Markdown and CSV exports."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.core.errors import ValidationError
from engines.law import annex
from engines.law.tools import support_of
from explorer.files import atomic_write_text
from explorer.ui.widgets import ErrorLabel
from panels._law_tools import scrolled

CHOICES = (("", "— open —"), ("met", "met"), ("not-met", "not met"), ("n/a", "not applicable"))
COLS = ["Part", "Requirement", "Status", "Note / justification", "Evidence"]


def _short_point(point: str) -> str:
    return point.replace("Annex I Part ", "")


class AnnexChecklist:
    """Builds the checklist tab on ``panel.tabs`` and keeps it in step with ``panel.params.annex_i``."""

    def __init__(self, panel) -> None:
        self.panel = panel
        self._filling = False
        page = QWidget()
        lay = QVBoxLayout(page)
        intro = QLabel("CRA Annex I. Only Part I(2) items may be 'not applicable', with the justification the "
                       "risk assessment holds (Art 13(3)). Summaries in our words, not the article text.")
        intro.setWordWrap(True)
        intro.setObjectName("muted")
        lay.addWidget(intro)
        bar = QHBoxLayout()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        bar.addWidget(self.summary, 1)
        self.export_btns = {}
        for fmt in ("md", "html", "csv"):
            b = self.export_btns[fmt] = QPushButton(f"Export .{fmt}…")
            b.clicked.connect(lambda _=False, f=fmt: self._export_dialog(f))
            bar.addWidget(b)
        lay.addLayout(bar)
        split = QSplitter(Qt.Vertical)
        self.table = QTableWidget(len(annex.ITEMS), len(COLS))
        self.table.setHorizontalHeaderLabels(COLS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        head = self.table.horizontalHeader()
        for col, mode in enumerate((QHeaderView.ResizeToContents, QHeaderView.Stretch, QHeaderView.ResizeToContents,
                                    QHeaderView.Stretch, QHeaderView.Interactive)):
            head.setSectionResizeMode(col, mode)
        head.resizeSection(4, 120)
        self.table.setWordWrap(True)
        self.boxes: list[QComboBox] = []
        for row, item in enumerate(annex.ITEMS):
            for col, text in ((0, _short_point(item.point)), (1, item.short)):
                cell = QTableWidgetItem(text)
                cell.setFlags(Qt.ItemIsSelectable | Qt.ItemIsEnabled)
                cell.setToolTip(item.asks)
                self.table.setItem(row, col, cell)
            box = QComboBox()
            for value, label in CHOICES:
                if value != "n/a" or item.may_be_na:
                    box.addItem(label, value)
            box.setAccessibleName(f"Status of {item.point}")
            box.currentIndexChanged.connect(lambda _i: self._send())
            self.table.setCellWidget(row, 2, box)
            self.boxes.append(box)
            for col in (3, 4):
                self.table.setItem(row, col, QTableWidgetItem(""))
        self.table.itemChanged.connect(lambda cell: self._send() if cell.column() in (3, 4) else None)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_detail(row))
        split.addWidget(self.table)
        detail = QWidget()
        dlay = QVBoxLayout(detail)
        dlay.setContentsMargins(0, 0, 0, 0)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.RichText)
        self.todo = QLabel()
        self.todo.setWordWrap(True)
        self.todo.setTextFormat(Qt.RichText)
        self.error = ErrorLabel()
        self.status = QLabel()
        self.status.setObjectName("muted")
        self.vii = QLabel()
        self.vii.setWordWrap(True)
        self.vii.setTextFormat(Qt.RichText)
        for w in (self.detail, self.todo, self.vii, self.error, self.status):
            dlay.addWidget(w)
        dlay.addStretch(1)
        split.addWidget(scrolled(detail))
        split.setSizes([520, 200])
        lay.addWidget(split, 1)
        panel.tabs.addTab(page, "Annex I checklist")
        panel.name_view("annex_i", page, "Annex I as a working checklist")
        panel.name_view("annex_table", self.table, "Annex I items with status, note and evidence")
        panel.name_view("annex_todo", self.todo, "What the answers still lack")
        panel.name_view("annex_vii", self.vii, "Annex VII technical file, linked to the Annex I answers")
        panel.params_changed.connect(lambda _p: self.refresh())
        self.refresh()

    def answers(self) -> tuple[annex.Answer, ...]:
        """The table's answers as ``annex_i`` holds them (unanswered rows with no text are left out)."""
        out = []
        for row, item in enumerate(annex.ITEMS):
            status = self.boxes[row].currentData()
            note, evidence = (self.table.item(row, c).text().strip() for c in (3, 4))
            if status or note or evidence:          # an open row keeps the text typed so far
                out.append((item.id, status, note, evidence))
        return tuple(out)

    def _send(self) -> None:
        if self._filling:
            return
        self.error.show_error(self.panel.update_params(annex_i=self.answers()))

    def refresh(self) -> None:
        c = self.checklist = annex.checklist(self.panel.params.annex_i)
        self._filling = True
        self.table.blockSignals(True)
        for row, r in enumerate(c.rows):
            box = self.boxes[row]
            box.blockSignals(True)
            box.setCurrentIndex(max(0, box.findData(r.status)))
            box.blockSignals(False)
            for col, text in ((3, r.note), (4, r.evidence)):
                if self.table.item(row, col).text() != text:
                    self.table.item(row, col).setText(text)
            marker = self.table.item(row, 0)
            marker.setText(("⚠ " if r.warning else "") + _short_point(r.item.point))
            marker.setToolTip(r.warning or r.item.asks)
        self.table.resizeRowsToContents()
        self.table.blockSignals(False)
        self._filling = False
        self.summary.setText("<b>" + ", ".join(f"{n} {t}" for t, n in c.counts.items()) + "</b>")
        warnings = c.warnings
        self.todo.setText("<b>Still to do</b><ul>" + "".join(f"<li>{w}</li>" for w in warnings) + "</ul>"
                          if warnings else "Every answered item has its note or evidence.")
        self._show_detail(max(0, self.table.currentRow()))
        try:
            end = support_of(self.panel.params).end
        except ValidationError:
            end = None
        self.vii.setText("<b>Annex VII technical file (Art 31): what these answers already supply</b><ul>" + "".join(
            f"<li><b>VII {f.point}</b> {f.what}." + (f" <i>From the checklist</i>: {f.from_annex_i}." if f.from_annex_i
                                                     else "") + (f" <i>Open</i>: {f.gaps}." if f.gaps else "") + "</li>"
            for f in annex.technical_file(self.panel.params.annex_i, end)) + "</ul>"
            + "<b>A substantial modification starts it again</b><ul>" + "".join(
                f"<li><b>{a}</b>: {t}.</li>" for a, t in annex.SUBSTANTIAL_MODIFICATION) + "</ul>")

    def _show_detail(self, row: int) -> None:
        if 0 <= row < len(annex.ITEMS):
            it = annex.ITEMS[row]
            self.detail.setText(f"<b>{it.point}</b> (paraphrase): {it.asks}")

    # ---- export --------------------------------------------------------------------------
    def export(self, path: str | Path, fmt: str) -> Path:
        """Write the checklist as Markdown (``md``), HTML (``html``) or CSV (``csv``)."""
        path = Path(path)
        text = {"md": annex.to_markdown, "html": annex.to_html, "csv": annex.to_csv}[fmt](self.checklist)
        atomic_write_text(path, text)
        self.status.setText(f"Checklist written to {path}")
        return path

    def _export_dialog(self, fmt: str) -> None:
        filt = {"md": "Markdown (*.md)", "html": "HTML (*.html)", "csv": "CSV (*.csv)"}[fmt]
        name, _ = QFileDialog.getSaveFileName(self.panel, "Export Annex I checklist", f"annex-i-checklist.{fmt}", filt)
        if name:
            try:
                self.export(name, fmt)
            except OSError as exc:
                self.error.show_error(f"could not write {name}: {exc}")
