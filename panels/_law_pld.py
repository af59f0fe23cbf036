"""The law panel's "PLD defect" tab: the Art 7(2) circumstances as a worksheet (which way each points
for the user's case, and why), the rules that follow from the answers (engines.law.defect.weigh), and
the Art 11(1) exemptions explained one by one. The worksheet is the ``art7`` and
``later_improvement`` fields of the panel's ``Params``, so it saves with the view."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from engines.law import defect
from engines.law.params import Params
from explorer.binder import ParamBinder, quiet
from explorer.ui.widgets import ErrorLabel
from panels._law_tools import scrolled

CHOICES = (("", "— not weighed —"), ("toward", "toward a defect"), ("against", "against a defect"),
           ("neutral", "neutral"))


class DefectWorksheet:
    """Builds the tab on ``panel.tabs`` and keeps it in step with ``panel.params``."""

    def __init__(self, panel) -> None:
        self.panel = panel
        self._filling = False
        page = QWidget()
        lay = QVBoxLayout(page)
        intro = QLabel("PLD Art 7: defective = lacking the safety a person may expect or the law requires, on all "
                       "circumstances. Mark which way each points and why; the court weighs them together (no "
                       "score). Summaries in our words.")
        intro.setWordWrap(True)
        intro.setObjectName("muted")
        lay.addWidget(intro)
        self.table = QTableWidget(len(defect.CIRCUMSTANCES), 4)
        self.table.setHorizontalHeaderLabels(["Art 7(2)", "Circumstance", "In this case", "Why (note)"])
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        head = self.table.horizontalHeader()
        for col, mode in enumerate((QHeaderView.ResizeToContents, QHeaderView.Stretch, QHeaderView.ResizeToContents,
                                    QHeaderView.Stretch)):
            head.setSectionResizeMode(col, mode)
        self.boxes: list[QComboBox] = []
        for row, c in enumerate(defect.CIRCUMSTANCES):
            for col, text in ((0, f"({c.letter})"), (1, c.short)):
                cell = QTableWidgetItem(text)
                cell.setFlags(Qt.ItemIsEnabled)
                cell.setToolTip(c.for_software)
                self.table.setItem(row, col, cell)
            box = QComboBox()
            for value, label in CHOICES:
                box.addItem(label, value)
            box.setAccessibleName(f"Art 7(2)({c.letter}) in this case")
            box.currentIndexChanged.connect(lambda _i: self._send())
            self.table.setCellWidget(row, 2, box)
            self.boxes.append(box)
            self.table.setItem(row, 3, QTableWidgetItem(""))
        self.table.itemChanged.connect(lambda cell: self._send() if cell.column() == 3 else None)
        self.table.setMinimumHeight(420)
        lay.addWidget(self.table)
        self.later = QCheckBox(Params.spec("later_improvement")["label"])
        self.later_binder = ParamBinder(panel, {"later_improvement": self.later},
                                        error=lambda text: self.error.show_error(text))
        lay.addWidget(self.later)
        self.reading = QLabel()
        self.reading.setWordWrap(True)
        self.reading.setTextFormat(Qt.RichText)
        lay.addWidget(self.reading)
        self.error = ErrorLabel()
        lay.addWidget(self.error)
        self.exemptions = QLabel("<b>Exemptions, Art 11(1): each for the operator to prove</b><ul>" + "".join(
            f"<li><b>({e.letter})</b> {e.who}: {e.proves}" + (f". <i>Limit: {e.limits}</i>" if e.limits else "")
            + "</li>" for e in defect.EXEMPTIONS) + "</ul>Liability cannot be limited or excluded by contract "
            "or national law (Art 15).")
        self.exemptions.setWordWrap(True)
        self.exemptions.setTextFormat(Qt.RichText)
        lay.addWidget(self.exemptions)
        lay.addStretch(1)
        panel.tabs.addTab(scrolled(page), "PLD defect")
        panel.name_view("art7_worksheet", self.table, "Art 7(2) circumstances as a worksheet")
        panel.name_view("art7_reading", self.reading, "What follows from the worksheet (Art 7(3), 10(2), 11)")
        panel.name_view("exemptions", self.exemptions, "The Art 11(1) exemptions one by one")
        panel.params_changed.connect(lambda _p: self.refresh())
        self.refresh()

    def weights(self) -> tuple[defect.Weight, ...]:
        out = []
        for row, c in enumerate(defect.CIRCUMSTANCES):
            stance, note = self.boxes[row].currentData(), self.table.item(row, 3).text().strip()
            if stance or note:
                out.append((c.letter, stance, note))
        return tuple(out)

    def _send(self) -> None:
        if not self._filling:
            self.error.show_error(self.panel.update_params(art7=self.weights()))

    def refresh(self) -> None:
        p = self.panel.params
        w = self.weighing = defect.weigh(p.art7, p.later_improvement)
        self._filling = True
        with quiet(self.table, *self.boxes[:len(w.rows)]):
            for row, (_c, stance, note) in enumerate(w.rows):
                box = self.boxes[row]
                box.setCurrentIndex(max(0, box.findData(stance)))
                if self.table.item(row, 3).text() != note:
                    self.table.item(row, 3).setText(note)
            self.table.resizeRowsToContents()
        self._filling = False
        self.reading.setText("<b>What follows</b><ul>" + "".join(
            f"<li><b>{art}</b>: {text}</li>" for art, text in w.lines) + "</ul>")
