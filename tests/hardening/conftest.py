"""Hardening tests: the Qt fixtures of tests/gui (re-exported, not copied)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_gui_fixtures", Path(__file__).parents[1] / "gui" / "conftest.py")
_gui = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gui)
_isolated_settings = _gui._isolated_settings
ctx = _gui.ctx
make_panel = _gui.make_panel
window = _gui.window

CORPUS = Path(__file__).parent / "corpus"
