"""Every view is a state: saved, reopened in a new window, carried by exports, kept across a restart."""
import json

from engines.core import codec
from dataclasses import fields

import pytest
from PySide6.QtWidgets import QApplication

from explorer.exports import to_jsonable
from explorer.view_state import ViewState, load_view_state, save_view_state


def _result(panel):
    """The panel's engine result as exported, less what a re-run measures anew (timings)."""
    doc = json.loads(json.dumps(to_jsonable(panel.result())))
    if isinstance(doc, dict):
        doc.pop("measurement", None)
        doc.pop("measured", None)
        doc.pop("executed", None)
    return doc


def _changed(params):
    """The same Params with its first declared number moved inside its range (on its step grid, as a
    slider would set it)."""
    for f in fields(params):
        m = f.metadata
        if m and m["choices"] is None and isinstance(f.default, (int, float)) and not isinstance(f.default, bool) \
                and m["lo"] is not None and m["hi"] is not None:
            value = getattr(params, f.name)
            new = m["lo"] + (m["hi"] - m["lo"]) * 0.37
            if m.get("step"):
                new = m["lo"] + round((new - m["lo"]) / m["step"]) * m["step"]
            return params.from_dict({**params.to_dict(), f.name: type(value)(round(new) if isinstance(value, int)
                                                                               else new)})
    return params


def test_every_panel_view_reopens_exactly_in_a_new_window(window, qtbot, tmp_path, new_window):
    window.ctx.scenario.update(serve_batch=16, micro_batch=2)
    saved = {}
    for info in window.panel_infos:
        panel = window.show_panel(info.key)
        assert window.current_panel().settle()
        if panel.Params is not None:
            panel.set_params(_changed(panel.params))
        for tabs in panel.tab_widgets():
            tabs.setCurrentIndex(tabs.count() - 1)
        assert window.current_panel().settle()
        if window.ctx.timeline.spec is not None:
            window.ctx.timeline.set_position(min(3, window.ctx.timeline.n_frames - 1))
            assert window.current_panel().settle()       # a frame may start a job (quant reads its layer in one)
        view = window.view_state()
        path = save_view_state(view, tmp_path / f"{info.key}.json")
        saved[info.key] = (path, view, panel.params, panel.inner_tabs(),
                           window.ctx.timeline.position if window.ctx.timeline.spec is not None else None,
                           _result(panel))
    other = new_window()
    for key, (path, view, params, tabs, frame, result) in saved.items():
        other.apply_view_state(load_view_state(path))
        assert other.current_panel().settle()
        panel = other.current_panel()
        assert panel.key == key and other.ctx.scenario.value == view.scenario
        assert panel.params == params, key
        assert panel.inner_tabs() == tabs, key
        if frame is not None:
            assert other.ctx.timeline.position == frame, key
        assert other.view_state().params.get(key) == view.params.get(key)
        # the engine result behind the view, too (floats to 1e-6: a job's pool thread may sum in another order)
        assert codec.close(_result(panel), result), key


def test_a_restored_serving_view_computes_the_same_result(window, qtbot, tmp_path, new_window):
    panel = window.show_panel("serving")
    panel.update_params(traffic_per_s=333.0, max_utilisation_pct=60.0)
    assert window.current_panel().settle()
    path = save_view_state(window.view_state(), tmp_path / "s.json")
    other = new_window()
    other.apply_view_state(load_view_state(path))
    assert other.current_panel().settle()
    assert to_jsonable(other.current_panel().sizing) == to_jsonable(panel.sizing)
    assert other.current_panel().sizing.rate_per_s == 333.0


def test_a_json_export_carries_the_view_it_came_from(window, qtbot, tmp_path, new_window):
    panel = window.show_panel("serving")
    panel.update_params(ttft_target_s=0.7)
    assert window.current_panel().settle()
    doc = json.loads(window.export("json", tmp_path / "s.json").read_text())
    other = new_window()
    other.apply_view_state(ViewState.from_json_dict(doc["meta"]["state"]))
    assert other.current_panel().key == "serving" and other.current_panel().params.ttft_target_s == 0.7
    state = doc["meta"]["state"]                       # a reader edits the exported view and opens it
    state["params"]["serving"]["traffic_per_s"] = 1234.0
    state["scenario"]["scenario"]["serve_batch"] = 24
    other.apply_view_state(ViewState.from_json_dict(state))
    assert other.current_panel().settle()
    assert other.current_panel().params.traffic_per_s == 1234.0 and other.ctx.scenario.value.serve_batch == 24
    assert other.current_panel().sizing.rate_per_s == 1234.0
    from PySide6.QtGui import QImage

    png = window.export("png", tmp_path / "s.png")
    assert ViewState.from_json(QImage(str(png)).text("explorer-view")).params["serving"]["ttft_target_s"] == 0.7


