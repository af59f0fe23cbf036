"""EU law panel: the Cyber Resilience Act and the Product Liability Directive as explained decision
trees (graph + question card + outcome card) and a decision-record export; the clocks tab
(panels/_law_clocktab) and the working tools' tabs (panels/_law_*) hang off it. All rules live in
engines.law; this module only binds widgets to them: what the user sets (the walk's answers, the
example, the clocks' inputs) is the panel's ``Params``, so a saved view reopens the same walk and
clocks. Educational, not legal advice."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer, Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton,
                               QSplitter, QTabWidget, QVBoxLayout, QWidget)

from engines.law import record
from engines.law.outcome import cra_facts, reading
from engines.law.params import DAYS, MOMENTS, Params
from engines.law.trees import CONTINUE, Walk, load_examples, load_trees
from explorer.binder import ParamBinder
from explorer.exports import save_document, write_document
from explorer.panel import Panel, TimelineSpec
from explorer.ui.question_card import QuestionCard, outcome_html
from explorer.ui.widgets import ErrorLabel, WrapButton
from panels._law_annex import AnnexChecklist
from panels._law_clocktab import EVENTS, ClockTab
from panels._law_pld import DefectWorksheet
from panels._law_sbom import SbomView
from panels._law_tools import LawTools, label as _label
from panels._law_vii import TechnicalFile
from panels._law_views import TreeGraph

NOTICE = ("⚖ Educational, not legal advice. The trees follow Regulation (EU) 2024/2847 (CRA) and Directive "
          "(EU) 2024/2853 (PLD); quotes are article text, summaries are paraphrases. Check the Official "
          "Journal and take legal advice for real decisions.")
CLOCK_FIELDS = frozenset({"event", "fix_available", "notified", "latent_injury", "distributor_request",
                          *MOMENTS, *DAYS})


class LawPanel(ClockTab, Panel):
    key = "law"
    title = "EU law: CRA and PLD"
    order = 90
    reads = frozenset()
    lesson = "law.md"
    Params = Params

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.trees = load_trees()
        self.examples = load_examples()
        self.walk = self.params.walk()
        self._walk_undo: list[tuple[str, tuple[str, ...]]] = []   # the Undo button's (tree, answers) before each move
        self._frame: int | None = None

        self.notice = _label(NOTICE, name="notice")
        self.notice.setAccessibleName("Legal notice")
        self.body.addWidget(self.notice)
        self.tabs = QTabWidget()
        self.body.addWidget(self.tabs, 1)
        self.tabs.addTab(self._build_tree_tab(), "Decision trees")
        self.tabs.addTab(self._build_clock_tab(), "Deadline clocks")
        # the working tools' tabs (panels/_law_tools, _law_annex, _law_vii, _law_pld, _law_sbom)
        self.tools, self.annex, self.vii = LawTools(self), AnnexChecklist(self), TechnicalFile(self)
        self.defect = DefectWorksheet(self)
        self.sbom = SbomView(self)
        self.binder = ParamBinder(self, {"example": self.example_box, "event": self.event_box,
                                         "fix_available": self.fix_check, "notified": self.notified_check,
                                         "latent_injury": self.latent_check,
                                         "distributor_request": self.request_check},
                                  choices={"example": {k: ex["title"] for k, ex in self.examples.items()},
                                           "event": EVENTS}, error=self.error.show_error)
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
        self.tree_box.activated.connect(lambda _i: self._walk_to(self.tree_box.currentData(), ()))
        self.example_box = QComboBox()
        self.example_box.setAccessibleName("Example product")
        for key, ex in self.examples.items():
            self.example_box.addItem(ex["title"], key)
        self.example_btn = QPushButton("Start")
        self.example_btn.setToolTip("Start from this example: its answers are filled in")
        self.example_btn.clicked.connect(lambda: self.load_example(self.params.example))
        self.back_btn = QPushButton("◀ Back")
        self.back_btn.setToolTip("Go back one answer")
        self.back_btn.clicked.connect(lambda: self._walk_to(self.params.tree, self.params.answers[:-1]))
        self.undo_btn = QPushButton("↶ Undo")
        self.undo_btn.setToolTip("Revert the last action (answer, back, restart, example)")
        self.undo_btn.clicked.connect(self.undo_walk)
        self.restart_btn = QPushButton("⟲ Restart")
        self.restart_btn.clicked.connect(lambda: self._walk_to(self.params.tree, ()))
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
        self.name_view("tree_graph", left, "Decision tree: the path taken")
        self.legend = _label("■ question   ◆ outcome   thick solid, filled = your path   ★ = where you are   "
                             "dashed = not taken", name="muted")
        left_lay.addWidget(self.legend)
        self.frame_label = _label(name="muted")
        left_lay.addWidget(self.frame_label)
        split.addWidget(left)

        scroll = self.card_scroll = QuestionCard(framed=True)
        scroll.answered.connect(self.answer)
        scroll.continued.connect(lambda: self._walk_to(self.params.tree, (*self.params.answers, CONTINUE)))
        self.card = scroll.body
        self.card_kind, self.card_title, self.card_help = scroll.kind, scroll.title, scroll.help
        self.card_article, self._answers_widget, self.answers_box = scroll.source, scroll.answers_widget, scroll.answers_box
        self.outcome_text, self.continue_btn = scroll.outcome, scroll.continue_btn
        self.error = ErrorLabel()
        scroll.add(self.error)
        split.addWidget(scroll)
        split.setSizes([760, 560])
        lay.addWidget(split, 1)
        self.name_view("walk", split, "Decision walk: tree and card")
        self.name_view("card", scroll, "Question or outcome card")
        self.name_view("help", self.card_help, "What the question means")
        self.name_view("article", self.card_article, "The article behind this node")
        self.name_view("answers", self._answers_widget, "The answers offered")
        self.name_view("obligations", self.outcome_text, "Obligations and the rule engine's reading")
        return page

    @property
    def answer_buttons(self) -> list[WrapButton]:
        """The answers offered at the current node, one button each."""
        return self.card_scroll.buttons

    def _walk_to(self, tree: str, answers, note: str = "", **more) -> None:
        """Move the walk (an undoable params edit); a refused move shows its reason on the card."""
        before = (self.params.tree, self.params.answers)
        error = self.update_params(tree=tree, answers=tuple(answers), **more)
        if error is None and (self.params.tree, self.params.answers) != before:
            self._walk_undo.append(before)
        self.error.show_error(error)
        self.export_status.setText(note)

    def undo_walk(self) -> None:
        """The Undo button: the walk as it was before the last move (answer, back, restart, example)."""
        if self._walk_undo:
            tree, answers = self._walk_undo.pop()
            self.error.show_error(self.update_params(tree=tree, answers=answers))

    def load_example(self, key: str) -> None:
        ex = self.examples[key]
        walk = Walk("cra-scope", self.trees)
        walk.replay(ex["answers"])
        self._walk_to("cra-scope", walk.moves, f"Example: {ex['title']}. {ex['note']}", example=key)

    def answer(self, answer_id: str) -> None:
        self._walk_to(self.params.tree, (*self.params.answers, answer_id))

    def cra_facts(self) -> dict:
        return cra_facts(self.walk)

    def params_updated(self, changed: frozenset[str]) -> None:
        if changed & {"tree", "answers"}:
            self.walk = self.params.walk()
            self._frame = None
            self.export_status.setText("")
            self._refresh()
            self.timeline_changed.emit()
        if changed & CLOCK_FIELDS:
            self._update_clocks()

    def _refresh(self) -> None:
        th = self.theme
        w = self.walk
        node, tree = w.current, w.tree
        idx = self.tree_box.findData(tree.key)
        self.tree_box.setCurrentIndex(idx)
        self.graph.theme = th
        self.graph.draw(tree, w.path())
        self.back_btn.setEnabled(bool(self.params.answers))
        self.undo_btn.setEnabled(bool(self._walk_undo))
        self.card_scroll.title_point_size = th.point_size
        r = reading(w) if node.is_outcome else None
        outcome = outcome_html(r.head, node.obligations, "Obligations and consequences", r.reasons) if r else ""
        nxt = self.trees[node.continue_to].title if w.can_continue() else None
        self.card_scroll.show_node(node, tree.title, w.offered(), outcome, nxt)
        self.frame_label.setText(f"{len(w.record())} answers recorded")

    def view_widget(self, name: str) -> QWidget | None:
        """A named view; one inside the card (help, article, answers, obligations) is also scrolled
        into the card's view, so a tour step pointing at it shows it rather than a frame off the card."""
        widget = super().view_widget(name)
        if widget is not None and widget is not self.card and self.card.isAncestorOf(widget):
            for ms in (0, 150):                 # again once a presenter fold has resized the card
                QTimer.singleShot(ms, widget, lambda: self.card_scroll.reveal(widget))   # dropped if it is deleted
        return widget

    # ---- export --------------------------------------------------------------------------
    def export_record(self, path: str | Path, fmt: str) -> Path:
        """Write the decision record as Markdown (``md``) or HTML (``html``)."""
        path = Path(path)
        reasons = list(reading(self.walk).reasons) or None
        text = record.to_markdown(self.walk, reasons) if fmt == "md" else record.to_html(self.walk, reasons)
        write_document(path, text)
        self.export_status.setText(f"Decision record written to {path}")
        return path

    def _export_dialog(self, fmt: str) -> None:
        filt = "Markdown (*.md)" if fmt == "md" else "HTML (*.html)"
        save_document(self, "Export decision record", f"decision-record.{fmt}", filt,
                      lambda path: self.export_record(path, fmt), self.error.show_error)

    # ---- panel contract ------------------------------------------------------------------
    def timeline(self) -> TimelineSpec | None:
        """One frame per recorded step plus the start: the player steps through the decision path."""
        steps = self.walk.steps
        chapters, seen = [], None
        for i, s in enumerate(steps):
            if s.tree != seen:
                chapters.append((i, self.trees[s.tree].title))
                seen = s.tree
        # opens on the last frame, where the walk is now: graph and card show the same node
        return TimelineSpec(n_frames=len(steps) + 1, chapters=chapters, fps=1.0, start=len(steps))

    def show_frame(self, index: int) -> None:
        self._frame = max(0, min(index, len(self.walk.steps)))
        tree, path, caption = self.walk.frame(index)
        self.graph.draw(tree, path)
        self.frame_label.setText(caption)

    def result(self) -> object:
        r = reading(self.walk)
        return {"tree": self.walk.tree.key, "node": self.walk.current.id, "facts": self.walk.facts,
                "record": self.walk.record(), "engine": r.head, "reasons": [list(x) for x in r.reasons],
                "clocks": {k: {kk: (vv.isoformat() if hasattr(vv, "isoformat") else vv) for kk, vv in v.items()}
                           for k, v in self.clocks.items()},
                "tools": self.tools.state(), "annex_i": [list(a) for a in self.params.annex_i],
                "annex_vii": [[f.point, f.status, f.warning] for f in self.vii.points],
                "art7": [[a, t] for a, t in self.defect.weighing.lines], "sbom": self.sbom.state()}

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
        if hasattr(self, "tools"):
            self.tools.apply_theme(theme)

    def selftest(self) -> None:
        for key in self.examples:
            self.load_example(key)
            assert self.walk.current.is_outcome, key
        self.back_btn.click()
        self.undo_btn.click()
        assert self.walk.current.is_outcome
        self.update_params(event="incident", notified=True)
        assert self.clocks["cra"]["final_report"] is not None
        self.update_params(event="vulnerability")
        self.update_params(expected_use_years=3.0, fine_tier=2, clock_dora=False, sbom_source=":example",
                           annex_i=(("II.1", "met", "", "TD 4"),), annex_vii=(("2(b)", "present", "", "TD 4"),),
                           art7=(("f", "against", ""),), annex_quotes=True)
        assert self.tools.result.support.below_floor and self.sbom.sbom is not None
        assert "Part II(1) met" in self.vii.links.text() and self.vii.points[2].status == "present"
        assert not self.annex.table.isColumnHidden(5)
        spec = self.timeline()
        self.show_frame(0)
        self.show_frame(spec.n_frames - 1)
        self._refresh()


PANEL = LawPanel
