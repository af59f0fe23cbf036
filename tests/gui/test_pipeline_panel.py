"""Pipeline panel: real widgets drive the scenario and the engines."""
from __future__ import annotations

import pytest

from panels.pipeline import TABS, PipelinePanel


@pytest.fixture
def panel(make_panel, ctx):
    ctx.scenario.update(n_gpus=64, tp=8, pp=4, grad_accum=8)
    return make_panel(PipelinePanel)


def test_gantt_follows_scenario_and_controls(panel, ctx):
    side = panel.sims[0]
    sim = side.sim
    assert side.kind == "1f1b" and sim.n_ranks == 4
    assert sim.peak_in_flight == [4, 3, 2, 1]
    assert sim.bubble_over_ideal == pytest.approx(3 / 8)
    assert "37.5%" in panel.formula[0].text() and "27.3%" in panel.formula[0].text()
    right = panel.sims[1]
    assert right.kind == "interleaved-1f1b" and right.sim.bubble_over_ideal == pytest.approx(3 / 16)

    panel.m_spin.setValue(16)  # writes the scenario's gradient-accumulation steps
    assert ctx.scenario.value.grad_accum == 16
    assert panel.sims[0].sim.bubble_over_ideal == pytest.approx(3 / 16)

    panel.kind[0].setCurrentIndex(panel.kind[0].findData("zb-h1"))
    assert panel.sims[0].kind == "zb-h1"
    assert "ZB-H1" in panel.formula[0].text()


def test_invalid_combination_is_shown_inline(panel, ctx):
    panel.m_spin.setValue(6)  # interleaving needs m to be a multiple of p = 4
    assert panel.sims[1] is None
    assert panel.sched_error.isVisible() and "multiple" in panel.sched_error.text()
    assert panel.sims[0] is not None  # the other side still draws


def test_pipeline_degree_edits_the_scenario_or_explains(panel, ctx):
    panel.p_spin.setValue(2)
    assert ctx.scenario.value.pp == 2 and panel.sims[0].sim.n_ranks == 2
    panel.p_spin.setValue(3)  # 64 GPUs are not divisible by TP 8 × PP 3
    assert ctx.scenario.value.pp == 2
    assert panel.sched_error.isVisible() and panel.p_spin.value() == 2


def test_timeline_sweeps_the_cursor(panel):
    spec = panel.timeline()
    assert spec.n_frames > 10
    panel.show_frame(spec.n_frames - 1)
    t_max = max(s.sim.makespan for s in panel.sims if s)
    assert panel.gantts[0].cursor.value() == pytest.approx(t_max)


def test_tp_view_counts_collectives(panel, ctx):
    panel.tabs.setCurrentIndex(TABS.index("tp"))
    spec = panel.timeline()
    assert spec.n_frames == len(panel.tp_steps)
    fwd = [s for s in panel.tp_steps if s.phase == "forward" and s.collective]
    assert [s.collective for s in fwd] == ["all-reduce", "all-reduce"]
    panel.sp_check.setChecked(True)
    assert ctx.scenario.value.sequence_parallel
    fwd = [s.collective for s in panel.tp_steps if s.phase == "forward" and s.collective]
    assert fwd == ["all-gather", "reduce-scatter", "all-gather", "reduce-scatter"]
    panel.show_frame(3)
    assert "Step 4/" in panel.tp_caption.text()


def test_layout_view_and_stage_memory(panel):
    panel.tabs.setCurrentIndex(TABS.index("layout"))
    assert panel.timeline() is None
    summ = panel.layout3d.summary()
    assert summ["tp"]["intra_node"] == summ["tp"]["groups"] == 8
    assert "NVLink" in panel.layout_text.text()
    grid = panel.view_widget("rank_grid")     # a slide of the grid shows the groups' figures too
    assert grid.isAncestorOf(panel.layout_view) and grid.isAncestorOf(panel.layout_text)
    assert len(panel.stage_memory) == 4 and all(st.total > 0 for st in panel.stage_memory)


def test_executed_mode_runs_on_cpu(panel, ctx, qtbot):
    ctx.scenario.update(pp=2, grad_accum=4)
    panel.tabs.setCurrentIndex(TABS.index("executed"))
    panel.hidden_spin.setValue(64)
    panel.run_executed()
    qtbot.waitUntil(lambda: panel.executed is not None, timeout=60_000)
    run = panel.executed
    assert run.kind == "1f1b" and run.measured.peak_in_flight == [2, 1]
    assert run.max_grad_error < 1e-5
    assert panel.timeline().n_frames > 10
    assert "measured makespan" in panel.exec_info.text()
    assert panel.result()["executed"]["ops"]
    longest = max(run.measured.makespan, run.simulated.makespan) * 1e3       # both charts in ms, linked
    for g in panel.exec_gantts:                 # the longer run is not cut off by the shorter one's range
        x0, x1 = g.gantt.getViewBox().viewRange()[0]
        assert x0 == 0 and x1 >= longest


