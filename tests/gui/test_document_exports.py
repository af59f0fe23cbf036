"""Every document a panel writes (the law decision record, the Annex I and VII checklists, the trading
audit record, the price file) goes through one path: the save dialog, an atomic write (a failed write
leaves the old file whole and no temporary file behind) and an error shown inline in the panel that
names the file the user chose."""
from __future__ import annotations

import json
import os
import types

import pytest

import engines.core.writing
import explorer.exports
import explorer.files
from panels.law import LawPanel
from panels.selfhost import SelfHostPanel
from panels.trading import TradingPanel

AUDIT = {"kind": "trading.extraction.audit", "rows": [{"headline": "Shares rise & fall <b>"}]}


def _law(p):
    return p.md_btn, p.error, "decision-record.md", lambda text: text.startswith("#") and "Decision record" in text


def _law_html(p):
    return p.html_btn, p.error, "decision-record.html", lambda text: "<html" in text.lower()


def _annex(p):
    return p.annex.export_btns["csv"], p.annex.error, "annex-i.csv", lambda text: text.count("\n") > 10


def _vii(p):
    return p.vii.export_btns["md"], p.vii.error, "annex-vii.md", lambda text: "Annex VII" in text


def _audit(p):
    p.extraction_result = types.SimpleNamespace(audit=AUDIT)      # as a finished run leaves it
    p.extraction_view.export_button.setEnabled(True)
    return p.extraction_view.export_button, p.error, "audit.json", lambda text: json.loads(text) == AUDIT


def _prices(p):
    return p.save_prices_btn, p.price_error, "prices.json", lambda text: json.loads(text)["api"]


EXPORTS = {"law-md": (LawPanel, _law), "law-html": (LawPanel, _law_html), "annex-i": (LawPanel, _annex),
           "annex-vii": (LawPanel, _vii), "audit": (TradingPanel, _audit), "prices": (SelfHostPanel, _prices)}


@pytest.fixture(params=sorted(EXPORTS))
def export(request, make_panel, monkeypatch, tmp_path):
    cls, parts = EXPORTS[request.param]
    panel = make_panel(cls)
    button, error, name, looks_right = parts(panel)
    chosen = tmp_path / "out" / name
    chosen.parent.mkdir()
    asked = []
    monkeypatch.setattr(explorer.exports, "ask_save_path", lambda *a: asked.append(a) or str(chosen))
    return types.SimpleNamespace(button=button, error=error, chosen=chosen, looks_right=looks_right, asked=asked)


def test_each_export_asks_once_and_writes_its_document(export):
    export.button.click()
    assert len(export.asked) == 1
    assert export.looks_right(export.chosen.read_text(encoding="utf-8"))
    assert export.error.isHidden()
    assert os.listdir(export.chosen.parent) == [export.chosen.name]      # no temporary file left


def test_a_write_that_fails_midway_leaves_the_old_file_whole(export, monkeypatch):
    export.chosen.write_text("OLD", encoding="utf-8")

    def broken_fsync(_fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(explorer.files.os, "fsync", broken_fsync)
    export.button.click()
    assert export.chosen.read_text(encoding="utf-8") == "OLD"
    assert os.listdir(export.chosen.parent) == [export.chosen.name]
    assert not export.error.isHidden() and str(export.chosen) in export.error.text()


def test_a_read_only_folder_is_reported_inline_naming_the_chosen_file(export, monkeypatch):
    folder = export.chosen.parent
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):       # root ignores the mode: fail as the kernel would for others
            def refused(*_a, dir=None, prefix="", suffix="", **_k):
                raise PermissionError(13, "Permission denied", os.path.join(dir, f"{prefix}x1y2z3{suffix}"))
            monkeypatch.setattr(engines.core.writing.tempfile, "mkstemp", refused)
        export.button.click()
    finally:
        folder.chmod(0o755)
    text = export.error.text()
    assert not export.error.isHidden()
    assert str(export.chosen) in text and "Permission denied" in text
    assert ".tmp" not in text                   # the hidden temporary file is not what the user chose
    assert not export.chosen.exists()


def test_a_cancelled_dialog_writes_nothing(make_panel, monkeypatch, tmp_path):
    p = make_panel(LawPanel)
    monkeypatch.setattr(explorer.exports, "ask_save_path", lambda *a: "")
    p.md_btn.click()
    assert p.error.isHidden() and not list(tmp_path.rglob("*.md"))
