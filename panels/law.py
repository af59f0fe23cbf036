"""EU law panel: the Cyber Resilience Act and the Product Liability Directive as explained decision
trees (graph + question card + outcome card), the Art 14 reporting clock and the PLD clocks, and a
decision-record export. All rules live in engines.law; this module only binds widgets to them.
Educational, not legal advice."""
from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from PySide6.QtCore import QDate, QDateTime, QTime, Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDateEdit, QDateTimeEdit, QFileDialog, QFormLayout,
                               QFrame, QGroupBox, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSplitter,
                               QTabWidget, QVBoxLayout, QWidget)

from engines.errors import ValidationError
from engines.law import cra, pld, record
from engines.law.trees import Walk, load_examples, load_trees
from explorer.panel import Panel, TimelineSpec
from explorer.widgets import ElidedCombo, ErrorLabel, WrapButton
from panels._law_views import DeadlineTimeline, TreeGraph

NOTICE = ("⚖ Educational, not legal advice. The trees follow Regulation (EU) 2024/2847 (CRA) and Directive "
          "(EU) 2024/2853 (PLD); quotes are article text, summaries are paraphrases. Check the Official "
          "Journal and take legal advice for real decisions.")
CRA_CHAIN = ("cra-scope", "cra-classification", "cra-route", "cra-obligations")
FMT = "%d %b %Y %H:%M"


def _label(text: str = "", wrap: bool = True, name: str = "") -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(wrap)
    lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if name:
        lab.setObjectName(name)
    return lab


def _py_dt(w: QDateTimeEdit) -> datetime:
    """The edit's local time, aware of this machine's zone: 24 hours across a summer-time change
    are then 24 real hours (the engine adds hours in UTC)."""
    return w.dateTime().toPython().replace(tzinfo=None).astimezone()


def _local(moment: datetime) -> str:
    """A deadline as this machine's clock shows it (its offset may differ from the start's)."""
    return f"{moment.astimezone():{FMT}}"


def _py_d(w: QDateEdit) -> date:
    return w.date().toPython()


