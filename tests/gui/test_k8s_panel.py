"""The Kubernetes panel: scenarios load as timelines, frames draw, pods explain, YAML runs."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


@pytest.fixture
def panel(make_panel):
    from panels.k8s import K8sPanel
    return make_panel(K8sPanel)


def test_scenarios_and_frames(panel):
    keys = [panel.chooser.itemData(i) for i in range(panel.chooser.count())]
    assert "crashloop" in keys and "model-server" in keys
    panel.chooser.setCurrentIndex(keys.index("crashloop"))
    spec = panel.timeline()
    assert spec.n_frames > 100
    panel.show_frame(spec.n_frames - 1)
    assert "ProgressDeadlineExceeded" in panel.result()["deployments"][0]["progressing"]
    panel.cluster.repaint()
    assert panel.cluster.tiles                     # pod tiles were drawn
    panel.cluster.pod_clicked.emit(panel.result()["pods"][0]["name"])
    assert "Placement" in panel.explainer.toHtml()


def test_yaml_runs_and_reports_unsupported(panel):
    panel.yaml.setPlainText(panel.yaml.toPlainText().replace("      containers:", "      hostNetwork: true\n      containers:"))
    panel.run_yaml()
    assert panel.timeline_data.key == "yaml"
    assert "hostNetwork" in panel.yaml_report.text()


def test_model_server_follows_the_scenario_in_the_worker(panel, ctx):
    panel.chooser.setCurrentIndex(panel.chooser.findData("model-server"))
    gpus_8b = panel.plan.gpus_needed
    assert panel.result()["pods"][0]["requests"]["nvidia.com/gpu"] == gpus_8b
    ctx.scenario.update(model="llama3-70b")
    assert panel.tasks.running                     # the edit returns at once; the cluster runs in the worker
    assert "llama3-70b" in panel.chooser.currentText()
    panel.tasks.wait()
    assert panel.plan.gpus_needed > gpus_8b        # 70B needs more GPU memory per replica
    assert panel.result()["pods"][0]["requests"]["nvidia.com/gpu"] == panel.plan.gpus_needed
    ctx.scenario.update(model="llama3-8b")         # an earlier plan comes from the cache
    assert not panel.tasks.running
    assert panel.result()["pods"][0]["requests"]["nvidia.com/gpu"] == gpus_8b


def test_other_guides_ignore_scenario_edits(panel, ctx):
    panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    timeline = panel.timeline_data
    ctx.scenario.update(model="llama3-70b")
    assert panel.timeline_data is timeline and not panel.tasks.running
    assert "llama3-70b" in panel.chooser.itemText(panel.chooser.findData("model-server"))


def test_frames_redraw_in_place_and_fit_a_narrow_panel(panel):
    panel.chooser.setCurrentIndex(panel.chooser.findData("rolling"))
    panel.show_frame(20)
    cell = panel.events.item(0, 0)
    panel.show_frame(21)
    assert panel.events.item(0, 0) is cell          # cells re-texted, not recreated
    assert panel.minimumSizeHint().width() <= 700   # usable in a ~1000 px central area
    panel.resize(620, 700)
    panel.cluster.repaint()
    assert len(panel.cluster.tiles) >= 8            # every pod of the 3 nodes still drawn