def test_a_bad_view_changes_nothing(window):
    before_scenario, panel = window.ctx.scenario.value, window.show_panel("serving")
    before = panel.params
    bad = ViewState(before_scenario.with_changes(serve_batch=3), "serving", {"serving": {"traffic_per_s": -1}})
    with pytest.raises(ValueError, match="traffic_per_s"):
        window.apply_view_state(bad)
    assert panel.params == before and window.ctx.scenario.value == before_scenario
    with pytest.raises(ValueError, match="panel"):
        window.apply_view_state(ViewState(before_scenario, "nope"))


def test_panel_parameters_survive_a_restart(qtbot, new_window):
    first = new_window(remember=True)
    first.show_panel("serving").update_params(traffic_per_s=777.0)
    first.close()
    QApplication.processEvents()
    second = new_window(remember=True)
    assert second.panel("serving").params.traffic_per_s == 777.0
    second.close()


def test_undo_steps_back_through_panel_parameters_and_scenario_edits(window):
    panel = window.show_panel("serving")
    window.ctx.scenario.update(serve_batch=12)
    panel.update_params(traffic_per_s=400.0)
    stack = window.ctx.scenario.undo_stack
    stack.undo()
    assert panel.params.traffic_per_s == 100.0 and window.ctx.scenario.value.serve_batch == 12
    stack.undo()
    assert window.ctx.scenario.value.serve_batch != 12
    stack.redo()
    stack.redo()
    assert panel.params.traffic_per_s == 400.0


def test_a_worker_that_reads_a_widget_fails(make_panel, ctx):
    """Jobs get their knobs captured before they start; reading a control from a worker is refused."""
    from panels.serving import ServingPanel

    p = make_panel(ServingPanel)
    slider = p.sliders["traffic_per_s"]
    runner = p.jobs("probe")
    runner.run(lambda progress, cancelled: slider.value(), lambda _v: None, label="reads a widget")
    assert runner.wait(30_000)
    assert runner.last_error and "worker thread" in runner.last_error
    assert slider.value() == p.params.traffic_per_s          # on the GUI thread it reads as ever


def test_a_view_that_changes_parameters_scenario_and_tab_recomputes_the_panel_once(window, monkeypatch):
    """A tour step arrives as parameters, then a scenario, then a tab: one study and one drawing,
    not one per change (the compute panel did three of each)."""
    import dataclasses

    import panels.compute as compute

    window.show_panel("compute")
    panel = window.current_panel()
    assert panel.settle()
    calls: list[object] = []
    real = compute.study
    monkeypatch.setattr(compute, "study", lambda scenario, params: calls.append((scenario, params)) or real(scenario, params))
    drawn: list[int] = []
    draw = panel._draw_tab
    monkeypatch.setattr(panel, "_draw_tab",                            # a stale tab is one to draw
                        lambda index: (index in panel._stale and drawn.append(index)) or draw(index))
    view = window.view_state()
    tabs = tuple(panel.tabs.tabText(i) for i in range(panel.tabs.count()))
    other = next(t for t in tabs if t != panel.tabs.tabText(panel.tabs.currentIndex()))
    new = dataclasses.replace(view, scenario=view.scenario.with_changes(n_gpus=view.scenario.n_gpus * 2),
                              params={**view.params, "compute": {**view.params.get("compute", {}),
                                                                 "serve_req_per_s": 250.0}},
                              tabs={**view.tabs, "compute": (other,)})
    window.apply_view_state(new)
    assert [s.n_gpus for s, _ in calls] == [new.scenario.n_gpus]               # one study, of the new view
    assert calls[0][1].serve_req_per_s == 250.0
    assert drawn == [panel.tabs.currentIndex()] and panel.tabs.tabText(panel.tabs.currentIndex()) == other


def test_a_view_of_another_panel_leaves_the_shown_one_to_compute_when_shown_again(window, monkeypatch):
    """A tour step on the pipeline panel, taken while the memory panel shows: the memory panel used to
    compute for the new scenario before it was hidden (its 30-50 s PyTorch check ran on behind the
    next lessons); it now waits, and draws the scenario when shown again."""
    import dataclasses

    window.show_panel("pipeline")
    memory = window.show_panel("memory")
    assert memory.settle()
    seen: list[int] = []
    real = memory.set_scenario
    monkeypatch.setattr(memory, "set_scenario", lambda s: seen.append(s.n_gpus) or real(s))
    view = window.view_state()
    new = dataclasses.replace(view, panel="pipeline", scenario=view.scenario.with_changes(n_gpus=view.scenario.n_gpus * 2))
    window.apply_view_state(new)
    assert window.current_panel().key == "pipeline" and seen == []
    window.show_panel("memory")
    assert seen == [new.scenario.n_gpus]
