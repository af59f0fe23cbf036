"""The law panel's "Annex VII file" tab: the CRA technical documentation (Art 31) as a checklist of its
own. For each point the user records whether the file holds it, a note and where it sits; beside that
the tab shows what the Annex I answers and the support period already supply and what they leave
open, the point's Official Journal text as a quote, and what a substantial modification starts
again. The answers are the ``annex_vii`` field of the panel's ``Params``; engines.law.annex_vii holds
the rules and writes the exports. A view: edits leave through ``changed``, export requests through
``export_requested``; the panel hands it the file's points."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from engines.law import annex_vii
from engines.law.oj_text import ANNEX_VII_LEAD, SOURCE
from explorer.ui.flow_layout import FlowLayout
from explorer.ui.widgets import ErrorLabel
from panels._law_annex import export_buttons
from panels._law_checklist import ChecklistTable, counts_html, detail_html, todo_html
from panels._law_tools import scrolled

CHOICES = (("", "— open —"), ("present", "in the file"), ("missing", "missing"), ("n/a", "not applicable"))
COLS = ["Point", "Holds (our words)", "Status", "Note", "Where in the file"]


class TechnicalFile(QWidget):
    """The Annex VII tab: ``changed`` carries the table's ``annex_vii``, ``export_requested`` a format;
    the panel shows engines.law.annex_vii.technical_file's points with :meth:`show_result`."""

    changed = Signal(dict)
    export_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.points: tuple = ()
        lay = QVBoxLayout(self)
        intro = QLabel("CRA Annex VII: what the technical documentation (Art 31) holds. Mark each point with "
                       "where it sits in your file; below the table, what the Annex I checklist and the "
                       "support period already give it. Only point 8 may be 'not applicable'.")
        intro.setWordWrap(True)
        intro.setObjectName("muted")
        lay.addWidget(intro)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        bar = FlowLayout()
        self.error = ErrorLabel()
        self.export_btns = export_buttons(self, bar)
        lay.addLayout(bar)
        split = QSplitter(Qt.Vertical)
        rows = [(p.id, f"VII({p.id})", p.short, p.what, [c for c in CHOICES if c[0] != "n/a" or p.may_be_na])
                for p in annex_vii.POINTS]
        self.table = ChecklistTable(rows, COLS, lambda: self.changed.emit({"annex_vii": self.table.answers()}))
        self.table.currentCellChanged.connect(lambda row, *_: self._show_detail(row))
        split.addWidget(self.table)
        detail = QWidget()
        dlay = QVBoxLayout(detail)
        dlay.setContentsMargins(0, 0, 0, 0)
        self.detail, self.todo, self.links, self.modification = QLabel(), QLabel(), QLabel(), QLabel()
        for w in (self.detail, self.todo, self.links, self.modification):
            w.setWordWrap(True)
            w.setTextFormat(Qt.RichText)
        self.detail.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.status = QLabel()
        self.status.setObjectName("muted")
        self.modification.setText("<b>A substantial modification starts it again</b><ul>" + "".join(
            f"<li><b>{a}</b>: {t}.</li>" for a, t in annex_vii.SUBSTANTIAL_MODIFICATION) + "</ul>")
        for w in (self.detail, self.todo, self.links, self.modification, self.error, self.status):
            dlay.addWidget(w)
        dlay.addStretch(1)
        split.addWidget(scrolled(detail))
        split.setSizes([700, 180])         # every point in sight in a 1280×800 window; the detail scrolls
        lay.addWidget(split, 1)
        self.named = (
            ("annex_vii", self, "Annex VII technical file, with answers of its own, linked to Annex I"),
            ("vii_table", self.table, "Annex VII points: status, note, where in the file, from Annex I"),
            ("vii_todo", self.todo, "What the technical file still lacks"),
            ("vii_links", self.links, "What the Annex I answers and the support period supply"),
            ("modification", self.modification, "What a substantial modification starts again"))

    def show_result(self, pts: tuple) -> None:
        """The technical file's points (engines.law.annex_vii.technical_file)."""
        self.points = pts
        self.table.show([(f.status, f.note, f.evidence, ("⚠ " if f.warning else "") + f"VII({f.point})",
                          f.warning or f.what, ()) for f in pts])
        self.links.setText("<b>From the Annex I checklist and the support period</b><ul>" + "".join(
            f"<li><b>VII({f.point})</b> " + html.escape("; ".join(x for x in (
                f.from_annex_i, f"open: {f.gaps}" if f.gaps else "") if x) or "nothing answered yet") + "</li>"
            for f in pts if f.point in annex_vii.LINKED) + "</ul>")
        self.summary.setText(counts_html(annex_vii.counts(pts)))
        self.todo.setText(todo_html((f"VII({f.point}): {f.warning}" for f in pts if f.warning),
                                    "Every answered point says where it sits in the file."))
        self._show_detail(max(0, self.table.currentRow()))

    def _show_detail(self, row: int) -> None:
        if 0 <= row < len(self.points):
            f = self.points[row]
            self.detail.setText(detail_html(f"Annex VII({f.point})", f.what, f"{SOURCE}, Annex VII",
                                            f"{ANNEX_VII_LEAD} … {f.quote}"))

    def show_status(self, text: str) -> None:
        self.status.setText(text)
