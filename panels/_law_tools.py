"""The law panel's working tools (views only; every number comes from engines.law.tools):
"Support and fines" (Art 13(8)-(9), Art 64) and "Four clocks" (CRA Art 14, NIS2 Art 23, GDPR Art 33,
DORA Art 19). Their inputs are fields of the panel's ``Params``, so a saved view or a tour step
reopens them as they were: the panel binds each view's ``bound`` controls, takes the edits the
others send through ``changed`` and hands each view the :class:`engines.law.tools.Tools` result.
The Annex I checklist is in ``_law_annex``."""
from __future__ import annotations

from datetime import date

import pyqtgraph as pg
from PySide6.QtCore import QDate, QDateTime, QSize, QTime, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QBoxLayout, QCheckBox, QComboBox, QDateEdit, QDateTimeEdit,
                               QDoubleSpinBox, QFormLayout, QGridLayout, QGroupBox, QLabel, QLineEdit,
                               QScrollArea, QTableWidgetItem, QVBoxLayout, QWidget)

from engines.law import reporting, support
from engines.law.clocks import local
from engines.law.params import REGIME_FIELDS, Params, moment_text, parse_day, parse_moment
from engines.law.tools import Tools, support_marks
from explorer.binder import param_slider, quiet
from explorer.ui.pool import kept_items
from explorer.ui.whole_rows import WRAP_MIN_PX, WholeRowTable
from explorer.ui.widgets import ErrorLabel, legend_below, make_plot, pen
from panels._law_views import DeadlineTimeline

TIER_LABELS = {t: f"{para}: {what.split(':')[0]}" for t, (_f, _s, para, what) in support.FINE_TIERS.items()}
ENTERPRISE_LABELS = {"micro": "micro enterprise", "small": "small enterprise", "medium": "medium enterprise",
                     "large": "large enterprise"}
KIND_LABELS = {"vulnerability": "Actively exploited vulnerability", "incident": "Incident"}
FIELDS = frozenset({"cra_placed", "expected_use_years", "updates", "turnover_m_eur", "fine_tier", "enterprise",
                    "early_warning_only", "steward", "aware", "fix_available", "fix_at", "event", "classified_at",
                    *REGIME_FIELDS})


def label(text: str = "", wrap: bool = True, name: str = "") -> QLabel:
    """Selectable text for the law panel's cards and tools (the panel's modules share it)."""
    lab = QLabel(text)
    lab.setWordWrap(wrap)
    lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if name:
        lab.setObjectName(name)
    return lab


WALK_FIELDS = frozenset({"tree", "answers", "example"})   # the decision walk's, none of the tools'
SUPPORT_FIELDS = frozenset({"cra_placed", "expected_use_years", "updates"})
FINE_FIELDS = frozenset({"turnover_m_eur", "fine_tier", "enterprise", "early_warning_only", "steward"})

class _Flow(QBoxLayout):
    """Side by side when the panel is wide, one above the other when it is narrow (docks open), so
    the tools never set the panel's minimum width.

    The row needs more width than the column, and the page's scroll area sizes the page from its
    minimum: had the row's width been the minimum, a page just under it was widened past its view,
    which made it a row again, which the area then narrowed, over and over (closing a tour at F3's
    last step when presenting recursed until the stack overflowed). So the minimum width is always
    the column's, the row is taken only where it fits, and the switch has a band wider than a
    scroll bar (a bar that comes and goes cannot flip it)."""

    WIDE = 900
    BAND = 24

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(QBoxLayout.TopToBottom, parent)

    def _items(self) -> list:
        items = (self.itemAt(i) for i in range(self.count()))
        return [item for item in items if not item.isEmpty()]

    def minimumSize(self) -> QSize:  # noqa: N802 (Qt name)
        m = self.contentsMargins()
        widest = max((item.minimumSize().width() for item in self._items()), default=0)
        return QSize(widest + m.left() + m.right(), super().minimumSize().height())

    def _row_width(self) -> int:
        m, items = self.contentsMargins(), self._items()
        gaps = max(0, len(items) - 1) * max(0, self.spacing())
        return sum(item.minimumSize().width() for item in items) + gaps + m.left() + m.right()

    def setGeometry(self, rect) -> None:  # noqa: N802 (Qt name)
        row = self.direction() == QBoxLayout.LeftToRight
        need = max(self._row_width(), self.WIDE - self.BAND if row else self.WIDE + self.BAND)
        want = QBoxLayout.LeftToRight if rect.width() >= need else QBoxLayout.TopToBottom
        if self.direction() != want:
            self.setDirection(want)
        super().setGeometry(rect)