class LawPanel(Panel):
    key = "law"
    title = "EU law: CRA and PLD"
    order = 90
    reads = frozenset()
    lesson = "law.md"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.trees = load_trees()
        self.examples = load_examples()
        self.walk = Walk("cra-scope", self.trees)
        self._frame: int | None = None

        self.notice = _label(NOTICE, name="notice")
        self.notice.setAccessibleName("Legal notice")
        self.body.addWidget(self.notice)
        self.tabs = QTabWidget()
        self.body.addWidget(self.tabs, 1)
        self.tabs.addTab(self._build_tree_tab(), "Decision trees")
        self.tabs.addTab(self._build_clock_tab(), "Deadline clocks")
        self._refresh()
        self._update_clocks()

    # ---- decision trees ------------------------------------------------------------------
    def _build_tree_tab(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        bar = QHBoxLayout()
        self.tree_box = QComboBox()
        self.tree_box.setAccessibleName("Decision tree")
        for key, tree in self.trees.items():
            self.tree_box.addItem(tree.title, key)
        self.tree_box.activated.connect(lambda _i: self._act(lambda: self.walk.restart(self.tree_box.currentData())))
        self.example_box = QComboBox()
        self.example_box.setAccessibleName("Example product")
        for key, ex in self.examples.items():
            self.example_box.addItem(ex["title"], key)
        self.example_btn = QPushButton("Start from example")
        self.example_btn.clicked.connect(lambda: self.load_example(self.example_box.currentData()))
        self.back_btn = QPushButton("◀ Back")
        self.back_btn.setToolTip("Go back one answer")
        self.back_btn.clicked.connect(lambda: self._act(self.walk.back))
        self.undo_btn = QPushButton("↶ Undo")
        self.undo_btn.setToolTip("Revert the last action (answer, back, restart, example)")
        self.undo_btn.clicked.connect(lambda: self._act(self.walk.undo))
        self.restart_btn = QPushButton("⟲ Restart")
        self.restart_btn.clicked.connect(lambda: self._act(self.walk.restart))
        self.example_btn.setText("Start")
        self.example_btn.setToolTip("Start from this example: its answers are filled in")
        self.md_btn = QPushButton("Export .md…")
        self.md_btn.setToolTip("Export the record of your answers as Markdown")
        self.md_btn.clicked.connect(lambda: self._export_dialog("md"))
        self.html_btn = QPushButton("Export .html…")
        self.html_btn.setToolTip("Export the record of your answers as HTML")
        self.html_btn.clicked.connect(lambda: self._export_dialog("html"))
        for box in (self.tree_box, self.example_box):   # long titles must not set the panel's minimum width
            box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(14)
        # two rows, so the panel fits in ~1000 px and leaves the side docks their width
        for w, stretch in ((QLabel("Tree:"), 0), (self.tree_box, 1), (self.back_btn, 0), (self.undo_btn, 0),
                           (self.restart_btn, 0)):
            bar.addWidget(w, stretch)
        bar2 = QHBoxLayout()
        for w, stretch in ((QLabel("Example:"), 0), (self.example_box, 1), (self.example_btn, 0), (self.md_btn, 0),
                           (self.html_btn, 0)):
            bar2.addWidget(w, stretch)
        lay.addLayout(bar)
        lay.addLayout(bar2)
        self.export_status = _label(name="muted")
        lay.addWidget(self.export_status)

        split = QSplitter(Qt.Horizontal)
        left = QWidget()
        left_lay = QVBoxLayout(left)
        left_lay.setContentsMargins(0, 0, 0, 0)
        self.graph = TreeGraph(self.theme)
        left_lay.addWidget(self.graph, 1)
        self.legend = _label("■ question   ◆ outcome   thick solid, filled = your path   ★ = where you are   "
                             "dashed = not taken", name="muted")
        left_lay.addWidget(self.legend)
        self.frame_label = _label(name="muted")
        left_lay.addWidget(self.frame_label)
        split.addWidget(left)

        self.card = QFrame()
        self.card.setFrameShape(QFrame.StyledPanel)
        card_lay = QVBoxLayout(self.card)
        self.card_kind = _label(name="muted")
        self.card_title = _label()
        self.card_help = _label()
        self.card_article = _label()
        self.card_article.setTextFormat(Qt.RichText)
        self.answers_box = QVBoxLayout()
        self.outcome_text = _label()
        self.outcome_text.setTextFormat(Qt.RichText)
        self.continue_btn = QPushButton()
        self.continue_btn.clicked.connect(lambda: self._act(self.walk.continue_on))
        self.error = ErrorLabel()
        for w in (self.card_kind, self.card_title, self.card_help, self.card_article):
            card_lay.addWidget(w)
        card_lay.addLayout(self.answers_box)
        card_lay.addWidget(self.outcome_text)
        card_lay.addWidget(self.continue_btn)
        card_lay.addWidget(self.error)
        card_lay.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setWidget(self.card)
        split.addWidget(scroll)
        split.setSizes([760, 560])
        lay.addWidget(split, 1)
        self.answer_buttons: list[QPushButton] = []
        return page

    def _act(self, action) -> None:
        """Run a walk action, show a validation error inline, redraw and re-announce the timeline."""
        try:
            action()
            self.error.show_error(None)
        except ValidationError as exc:
            self.error.show_error(str(exc))
        self._frame = None
        self.export_status.setText("")
        self._refresh()
        self.timeline_changed.emit()

    def load_example(self, key: str) -> None:
        ex = self.examples[key]
        self._act(lambda: self.walk.replay(ex["answers"], start="cra-scope"))
        self.export_status.setText(f"Example: {ex['title']}. {ex['note']}")

    def answer(self, answer_id: str) -> None:
        self._act(lambda: self.walk.answer(answer_id))

    def cra_facts(self) -> dict:
        return {k: v for k, v in self.walk.facts.items() if k in cra.FACT_KEYS}

    def engine_result(self) -> tuple[str, list[tuple[str, str]]]:
        """The rule engine's reading of the facts collected so far, for the outcome card."""
        node, tree = self.walk.current, self.walk.tree
        facts = self.walk.facts
        if tree.key in CRA_CHAIN and node.is_outcome and self.walk.start == "cra-scope":
            a = cra.assess(self.cra_facts())
            routes = ", ".join(sorted(a.routes)) or "none"
            head = (f"Rule engine: in scope = {'yes' if a.in_scope else 'no'}, role = {a.role}, tier = {a.tier or '–'}, "
                    f"routes = {routes}")
            return head, a.reasons
        if node.engine == "pld.liable":
            keys = set(pld.LIABLE_DEFAULTS)
            who = pld.liable({k: v for k, v in facts.items() if k in keys})
            return "Rule engine: liable = " + ", ".join(o for o in pld.OPERATORS if o in who), []
        if tree.key == "pld-damage" and node.is_outcome:
            ok = pld.compensable(facts["damage"], bool(facts.get("professional_use", False)))
            return f"Rule engine: {facts['damage']} compensable = {'yes' if ok else 'no'}", []
        return "", []

    def _refresh(self) -> None:
        th = self.theme
        w = self.walk
        node, tree = w.current, w.tree
        idx = self.tree_box.findData(tree.key)
        self.tree_box.setCurrentIndex(idx)
        self.graph.theme = th
        self.graph.draw(tree, w.path())
        self.back_btn.setEnabled(w.can_back())
        self.undo_btn.setEnabled(w.can_undo())
        big = th.point_size * 1.35
        self.card_kind.setText(("OUTCOME" if node.is_outcome else "QUESTION") + f" · {tree.title}")
        self.card_title.setText(node.text)
        f = self.card_title.font()
        f.setPointSizeF(big)
        f.setBold(True)
        self.card_title.setFont(f)
        self.card_help.setText(node.help)
        self.card_help.setVisible(bool(node.help))
        if node.quote:
            cite = f"<b>{node.article}</b> (article text): <i>“{node.quote}”</i>"
            if node.summary:
                cite += f"<br><b>In short</b> (paraphrase): {node.summary}"
        else:
            cite = f"<b>{node.article}</b>, in short (paraphrase, not the article text): {node.summary}"
        self.card_article.setText(cite)
        for b in self.answer_buttons:
            self.answers_box.removeWidget(b)
            b.hide()
            b.setParent(None)
            b.deleteLater()
        self.answer_buttons = []
        for a in w.offered():                       # no answer an earlier one already rules out
            b = WrapButton("▸ " + a.label)             # wraps: a long answer neither widens the card nor is cut
            b.setAccessibleName(f"Answer: {a.label}")
            b.clicked.connect(lambda _=False, aid=a.id: self.answer(aid))
            self.answers_box.addWidget(b)
            self.answer_buttons.append(b)
        html = ""
        if node.is_outcome:
            if node.obligations:
                html += "<b>Obligations and consequences</b><ul>" + "".join(
                    f"<li>{t} <b>({a})</b></li>" for t, a in node.obligations) + "</ul>"
            head, reasons = self.engine_result()
            if head:
                html += f"<p><b>{head}</b></p>"
            if reasons:
                html += "<ul>" + "".join(f"<li><b>{a}</b>: {t}</li>" for a, t in reasons) + "</ul>"
        self.outcome_text.setText(html)
        self.outcome_text.setVisible(bool(html))
        can = w.can_continue()
        self.continue_btn.setVisible(can)
        if can:
            self.continue_btn.setText(f"Continue ▶ {self.trees[node.continue_to].title}")
        self.frame_label.setText(f"{len(w.record())} answers recorded")

    # ---- export --------------------------------------------------------------------------
    def export_record(self, path: str | Path, fmt: str) -> Path:
        """Write the decision record as Markdown (``md``) or HTML (``html``)."""
        path = Path(path)
        reasons = self.engine_result()[1] or None
        text = record.to_markdown(self.walk, reasons) if fmt == "md" else record.to_html(self.walk, reasons)
        path.write_text(text, encoding="utf-8")
        self.export_status.setText(f"Decision record written to {path}")
        return path

    def _export_dialog(self, fmt: str) -> None:
        filt = "Markdown (*.md)" if fmt == "md" else "HTML (*.html)"
        name, _ = QFileDialog.getSaveFileName(self, "Export decision record", f"decision-record.{fmt}", filt)
        if name:
            try:
                self.export_record(name, fmt)
            except OSError as exc:
                self.error.show_error(f"could not write {name}: {exc}")

    # ---- clocks --------------------------------------------------------------------------
    def _build_clock_tab(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        cra_box = QGroupBox("CRA Art 14 reporting clock")
        cra_lay = QHBoxLayout(cra_box)
        form = QFormLayout()
        self.event_box = ElidedCombo()
        self.event_box.addItem("Actively exploited vulnerability (Art 14(2))", "vulnerability")
        self.event_box.addItem("Severe incident (Art 14(4))", "incident")
        self.event_box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)   # not the panel's width
        self.event_box.setMinimumContentsLength(14)
        self.aware_edit = QDateTimeEdit(QDateTime(QDate(2026, 10, 2), QTime(17, 30)))
        self.fix_check = QCheckBox("fix / mitigation available at")
        self.fix_edit = QDateTimeEdit(QDateTime(QDate(2026, 10, 9), self.aware_edit.time()))
        self.notified_check = QCheckBox("notification (b) submitted at")
        self.notified_edit = QDateTimeEdit(QDateTime(QDate(2026, 10, 4), self.aware_edit.time()))
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
        self.cra_plot = DeadlineTimeline(self.theme, "Art 14 deadlines")
        cra_lay.addWidget(self.cra_plot, 3)
        lay.addWidget(cra_box, 1)

        pld_box = QGroupBox("PLD limitation and expiry clocks")
        pld_lay = QHBoxLayout(pld_box)
        pform = QFormLayout()
        self.placed_edit = QDateEdit(QDate(2027, 3, 15))
        self.knowledge_edit = QDateEdit(QDate(2029, 6, 1))
        for w in (self.placed_edit, self.knowledge_edit):
            w.setCalendarPopup(True)
            w.setDisplayFormat("dd MMM yyyy")
        self.latent_check = QCheckBox("latent personal injury (Art 17(2))")
        pform.addRow("Placed on the market:", self.placed_edit)
        pform.addRow("Knew damage, defect, operator:", self.knowledge_edit)
        pform.addRow(self.latent_check)
        self.pld_result = _label()
        self.pld_error = ErrorLabel()
        pform.addRow(self.pld_result)
        pform.addRow(self.pld_error)
        pld_lay.addLayout(pform, 2)
        self.pld_plot = DeadlineTimeline(self.theme, "PLD clocks")
        pld_lay.addWidget(self.pld_plot, 3)
        lay.addWidget(pld_box, 1)

        for sig in (self.event_box.currentIndexChanged, self.aware_edit.dateTimeChanged, self.fix_edit.dateTimeChanged,
                    self.notified_edit.dateTimeChanged, self.fix_check.toggled, self.notified_check.toggled,
                    self.placed_edit.dateChanged, self.knowledge_edit.dateChanged, self.latent_check.toggled):
            sig.connect(self._update_clocks)
        self.fix_check.setChecked(True)
        return page

    def clock_inputs(self) -> dict:
        return {"event": self.event_box.currentData(), "aware": _py_dt(self.aware_edit),
                "fix_available": _py_dt(self.fix_edit) if self.fix_check.isChecked() else None,
                "notified": _py_dt(self.notified_edit) if self.notified_check.isChecked() else None}

    def _update_clocks(self, *_args) -> None:
        self.fix_edit.setEnabled(self.fix_check.isChecked())
        self.notified_edit.setEnabled(self.notified_check.isChecked())
        self.clocks = {}
        args = self.clock_inputs()
        try:
            d = cra.reporting_deadlines(**args)
            self.clocks["cra"] = d
            self.cra_error.show_error(None)
            final_need = "a fix time" if args["event"] == "vulnerability" else "the notification time"
            lines = [f"<b>Art 14 applies at awareness: {'YES' if d['applies'] else 'NO — applies from 11 Sep 2026 (Art 71(2))'}</b>",
                     f"Early warning due: {_local(d['early_warning'])} (24 h)",
                     f"Notification due: {_local(d['notification'])} (72 h)",
                     "Final report due: " + (_local(d["final_report"]) if d["final_report"] else f"— needs {final_need}")]
            self.cra_result.setText("<br>".join(lines))
            marks = [(args["aware"], "aware", "event"), (d["early_warning"], "24 h early warning", "deadline"),
                     (d["notification"], "72 h notification", "deadline")]
            if args["fix_available"] and args["event"] == "vulnerability":
                marks.append((args["fix_available"], "fix available", "event"))
            if args["notified"] and args["event"] == "incident":
                marks.append((args["notified"], "notified", "event"))
            if d["final_report"]:
                marks.append((d["final_report"], "final report", "deadline"))
            self.cra_plot.draw(marks)
        except ValidationError as exc:
            self.cra_error.show_error(str(exc))
            self.cra_result.setText("")
            self.cra_plot.draw([])
        try:
            placed, known = _py_d(self.placed_edit), _py_d(self.knowledge_edit)
            lim = pld.limitation(placed, known, self.latent_check.isChecked())
            reg = pld.regime(placed)
            self.clocks["pld"] = {"regime": reg, **lim}
            self.pld_error.show_error(None)
            self.pld_result.setText(
                f"<b>Regime: {'Directive (EU) 2024/2853' if reg == '2024/2853' else 'Directive 85/374/EEC (Art 2(1), 21)'}</b><br>"
                f"Start proceedings by: {lim['claim_deadline']:%d %b %Y} (3 years from knowledge, Art 16)<br>"
                f"Rights expire: {lim['expiry']:%d %b %Y} (Art 17)")
            self.pld_plot.draw([(placed, "placed on market", "event"), (known, "knowledge", "event"),
                                (lim["claim_deadline"], "claim deadline", "deadline"),
                                (lim["expiry"], "expiry", "deadline"),
                                (pld.NEW_REGIME_AFTER, "new PLD: after this day", "rule")])
        except ValidationError as exc:
            self.pld_error.show_error(str(exc))
            self.pld_result.setText("")
            self.pld_plot.draw([])

    # ---- panel contract ------------------------------------------------------------------
    def timeline(self) -> TimelineSpec | None:
        """One frame per recorded step plus the start: the player steps through the decision path."""
        steps = self.walk.steps
        chapters, seen = [], None
        for i, s in enumerate(steps):
            if s.tree != seen:
                chapters.append((i, self.trees[s.tree].title))
                seen = s.tree
        return TimelineSpec(n_frames=len(steps) + 1, chapters=chapters, fps=1.0)

    def show_frame(self, index: int) -> None:
        steps = self.walk.steps
        index = max(0, min(index, len(steps)))
        self._frame = index
        if index == len(steps):
            self.graph.draw(self.walk.tree, self.walk.path())
            self.frame_label.setText(f"Step {index}/{len(steps)}: where you are now")
            return
        step = steps[index]
        tree = self.trees[step.tree]
        path = [s.node for s in steps[:index + 1] if s.tree == step.tree and s.answer is not None] or [step.node]
        if path[-1] != step.node:
            path.append(step.node)
        self.graph.draw(tree, path)
        node = tree.nodes[step.node]
        answer = node.answer(step.answer).label if step.answer else "continue"
        self.frame_label.setText(f"Step {index + 1}/{len(steps)}: {node.text} → {answer} ({node.article})")

    def result(self) -> object:
        head, reasons = self.engine_result()
        return {"tree": self.walk.tree.key, "node": self.walk.current.id, "facts": self.walk.facts,
                "record": self.walk.record(), "engine": head, "reasons": reasons,
                "clocks": {k: {kk: (vv.isoformat() if hasattr(vv, "isoformat") else vv) for kk, vv in v.items()}
                           for k, v in self.clocks.items()}}

    def table(self) -> list[dict]:
        return self.walk.record()

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.notice.setStyleSheet(f"QLabel {{ border: 2px solid {theme.palette[0]}; padding: 6px; font-weight: bold; }}")
        for plot in (getattr(self, "cra_plot", None), getattr(self, "pld_plot", None)):
            if plot is not None:
                plot.theme = theme
        self.graph.theme = theme
        self._refresh()
        if hasattr(self, "clocks"):
            self._update_clocks()

    def selftest(self) -> None:
        for key in self.examples:
            self.load_example(key)
            assert self.walk.current.is_outcome, key
        self.walk.back()
        self.walk.undo()
        self.event_box.setCurrentIndex(1)
        self.notified_check.setChecked(True)
        assert self.clocks["cra"]["final_report"] is not None
        self.event_box.setCurrentIndex(0)
        spec = self.timeline()
        self.show_frame(0)
        self.show_frame(spec.n_frames - 1)
        self._refresh()


PANEL = LawPanel
