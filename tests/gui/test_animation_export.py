"""The GIF export of an animated panel, driven through the real window's File menu: a progress
dialog modal to the window, the event loop running between frames, Cancel leaving no file and
the timeline back on its frame, the outcome in the status bar."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QPushButton

from explorer import exports


def _gif_action(window):
    return next(a for a in window.actions() if a.text() == "Export panel as GIF…")


def _pipeline(window, qtbot):
    panel = window.show_panel("pipeline")
    qtbot.waitUntil(lambda: not panel.tasks.running, timeout=60_000)
    assert window.ctx.timeline.n_frames > 1
    return panel


def _choose(monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "*.gif")))


def _dialog(window):
    d = window.findChild(QProgressDialog, "export_progress")
    return d if d is not None and d.isVisible() else None


def test_sampling_keeps_first_and_last_and_caps_the_count():
    assert exports.sample_frames(6) == list(range(6))
    idx = exports.sample_frames(240, 120)
    assert len(idx) == 120 and idx[0] == 0 and idx[-1] == 239 and idx == sorted(set(idx))
    assert max(b - a for a, b in zip(idx, idx[1:])) <= 3
    assert exports.sample_frames(240, 4) == [0, 80, 159, 239]
    assert exports.sample_frames(1) == [0] and exports.sample_frames(0) == []
    assert exports.gif_frame_ms(6, 6, 5) == 200 and exports.gif_frame_ms(240, 120, 10) == 200


def test_gif_export_shows_progress_keeps_the_window_responsive_and_writes_a_gif(window, qtbot, tmp_path,
                                                                               monkeypatch):
    from PIL import Image

    _pipeline(window, qtbot)
    tl = window.ctx.timeline
    tl.set_position(5)
    out = tmp_path / "out" / "pipeline.gif"
    out.parent.mkdir()                 # a save never makes the folder it was pointed at
    _choose(monkeypatch, out)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    labels = []

    _gif_action(window).trigger()
    assert not out.exists()            # the menu returned at once; the frames are still to come
    qtbot.waitUntil(lambda: _dialog(window) is not None, timeout=10_000)
    dialog = _dialog(window)
    assert dialog.windowModality() == Qt.WindowModal and dialog.findChild(QPushButton).text() == "Cancel"
    qtbot.waitUntil(lambda: labels.append(dialog.labelText()) or dialog.value() >= 10, timeout=60_000)
    n = len(exports.sample_frames(tl.n_frames))
    assert any(f"Exporting frame 1 of {n}" in t for t in labels)
    assert any(t.startswith("Exporting frame ") and f" of {n}" in t and "frame 1 " not in t for t in labels)
    assert len(ticks) >= 5             # the event loop ran between frames
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Exported"), timeout=120_000)
    timer.stop()

    msg = window.statusBar().currentMessage()
    assert f"Exported {n} frames" in msg and str(out) in msg
    assert _dialog(window) is None
    assert tl.position == 5            # back on the frame it was on
    with Image.open(out) as gif:
        assert gif.n_frames == n > 1 and gif.size == window.current_panel().export_widget().size().toTuple()
    assert sorted(p.name for p in out.parent.iterdir()) == ["pipeline.gif"]   # no temp file left


def test_cancel_mid_export_leaves_no_file_and_restores_the_frame(window, qtbot, tmp_path, monkeypatch):
    _pipeline(window, qtbot)
    tl = window.ctx.timeline
    tl.set_position(37)
    out = tmp_path / "out" / "pipeline.gif"
    out.parent.mkdir()
    _choose(monkeypatch, out)

    _gif_action(window).trigger()
    qtbot.waitUntil(lambda: _dialog(window) is not None and _dialog(window).value() >= 3, timeout=60_000)
    dialog = _dialog(window)
    assert dialog.value() < dialog.maximum()
    qtbot.mouseClick(dialog.findChild(QPushButton), Qt.LeftButton)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Export cancelled", timeout=10_000)

    assert _dialog(window) is None
    assert tl.position == 37
    assert list(out.parent.iterdir()) == []       # neither the GIF nor a temp file
    qtbot.wait(300)                               # no frame is grabbed after the cancel
    assert tl.position == 37 and not out.exists()


def test_cancel_while_encoding_leaves_no_file(window, qtbot, tmp_path, monkeypatch):
    """The encoder runs on a worker: the dialog says so and stays live, and Cancel drops its result."""
    panel = window.show_panel("overview")
    panel.show_frame = lambda i: panel.cards["params"].value.setText(f"frame {i}")
    from explorer.timeline import TimelineSpec

    window.ctx.timeline.set_spec(TimelineSpec(8, fps=5))
    window.ctx.timeline.set_position(3)
    release = threading.Event()
    encode = exports.encode_gif

    def slow_encode(frames, duration_ms, state=None):
        release.wait(30)
        return encode(frames, duration_ms, state)

    monkeypatch.setattr(exports, "encode_gif", slow_encode)
    out = tmp_path / "out" / "overview.gif"
    out.parent.mkdir()
    _choose(monkeypatch, out)
    _gif_action(window).trigger()
    qtbot.waitUntil(lambda: _dialog(window) is not None and "Encoding" in _dialog(window).labelText(),
                    timeout=30_000)
    assert window.ctx.timeline.position == 3      # restored as soon as the frames are in
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    qtbot.wait(200)
    assert len(ticks) >= 5                        # the window is live while the GIF encodes
    qtbot.mouseClick(_dialog(window).findChild(QPushButton), Qt.LeftButton)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Export cancelled", timeout=10_000)
    release.set()
    qtbot.wait(500)                               # the encoder's late result is dropped
    timer.stop()
    assert list(out.parent.iterdir()) == []


def test_window_export_gif_waits_and_reports(window, qtbot, tmp_path):
    """``window.export("gif", path)`` (CLI, scripts) runs the same export and returns when written."""
    from PIL import Image

    from explorer.timeline import TimelineSpec

    panel = window.show_panel("overview")
    panel.show_frame = lambda i: panel.cards["params"].value.setText(f"frame {i}")
    window.ctx.timeline.set_spec(TimelineSpec(300, fps=30))
    out = window.export("gif", tmp_path / "o.gif")
    with Image.open(out) as gif:
        assert gif.n_frames == exports.GIF_MAX_FRAMES
    assert "Exported 120 frames (sampled from 300)" in window.statusBar().currentMessage()
    with pytest.raises(ValueError):
        window.show_panel("overview")
        window.ctx.timeline.set_spec(None)
        window.export("gif", tmp_path / "none.gif")
