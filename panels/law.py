"""EU law panel: the Cyber Resilience Act and the Product Liability Directive as explained decision
trees (graph + question card + outcome card) and a decision-record export, beside the views of the
clocks tab (panels/_law_clocktab) and the working tools' tabs (panels/_law_*): the panel binds
their controls, takes their edits through their signals and hands each its engine result. All
rules live in engines.law; this module only binds widgets to them: what the user sets (the walk's answers, the
example, the clocks' inputs) is the panel's ``Params``, so a saved view reopens the same walk and
clocks. Educational, not legal advice."""
from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTabWidget, QVBoxLayout, QWidget

from engines.core.errors import ValidationError
from engines.law import annex, annex_vii, defect, record, sbom
from engines.law.clocks import Clocks, clocks
from engines.law.outcome import cra_facts, reading
from engines.law.params import DAYS, MOMENTS, Params
from engines.law.sbom_study import read_sbom, study
from engines.law.tools import tools
from engines.law.trees import CONTINUE, Tree, Walk, load_examples, load_trees
from explorer.binder import ParamBinder
from explorer.exports import save_document, write_document
from explorer.panel import Panel, TimelineSpec
from explorer.ui.question_card import QuestionCard, outcome_html
from explorer.ui.widgets import ErrorLabel, WrapButton
from panels._law_annex import FILTERS, AnnexChecklist
from panels._law_clocktab import EVENTS, ClockTab
from panels._law_pld import DefectWorksheet
from panels._law_sbom import SbomView
from panels._law_tools import (ENTERPRISE_LABELS, FINE_FIELDS, KIND_LABELS, SUPPORT_FIELDS, TIER_LABELS, WALK_FIELDS,
                               FourClocks, SupportFines, label as _label, scrolled, tools_state)
from panels._law_vii import TechnicalFile
from panels._law_views import TreeGraph, WalkBar

NOTICE = ("⚖ Educational, not legal advice. The trees follow Regulation (EU) 2024/2847 (CRA) and Directive "
          "(EU) 2024/2853 (PLD); quotes are article text, summaries are paraphrases. Check the Official "
          "Journal and take legal advice for real decisions.")
WRITERS = {"md": "to_markdown", "html": "to_html", "csv": "to_csv"}   # each checklist module's exports
CLOCK_FIELDS = frozenset({"event", "fix_available", "notified", "latent_injury", "distributor_request",
                          *MOMENTS, *DAYS})


