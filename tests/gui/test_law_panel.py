"""The law panel driven through its real widgets: answers, back/undo, examples, continue, engine
result on the outcome card, Art 14 and PLD clocks, timeline stepping and record export."""
from datetime import datetime

from PySide6.QtCore import QDate, QDateTime, QTime, Qt

from engines.law import cra
from panels.law import LawPanel


def _click_answer(qtbot, panel, label_part):
    btn = next(b for b in panel.answer_buttons if label_part in b.text())
    qtbot.mouseClick(btn, Qt.LeftButton)


def test_notice_is_visible(make_panel):
    p = make_panel(LawPanel)
    assert p.notice.isVisible() and "not legal advice" in p.notice.text()


def test_answering_back_and_undo(qtbot, make_panel):
    p = make_panel(LawPanel)
    assert p.walk.current.id == "q_saas"
    assert "Art 3(1)" in p.card_article.text()
    _click_answer(qtbot, p, "No: software")
    assert p.walk.current.id == "q_connection" and p.walk.path() == ["q_saas", "q_connection"]
    qtbot.mouseClick(p.back_btn, Qt.LeftButton)
    assert p.walk.current.id == "q_saas"
    qtbot.mouseClick(p.undo_btn, Qt.LeftButton)
    assert p.walk.current.id == "q_connection"
    _click_answer(qtbot, p, "No, never")
    assert p.walk.current.id == "o_out_noconn"
    assert "in scope = no" in p.outcome_text.text()


def test_example_hypervisor_reaches_obligations_with_engine_routes(qtbot, make_panel):
    p = make_panel(LawPanel)
    p.example_box.setCurrentIndex(p.example_box.findData("hypervisor"))
    qtbot.mouseClick(p.example_btn, Qt.LeftButton)
    assert p.walk.tree.key == "cra-obligations"
    a = cra.assess(p.cra_facts())
    assert a.tier == "important-II" and a.routes == {"B+C", "H", "EUCC"}
    assert "tier = important-II" in p.outcome_text.text()
    assert "Annex I Part II" in p.outcome_text.text()


def test_continue_button_chains_trees(qtbot, make_panel):
    p = make_panel(LawPanel)
    p.tree_box.setCurrentIndex(p.tree_box.findData("cra-classification"))
    p.tree_box.activated.emit(p.tree_box.currentIndex())
    _click_answer(qtbot, p, "IV-2")
    assert p.continue_btn.isVisible()
    qtbot.mouseClick(p.continue_btn, Qt.LeftButton)
    # tier answered automatically; critical route outcome
    assert p.walk.current.id == "o_route_critical"


def test_timeline_steps_through_the_path(qtbot, make_panel):
    p = make_panel(LawPanel)
    p.load_example("password-manager")
    spec = p.timeline()
    assert spec.n_frames == len(p.walk.steps) + 1
    assert [c[1] for c in spec.chapters][:2] == ["CRA 1 · Scope and role", "CRA 2 · Classification (Annex III and IV)"]
    p.show_frame(0)
    assert "Step 1/" in p.frame_label.text() and "Art 3(1)" in p.frame_label.text()
    p.show_frame(spec.n_frames - 1)
    assert "where you are now" in p.frame_label.text()


def test_art14_clock_updates_as_you_type(make_panel):
    p = make_panel(LawPanel)
    p.tabs.setCurrentWidget(p.clock_tab)                # typed in the clocks' tab, as a user does
    p.clock_tab.event_box.setCurrentIndex(p.clock_tab.event_box.findData("vulnerability"))
    p.clock_tab.aware_edit.setDateTime(QDateTime(QDate(2026, 10, 2), QTime(17, 30)))
    p.clock_tab.fix_check.setChecked(True)
    p.clock_tab.fix_edit.setDateTime(QDateTime(QDate(2026, 10, 9), QTime(8, 0)))
    d = p.clocks["cra"]
    local = {k: v.astimezone().replace(tzinfo=None) for k, v in d.items() if isinstance(v, datetime)}
    assert d["applies"] and local["early_warning"] == datetime(2026, 10, 3, 17, 30)   # this machine's clock
    assert local["final_report"] == datetime(2026, 10, 23, 8, 0)
    assert "23 Oct 2026 08:00" in p.clock_tab.cra_result.text()
    p.clock_tab.aware_edit.setDateTime(QDateTime(QDate(2026, 9, 1), QTime(9, 0)))
    assert p.clocks["cra"]["applies"] is False and "NO" in p.clock_tab.cra_result.text()
    p.clock_tab.event_box.setCurrentIndex(p.clock_tab.event_box.findData("incident"))
    p.clock_tab.notified_check.setChecked(False)
    assert p.clocks["cra"]["final_report"] is None and "needs the notification time" in p.clock_tab.cra_result.text()
    p.clock_tab.notified_check.setChecked(True)
    p.clock_tab.notified_edit.setDateTime(QDateTime(QDate(2026, 8, 1), QTime(9, 0)))   # before awareness
    assert not p.clock_tab.cra_error.isHidden() and "notified" in p.clock_tab.cra_error.text()


