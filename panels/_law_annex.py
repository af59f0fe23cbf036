"""The law panel's "Annex I checklist" tab: every CRA Annex I item with its point, our plain words and,
beside them, the point's Official Journal text as a quote; the user marks it met / not met / not
applicable with a note and an evidence reference. The answers are the ``annex_i`` field of the
panel's ``Params`` (saved with the view); engines.law.annex checks them, says what each still lacks
and writes the Markdown, HTML and CSV exports. A view: edits leave through ``changed``, export
requests through ``export_requested``; the panel hands it the checklist."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QLayout, QPushButton, QSplitter, QVBoxLayout, QWidget

from engines.law import annex
from engines.law.oj_text import SOURCE
from engines.law.params import Params
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import ErrorLabel
from panels._law_checklist import ChecklistTable, counts_html, detail_html, todo_html
from panels._law_tools import scrolled

CHOICES = (("", "— open —"), ("met", "met"), ("not-met", "not met"), ("n/a", "not applicable"))
COLS = ["Part", "In our words", "Status", "Note / justification", "Evidence", "Official Journal text"]
QUOTE_COL = 5


def _short_point(point: str) -> str:
    return point.replace("Annex I Part ", "")


def _quoted(item: annex.Item) -> str:
    """The point's own OJ words in quotation marks; "…" stands for the lead-in its part shares."""
    return ("“… " if item.point_text != item.quote else "“") + item.point_text + "”"


FILTERS = {"md": "Markdown (*.md)", "html": "HTML (*.html)", "csv": "CSV (*.csv)"}


def export_buttons(owner, bar: QLayout) -> dict:
    """Export .md/.html/.csv buttons on ``bar``: each emits ``owner.export_requested`` with its format
    (the panel asks for the file and writes it)."""
    buttons = {}
    for fmt in FILTERS:
        b = buttons[fmt] = QPushButton(f"Export .{fmt}…")
        b.clicked.connect(lambda _=False, fmt=fmt: owner.export_requested.emit(fmt))
        bar.addWidget(b)
    return buttons


class AnnexChecklist(QWidget):
    """The checklist tab: ``changed`` carries the table's ``annex_i``, ``export_requested`` a format;
    the panel binds :attr:`quotes` and shows :class:`engines.law.annex.Checklist` with :meth:`show_result`."""

    changed = Signal(dict)
    export_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
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
        self.quotes = QCheckBox(Params.spec("annex_quotes")["label"])
        bar.addWidget(self.quotes)
        self.export_btns = export_buttons(self, bar)
        lay.addLayout(bar)
        split = QSplitter(Qt.Vertical)
        rows = [(it.id, _short_point(it.point), it.short, it.asks,
                 [c for c in CHOICES if c[0] != "n/a" or it.may_be_na]) for it in annex.ITEMS]
        self.table = ChecklistTable(rows, COLS, lambda: self.changed.emit({"annex_i": self.table.answers()}), extra=1)
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
        self.named = (("annex_i", self, "Annex I as a working checklist"),
                      ("annex_table", self.table, "Annex I items with status, note and evidence"),
                      ("annex_quote", self.detail, "The selected item in our words and in the Official Journal's"),
                      ("annex_todo", self.todo, "What the answers still lack"))

    def answers(self) -> tuple[annex.Answer, ...]:
        """The table's answers as ``annex_i`` holds them (unanswered rows with no text are left out)."""
        return self.table.answers()

    def show_result(self, c: annex.Checklist, quotes: bool) -> None:
        """The checklist; ``quotes`` shows each item's Official Journal text beside it."""
        self.checklist = c
        self.table.setColumnHidden(QUOTE_COL, not quotes)
        self.table.show([(r.status, r.note, r.evidence, ("⚠ " if r.warning else "") + _short_point(r.item.point),
                          r.warning or r.item.asks, (_quoted(r.item),)) for r in c.rows])
        self.summary.setText(counts_html(c.counts))
        self.todo.setText(todo_html(c.warnings, "Every answered item has its note or evidence."))
        self._show_detail(max(0, self.table.currentRow()))

    def _show_detail(self, row: int) -> None:
        if 0 <= row < len(annex.ITEMS):
            it = annex.ITEMS[row]
            self.detail.setText(detail_html(it.point, it.asks, f"{SOURCE}, {it.point}", it.quote))

    def show_status(self, text: str) -> None:
        self.status.setText(text)
