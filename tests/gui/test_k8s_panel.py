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