def test_pld_clock(make_panel):
    p = make_panel(LawPanel)
    p.tabs.setCurrentWidget(p.clock_tab)                # typed in the clocks' tab, as a user does
    p.clock_tab.placed_edit.setDate(QDate(2027, 3, 15))
    p.clock_tab.knowledge_edit.setDate(QDate(2045, 1, 1))
    p.clock_tab.latent_check.setChecked(True)
    c = p.clocks["pld"]
    assert c["regime"] == "2024/2853" and c["expiry"].year == 2052 and c["claim_deadline"].year == 2048
    p.clock_tab.knowledge_edit.setDate(QDate(2020, 1, 1))
    assert not p.clock_tab.pld_error.isHidden()


def test_record_export(tmp_path, make_panel):
    p = make_panel(LawPanel)
    p.load_example("router")
    md = p.export_record(tmp_path / "r.md", "md").read_text()
    html = p.export_record(tmp_path / "r.html", "html").read_text()
    assert "not legal advice" in md and "Art 32(2)" in md and "III-I-12" in md
    assert "<table>" in html and "Routers" in html


def test_result_table_and_selftest(make_panel):
    p = make_panel(LawPanel)
    p.selftest()
    assert p.table() and p.result()["record"]


def test_graph_writes_yes_no_on_the_edges_and_every_label_in_view(make_panel, qtbot):
    import pyqtgraph as pg

    p = make_panel(LawPanel)
    qtbot.wait(1)            # words are placed once per event-loop pass, after the resizes a layout sends
    tree = p.walk.tree
    texts = [i.toPlainText() for i in p.graph.getPlotItem().items if isinstance(i, pg.TextItem)]
    yes_no = sum(1 for n in tree.nodes.values() for a in n.answers
                 if a.label.split(":")[0].split("(")[0].split(",")[0].strip() in ("Yes", "No"))
    words = [w for t in texts for w in t.split(" / ")]        # two answers to one target share a label
    assert yes_no > 0 and words.count("Yes") + words.count("No") == yes_no
    shown = [i for i in p.graph.getPlotItem().items if isinstance(i, pg.TextItem) and i.isVisible()]
    for i, a in enumerate(shown):                              # nothing written over anything else
        for b in shown[i + 1:]:
            if a.toPlainText() in ("Yes", "No", "Yes / No") and b.toPlainText() in ("Yes", "No", "Yes / No"):
                assert not a.sceneBoundingRect().intersects(b.sceneBoundingRect()), (a.toPlainText(), b.toPlainText())
    for node in tree.nodes.values():
        assert any(t.startswith(node.label) for t in texts), node.label
    # the view's x range leaves room for the widest outcome label
    lo, hi = p.graph.getViewBox().viewRange()[0]
    xs = [x for x, _l, _r in p.graph._label_px]
    assert lo < min(xs) and hi > max(xs)


def test_the_deadline_clocks_paint_with_their_date_axes_and_grid(make_panel):
    """Opening the clocks tab crashed the app: the grid (painted under the data, so before the axis)
    asked the date axis for ticks before the axis had painted and set up its font metrics; the
    exception inside ``paint()`` left Qt's painter corrupt and the process segfaulted."""
    p = make_panel(LawPanel)
    p.tabs.setCurrentIndex(1)
    for plot in (p.clock_tab.cra_plot, p.clock_tab.pld_plot):
        image = plot.grab()                                   # paints the chart, grid first
        assert not image.isNull()
        grid = plot.getPlotItem()._tick_grid
        assert grid._lines is not None and grid._lines[1]     # the date ticks' grid lines were drawn


def test_a_grid_under_a_date_axis_that_never_painted_still_finds_its_lines(qtbot):
    import pyqtgraph as pg

    from explorer.ui.tick_grid import install_grid

    plot = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem()})
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.setXRange(1.79e9, 1.80e9, padding=0)
    grid = install_grid(plot.getPlotItem(), "#000000")
    grid._grid_lines()                                        # no AttributeError: 'fontMetrics'
    _key, levels = plot.getAxis("bottom")._grid_ticks         # and the date ticks were found
    assert levels and all(1.79e9 <= v <= 1.80e9 for v in levels[0])