def scrolled(page: QWidget) -> QScrollArea:
    """``page`` in a scroll area that scrolls up and down only: its minimum width stays the tab's."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    area.setWidget(page)
    return area


def euros(x: float) -> str:
    return f"€{x / 1e9:,.2f} bn" if x >= 1e9 else f"€{x / 1e6:,.1f} M"


def _meur(values) -> list[float]:
    """Euros as the fine chart's axes show them (M€)."""
    return [v / 1e6 for v in values]


def _set_qdt(w: QDateTimeEdit, text: str, name: str) -> None:
    m = parse_moment(text, name)
    with quiet(w):
        w.setDateTime(QDateTime(QDate(m.year, m.month, m.day), QTime(m.hour, m.minute)))


class SupportFines(QWidget):
    """The "Support and fines" tab: the support period with its updates, and the Art 64 fine."""

    changed = Signal(dict)

    def __init__(self, theme) -> None:
        super().__init__()
        self._updates: tuple[str, ...] = ()
        self._fine_lines: list = []            # the tier lines, kept while their names stay (see show_fine)
        self._fine_dot = self._fine_label = None
        lay = QVBoxLayout(self)                 # stacked: each group is form + text beside its chart
        box = QGroupBox("Support period and updates (CRA Art 13(8)-(9))")
        row = _Flow(box)
        col = QVBoxLayout()
        row.addLayout(col, 2)
        form = QFormLayout()
        self.placed_edit = QDateEdit()
        self.placed_edit.setCalendarPopup(True)
        self.placed_edit.setDisplayFormat("dd MMM yyyy")
        self.placed_edit.dateChanged.connect(lambda d: self.changed.emit({"cra_placed": d.toPython().isoformat()}))
        self.use_slider = param_slider(Params, "expected_use_years")
        self.updates_edit = QLineEdit()
        self.updates_edit.setPlaceholderText("2028-06-01, 2031-03-15")
        self.updates_edit.setToolTip("Issue dates of the security updates, ISO dates separated by commas")
        self.updates_edit.editingFinished.connect(self._send_updates)
        form.addRow("Placed on the market:", self.placed_edit)
        form.addRow(self.use_slider)
        form.addRow("Security updates issued:", self.updates_edit)
        col.addLayout(form)
        self.support_text = label()
        self.support_text.setTextFormat(Qt.RichText)
        col.addWidget(self.support_text)
        col.addStretch(1)
        self.support_plot = DeadlineTimeline(theme, "Support period and update availability")
        self.support_plot.setMinimumHeight(220)
        row.addWidget(self.support_plot, 3)
        lay.addWidget(box, 1)

        fbox = QGroupBox("Maximum administrative fine (CRA Art 64)")
        frow = _Flow(fbox)
        fcol = QVBoxLayout()
        frow.addLayout(fcol, 3)     # the reading is long, the chart reads at 40 %: the box fits a slide
        fform = QFormLayout()
        self.turnover = QDoubleSpinBox()
        spec = Params.spec("turnover_m_eur")
        self.turnover.setRange(spec["lo"], spec["hi"])
        self.turnover.setDecimals(spec["decimals"])
        self.turnover.setSingleStep(spec["step"])
        self.turnover.setSuffix(" M€")
        self.turnover.setToolTip(spec["tip"])
        self.tier_box, self.size_box = QComboBox(), QComboBox()
        for box_, labels in ((self.tier_box, TIER_LABELS), (self.size_box, ENTERPRISE_LABELS)):
            box_.addItems(list(labels.values()))
            box_.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box_.setMinimumContentsLength(14)
        self.ew_check = QCheckBox(Params.spec("early_warning_only")["label"])
        self.ew_check.setToolTip("The only breach is the 24-hour early warning of Art 14(2)(a) or 14(4)(a)")
        self.steward_check = QCheckBox(Params.spec("steward")["label"])
        self.steward_check.setToolTip("Open-source software steward (Art 3(14), Art 24)")
        fform.addRow("Worldwide annual turnover:", self.turnover)
        fform.addRow("Infringement:", self.tier_box)
        fform.addRow("Enterprise:", self.size_box)
        fform.addRow(self.ew_check)
        fform.addRow(self.steward_check)
        fcol.addLayout(fform)
        self.fine_text = label()
        self.fine_text.setTextFormat(Qt.RichText)
        fcol.addWidget(self.fine_text)
        self.fine_plot = make_plot(theme, "Maximum fine against turnover", "maximum fine (M€)", "turnover (M€)")
        legend_below(self.fine_plot, 3)
        self.error = ErrorLabel()
        fcol.addWidget(self.error)
        fcol.addStretch(1)
        self.fine_plot.setMinimumHeight(260)
        pcol = QVBoxLayout()             # under the chart, so the reading beside it stays short enough for a slide
        pcol.addWidget(self.fine_plot, 1)
        pcol.addWidget(label("Member States lay down the fines within these ceilings (Art 64(1)) and weigh each "
                             "case's circumstances (Art 64(5)).", name="muted"))
        frow.addLayout(pcol, 2)
        lay.addWidget(fbox, 1)
        self.named = (("support", box, "Support period and update shelf life"),
                      ("support_timeline", self.support_plot, "Support period on a date axis"),
                      ("fine", fbox, "Maximum fine: the three tiers and the exemptions"),
                      ("fine_plot", self.fine_plot, "Maximum fine against turnover, per tier"))
        self.bound = {"expected_use_years": self.use_slider, "turnover_m_eur": self.turnover,
                      "fine_tier": self.tier_box, "enterprise": self.size_box, "early_warning_only": self.ew_check,
                      "steward": self.steward_check}
        """Controls the panel binds to its params, by field."""

    def _send_updates(self) -> None:
        texts = tuple(t.strip() for t in self.updates_edit.text().split(",") if t.strip())
        if texts != self._updates:
            self.changed.emit({"updates": texts})

    def show_inputs(self, p: Params) -> None:
        """The params' date and update list in the edits that are not bound (without their signals)."""
        d = parse_day(p.cra_placed, "cra_placed")
        with quiet(self.placed_edit):
            self.placed_edit.setDate(QDate(d.year, d.month, d.day))
        self._updates = p.updates
        if not self.updates_edit.hasFocus():
            self.updates_edit.setText(", ".join(p.updates))
        self.ew_check.setEnabled(p.fine_tier == 1)


    def show_support(self, t: Tools) -> None:
        s = t.support
        if s is None:
            self.support_text.setText(f"<span>⚠ {t.support_error}</span>")
            self.support_plot.draw([])
            return
        rows = "".join(f"<li>Update {i} issued {u.issued:%d %b %Y}: available until <b>{u.until:%d %b %Y}</b> "
                       f"({u.basis})</li>" for i, u in enumerate(s.updates, 1))
        self.support_text.setText(f"<b>{s.lines[0]}</b><br>{s.lines[1]}" + (f"<ul>{rows}</ul>" if rows else ""))
        self.support_plot.draw(list(support_marks(s)))

    def show_fine(self, t: Tools, th) -> None:
        """The tiers' lines, the dot and its label are made once and moved after: a tour step that
        changes the enterprise or the exemption redraws the chart without building it again."""
        f = t.fine
        if f is None:
            self.fine_text.setText(f"⚠ {t.fine_error}")
            self.fine_plot.clear()
            return
        head = (f"<b>No fine: {f.exempt}</b>" if f.exempt else f"<b>Maximum fine: {euros(f.max_eur)}</b>")
        self.fine_text.setText(
            f"{head}<br>{f.basis}: {f.what}.<br>The higher of {euros(f.fixed_eur)} and {f.share:.1%} of "
            f"{euros(f.turnover_eur)} = {euros(f.share_eur)}; the share decides above "
            f"{euros(f.crossover_eur)} turnover." + (f"<br><i>{f.note}</i>" if f.note else ""))
        dashes = (Qt.SolidLine, Qt.DashLine, Qt.DotLine)
        c = t.fine_curve
        names = []                                   # the legend says each tier's two arms (fixed sum, share)
        for line in c.tiers:
            fixed, share = support.FINE_TIERS[line.tier][:2]
            names.append(f"tier {line.tier}, {line.paragraph}: €{fixed / 1e6:g} M or {share:.1%}")
        def build() -> list:
            items = [self.fine_plot.plot(name=name) for name in names]
            items += [pg.ScatterPlotItem(size=14, symbol="o"), pg.TextItem()]
            for item in items[-2:]:
                self.fine_plot.addItem(item)
            return items

        *self._fine_lines, self._fine_dot, self._fine_label = kept_items(self.fine_plot, tuple(names), build)
        for k, (line, item) in enumerate(zip(c.tiers, self._fine_lines)):
            item.setData(_meur(c.turnover_eur), _meur(line.max_eur), pen=pen(th.palette[line.tier], 3, dashes[k]))
        x, y = _meur((f.turnover_eur, f.max_eur))          # max_eur is 0 when exempt
        self._fine_dot.setData([x], [y], brush=pg.mkBrush(th.palette[5]), pen=pen(th.fg, 1))
        right = x > (c.turnover_eur[0] + c.turnover_eur[-1]) / 2e6       # right half: the text to the dot's left
        # above the dot on its tier line; an exempt dot sits under every line: beside it, clear of them
        gap = "  " if y == 0 else ""                                       # and of the dot
        self._fine_label.setText(f"{gap}you: {euros(f.max_eur) if f.max_eur else 'exempt'}{gap}", color=th.fg)
        self._fine_label.setAnchor((1 if right else 0, 0.5 if y == 0 else 1))
        self._fine_label.setPos(x, y)

    def apply_theme(self, theme) -> None:
        self.support_plot.theme = theme


