"""The law panel's "Deadline clocks" tab: the CRA Art 14 reporting clock and the PLD limitation,
expiry and distributor clocks, each a form beside its date-axis chart. A view: the panel binds its
check boxes and combo, its date edits report ISO text through ``changed``, and the panel hands it the
deadlines engines.law.clocks computes."""
from __future__ import annotations

from PySide6.QtCore import QDate, QDateTime, QTime, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDateEdit, QDateTimeEdit, QFormLayout, QGroupBox, QHBoxLayout,
                               QVBoxLayout, QWidget)

from engines.law.clocks import Clocks
from engines.law.params import Params, moment_text, parse_day, parse_moment
from explorer.binder import quiet
from explorer.ui.widgets import ElidedCombo, ErrorLabel
from panels._law_tools import label as _label
from panels._law_views import DeadlineTimeline

EVENTS = {"vulnerability": "Actively exploited vulnerability (Art 14(2))", "incident": "Severe incident (Art 14(4))"}


class ClockTab(QWidget):
    """The clocks tab. ``changed`` carries a date edit's new ISO text as a params change; the panel
    binds the event combo and the check boxes, shows its params with :meth:`show_inputs` and the
    clocks with :meth:`show_result`."""

    changed = Signal(dict)

    def __init__(self, theme) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)      # the tab's frame is margin enough: both clocks fit a 1280×800 window
        cra_box = QGroupBox("CRA Art 14 reporting clock")
        cra_lay = QHBoxLayout(cra_box)
        form = QFormLayout()
        self.event_box = ElidedCombo()
        for key, text in EVENTS.items():
            self.event_box.addItem(text, key)
        self.event_box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)   # not the panel's width
        self.event_box.setMinimumContentsLength(14)
        self.aware_edit, self.fix_edit, self.notified_edit = QDateTimeEdit(), QDateTimeEdit(), QDateTimeEdit()
        self.fix_check = QCheckBox(Params.spec("fix_available")["label"])
        self.notified_check = QCheckBox(Params.spec("notified")["label"])
        for w in (self.aware_edit, self.fix_edit, self.notified_edit):
            w.setCalendarPopup(True)
            w.setDisplayFormat("dd MMM yyyy HH:mm")
        form.addRow("Event:", self.event_box)
        form.addRow("Became aware at:", self.aware_edit)
        form.addRow(self.fix_check, self.fix_edit)
        form.addRow(self.notified_check, self.notified_edit)
        self.cra_result = _label()
        self.cra_error = ErrorLabel()
        form.addRow(self.cra_result)
        form.addRow(self.cra_error)
        cra_lay.addLayout(form, 2)
        self.cra_plot = DeadlineTimeline(theme, "Art 14 deadlines")
        cra_lay.addWidget(self.cra_plot, 3)
        lay.addWidget(cra_box, 1)

        pld_box = QGroupBox("PLD limitation and expiry clocks")
        pld_lay = QHBoxLayout(pld_box)
        pform = QFormLayout()
        pform.setVerticalSpacing(2)             # rows close: the result's lines fit the 1280×800 window
        self.placed_edit, self.knowledge_edit = QDateEdit(), QDateEdit()
        for w in (self.placed_edit, self.knowledge_edit):
            w.setCalendarPopup(True)
            w.setDisplayFormat("dd MMM yyyy")
        self.latent_check = QCheckBox(Params.spec("latent_injury")["label"])
        pform.addRow("Placed on the market:", self.placed_edit)
        pform.addRow("Knew damage, defect, operator:", self.knowledge_edit)
        pform.addRow(self.latent_check)
        self.request_check, self.request_edit = QCheckBox(Params.spec("distributor_request")["label"]), QDateEdit()
        self.request_edit.setCalendarPopup(True)
        self.request_edit.setDisplayFormat("dd MMM yyyy")
        pform.addRow(self.request_check, self.request_edit)
        self.pld_result = _label()
        self.pld_error = ErrorLabel()
        pform.addRow(self.pld_result)
        pform.addRow(self.pld_error)
        pld_lay.addLayout(pform, 2)
        self.pld_plot = DeadlineTimeline(theme, "PLD clocks")
        pld_lay.addWidget(self.pld_plot, 3)
        lay.addWidget(pld_box, 1)

        self.named = (("cra_clock", cra_box, "CRA Art 14 reporting clock"),
                      ("cra_timeline", self.cra_plot, "Art 14 deadlines on a date axis"),
                      ("cra_deadlines", self.cra_result, "Art 14 deadlines as text"),
                      ("aware", self.aware_edit, "When the manufacturer became aware"),
                      ("pld_clock", pld_box, "PLD limitation and expiry clocks"),
                      ("pld_timeline", self.pld_plot, "PLD clocks on a date axis"),
                      ("pld_deadlines", self.pld_result, "PLD deadlines as text"))
        """(name, widget, title) of the views a tour may point at; the panel names them."""

        # the date edits send ISO text: the walk's moves and these are the view's params
        self.moment_edits = {"aware": self.aware_edit, "fix_at": self.fix_edit, "notified_at": self.notified_edit}
        self.day_edits = {"placed": self.placed_edit, "knowledge": self.knowledge_edit,
                          "request_day": self.request_edit}
        for name, w in self.moment_edits.items():
            w.dateTimeChanged.connect(lambda v, n=name: self._set_clock(
                n, moment_text(v.toPython().replace(tzinfo=None)), self.cra_error))
        for name, w in self.day_edits.items():
            w.dateChanged.connect(lambda v, n=name: self._set_clock(n, v.toPython().isoformat(), self.pld_error))

    def _set_clock(self, name: str, value: str, error: ErrorLabel) -> None:
        self._error = error
        self.changed.emit({name: value})

    def show_edit_error(self, message: str | None) -> None:
        """The panel's answer to the last ``changed``: a refused date shows beside its clock."""
        if message:
            getattr(self, "_error", self.cra_error).show_error(message)

    def show_inputs(self, p: Params) -> None:
        """Write the params' moments and days into the date edits without their signals firing."""
        for name, w in self.moment_edits.items():
            m = parse_moment(getattr(p, name), name)
            with quiet(w):
                w.setDateTime(QDateTime(QDate(m.year, m.month, m.day), QTime(m.hour, m.minute, m.second)))
        for name, w in self.day_edits.items():
            d = parse_day(getattr(p, name), name)
            with quiet(w):
                w.setDate(QDate(d.year, d.month, d.day))
        self.fix_edit.setEnabled(p.fix_available)
        self.notified_edit.setEnabled(p.notified)
        self.request_edit.setEnabled(p.distributor_request)

    def show_result(self, c: Clocks) -> None:
        for clock, error, error_label, result, plot in (
                (c.cra, c.cra_error, self.cra_error, self.cra_result, self.cra_plot),
                (c.pld, c.pld_error, self.pld_error, self.pld_result, self.pld_plot)):
            error_label.show_error(error)
            result.setText("<br>".join(clock.lines) if clock else "")
            plot.draw(list(clock.marks) if clock else [])

    def apply_theme(self, theme) -> None:
        for plot in (self.cra_plot, self.pld_plot):
            plot.theme = theme