def test_exports(panel):
    rows = panel.table()
    assert rows and {"rank", "action", "start", "end", "schedule"} <= set(rows[0])
    res = panel.result()
    assert res["schedules"][0]["peak_in_flight"] == [4, 3, 2, 1]


def test_big_schedules_simulate_once_in_the_worker(panel, ctx, qtbot, monkeypatch):
    import panels.pipeline as mod

    calls = []
    real = mod.compare_schedules
    monkeypatch.setattr(mod, "compare_schedules", lambda *a, **k: calls.append(a[0].m) or real(*a, **k))
    for m in (128, 192, 256):  # a burst of edits above SYNC_MAX_OPS (p·m·v = 4·256·2)
        ctx.scenario.update(grad_accum=m)
    assert panel.sims[0].sim.n_ranks == 4 and panel.sims[0].sim.bubble_over_ideal == pytest.approx(3 / 8)  # old drawing
    qtbot.waitUntil(lambda: panel.sims[0] and len(panel.sims[0].sim.ops) == 4 * 256 * 2, timeout=60_000)
    assert calls == [256]  # debounced: the burst ran one simulation, of the last value
    assert panel.sims[0].sim.bubble_over_ideal == pytest.approx(3 / 256)
    assert "1.2%" in panel.formula[0].text()


def test_an_older_simulation_is_never_drawn_over_a_newer_drawing(panel, ctx, monkeypatch):
    """A big schedule goes to the worker; a small edit is drawn at once meanwhile. The worker's
    result, older than that drawing, must be dropped even though it arrives later."""
    import threading

    import panels.pipeline as mod

    release = threading.Event()
    real = mod.compare_schedules

    def held(req, *args, **kwargs):
        if req.m == 256:
            release.wait(30)          # the worker run ends only after the newer drawing
        return real(req, *args, **kwargs)

    monkeypatch.setattr(mod, "compare_schedules", held)
    ctx.scenario.update(grad_accum=256)
    panel.flush_pending()
    assert panel.tasks.running
    ctx.scenario.update(grad_accum=8)                        # p·m·v = 64: simulated and drawn now
    assert len(panel.sims[0].sim.ops) == 4 * 8 * 2
    release.set()
    assert panel.settle()
    assert len(panel.sims[0].sim.ops) == 4 * 8 * 2            # not 4·256·2: the late result was dropped


def test_hidden_tabs_draw_when_shown(panel, ctx):
    ctx.scenario.update(tp=4)  # schedules tab visible: the TP view only records the new steps
    assert panel.tp_steps and "tp" in panel._stale
    assert panel.tp_view.steps != panel.tp_steps  # not drawn while hidden
    panel.tabs.setCurrentIndex(TABS.index("tp"))
    assert panel.tp_view.t == 4 and panel.tp_view.steps == panel.tp_steps and "tp" not in panel._stale
    panel.tabs.setCurrentIndex(TABS.index("layout"))
    assert panel.layout_view.layout3d is panel.layout3d and panel.layout3d.summary()["tp"]["size"] == 4


def test_a_scenario_without_pipeline_or_tensor_parallelism_says_how_to_see_them(panel, ctx):
    assert "no bubble" not in panel.context_line.text()          # p = 4: the Gantt shows one
    assert "nothing to sum" not in panel.tp_counts.text()        # t = 8: the split is drawn
    ctx.scenario.update(tp=1)
    assert "t = 1" in panel.tp_counts.text() and "nothing to sum" in panel.tp_counts.text()
    ctx.scenario.update(pp=1)
    assert "PP = 1" in panel.context_line.text() and "p = 4, m = 8" in panel.context_line.text()
    panel.p_spin.setValue(2)              # the panel's own control edits the scenario (with the m it shows)
    assert (ctx.scenario.value.pp, ctx.scenario.value.grad_accum) == (2, 8)
    assert "demonstration" not in panel.context_line.text()


