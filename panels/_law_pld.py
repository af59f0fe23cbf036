"""The law panel's "PLD defect" tab: the Art 7(2) circumstances as a worksheet (which way each points
for the user's case, and why), the rules that follow from the answers (engines.law.defect.weigh), and
the Art 11(1) exemptions explained one by one. The worksheet is the ``art7`` and
``later_improvement`` fields of the panel's ``Params``, so it saves with the view. A view: the
worksheet's edits leave through ``changed``; the panel binds :attr:`later` and hands it the weighing."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from engines.law import defect
from engines.law.params import Params
from explorer.binder import quiet
from explorer.ui.widgets import ErrorLabel

CHOICES = (("", "— not weighed —"), ("toward", "toward a defect"), ("against", "against a defect"),
           ("neutral", "neutral"))


class DefectWorksheet(QWidget):
    """The worksheet: ``changed`` carries its ``art7``; :meth:`show_result` shows a
    :class:`engines.law.defect.Weighing` (the panel puts the view in a scroll area)."""

    changed = Signal(dict)

    def __init__(self) -> None:
        super().__init__()
        self._filling = False
        lay = QVBoxLayout(self)
        intro = QLabel("PLD Art 7: defective = lacking the safety a person may expect or the law requires, on all "
                       "circumstances. Mark which way each points and why; the court weighs them together (no "
                       "score). Summaries in our words.")
        intro.setWordWrap(True)
        intro.setObjectName("muted")
        lay.addWidget(intro)
        self.table = QTableWidget(len(defect.CIRCUMSTANCES), 4)
        self.table.setHorizontalHeaderLabels(["Art 7(2)", "Circumstance", "In this case", "Why (note)"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)   # rows follow the widths
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
        lay.addWidget(self.later)
        self.reading = QLabel()
        self.reading.setWordWrap(True)
        self.reading.setTextFormat(Qt.RichText)
        self.reading.setAlignment(Qt.AlignLeft | Qt.AlignTop)   # a slide given to it reads from the top
        lay.addWidget(self.reading)
        self.error = ErrorLabel()
        lay.addWidget(self.error)
        self.exemptions = QLabel("<b>Exemptions, Art 11(1): each for the operator to prove</b><ul>" + "".join(
            f"<li><b>({e.letter})</b> {e.who}: {e.proves}" + (f". <i>Limit: {e.limits}</i>" if e.limits else "")
            + "</li>" for e in defect.EXEMPTIONS) + "</ul>")
        self.exemptions.setWordWrap(True)
        self.exemptions.setTextFormat(Qt.RichText)
        lay.addWidget(self.exemptions)
        self.no_waiver = QLabel("Liability cannot be limited or excluded by contract or national law (Art 15).")
        self.no_waiver.setWordWrap(True)      # its own line: the exemptions alone fit a 1280×800 slide
        lay.addWidget(self.no_waiver)
        lay.addStretch(1)
        self.named = (("art7_worksheet", self.table, "Art 7(2) circumstances as a worksheet"),
                      ("art7_reading", self.reading, "What follows from the worksheet (Art 7(3), 10(2), 11)"),
                      ("exemptions", self.exemptions, "The Art 11(1) exemptions one by one"))

    def weights(self) -> tuple[defect.Weight, ...]:
        out = []
        for row, c in enumerate(defect.CIRCUMSTANCES):
            stance, note = self.boxes[row].currentData(), self.table.item(row, 3).text().strip()
            if stance or note:
                out.append((c.letter, stance, note))
        return tuple(out)

    def _send(self) -> None:
        if not self._filling:
            self.changed.emit({"art7": self.weights()})

    def show_result(self, w: defect.Weighing) -> None:
        self.weighing = w
        self._filling = True
        with quiet(self.table, *self.boxes[:len(w.rows)]):
            for row, (_c, stance, note) in enumerate(w.rows):
                box = self.boxes[row]
                box.setCurrentIndex(max(0, box.findData(stance)))
                if self.table.item(row, 3).text() != note:
                    self.table.item(row, 3).setText(note)
        self._filling = False
        # the circumstances weighed, by name and with their notes: the reading is a tour's slide on its own,
        # where "(c)" alone would send the audience back to a table it cannot see
        stance = dict(CHOICES)
        weighed = [f"<li><b>({c.letter}) {escape(c.short)}</b>: {stance[s]}" + (f": {escape(note)}" if note else "")
                   + "</li>" for c, s, note in w.rows if s or note]
        self.reading.setText("<b>What follows</b><ul>" + "".join(
            f"<li><b>{art}</b>: {text}</li>" for art, text in w.lines) + "</ul>"
            + ("<b>On the worksheet</b><ul>" + "".join(weighed) + "</ul>" if weighed else ""))
