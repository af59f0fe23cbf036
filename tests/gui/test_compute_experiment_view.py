"""The scaling-experiment tab of the compute panel: the shipped run drawn at once, "Run it here" in the
panel's job slot (a quick run here), cancel, and the way back to the build machine's run."""
import dataclasses

import pytest

from engines.compute.experiment import QUICK


@pytest.fixture
def panel(make_panel):
    from panels._compute_experiment import ExperimentView
    from panels.compute import ComputePanel

    panel = make_panel(ComputePanel)
    assert isinstance(panel.experiment_view, ExperimentView)
    return panel


def test_the_shipped_run_is_drawn_and_marked(panel):
    view = panel.experiment_view
    r = view.result
    assert r is panel.experiment_shipped and r.where == "build machine"
    text = view.header.text()
    assert "build machine" in text and r.date in text and f"seed {r.params.seed}" in text
    assert view.table.rowCount() == len(r.points)
    assert len(view.loss_plot.getPlotItem().listDataItems()) == 2 * len({p.n_params for p in r.points}) + 1
    assert len(view.frontier_plot.getPlotItem().listDataItems()) == 5     # 3 published, fitted, runs
    assert f"{r.fit.alpha:.3f}" in view.readout.text()
    assert any("Hoffmann" in src for _, src in view.sources.rows())
    assert not view.shipped_button.isEnabled()


def test_run_it_here_then_back_to_the_build_machine(panel, monkeypatch, qtbot):
    view = panel.experiment_view
    monkeypatch.setattr(panel, "_experiment_params", lambda seed: dataclasses.replace(QUICK, seed=seed))
    qtbot.mouseClick(view.run_button, qtbot_button())
    assert panel.settle(300_000)
    r = view.result
    assert r is panel.experiment_local and r.where == "" and len(r.points) == QUICK.n_sizes * QUICK.n_budgets
    assert "this machine" in view.header.text()
    assert view.table.rowCount() == len(r.points) and view.shipped_button.isEnabled()
    qtbot.mouseClick(view.shipped_button, qtbot_button())
    assert view.result is panel.experiment_shipped and "build machine" in view.header.text()


def test_cancel_keeps_the_shown_run(panel, monkeypatch, qtbot):
    view, jobs = panel.experiment_view, panel.jobs("experiment")
    monkeypatch.setattr(panel, "_experiment_params", lambda seed: dataclasses.replace(QUICK, seed=5))
    view.run_button.click()
    assert jobs.running and not view.run_button.isEnabled()
    jobs.widget().cancel_button.click()
    assert panel.settle(60_000)
    assert view.result is panel.experiment_shipped and view.run_button.isEnabled()


def qtbot_button():
    from PySide6.QtCore import Qt

    return Qt.LeftButton
