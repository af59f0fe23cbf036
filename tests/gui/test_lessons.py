"""Lessons in the window: the start page and navigator, tours applied step by step (every shipped
step checked and rendered), keys, presenter folding, authoring, and the command line."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from explorer.lessons import Tour, TourStep, lesson_tour, lessons, load_tour
from explorer.lessons.checks import step_problems

ROOT = Path(__file__).resolve().parents[2]
READY = [x.id for x in lessons() if x.ready]


@pytest.mark.parametrize("lesson_id", READY)
def test_every_step_of_a_shipped_tour_shows_its_view_and_renders(window, lesson_id):
    from explorer.exports import render_image

    tour = lesson_tour(lesson_id)
    for i in range(len(tour.steps)):
        assert step_problems(window, tour, i) == []
        image = render_image(window.current_panel().export_widget(), 0.5)
        colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
        assert len(colours) > 3, f"{lesson_id} step {i + 1} rendered blank"
    assert window.tour.index == len(tour.steps) - 1


def test_the_start_page_lists_every_course_and_starts_a_ready_lesson(new_window, qtbot):
    win = new_window(remember=True)                 # a first start: no remembered tab
    assert win.lessons.on_start_page
    page = win.lessons.start_page
    assert len(page.cards) == 8 and set(page.buttons) == set(READY)
    first = READY[0]
    qtbot.mouseClick(page.buttons[first], Qt.LeftButton)
    assert win.tour.active and win.tour.tour.lesson == first and not win.lessons.on_start_page
    assert win.current_panel().key == lesson_tour(first).steps[0].panel
    assert win.lessons.bar.isVisible() and "step 1 of" in win.lessons.bar.where.text()
    for p in win.panels:
        p.cancel_jobs()


def test_the_navigator_opens_every_panel_in_one_click_without_scrolling(window, qtbot):
    """At 1280×800, the smallest common projector, the side list replaces the scrolling tab bar."""
    window.resize(1280, 800)
    qtbot.wait(50)
    nav = window.lessons.nav
    assert not window.tabs.tabBar().isVisible() and nav.width() <= 0.18 * 1280 + 1
    for info in window.panel_infos:
        item = nav._items[("panel", info.key)]
        rect = nav.visualItemRect(item)
        assert nav.viewport().rect().contains(rect), f"{info.key} needs scrolling"
        qtbot.mouseClick(nav.viewport(), Qt.LeftButton, pos=rect.center())
        assert window.current_panel().key == info.key
    for x in lessons():
        assert ("(coming)" in nav._items[("lesson", x.id)].text(0)) == (not x.ready), x.id


def _mini_tour() -> Tour:
    return Tour("T", "Test tour", (
        TourStep(panel="overview", caption="One.", claim="a"),
        TourStep(panel="memory", caption="Two.", claim="b", preset="llama3-70b", scenario={"strategy": "zero3"},
                 params={"fp32_grad_accum": True}, tabs=("Communication per step",)),
        TourStep(panel="pipeline", caption="Three.", claim="c", scenario={"pp": 4, "grad_accum": 8}, frame=2),
    ))


def test_keys_move_the_tour_and_leave_the_timeline_its_own(window, qtbot):
    t = window.ctx.timeline
    window.show_panel("pipeline")
    window.ctx.scenario.replace(window.ctx.scenario.value.with_changes(pp=4, grad_accum=8))
    assert window.current_panel().settle()
    t.set_position(0)
    qtbot.keyClick(window, Qt.Key_PageDown)             # no tour: the next chapter
    assert t.position > 0 and not window.tour.active
    assert window.tour.start(_mini_tour())
    qtbot.keyClick(window, Qt.Key_PageDown)             # a tour: the next step
    assert window.tour.index == 1 and window.current_panel().key == "memory"
    qtbot.keyClick(window, Qt.Key_Right, Qt.AltModifier)
    assert window.tour.index == 2
    assert window.current_panel().settle()
    frame = t.position
    qtbot.keyClick(window, Qt.Key_Right)                # not presenting: arrows step frames
    assert window.tour.index == 2 and t.position == frame + 1
    qtbot.keyClick(window, Qt.Key_PageUp)
    assert window.tour.index == 1
    window.set_presenter(True, full_screen=False)
    qtbot.keyClick(window, Qt.Key_Right)                # presenting: a clicker's arrow moves the tour
    assert window.tour.index == 2
    qtbot.keyClick(window, Qt.Key_Left, Qt.AltModifier)
    assert window.tour.index == 1
    window.set_presenter(False)


def test_presenter_mode_gives_the_focused_view_the_room_and_gives_it_back(window, qtbot):
    memory = window.panel("memory")
    memory.name_view("sweep", memory.sweep_view)
    tour = Tour("T", "t", (TourStep(panel="memory", caption="Look.", tabs=("Memory against GPU count",),
                                    focus="sweep", highlight="fp32_grad_accum"),
                           TourStep(panel="overview", caption="Next.")))
    window.set_presenter(True, full_screen=False)
    docks = [d for d in window.findChildren(QDockWidget)
             if d.objectName() != "timeline_dock" and d.toggleViewAction().isChecked()]   # open (a tab or shown)
    assert {d.objectName() for d in docks} >= {"scenario_dock", "lesson_dock", "nav_dock"}
    assert window.tour.start(tour)
    assert window.current_panel().settle()
    assert not any(d.isVisible() for d in docks) and not window.lessons.nav.isVisible()
    assert memory.sweep_view.plot.isVisible() and not memory.fp32_acc.isVisible()
    assert memory.sweep_view.plot.height() > 0.6 * memory.height()
    window.lessons.bar.controls_button.click()          # "show controls" (F6) brings them back
    assert all(d.toggleViewAction().isChecked() for d in docks) and memory.fp32_acc.isVisible()
    window.lessons.bar.controls_button.click()
    assert not memory.fp32_acc.isVisible()
    window.tour.stop()
    assert memory.fp32_acc.isVisible() and all(d.toggleViewAction().isChecked() for d in docks)
    window.set_presenter(False)
    assert window.lessons.nav.isVisible() and window.findChild(QDockWidget, "nav_dock") is None


def test_in_the_window_the_tour_bar_keeps_room_for_the_longest_caption_so_the_picture_stays_put(window, qtbot):
    """In the window the tour bar has room for the tour's longest caption from its first step: a
    caption lines longer or shorter than the last neither moves the panel above nor re-lays out its
    charts. Presenting, the bar fits each caption (the slide's rows are the picture's)."""
    from PySide6.QtWidgets import QApplication

    long = " ".join(["A caption long enough to wrap onto several lines of the bar."] * 8)
    tour = Tour("T", "t", (TourStep(panel="overview", caption="Short."),
                           TourStep(panel="overview", caption=long, source="A paper, 2024."),
                           TourStep(panel="overview", caption="Short again.")))
    bar = window.lessons.bar

    def walk() -> list[tuple[int, int, int]]:
        sizes = []
        for i in range(len(tour.steps)):
            assert window.tour.go(i)
            QApplication.processEvents()
            host = window.current_panel().parentWidget().parentWidget()
            sizes.append((bar.height(), host.height(), bar.layout().totalHeightForWidth(bar.width())))
        return sizes

    assert window.tour.start(tour)
    (short, panel, need_short), (tall, _, need_long), _ = sizes = walk()
    assert need_long > need_short                                     # the long caption needs more rows
    assert {(bar_h, host_h) for bar_h, host_h, _ in sizes} == {(short, panel)}   # and had them from step 1
    assert short >= need_long
    assert walk() == sizes                                            # a second walk: the panel stays put
    window.set_presenter(True, full_screen=False)
    try:
        (short, _, _), (tall, _, _), (after, _, _) = walk()
        assert tall > short and after < tall                          # presenting: each caption fits
    finally:
        window.set_presenter(False)
    window.tour.stop()
    assert bar.minimumHeight() == 0


def test_a_tour_in_the_normal_window_folds_the_side_columns_unless_pinned(window, qtbot):
    """A learner's layout: on a 1280×800 laptop the docks left the step's chart no room."""
    window.resize(1280, 800)
    docks = [d for d in window.findChildren(QDockWidget) if d.objectName() in ("scenario_dock", "lesson_dock")]
    assert all(d.isVisible() for d in docks) and window.lessons.nav.isVisible()
    assert window.tour.start(_mini_tour())
    qtbot.waitUntil(lambda: not any(d.isVisible() for d in docks))
    assert not window.lessons.nav.isVisible()
    qtbot.keyClick(window, Qt.Key_F6)                   # the controls back
    assert all(d.isVisible() for d in docks) and window.lessons.nav.isVisible()
    qtbot.keyClick(window, Qt.Key_F6)
    qtbot.waitUntil(lambda: not any(d.isVisible() for d in docks))
    window.lessons.pin_action.trigger()                 # pinned: they stay open
    assert all(d.isVisible() for d in docks) and not window.lessons.bar.controls_button.isVisible()
    window.lessons.pin_action.trigger()
    qtbot.waitUntil(lambda: not any(d.isVisible() for d in docks))
    window.tour.stop()
    assert all(d.isVisible() for d in docks) and window.lessons.nav.isVisible()


def test_a_step_in_the_window_scrolls_its_focus_view_into_sight(window, qtbot):
    """Nothing is folded in the window: a chart at the foot of a long tab (the law panel's fine
    chart under the support period) is scrolled to, or the step shows something else."""
    from explorer.lessons.slide_text import visible_rect

    window.resize(1280, 800)
    step = TourStep(panel="law", caption="Look.", tabs=("Support and fines",), focus="fine_plot")
    assert window.tour.start(Tour("T", "t", (step,)))
    plot = window.current_panel().view_widget("fine_plot")
    qtbot.waitUntil(lambda: visible_rect(plot, window).height() >= plot.height() - 1)
    window.tour.stop()


def test_a_step_in_a_small_window_folds_the_panel_around_its_focus_view(window, qtbot):
    """On a 1280×800 laptop the memory panel squeezes its step-time chart to a strip: a tour step
    about it folds the panel around it (as presenter mode does); with the docks pinned, the user
    asked for the whole layout, and the panel stays whole."""
    window.resize(1280, 800)
    step = TourStep(panel="memory", caption="Look.", tabs=("Step time",), focus="time")
    assert window.tour.start(Tour("T", "t", (step,)))
    panel = window.current_panel()
    chart, bars = panel.view_widget("time"), panel.view_widget("bars")
    host = panel.parentWidget().parentWidget()
    qtbot.waitUntil(lambda: not bars.isVisible() and chart.height() >= 0.5 * host.viewport().height())
    window.tour.stop()
    window.lessons.set_pin_docks(True)
    try:
        assert window.tour.start(Tour("T", "t", (step,)))
        qtbot.wait(50)
        assert window.current_panel().view_widget("bars").isVisible()
    finally:
        window.tour.stop()
        window.lessons.set_pin_docks(False)


def test_a_step_about_text_its_card_scrolls_half_away_folds_the_panel_around_it(window, qtbot):
    """F2 7 in a 1280×800 window: the manufacturer's obligations, a label taller than the card's view,
    were cut, because "text that shows whole is not folded" was decided before asking whether a scroll
    area cut it. The panel folds around the label (the tree graph goes) and it shows whole."""
    from explorer.lessons.slide_text import visible_rect

    window.resize(1280, 800)
    answers = ["no", "yes", "none", "yes", "maker", "no", "continue", "none", "none", "III-I-3", "continue", "no",
               "continue", "after"]
    step = TourStep(panel="law", caption="Look.", params={"answers": answers}, tabs=("Decision trees",),
                    focus="obligations")
    try:
        assert window.tour.start(Tour("T", "t", (step,)))
        panel = window.current_panel()
        label = panel.view_widget("obligations")
        qtbot.waitUntil(lambda: not panel.graph.isVisible()
                        and visible_rect(label, window).height() >= label.height() - 1 > 0)
    finally:
        window.tour.stop()


def test_a_step_that_animates_plays_its_chapter(window, qtbot):
    tour = Tour("T", "t", (TourStep(panel="pipeline", caption="Play.", scenario={"pp": 4, "grad_accum": 8},
                                    frame=0, play=True),))
    assert window.tour.start(tour)
    t = window.ctx.timeline
    qtbot.waitUntil(lambda: t.spec is not None and t.position > 0, timeout=20_000)
    qtbot.waitUntil(lambda: not t.playing, timeout=60_000)
    marks = sorted(i for i, _ in t.spec.chapters if i > 0)
    assert t.position == (marks[0] if marks else t.n_frames - 1)


def test_a_bad_step_says_why_and_changes_nothing(window):
    before = window.view_state()
    tour = Tour("T", "t", (TourStep(panel="memory", caption="Bad.", scenario={"n_gpus": 0}),))
    assert not window.tour.start(tour)
    assert "n_gpus" in window.error_label.text() and window.view_state() == before


def test_authoring_add_edit_move_delete_save_and_reopen(window, tmp_path):
    shell = window.lessons
    window.show_panel("memory")
    shell.new_tour("First view.")
    window.ctx.scenario.replace(window.ctx.scenario.value.with_changes(n_gpus=128))
    window.show_panel("pipeline")
    shell.add_step("Second view.")
    assert [s.caption for s in window.tour.tour.steps] == ["First view.", "Second view."]
    assert window.tour.tour.steps[1].scenario == {"n_gpus": 128} and window.tour.tour.steps[1].panel == "pipeline"
    shell.edit_caption("Second, edited.")
    shell.move_step(-1)
    assert [s.caption for s in window.tour.tour.steps] == ["Second, edited.", "First view."]
    assert "edited, not saved" in shell.bar.where.text()
    out = tmp_path / "mine.json"
    assert shell.save_tour(out) and not window.tour.modified
    shell.delete_step()
    assert len(window.tour.tour.steps) == 1
    assert shell.open_tour(out) and [s.caption for s in window.tour.tour.steps] == ["Second, edited.", "First view."]
    assert window.current_panel().key == "pipeline" and window.ctx.scenario.value.n_gpus == 128


def test_a_shipped_tour_copied_and_adapted(window, tmp_path):
    shell = window.lessons
    assert shell.start_lesson(READY[0])
    shell.edit_caption("My own words for the first step.")
    out = tmp_path / "copy.json"
    assert shell.save_tour(out)
    copy = load_tour(out)
    assert copy.steps[0].caption == "My own words for the first step."
    assert copy.steps[1:] == lesson_tour(READY[0]).steps[1:]


def test_a_broken_tour_file_is_refused_and_the_running_tour_stays(window, tmp_path):
    shell = window.lessons
    assert shell.start_lesson(READY[0])
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "explorer-tour", "schema_version": 1, "lesson": "X", "title": "T", "steps": [{}]}')
    assert not shell.open_tour(bad)
    assert "bad.json" in window.error_label.text() and window.tour.tour.lesson == READY[0]


def test_slides_html_and_pdf_have_one_slide_per_step(window, tmp_path):
    from explorer.lessons.slides import export_tour

    tour = _mini_tour()
    html = export_tour(window, tour, tmp_path / "deck.html").read_text(encoding="utf-8")
    assert html.count("<section class='slide'") == 3 and html.count("data:image/png;base64,") == 3
    assert "http://" not in html and "https://" not in html            # offline
    pdf = export_tour(window, tour, tmp_path / "deck.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)) == 3
    with pytest.raises(ValueError, match=r"\.html or \.pdf"):
        export_tour(window, tour, tmp_path / "deck.pptx")


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_cli_lists_lessons_opens_a_step_and_exports(tmp_path):
    r = _cli("--list-lessons")
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert r.returncode == 0 and len(rows) == 30 and rows[0][0] == "A1"
    assert {s for _, s, _ in rows} <= {"ready", "coming"} and ["A2", "ready"] == rows[1][:2]
    shot, state = tmp_path / "a2.png", tmp_path / "a2.json"
    r = _cli("--lesson", "A2", "--step", "2", "--screenshot", str(shot), "--presenter", "--size", "1280x800")
    assert r.returncode == 0, r.stderr
    assert shot.stat().st_size > 10_000
    r = _cli("--lesson", "A2", "--step", "2", "--save-state", str(state))
    assert r.returncode == 0, r.stderr
    assert json.loads(state.read_text())["panel"] == lesson_tour("A2").steps[1].panel
    deck = tmp_path / "a2.pdf"
    r = _cli("--export-lesson", "A2", str(deck))
    assert r.returncode == 0, r.stderr
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", deck.read_bytes())) == len(lesson_tour("A2").steps)
    for args, says in ((("--lesson", "Z9", "--screenshot", str(shot)), "no lesson 'Z9'"),
                       (("--lesson", "A2", "--step", "99", "--screenshot", str(shot)), "99 is not a step"),
                       (("--export-lesson", "A2", str(tmp_path / "x.doc")), ".html or .pdf")):
        r = _cli(*args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_tour_shows_the_timeline_only_on_a_step_that_plays_it(window, qtbot):
    """Issue 38: a still step of an animated panel gave a row of the slide to a player nobody used."""
    dock = window.findChild(QDockWidget, "timeline_dock")
    tour = Tour("T", "t", (TourStep(panel="memory", caption="A still frame.", frame=7),
                           TourStep(panel="memory", caption="Now it plays.", frame=7, play=True),
                           TourStep(panel="overview", caption="No timeline.")))
    assert window.tour.start(tour)
    window.current_panel().settle()
    assert window.ctx.timeline.spec is not None and not dock.isVisible()
    assert window.tour.next()
    assert dock.isVisible()
    assert window.tour.next()
    assert not dock.isVisible()
    window.tour.stop()
    assert dock.isVisible()


def test_the_last_step_offers_the_courses_next_lesson_and_practice(window, monkeypatch):
    """Issue 38: the end of a tour leads on, to the next lesson of the course and to practice."""
    from engines.practice import shipped_lessons
    from explorer.lessons.catalog import lesson

    bar, started = window.lessons.bar, []
    monkeypatch.setattr(window.lessons, "start_lesson", lambda lesson_id, step=0: started.append(lesson_id))
    steps = (TourStep(panel="overview", caption="First."), TourStep(panel="overview", caption="Last."))
    assert window.tour.start(Tour("A3", "Pipelines", steps))
    assert bar.next_lesson_link.isHidden()                    # not before the last step
    assert window.tour.next()
    assert not bar.next_lesson_link.isHidden()
    assert bar.next_lesson_link.text() == f"<a href='A4'>Next lesson: {lesson('A4').title} ▶</a>"
    assert bar.next_lesson_link.minimumSizeHint().width() < 300       # wraps: never widens the window
    assert bar.practice_button.isHidden() == ("A3" not in shipped_lessons())
    bar.next_lesson_link.linkActivated.emit("A4")
    assert started == ["A4"]
    assert window.tour.start(Tour("C2", "The end of course C", steps), 1)
    assert bar.next_lesson_link.isHidden()                    # the course's last lesson: nothing follows
    window.tour.stop()


def test_a_new_fold_replaces_the_last_in_place_as_a_fold_from_scratch_would(window, monkeypatch):
    """From one folded view to another the fold is replaced, not undone first: the panel ends as a
    fold from nothing would leave it, and a chart hidden by both folds is never shown in between
    (each shown chart is laid out anew: undoing the whole fold cost A2's steps 20 ms)."""
    import shiboken6
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QWidget

    from explorer.lessons.player import Fold

    class Shows(QObject):
        seen: set[int] = set()
        folding = False                      # only the fold's own shows count (a panel may show its tab bar)

        def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
            if event.type() == QEvent.Show and self.folding:
                self.seen.add(key(obj))
            return False

    def key(w) -> int:                        # the widget itself: a wrapper Qt hands back may be a new one
        return shiboken6.getCppPointer(w)[0]

    def showing(panel) -> set[int]:
        return {key(w) for w in panel.findChildren(QWidget) if w.isVisible()}

    shows = Shows()
    around = Fold.around

    def watched(self, *args) -> None:
        shows.folding = True
        try:
            around(self, *args)
        finally:
            shows.folding = False

    monkeypatch.setattr(Fold, "around", watched)
    window.set_presenter(True, full_screen=False)
    tour = lesson_tour("A2")
    try:
        assert window.tour.start(tour, 0)
        replaced = 0
        for i in range(1, len(tour.steps)):
            step, before = tour.steps[i], tour.steps[i - 1]
            panel = window.current_panel()
            hidden_before = {key(w) for w in window.tour.fold._hidden}
            for w in window.tour.fold._hidden:
                w.installEventFilter(shows)
            shows.seen = set()
            assert window.tour.go(i)
            fold = window.tour.fold
            if step.panel != "memory" or before.panel != "memory" or step.focus == before.focus:
                continue
            replaced += 1
            hidden_now = {key(w) for w in fold._hidden}
            assert not (shows.seen & hidden_before & hidden_now), i + 1    # hidden by both: never shown between
            in_place = showing(panel)
            fold.restore()
            fold.around(panel.view_widget(step.focus), panel, True)
            assert showing(panel) == in_place and {key(w) for w in fold._hidden} == hidden_now, i + 1
        assert replaced >= 6
    finally:
        window.tour.stop()
        window.set_presenter(False)


def test_in_the_window_a_fold_in_place_asks_once_whether_the_view_is_cramped(window, monkeypatch):
    """In the window a step folds only a cramped view, which is judged on the panel unfolded. The
    answer is kept for the panel's room and text size: stepping between two folded views again
    replaces the fold in place, without unfolding the panel to ask."""
    from explorer.lessons.player import Fold

    window.resize(1280, 800)
    restores = []
    restore = Fold.restore
    monkeypatch.setattr(Fold, "restore", lambda self: (restores.append(1), restore(self)))
    steps = (TourStep(panel="memory", caption="Step time.", tabs=("Step time",), focus="time"),
             TourStep(panel="memory", caption="Throughput.", tabs=("Throughput against GPU count",),
                      focus="throughput"))
    try:
        assert window.tour.start(Tour("T", "t", steps))
        for i in (1, 0, 1):
            assert window.tour.go(i)
            assert window.tour.fold.active
        restores.clear()
        for i in (0, 1, 0):
            assert window.tour.go(i)
            panel = window.current_panel()
            assert window.tour.fold.active and panel.view_widget(steps[i].focus).isVisible()
        assert restores == []
    finally:
        window.tour.stop()


def test_a_step_folds_its_panel_once_and_keeps_the_fold_of_the_same_view(window, monkeypatch):
    """Undoing and redoing a fold re-lays out every view of the panel (41 chart resizes on the memory
    panel): the player and the shell each arranged a step, twice the work on every Next. A step on the
    view the step before folded around keeps that fold (A2 spent 60 ms a step on undoing and redoing
    it), unless something the fold hid shows again."""
    from explorer.lessons import lesson_tour
    from explorer.lessons.player import Fold

    folds = []
    around = Fold.around
    monkeypatch.setattr(Fold, "around", lambda self, target, *a: (folds.append(target), around(self, target, *a)))
    window.set_presenter(True, full_screen=False)
    tour = lesson_tour("A2")
    try:
        assert window.tour.start(tour, 0)
        kept = 0
        for i in range(1, 8):
            folds.clear()
            assert window.tour.go(i)
            panel = window.current_panel()
            same = tour.steps[i].focus == tour.steps[i - 1].focus and tour.steps[i].panel == tour.steps[i - 1].panel
            kept += same
            assert len(folds) == (0 if same else 1) and window.tour.fold.active, (i, len(folds))
            assert panel.view_widget(tour.steps[i].focus).isVisible()
        assert kept >= 2                                          # A2 has steps that keep their view
        hidden = window.tour.fold._hidden[-1]
        hidden.show()                                             # the panel showed a widget the fold hid
        folds.clear()
        window.tour.arrange()
        assert len(folds) == 1 and hidden.isHidden()             # folded again: the view fills the panel
    finally:
        window.tour.stop()
        window.set_presenter(False)
