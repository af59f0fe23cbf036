"""The law panel's "Annex I checklist" tab: every CRA Annex I item with its point, our plain words and,
beside them, the point's Official Journal text as a quote; the user marks it met / not met / not
applicable with a note and an evidence reference. The answers are the ``annex_i`` field of the
panel's ``Params`` (saved with the view); engines.law.annex checks them, says what each still lacks
and writes the Markdown, HTML and CSV exports."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QLayout, QPushButton, QSplitter, QVBoxLayout, QWidget

from engines.law import annex
from engines.law.oj_text import SOURCE
from explorer.binder import ParamBinder
from explorer.exports import save_document, write_document
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import ErrorLabel
from panels._law_checklist import ChecklistTable
from panels._law_tools import scrolled

CHOICES = (("", "— open —"), ("met", "met"), ("not-met", "not met"), ("n/a", "not applicable"))
COLS = ["Part", "In our words", "Status", "Note / justification", "Evidence", "Official Journal text"]
QUOTE_COL = 5


def _short_point(point: str) -> str:
    return point.replace("Annex I Part ", "")


def _quoted(item: annex.Item) -> str:
    """The point's own OJ words in quotation marks; "…" stands for the lead-in its part shares."""
    return ("“… " if item.point_text != item.quote else "“") + item.point_text + "”"


def export_buttons(owner, bar: QLayout, what: str) -> dict:
    """Export .md/.html/.csv buttons on ``bar``: each asks for a file through the one document export
    (:func:`explorer.exports.save_document`) and calls ``owner.export``."""
    buttons = {}
    filters = {"md": "Markdown (*.md)", "html": "HTML (*.html)", "csv": "CSV (*.csv)"}
    for fmt, filt in filters.items():
        b = buttons[fmt] = QPushButton(f"Export .{fmt}…")

        def ask(_=False, fmt=fmt, filt=filt) -> None:
            save_document(owner.panel, f"Export {what}", f"{what.lower().replace(' ', '-')}.{fmt}", filt,
                          lambda path: owner.export(path, fmt), owner.error.show_error)
        b.clicked.connect(ask)
        bar.addWidget(b)
    return buttons


class AnnexChecklist:
    """Builds the checklist tab on ``panel.tabs`` and keeps it in step with ``panel.params.annex_i``."""

    def __init__(self, panel) -> None:
        self.panel = panel
        page = QWidget()
        lay = QVBoxLayout(page)
        intro = QLabel("CRA Annex I. Only Part I(2) items may be 'not applicable', with the justification the "
                       "risk assessment and technical file hold (Art 13(3)-(4)). 'In our words' is our summary; the "
                       "Official Journal text (Reg. (EU) 2024/2847) is quoted below the table, or beside each item, "
                       "where '…' stands for the words that open its part.")
        intro.setWordWrap(True)
        intro.setObjectName("muted")
        lay.addWidget(intro)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        bar = FlowLayout()
        self.quotes = QCheckBox(panel.Params.spec("annex_quotes")["label"])
        self.quotes_binder = ParamBinder(panel, {"annex_quotes": self.quotes},
                                         error=lambda text: self.error.show_error(text))
        bar.addWidget(self.quotes)
        self.export_btns = export_buttons(self, bar, "Annex I checklist")
        lay.addLayout(bar)
        split = QSplitter(Qt.Vertical)
        rows = [(it.id, _short_point(it.point), it.short, it.asks,
                 [c for c in CHOICES if c[0] != "n/a" or it.may_be_na]) for it in annex.ITEMS]
        self.table = ChecklistTable(rows, COLS, lambda: self._send(annex_i=self.table.answers()), extra=1)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_detail(row))
        split.addWidget(self.table)
        detail = QWidget()
        dlay = QVBoxLayout(detail)
        dlay.setContentsMargins(0, 0, 0, 0)
        self.detail, self.todo = QLabel(), QLabel()
        for w in (self.detail, self.todo):
            w.setWordWrap(True)
            w.setTextFormat(Qt.RichText)
        self.detail.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.error = ErrorLabel()
        self.status = QLabel()
        self.status.setObjectName("muted")
        for w in (self.detail, self.todo, self.error, self.status):
            dlay.addWidget(w)
        dlay.addStretch(1)
        split.addWidget(scrolled(detail))
        split.setSizes([520, 200])
        lay.addWidget(split, 1)
        panel.tabs.addTab(page, "Annex I checklist")
        panel.name_view("annex_i", page, "Annex I as a working checklist")
        panel.name_view("annex_table", self.table, "Annex I items with status, note and evidence")
        panel.name_view("annex_quote", self.detail, "The selected item in our words and in the Official Journal's")
        panel.name_view("annex_todo", self.todo, "What the answers still lack")
        panel.params_changed.connect(lambda _p: self.refresh())
        self.refresh()

    def answers(self) -> tuple[annex.Answer, ...]:
        """The table's answers as ``annex_i`` holds them (unanswered rows with no text are left out)."""
        return self.table.answers()

    def _send(self, **changes) -> None:
        self.error.show_error(self.panel.update_params(**changes))

    def refresh(self) -> None:
        p = self.panel.params
        c = self.checklist = annex.checklist(p.annex_i)
        self.table.setColumnHidden(QUOTE_COL, not p.annex_quotes)
        self.table.show([(r.status, r.note, r.evidence, ("⚠ " if r.warning else "") + _short_point(r.item.point),
                          r.warning or r.item.asks, (_quoted(r.item),)) for r in c.rows])
        self.summary.setText("<b>" + ", ".join(f"{n} {t}" for t, n in c.counts.items()) + "</b>")
        warnings = c.warnings
        self.todo.setText("<b>Still to do</b><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
                          + "</ul>" if warnings else "Every answered item has its note or evidence.")
        self._show_detail(max(0, self.table.currentRow()))

    def _show_detail(self, row: int) -> None:
        if 0 <= row < len(annex.ITEMS):
            it = annex.ITEMS[row]
            self.detail.setText(f"<b>{it.point}</b>, in our words: {html.escape(it.asks)}<br><br>"
                                f"<b>Article text</b> ({SOURCE}, {it.point}):<br>"
                                f"<i>“{html.escape(it.quote)}”</i>")

    # ---- export --------------------------------------------------------------------------
    def export(self, path: str | Path, fmt: str) -> Path:
        """Write the checklist as Markdown (``md``), HTML (``html``) or CSV (``csv``)."""
        path = Path(path)
        text = {"md": annex.to_markdown, "html": annex.to_html, "csv": annex.to_csv}[fmt](self.checklist)
        write_document(path, text)
        self.status.setText(f"Checklist written to {path}")
        return path