def test_a_scenario_without_a_pipeline_opens_on_a_demonstration(make_panel, ctx):
    """PP = 1 (the default scenario): the schedules show p = 4, m = 8, the panel says so, and a
    button (or editing p or m) makes them the scenario's own in one undoable edit."""
    sc = ctx.scenario.value
    assert (sc.pp, sc.grad_accum) == (1, 1)
    panel = make_panel(PipelinePanel)
    assert panel.sims[0].sim.n_ranks == 4 and panel.sims[0].sim.bubble_over_ideal == pytest.approx(3 / 8)
    assert "37.5%" in panel.formula[0].text()
    assert (panel.p_spin.value(), panel.m_spin.value()) == (4, 8)
    assert ("The scenario has no pipeline (PP = 1): showing p = 4, m = 8 as a demonstration"
            in panel.context_line.text())
    assert panel.demo_button.isVisible() and "p = 4, m = 8" in panel.demo_button.text()
    assert panel.result()["pipeline"] == {"p": 4, "m": 8, "demonstration": True}
    assert (ctx.scenario.value.pp, ctx.scenario.value.grad_accum) == (1, 1)   # showing it changes nothing

    panel.demo_button.click()
    assert (ctx.scenario.value.pp, ctx.scenario.value.grad_accum) == (4, 8)
    assert not panel.demo_button.isVisible() and "demonstration" not in panel.context_line.text()
    assert panel.sims[0].sim.n_ranks == 4 and panel.result()["pipeline"]["demonstration"] is False

    ctx.scenario.undo_stack.undo()                                   # one edit: one undo restores both
    assert (ctx.scenario.value.pp, ctx.scenario.value.grad_accum) == (1, 1)
    assert panel.demo_button.isVisible() and (panel.p_spin.value(), panel.m_spin.value()) == (4, 8)

    panel.m_spin.setValue(16)             # m edited on the demonstration: p = 4 goes in with it
    assert (ctx.scenario.value.pp, ctx.scenario.value.grad_accum) == (4, 16)
    assert panel.sims[0].sim.bubble_over_ideal == pytest.approx(3 / 16)
    ctx.scenario.undo_stack.undo()

    panel.p_spin.setValue(1)              # asking for one stage keeps the demonstration on screen
    assert ctx.scenario.value.pp == 1 and panel.p_spin.value() == 4 and panel.sims[0].sim.n_ranks == 4

    ctx.scenario.update(pp=2, grad_accum=3)   # a scenario with a pipeline is shown as it is
    assert panel.sims[0].sim.n_ranks == 2 and (panel.p_spin.value(), panel.m_spin.value()) == (2, 3)
    assert not panel.demo_button.isVisible() and "p = 2 ranks" in panel.context_line.text()


def test_the_demonstration_cannot_be_applied_where_the_gpus_do_not_split(make_panel, ctx):
    ctx.scenario.update(n_gpus=8, tp=8)          # 8 GPUs: no room for PP 4 beside TP 8
    panel = make_panel(PipelinePanel)
    assert panel.demo_button.isVisible()
    panel.demo_button.click()
    assert ctx.scenario.value.pp == 1 and panel.sched_error.isVisible() and "PP 4" in panel.sched_error.text()
    assert (panel.p_spin.value(), panel.m_spin.value()) == (4, 8) and panel.sims[0].sim.n_ranks == 4


def test_the_3d_layout_shows_every_node_whatever_the_view_shape(make_panel, ctx):
    """With the aspect locked, setting x and y in two calls kept the last one and cropped the other:
    nodes were cut off at both sides. Every drawn GPU square must lie inside the view."""
    from explorer.theme import THEMES
    from panels._pipeline_parallel_views import LayoutView

    ctx.scenario.update(n_gpus=64, tp=1, pp=1)
    p = make_panel(PipelinePanel)
    for w, h in ((700, 500), (400, 700), (900, 300)):
        view = LayoutView(THEMES["light"])
        view.resize(w, h)
        view.show()
        view.set_layout(p.layout3d)                     # drawn at its final size: no resize refits it
        (x0, x1), (y0, y1) = view.getViewBox().viewRange()
        for rank in range(64):
            x, y = view._pos(rank)
            assert x0 <= x - 0.42 and x + 0.42 <= x1 and y0 <= y - 0.42 and y + 0.42 <= y1, (w, h, rank)
        view.close()


def test_a_group_spanning_nodes_joins_rows_by_a_spine_not_diagonals(make_panel, ctx):
    """A 64-GPU DP group used to zigzag from each row's end to the next row's start, through the node
    labels. Every segment of the path is now horizontal (a row, a stub) or the vertical spine."""
    import math

    from panels._pipeline_parallel_views import SPINE, group_path

    ctx.scenario.update(n_gpus=64, tp=1, pp=1)
    p = make_panel(PipelinePanel)
    view = p.layout_view
    view.set_layout(p.layout3d)
    dp = next(g for g in p.layout3d.groups if g.kind == "dp")
    pts = [view._pos(m) for m in dp.members]
    xs, ys = group_path(pts, 0.0, -0.5, -SPINE["dp"])
    segments = [((xs[i], ys[i]), (xs[i + 1], ys[i + 1])) for i in range(len(xs) - 1)
                if not (math.isnan(xs[i]) or math.isnan(xs[i + 1]))]
    assert segments and all(a[1] == b[1] or a[0] == b[0] == -SPINE["dp"] for a, b in segments)
    rows = {y for _, y in pts}
    assert sum(1 for a, b in segments if a[0] == b[0]) == 1 and len(rows) == 4   # one spine joins 4 rows


def test_a_narrow_gantt_shortens_its_title_instead_of_cutting_off_the_schedule(make_panel, ctx, qtbot):
    """A title wider than the chart made the chart wider than its widget: the end of the schedule
    (and the cursor sweeping over it, so GIF frames repeated) fell outside the picture."""
    panel = make_panel(PipelinePanel, size=(520, 900))          # the demonstration: p = 4, m = 8, v = 2
    qtbot.wait(50)
    for g in panel.gantts:
        assert g.ci.geometry().width() <= g.width() + 0.5
    right = panel.gantts[1]
    assert right.gantt.titleLabel.text.endswith("…") and "v=2" in right.toolTip()