def test_a_date_grid_over_many_years_draws_its_years_not_every_month(qtbot):
    """Sixteen years on a 900-px chart tick every month: 192 lines 5 px apart shaded the view like a
    bar code. A level whose lines are that close is left out; the years stay."""
    import pyqtgraph as pg

    from explorer.ui.tick_grid import MIN_MEAN_GAP_PX, install_grid

    plot = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem()})
    qtbot.addWidget(plot)
    plot.resize(900, 300)
    plot.show()
    plot.setXRange(1.82e9, 1.82e9 + 16 * 365.25 * 86400, padding=0)
    grid = install_grid(plot.getPlotItem(), "#000000")
    qtbot.wait(20)
    levels = [[line.x1() for line in lines if line.x1() == line.x2()] for _pen, lines in grid._grid_lines()]
    levels = [sorted(xs) for xs in levels if xs]              # the date axis' lines, level by level
    assert levels                                             # the years are there
    for xs in levels:
        assert len(xs) < 3 or (xs[-1] - xs[0]) / (len(xs) - 1) >= MIN_MEAN_GAP_PX
    assert 14 <= sum(map(len, levels)) <= 40                  # about one a year, not one a month


def test_every_deadline_label_ends_inside_its_chart(qtbot):
    """The last deadline's label ran past the chart's right edge ("final repor", "23 Oct 20"): the
    range leaves room for each label in pixels, at any width."""
    from datetime import timezone

    import pyqtgraph as pg

    from explorer.theme import THEMES
    from panels._law_views import DeadlineTimeline

    utc = timezone.utc
    marks = [(datetime(2026, 10, 2, 17, 30, tzinfo=utc), "aware", "event"),
             (datetime(2026, 10, 3, 17, 30, tzinfo=utc), "24 h early warning", "deadline"),
             (datetime(2026, 10, 9, 17, 30, tzinfo=utc), "fix available", "event"),
             (datetime(2026, 10, 23, 17, 30, tzinfo=utc), "final report", "deadline")]
    for width in (320, 600):
        plot = DeadlineTimeline(THEMES["light"], "Art 14 deadlines")
        qtbot.addWidget(plot)
        plot.resize(width, 260)
        plot.show()
        plot.draw(marks)
        plot.grab()
        view = plot.getViewBox().sceneBoundingRect()
        labels = [i for i in plot.getPlotItem().items if isinstance(i, pg.TextItem)]
        assert len(labels) == 4
        for label in labels:
            assert label.sceneBoundingRect().right() <= view.right() + 1, (width, label.textItem.toPlainText())


def test_a_redrawn_deadline_chart_moves_its_marks_instead_of_making_new_ones(qtbot):
    """A tour step that changes one clock redrew its chart from nothing (G4 11: two charts, 11 of the
    step's 48 ms): the lines and labels are kept, moved and retitled; marks no longer needed are hidden."""
    from datetime import timezone

    import pyqtgraph as pg

    from explorer.theme import THEMES
    from panels._law_views import DeadlineTimeline

    def shown(plot):
        return [i for i in plot.getPlotItem().items if isinstance(i, (pg.TextItem, pg.InfiniteLine)) and i.isVisible()]

    utc = timezone.utc
    four = [(datetime(2026, 10, d, 17, 30, tzinfo=utc), f"mark {d}", "deadline") for d in (2, 3, 9, 23)]
    plot = DeadlineTimeline(THEMES["light"], "Art 14 deadlines")
    qtbot.addWidget(plot)
    plot.resize(600, 260)
    plot.show()
    plot.draw(four)
    first = shown(plot)
    assert len(first) == 8
    plot.draw([(datetime(2026, 11, 5, tzinfo=utc), "moved", "event"), four[0]])
    texts = sorted(i.toPlainText() for i in shown(plot) if isinstance(i, pg.TextItem))
    assert [t.split("\n")[0] for t in texts] == ["mark 2", "moved"]
    assert len(shown(plot)) == 4
    plot.draw(four)
    assert set(map(id, shown(plot))) == set(map(id, first))     # the same items, none made
    assert [i.value() for i in shown(plot) if isinstance(i, pg.InfiniteLine)] == \
        [datetime(2026, 10, d, 17, 30, tzinfo=utc).timestamp() for d in (2, 3, 9, 23)]