class LawPanel(Panel):
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
        self._build_views()
        self._refresh()
        self._update_clocks()
        self._tool_inputs: dict | None = None
        self._refresh_tools()

    def _build_views(self) -> None:
        """The clocks' and the working tools' views (panels/_law_clocktab, _law_tools, _law_annex, _law_vii,
        _law_pld, _law_sbom) as tabs, named, bound to the params, their signals wired to edits."""
        th = self.theme
        self.clock_tab, self.support, self.four_clocks = ClockTab(th), SupportFines(th), FourClocks(th)
        self.annex, self.vii, self.defect = AnnexChecklist(), TechnicalFile(), DefectWorksheet()
        self.sbom = SbomView(self.jobs("sbom").widget())
        for view, title, wrap in ((self.clock_tab, "Deadline clocks", False), (self.support, "Support and fines", True),
                                  (self.four_clocks, "Four clocks", True), (self.annex, "Annex I checklist", False),
                                  (self.vii, "Annex VII file", False), (self.defect, "PLD defect", True),
                                  (self.sbom, "SBOM", False)):
            self.tabs.addTab(scrolled(view) if wrap else view, title)
            for name, widget, text in view.named:
                self.name_view(name, widget, text)
        self.clock_tab.changed.connect(lambda c: self.clock_tab.show_edit_error(self.update_params(**c)))
        for view in (self.support, self.four_clocks):
            view.changed.connect(lambda c: self.support.error.show_error(self.update_params(**c)))
        for view in (self.annex, self.vii, self.defect):
            view.changed.connect(lambda c, v=view: v.error.show_error(self.update_params(**c)))
        self.sbom.requested.connect(lambda c: self.sbom.error.show_error(self.update_params(**c)))
        for view, what, export in ((self.annex, "Annex I checklist", self.export_annex),
                                   (self.vii, "Annex VII file", self.export_vii)):
            view.export_requested.connect(lambda fmt, v=view, w=what, e=export: self._export_checklist(v, w, e, fmt))
        self.sbom.show_generator(sbom.generator_available())
        jobs = self.jobs("sbom")
        jobs.started.connect(lambda _label: self.sbom.progress.show())
        jobs.finished.connect(self.sbom.show_finished)
        jobs.failed.connect(self.sbom.error.show_error)
        self._sbom_shown: tuple[str, str] | None = None
        self._sbom_open: sbom.Sbom | None = None
        self.tools_binder = ParamBinder(self, {**self.support.bound, **self.four_clocks.bound},
                                        choices={"fine_tier": TIER_LABELS, "enterprise": ENTERPRISE_LABELS,
                                                 "event": KIND_LABELS}, error=self.support.error.show_error)
        self.binder = ParamBinder(self, {"example": self.example_box, "event": self.clock_tab.event_box,
                                         "fix_available": self.clock_tab.fix_check,
                                         "notified": self.clock_tab.notified_check,
                                         "latent_injury": self.clock_tab.latent_check,
                                         "distributor_request": self.clock_tab.request_check,
                                         "annex_quotes": self.annex.quotes, "later_improvement": self.defect.later},
                                  choices={"example": {k: ex["title"] for k, ex in self.examples.items()},
                                           "event": EVENTS}, error=self.error.show_error)

    # ---- decision trees ------------------------------------------------------------------
    def _build_tree_tab(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        bar = self.walk_bar = WalkBar({k: t.title for k, t in self.trees.items()},
                                      {k: ex["title"] for k, ex in self.examples.items()})
        lay.addWidget(bar)
        self.tree_box, self.example_box, self.export_status = bar.tree_box, bar.example_box, bar.export_status
        self.back_btn, self.undo_btn, self.restart_btn = bar.back_btn, bar.undo_btn, bar.restart_btn
        self.example_btn, self.md_btn, self.html_btn = bar.example_btn, bar.md_btn, bar.html_btn
        self.tree_box.activated.connect(lambda _i: self._walk_to(self.tree_box.currentData(), ()))
        self.example_btn.clicked.connect(lambda: self.load_example(self.params.example))
        self.back_btn.clicked.connect(lambda: self._walk_to(self.params.tree, self.params.answers[:-1]))
        self.undo_btn.clicked.connect(self.undo_walk)
        self.restart_btn.clicked.connect(lambda: self._walk_to(self.params.tree, ()))
        self.md_btn.clicked.connect(lambda: self._export_dialog("md"))
        self.html_btn.clicked.connect(lambda: self._export_dialog("html"))

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
        self._tree_page = page                    # hidden, it draws a new walk when shown
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
            self.draw_when_shown(self._tree_page, self._refresh, "walk")
            self.timeline_changed.emit()
        if changed & CLOCK_FIELDS:
            self._update_clocks()
        self._refresh_tools()

    def _update_clocks(self) -> None:
        p, c = self.params, clocks(self.params)
        self.clocks = {k: v.deadlines() for k, v in (("cra", c.cra), ("pld", c.pld)) if v is not None}
        self.draw_when_shown(self.clock_tab, partial(self._draw_clocks, p, c), "clocks")

    def _draw_clocks(self, p: Params, c: Clocks) -> None:
        self.clock_tab.show_inputs(p)
        self.clock_tab.show_result(c)

    def _refresh_tools(self, force: bool = False) -> None:
        """Redraw the tools' views for the params; skipped when only the walk changed (answering a
        question or a tour step moving through a tree leaves every tool as it was)."""
        p = self.params
        inputs = {k: v for k, v in p.to_dict().items() if k not in WALK_FIELDS}
        before = self._tool_inputs
        if not force and inputs == before:
            return
        self._tool_inputs = inputs
        changed = set(inputs) if force or before is None else {k for k in inputs if inputs[k] != before[k]}
        t = self.tools_result = tools(p)
        self.draw_when_shown(self.support, partial(self.support.show_inputs, p), "inputs")
        self.draw_when_shown(self.four_clocks, partial(self.four_clocks.show_inputs, p), "inputs")
        if changed & SUPPORT_FIELDS:
            self.draw_when_shown(self.support, partial(self.support.show_support, t), "support")
        if changed & FINE_FIELDS:
            self.draw_when_shown(self.support, partial(self.support.show_fine, t, self.theme), "fine")
        if changed - SUPPORT_FIELDS - FINE_FIELDS:
            self.draw_when_shown(self.four_clocks, partial(self.four_clocks.show_result, t))
        vii = annex_vii.technical_file(p.annex_i, t.support.end if t.support else None, p.annex_vii)
        for view, draw in ((self.annex, partial(self.annex.show_result, t.checklist, p.annex_quotes)),
                           (self.vii, partial(self.vii.show_result, vii)),
                           (self.defect, partial(self.defect.show_result, defect.weigh(p.art7, p.later_improvement)))):
            self.draw_when_shown(view, draw)
        self._show_sbom()

    # ---- SBOM ----------------------------------------------------------------------------
    def _show_sbom(self) -> None:
        """Open, or generate in the "sbom" job, the SBOM ``sbom_source`` names; a new advisory alone is
        matched against the SBOM already open."""
        source, adv = self.params.sbom_source, self.params.advisory_source
        if self._sbom_shown is not None and source == self._sbom_shown[0]:
            if adv != self._sbom_shown[1]:
                self._study(self._sbom_open)
            return
        self._sbom_shown = (source, adv)
        self.sbom.error.show_error(None)
        if not source:
            self._study(None)
        elif source == sbom.ENVIRONMENT:
            if not sbom.generator_available():
                self.sbom.error.show_error("cyclonedx-python-lib is not installed: pip install '.[sbom]'")
                self._study(None)
                return
            self.sbom.show_generating()
            self.jobs("sbom").run(lambda progress, cancelled: sbom.for_environment(progress, cancelled),
                                  lambda r: self._study(r) if isinstance(r, sbom.Sbom) else None,
                                  label="SBOM of this app's bundle")
        else:
            try:
                s = read_sbom(source)
            except ValidationError as exc:
                self.sbom.error.show_error(str(exc))
                s = None
            self._study(s)

    def _study(self, s: sbom.Sbom | None) -> None:
        self._sbom_open = s
        adv = self.params.advisory_source if s is not None else None
        self._sbom_shown = (self._sbom_shown[0], adv)
        self.sbom.show_result(study(s, self.params.sbom_source, adv) if s is not None else None)

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
        """A named view; one inside the card (help, article, answers, obligations) is shown whole (the card
        folds the rest if need be) and scrolled to, so a tour step shows it rather than a frame off the card."""
        widget = super().view_widget(name)
        inside = widget is not None and widget is not self.card and self.card.isAncestorOf(widget)
        if inside or name in ("walk", "card", "tree_graph"):    # that part, else the card's essentials, whole
            self.card_scroll.show_part(widget if inside else None)
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

    def export_annex(self, path: str | Path, fmt: str) -> Path:
        """Write the Annex I checklist as Markdown (``md``), HTML (``html``) or CSV (``csv``)."""
        return self._write(self.annex, getattr(annex, WRITERS[fmt])(self.tools_result.checklist), path, "Checklist")

    def export_vii(self, path: str | Path, fmt: str) -> Path:
        """Write the Annex VII checklist as Markdown (``md``), HTML (``html``) or CSV (``csv``)."""
        return self._write(self.vii, getattr(annex_vii, WRITERS[fmt])(self.vii.points), path, "Annex VII checklist")

    @staticmethod
    def _write(view, text: str, path: str | Path, what: str) -> Path:
        write_document(Path(path), text)
        view.show_status(f"{what} written to {path}")
        return Path(path)

    def _export_checklist(self, view, what: str, export, fmt: str) -> None:
        save_document(self, f"Export {what}", f"{what.lower().replace(' ', '-')}.{fmt}", FILTERS[fmt],
                      lambda path: export(path, fmt), view.error.show_error)

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
        self.draw_when_shown(self._tree_page, partial(self._draw_frame, tree, path, caption), "frame")

    def _draw_frame(self, tree: Tree, path: list[str], caption: str) -> None:
        self.graph.draw(tree, path)
        self.frame_label.setText(caption)

    def result(self) -> object:
        r = reading(self.walk)
        return {"tree": self.walk.tree.key, "node": self.walk.current.id, "facts": self.walk.facts,
                "record": self.walk.record(), "engine": r.head, "reasons": [list(x) for x in r.reasons],
                "clocks": {k: {kk: (vv.isoformat() if hasattr(vv, "isoformat") else vv) for kk, vv in v.items()}
                           for k, v in self.clocks.items()},
                "tools": tools_state(self.tools_result), "annex_i": [list(a) for a in self.params.annex_i],
                "annex_vii": [[f.point, f.status, f.warning] for f in self.vii.points],
                "art7": [[a, t] for a, t in self.defect.weighing.lines], "sbom": self.sbom.state()}

    def table(self) -> list[dict]:
        return self.walk.record()

    def apply_theme(self, theme) -> None:
        super().apply_theme(theme)
        self.notice.setStyleSheet(f"QLabel {{ border: 2px solid {theme.palette[0]}; padding: 6px; font-weight: bold; }}")
        self.graph.theme = theme
        self._refresh()
        if hasattr(self, "clocks"):
            for view in (self.clock_tab, self.support, self.four_clocks):
                view.apply_theme(theme)
            self._update_clocks()
            self._refresh_tools(force=True)

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
        assert self.settle() and self.tools_result.support.below_floor and self.sbom.sbom is not None
        assert "Part II(1) met" in self.vii.links.text() and self.vii.points[2].status == "present"
        assert not self.annex.table.isColumnHidden(5)
        spec = self.timeline()
        self.show_frame(0)
        self.show_frame(spec.n_frames - 1)
        self._refresh()


PANEL = LawPanel