class _ClockTable(WholeRowTable):
    """The four clocks' deadlines: the date and report columns stay whole; recipient, start and basis
    share what width is left and wrap, so every column stays in view on a slide (no sideways scroll)."""

    WRAPS = (2, 3, 4)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.share_width()

    def share_width(self) -> None:
        self.resizeColumnsToContents()
        spare = self.viewport().width() - sum(self.columnWidth(c) for c in range(self.columnCount())
                                              if c not in self.WRAPS)
        want = {c: self.columnWidth(c) for c in self.WRAPS}
        if 0 < spare < sum(want.values()):         # in proportion to what each would take unwrapped
            for c, w in want.items():
                self.setColumnWidth(c, max(WRAP_MIN_PX, spare * w // sum(want.values())))
        self.resizeRowsToContents()


class FourClocks(QWidget):
    """The "Four clocks" tab: one incident on the CRA, NIS2, GDPR and DORA reporting clocks."""

    changed = Signal(dict)

    def __init__(self, theme) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        top = _Flow()
        form = QFormLayout()
        self.regime_checks = {f: QCheckBox(Params.spec(f)["label"]) for f in REGIME_FIELDS}
        grid = QGridLayout()
        for i, c in enumerate(self.regime_checks.values()):
            grid.addWidget(c, i // 2, i % 2)
        form.addRow("Regimes:", grid)
        self.kind_box = QComboBox()
        self.kind_box.addItems(list(KIND_LABELS.values()))
        self.aware_edit, self.classified_edit, self.fix_edit = QDateTimeEdit(), QDateTimeEdit(), QDateTimeEdit()
        self.fix_check = QCheckBox("Fix / mitigation available at:")
        self.moment_edits = {"aware": self.aware_edit, "classified_at": self.classified_edit, "fix_at": self.fix_edit}
        for name, w in self.moment_edits.items():
            w.setCalendarPopup(True)
            w.setDisplayFormat("dd MMM yyyy HH:mm")
            w.dateTimeChanged.connect(lambda v, n=name: self.changed.emit(
                {n: moment_text(v.toPython().replace(tzinfo=None))}))
        form.addRow("CRA event:", self.kind_box)
        form.addRow("Became aware at:", self.aware_edit)
        form.addRow("Classified major (DORA) at:", self.classified_edit)
        form.addRow(self.fix_check, self.fix_edit)
        top.addLayout(form, 2)
        self.starts = label()
        self.starts.setTextFormat(Qt.RichText)
        top.addWidget(self.starts, 3)
        lay.addLayout(top)
        self.clock_error = ErrorLabel()
        lay.addWidget(self.clock_error)
        self.table = _ClockTable(0, 5)
        self.table.setHorizontalHeaderLabels(["Due (latest)", "Report", "To", "Counts from", "Basis"])
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(True)
        lay.addWidget(self.table, 2)
        self.notes = label(name="muted")
        self.notes.setTextFormat(Qt.RichText)
        lay.addWidget(self.notes)
        self.table.setMinimumHeight(260)
        self.clock_plot = DeadlineTimeline(theme, "One incident, every deadline")
        self.clock_plot.setMinimumHeight(260)
        lay.addWidget(self.clock_plot, 2)
        self.named = (("clock_starts", self.starts, "Where each clock starts: the hard part"),
                      ("four_clocks", self, "One incident on four reporting clocks"),
                      ("clock_table", self.table, "Every deadline, recipient and basis in time order"),
                      ("clock_timeline", self.clock_plot, "Every deadline on one date axis"))
        self.bound = {"event": self.kind_box, "fix_available": self.fix_check,
                      **{f: self.regime_checks[f] for f in REGIME_FIELDS}}
        """Controls the panel binds to its params, by field."""

    def show_inputs(self, p: Params) -> None:
        """The params' moments in the edits (without their signals), which edits apply, and where each
        chosen regime's clock starts."""
        for name, w in self.moment_edits.items():
            _set_qdt(w, getattr(p, name), name)
        self.fix_edit.setEnabled(p.fix_available)
        self.classified_edit.setEnabled(p.clock_dora)
        self.fix_check.setEnabled(p.clock_cra and p.event == "vulnerability")
        info = reporting.REGIME_INFO
        self.starts.setText("<b>Where each clock starts (the hard part)</b><ul>" + "".join(
            f"<li><b>{info[r][0].split(',')[0]}</b>: {info[r][1]}</li>"
            for f, r in zip(REGIME_FIELDS, reporting.REGIMES) if getattr(p, f)) + "</ul>")


    def show_result(self, t: Tools) -> None:
        self.clock_error.show_error(t.clocks_error)
        c = t.clocks
        ds = c.deadlines if c else ()
        self.table.setRowCount(len(ds))
        for i, dl in enumerate(ds):
            start = f"{dl.counts_from} + {dl.period}".replace(" h", "\u00a0h") if dl.period else dl.counts_from
            for j, text in enumerate((local(dl.due), dl.name, dl.recipient, start, dl.basis)):
                item = QTableWidgetItem(text)
                item.setToolTip(dl.content)
                self.table.setItem(i, j, item)
        self.table.share_width()
        regimes = c.regimes if c else ()
        notes = [f"{text} ({reporting.REGIME_INFO[r][0].split(',')[0]} {basis})"
                 for r in regimes for text, basis in reporting.NO_FIXED_HOUR[r]]
        self.notes.setText("<b>Without undue delay, no fixed hour:</b> " + "; ".join(notes)
                           + ("<br>" + "<br>".join(c.waiting) if c and c.waiting else "")
                           + "<br>A report that counts from an earlier one is dated from that one's deadline: "
                             "the latest lawful date. Hover a row for what the report contains.")
        self.clock_plot.draw(list(c.marks) if c else [])

    def apply_theme(self, theme) -> None:
        self.clock_plot.theme = theme


def tools_state(t: Tools) -> dict:
    """The tools' results for the panel's JSON export."""
    iso = (lambda v: v.isoformat() if isinstance(v, date) else v)
    s, f = t.support, t.fine
    return {"support": None if s is None else {
                "end": iso(s.end), "updates": [[iso(u.issued), iso(u.until), u.basis] for u in s.updates]},
            "fine": None if f is None else {"max_eur": f.max_eur, "exempt": f.exempt, "basis": f.basis},
            "clocks": [[d.name, d.due.isoformat(), d.recipient, d.basis, d.counts_from]
                       for d in (t.clocks.deadlines if t.clocks else ())]}