def test_a_saved_view_reopens_the_walk_and_the_clocks(window, qtbot, tmp_path, new_window):
    """A saved view puts back the walk (answers and continues) and the clocks' inputs, not the opening view."""
    from explorer.view_state import load_view_state, save_view_state

    p = window.show_panel("law")
    for label in ("No: software", "Yes", "None of these", "Yes (paid", "We make it", "No"):
        _click_answer(qtbot, p, label)
    qtbot.mouseClick(p.continue_btn, Qt.LeftButton)             # on into the classification tree
    _click_answer(qtbot, p, "IV-2")
    assert p.walk.current.is_outcome and p.walk.tree.key == "cra-classification" and p.outcome_text.text()
    p.clock_tab.notified_check.setChecked(True)
    p.clock_tab.knowledge_edit.setDate(QDate(2031, 2, 3))
    node, outcome, facts = p.walk.current.id, p.outcome_text.text(), p.walk.facts
    path = save_view_state(window.view_state(), tmp_path / "law.json")
    other = new_window()
    other.apply_view_state(load_view_state(path))
    q = other.current_panel()
    assert q.key == "law" and q.params == p.params and q.params.answers == p.params.answers
    assert q.walk.current.id == node and q.walk.facts == facts
    assert q.card_title.text() == p.card_title.text() and q.outcome_text.text() == outcome
    assert q.clock_tab.notified_check.isChecked() and q.clock_tab.knowledge_edit.date() == QDate(2031, 2, 3)
    assert p.settle() and q.settle()                            # the clocks' tab is not showing in either
    assert q.clocks == p.clocks and q.clock_tab.pld_result.text() == p.clock_tab.pld_result.text()


def test_named_views_for_tours_and_the_walk_opens_where_it_is(qtbot, make_panel):
    """Tours point at the graph, the card and its parts, and the clocks by name; the timeline opens
    on the last frame, so the graph shows the node the card describes; the engine's result heads the
    outcome card; a named part of the card is scrolled into view when a step points at it."""
    p = make_panel(LawPanel, size=(900, 420))
    assert {"tree_graph", "walk", "card", "help", "article", "answers", "obligations", "cra_clock", "cra_timeline",
            "cra_deadlines", "aware", "pld_clock", "pld_timeline", "pld_deadlines"} <= set(p.views())
    p.load_example("password-manager")
    spec = p.timeline()
    assert spec.start == spec.n_frames - 1
    assert p.outcome_text.text().index("Rule engine:") < p.outcome_text.text().index("Obligations")
    p.update_params(tree="cra-scope", answers=("no", "yes"))      # the sector question: eight answers
    bar = p.card_scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=2000)     # the answers lie below the card's fold
    bar.setValue(0)
    assert p.view_widget("answers") is p._answers_widget
    qtbot.waitUntil(lambda: bar.value() > 0, timeout=2000)


def test_a_clock_changed_behind_another_tab_draws_once_when_its_tab_shows(make_panel, monkeypatch):
    """New clock params while the decision trees show: the engine answers at once (``clocks``), the
    clocks' tab draws when it is shown, and each of its charts renders once, with the new marks (its
    own wait for the show and the tab's replay rendered it twice)."""
    from panels._law_views import DeadlineTimeline

    p = make_panel(LawPanel)
    p.tabs.setCurrentIndex(0)                                 # the decision trees
    renders = []
    render = DeadlineTimeline._render
    monkeypatch.setattr(DeadlineTimeline, "_render", lambda self: (renders.append(self), render(self)))
    before = p.clock_tab.cra_result.text()
    assert p.update_params(event="incident", aware="2026-11-13T17:30", notified=True,
                           notified_at="2026-11-15T10:00") is None
    assert p.clocks["cra"]["final_report"] is not None       # the engine's answer, for exports, at once
    assert p.clock_tab.cra_result.text() == before and renders == []
    p.tabs.setCurrentWidget(p.clock_tab)
    assert "15 Dec 2026 10:00" in p.clock_tab.cra_result.text()
    p.settle()
    assert renders.count(p.clock_tab.cra_plot) == 1
    assert any("15 Dec 2026" in item.toPlainText() for item in p.clock_tab.cra_plot._labels)


def test_a_view_that_changes_a_clock_and_leaves_its_tab_draws_no_chart(make_panel, monkeypatch):
    """G4 11: the step before showed the clocks; this one changes a clock and shows the decision tree.
    Applied as one (``holding``, as a view or tour step is), the clocks' charts wait for their tab."""
    from panels._law_views import DeadlineTimeline

    p = make_panel(LawPanel)
    p.tabs.setCurrentWidget(p.clock_tab)
    p.settle()
    renders = []
    render = DeadlineTimeline._render
    monkeypatch.setattr(DeadlineTimeline, "_render", lambda self: (renders.append(self), render(self)))
    with p.holding():
        assert p.update_params(event="incident", aware="2026-11-13T17:30", notified=True,
                               notified_at="2026-11-15T10:00") is None
        p.set_inner_tabs(["Decision trees"])
    p.settle()
    assert renders == [] and p.tabs.currentIndex() == 0
    p.tabs.setCurrentWidget(p.clock_tab)
    p.settle()
    assert renders.count(p.clock_tab.cra_plot) == 1
    assert any("15 Dec 2026" in item.toPlainText() for item in p.clock_tab.cra_plot._labels)
