"""Wrong data that used to be accepted in silence is refused with a message; saves never quietly do
something the user did not ask for; a killed save leaves nothing behind on the next start."""
from __future__ import annotations

import json
import os
import sys
import time

import pytest

from _readers import seed
from engines.core.errors import ValidationError
from explorer.files import FileProblem, atomic_write_text


def test_a_price_file_in_euros_is_refused():
    from engines.selfhost.prices import parse_price_text

    doc = seed("price")
    doc["currency"] = "EUR"
    with pytest.raises(ValidationError) as err:
        parse_price_text(json.dumps(doc))
    assert err.value.field == "currency" and "US dollars" in str(err.value)
    doc["currency"] = "USD"
    assert parse_price_text(json.dumps(doc)).api


def test_depends_on_as_text_is_not_read_as_one_reference_per_letter():
    from engines.law import sbom

    doc = seed("sbom")
    root = doc["metadata"]["component"]["bom-ref"]
    entry = next(d for d in doc["dependencies"] if d["ref"] == root)
    entry["dependsOn"] = "abc"
    with pytest.raises(ValidationError, match="dependsOn is not a list of strings"):
        sbom.parse(json.dumps(doc), "x.json")


@pytest.mark.parametrize("version, ok", [("1.0", False), ("1.2", True), ("1.7", True), ("1.99", False)])
def test_cyclonedx_spec_versions_are_the_documented_ones(version, ok):
    from engines.law import sbom

    doc = seed("sbom")
    doc["specVersion"] = version
    if ok:
        assert sbom.parse(json.dumps(doc), "x.json").format == f"CycloneDX {version}"
    else:
        with pytest.raises(ValidationError, match="1.2 to 1.7"):
            sbom.parse(json.dumps(doc), "x.json")


@pytest.mark.parametrize("params, field", [({"fine_tier": True}, "fine_tier"), ({"fine_tier": False}, "fine_tier")])
def test_a_view_with_true_for_a_numbered_choice_is_refused(params, field):
    from engines.law.params import Params

    with pytest.raises(ValidationError) as err:
        Params(**params)
    assert err.value.field == field
    assert Params(fine_tier=1).fine_tier == 1


@pytest.mark.parametrize("frame, ok", [(10**30, False), (2**31, False), (-1, False), (2**31 - 1, True), (0, True)])
def test_a_view_frame_past_what_the_timeline_holds_is_refused(frame, ok):
    from explorer.view_state import ViewState

    doc = seed("view")
    doc["frame"] = frame
    if ok:
        assert ViewState.from_json(json.dumps(doc)).frame == frame
    else:
        with pytest.raises(ValidationError) as err:
            ViewState.from_json(json.dumps(doc))
        assert err.value.field == "frame"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "3.5", "big"])
def test_font_scale_out_of_range_is_refused_with_a_message(value, capsys):
    from explorer.cli import build_parser

    with pytest.raises(SystemExit) as out:
        build_parser().parse_args(["--font-scale", value])
    assert out.value.code == 2
    assert "--font-scale" in capsys.readouterr().err


def test_font_scale_in_range_is_kept():
    from explorer.cli import build_parser

    assert build_parser().parse_args(["--font-scale", "1.6"]).font_scale == 1.6


# ---- saves ---------------------------------------------------------------------------------------
def test_saving_into_a_missing_folder_is_refused_not_created(tmp_path):
    target = tmp_path / "no" / "such" / "view.json"
    with pytest.raises(FileProblem) as err:
        atomic_write_text(target, "{}")
    assert "view.json" in str(err.value) and "does not exist" in str(err.value)
    assert not (tmp_path / "no").exists()


def test_the_apps_own_folder_is_made_when_asked(tmp_path):
    target = tmp_path / "config" / "prices.json"
    atomic_write_text(target, "{}", make_parents=True)
    assert target.read_text() == "{}"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_read_only_file_is_not_overwritten(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("old")
    target.chmod(0o444)
    with pytest.raises(OSError) as err:        # SaveProblem is also an OSError: old callers still catch it
        atomic_write_text(target, "new")
    assert "keep.json" in str(err.value) and "read-only" in str(err.value)
    assert target.read_text() == "old"


def test_read_only_refusal_when_running_as_root(tmp_path, monkeypatch):
    """Even where root could write it, a file without write permission is refused (os.access is asked)."""
    import explorer.files as files

    target = tmp_path / "keep.json"
    target.write_text("old")
    monkeypatch.setattr(files.os, "access", lambda p, mode: False)
    with pytest.raises(FileProblem, match="read-only"):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_symlinked_output_stays_a_symlink_and_its_target_is_written(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_failed_write_names_the_users_file_not_the_temp_file(tmp_path, monkeypatch):
    import explorer.files as files

    target = tmp_path / "mine.json"

    def boom(*a, **k):
        raise OSError(28, "No space left on device", str(tmp_path / ".mine.json.abcd1234.tmp"))

    monkeypatch.setattr(files.os, "replace", boom)
    with pytest.raises(OSError) as err:
        atomic_write_text(target, "x")
    assert "mine.json" in str(err.value) and ".tmp" not in str(err.value)
    assert [p.name for p in tmp_path.iterdir()] == []


# ---- what a killed save leaves -------------------------------------------------------------------
def test_leftover_temp_files_of_our_pattern_are_removed_at_start_and_nothing_else(qtbot, ctx, tmp_path):
    from explorer.main_window import MainWindow

    config = tmp_path / "config"
    config.mkdir()
    old = time.time() - 3600
    ours = [config / ".selfhost-prices.json.k2j_9x0a.tmp", config / ".explorer.ini.abcdefgh.tmp"]
    theirs = [config / "notes.tmp", config / ".selfhost-prices.json.short.tmp", config / "selfhost-prices.json"]
    for p in ours + theirs:
        p.write_text("x")
        os.utime(p, (old, old))
    fresh = config / ".selfhost-prices.json.zzzzzzzz.tmp"     # a save in progress in another window
    fresh.write_text("x")
    win = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(win)
    assert not any(p.exists() for p in ours)
    assert all(p.exists() for p in theirs) and fresh.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the lock's owner check is POSIX here")
def test_a_stale_settings_lock_of_a_dead_process_is_removed_at_start(qtbot, ctx, tmp_path):
    import socket

    from explorer.main_window import MainWindow

    config = tmp_path / "config"
    config.mkdir()
    lock = config / "explorer.ini.lock"
    dead = 2**22 + 12345           # above pid_max's default: no such process
    lock.write_text(f"{dead}\npython\n{socket.gethostname()}\n")
    win = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(win)
    assert not lock.exists()
