"""The app starts whatever its own settings or the user's files hold: a broken value is skipped with
a warning, and the file is kept as it was (never deleted, never rewritten at start)."""
from __future__ import annotations

import json
import os
import sys

import pytest

from engines.core.assets import asset_path


def _config(tmp_path):
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    return folder


def _window(qtbot, ctx):
    from explorer.main_window import MainWindow

    win = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(win)
    return win


def _close(win):
    for p in win.panels:
        p.cancel_jobs()


@pytest.mark.parametrize("lines", [
    ["view=1, 2"],
    ["geometry=garbage", "state=garbage"],
    ["geometry=@ByteArray(not a geometry)", "state=@ByteArray(\\0\\x1\\xff)"],
    ["geometry=1, 2", "state=3", "tab=1, 2", 'view="{\\"schema_version\\": 99}"'],
], ids=["view-list", "geometry-text", "geometry-garbage-bytes", "every-key-wrong"])
def test_settings_of_the_wrong_type_are_skipped_and_the_window_opens(qtbot, ctx, tmp_path, lines):
    ini = _config(tmp_path) / "explorer.ini"
    ini.write_text("[General]\n" + "\n".join(lines) + "\n")
    before = ini.read_bytes()
    win = _window(qtbot, ctx)
    win.show()
    assert win.isVisible()
    assert "broken and not used" in win.statusBar().currentMessage()
    assert ini.read_bytes() == before         # set aside, not deleted or rewritten at start
    _close(win)


def test_a_price_file_with_an_object_for_a_gpu_is_set_aside_and_the_panel_opens(make_panel, tmp_path):
    from panels.selfhost import PRICE_FILE, SelfHostPanel

    doc = json.loads(asset_path("selfhost", "prices.json").read_text())
    doc["gpu_rental"][0]["gpu"] = {}
    user = _config(tmp_path) / PRICE_FILE
    user.write_text(json.dumps(doc))
    panel = make_panel(SelfHostPanel)
    assert "shipped" in panel.book_where
    assert "gpu_rental[0].gpu" in panel.price_error.text() and str(user) in panel.price_error.text()
    assert user.read_text() == json.dumps(doc)     # kept for the user to fix


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
@pytest.mark.parametrize("kind", ["fifo", "folder", "wrong-types", "device"])
def test_a_remembered_view_whose_sbom_path_is_broken_opens_with_a_message(qtbot, ctx, tmp_path, kind):
    from engines.core.scenario import Scenario
    from explorer.view_state import ViewState

    if kind == "fifo":
        source = tmp_path / "sbom.json"
        os.mkfifo(source)
    elif kind == "folder":
        source = tmp_path
    elif kind == "device":
        source = "/dev/zero"
    else:
        source = tmp_path / "sbom.json"
        source.write_text(json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "components": 5}))
    view = ViewState(scenario=Scenario(), panel="law", params={"law": {"sbom_source": str(source)}},
                     tabs={}, frame=None)
    ini = _config(tmp_path) / "explorer.ini"
    from explorer.main_window import settings

    st = settings()
    st.setValue("tab", "law")
    st.setValue("view", view.to_json())
    st.sync()
    assert ini.exists()
    win = _window(qtbot, ctx)
    win.show()
    law = win.current_panel()
    assert law is not None and law.key == "law"
    assert law.params.sbom_source == str(source)
    sbom_view = law.sbom
    assert sbom_view.sbom is None and "path" in sbom_view.error.text()
    _close(win)
