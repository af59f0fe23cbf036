"""The shell driven through real widgets: linked scenario, undo, files, timeline, themes, exports."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui
from PySide6.QtCore import Qt

from explorer.files import FileProblem
from explorer.timeline import TimelineSpec

ROOT = Path(__file__).resolve().parents[2]


def test_fonts_render(qapp):
    f = QtGui.QFont()
    assert QtGui.QFontInfo(f).family() != ""
    assert QtGui.QFontMetrics(f).inFont("A")
    assert set(QtGui.QFontDatabase.families()) - {"Monospace", "Sans Serif", "Serif"}


def test_preset_load_emits_once_with_every_changed_field(ctx, qtbot):
    seen = []
    ctx.scenario.changed.connect(seen.append)
    per_field = []
    ctx.scenario.events.n_gpus.connect(per_field.append)
    from engines.core.presets import apply_preset

    ctx.scenario.replace(apply_preset(ctx.scenario.value, "llama3-405b-16k"))
    assert len(seen) == 1
    assert {"model", "arch", "n_gpus", "tp", "pp"} <= seen[0]
    assert per_field == [16384]


def test_invalid_edit_changes_nothing_and_says_why(ctx):
    before = ctx.scenario.value
    err = ctx.scenario.try_update(tp=3)
    assert err is not None and err.startswith("n_gpus: ") and "TP 3 × PP 1" in err   # names the field and the split
    assert ctx.scenario.value is before


def test_undo_redo(ctx):
    ctx.scenario.update(n_gpus=128)
    ctx.scenario.update(strategy="zero1")
    ctx.scenario.undo_stack.undo()
    assert ctx.scenario.value.strategy == "zero3" and ctx.scenario.value.n_gpus == 128
    ctx.scenario.undo_stack.undo()
    assert ctx.scenario.value.n_gpus == 64
    ctx.scenario.undo_stack.redo()
    assert ctx.scenario.value.n_gpus == 128


def test_ctrl_z_undoes_the_scenario_while_a_dock_spin_box_has_the_focus(window, qtbot):
    """The spin box's line edit took Ctrl+Z for its own text undo, so the scenario stayed put."""
    from PySide6.QtCore import Qt

    spin = window.editor.widgets["n_gpus"]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)          # window shortcuts fire only in the active window
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "32")
    qtbot.keyClick(spin, Qt.Key_Return)
    assert window.ctx.scenario.value.n_gpus == 32
    qtbot.keyClick(spin, Qt.Key_Z, Qt.ControlModifier)
    assert window.ctx.scenario.value.n_gpus == 64 and spin.value() == 64
    qtbot.keyClick(spin, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert window.ctx.scenario.value.n_gpus == 32


def test_files_too_deep_or_with_giant_numbers_explain_themselves(ctx, tmp_path):
    good = ctx.scenario.value
    for content in ("[" * 100_000 + "]" * 100_000, '{"schema_version": 1, "scenario": {"n_gpus": ' + "9" * 5000 + "}}"):
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        with pytest.raises(FileProblem) as err:
            ctx.scenario.load(bad)
        assert "not a scenario file" in str(err.value)
        assert ctx.scenario.value == good


def test_save_load_and_broken_files(ctx, tmp_path):
    path = tmp_path / "s.json"
    ctx.scenario.update(model="llama3-70b", n_gpus=256)
    ctx.scenario.save(path)
    ctx.scenario.update(model="llama3-8b", n_gpus=8)
    ctx.scenario.load(path)
    assert ctx.scenario.value.model == "llama3-70b" and ctx.scenario.value.n_gpus == 256
    good = ctx.scenario.value
    for content in (b"{ truncated", b"\x00\xff\xfe binary", json.dumps({"schema_version": 7, "scenario": {}}).encode()):
        bad = tmp_path / "bad.json"
        bad.write_bytes(content)
        with pytest.raises(FileProblem):
            ctx.scenario.load(bad)
        assert ctx.scenario.value is good


def test_atomic_save_keeps_old_file_when_write_fails(ctx, tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    ctx.scenario.save(path)
    old = path.read_text()
    import explorer.files as files

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", boom)
    ctx.scenario.update(n_gpus=512)
    with pytest.raises(OSError):
        ctx.scenario.save(path)
    assert path.read_text() == old
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_editor_shows_inline_error_and_keeps_value(window, qtbot):
    ed = window.editor
    ed.widgets["tp"].setValue(3)
    assert ed.errors["tp"].isVisible()
    assert ed.widgets["tp"].value() == 3
    assert window.ctx.scenario.value.tp == 1


def test_editor_edit_flows_to_panel(window):
    ov = window.panel("overview")
    window.show_panel("overview")
    combo = window.editor.widgets["model"]
    combo.setCurrentIndex(combo.findData("llama3-70b"))
    combo.activated.emit(combo.currentIndex())
    assert ov.summary.params == 70_553_706_496
    assert window.editor.widgets["layers"].value() == 80


def test_model_switch_adapts_tp_and_says_so_in_the_editor_and_status_bar(window):
    """After a TP 8 preset, SmolLM2-135M (9 heads) is taken with TP 1 instead of refused; the note
    under the model combo and the status bar say what changed, and Undo brings both back."""
    window.apply_preset("llama3-405b-16k")
    combo = window.editor.widgets["model"]
    combo.setCurrentIndex(combo.findData("smollm2-135m"))
    combo.activated.emit(combo.currentIndex())
    sc = window.ctx.scenario.value
    assert (sc.model, sc.tp, sc.sequence_parallel) == ("smollm2-135m", 1, False)
    assert window.editor.widgets["tp"].value() == 1
    assert not window.editor.errors["model"].isVisible()
    assert window.editor.model_note.isVisible() and "TP 8 → 1" in window.editor.model_note.text()
    assert "TP 8 → 1" in window.statusBar().currentMessage()
    window.ctx.scenario.undo_stack.undo()
    assert window.ctx.scenario.value.tp == 8 and window.ctx.scenario.value.model == "llama3-405b"
    assert not window.editor.model_note.isVisible()
    window.apply_preset("smollm2-135m")                   # the Presets menu and --preset: same rule
    assert window.ctx.scenario.value.tp == 1 and "TP 8 → 1" in window.editor.model_note.text()
    assert window.error_label.text() == ""


def test_lesson_text_is_laid_out_all_the_way_down(ctx, qtbot):
    """Scrolling through the Explanation shows every paragraph: each text block below the first
    screen gets laid out as it scrolls into view (before, memory's sections 3-5 stayed blank)."""
    from engines.core.assets import asset_path
    from explorer.ui.widgets import LessonView

    view = LessonView()
    qtbot.addWidget(view)
    view.resize(320, 800)
    view.show()
    view.setMarkdown(asset_path("lessons", "memory.md").read_text(encoding="utf-8"))
    bar = view.verticalScrollBar()
    seen = None
    while (bar.value(), bar.maximum()) != seen:      # scroll a page at a time, as a reader would,
        seen = (bar.value(), bar.maximum())          # until the end stops moving
        bar.setValue(bar.value() + bar.pageStep())
        qtbot.wait(20)
    block, blank = view.document().begin(), []
    while block.isValid():
        if block.text().strip() and block.layout().lineCount() == 0:
            blank.append(block.text()[:40])
        block = block.next()
    assert blank == [], (blank, bar.value(), bar.maximum())
    assert bar.maximum() > 3 * bar.pageStep()


def test_timeline_keys_and_chapters(window, qtbot):
    tl = window.ctx.timeline
    tl.set_spec(TimelineSpec(50, chapters=[(0, "a"), (20, "b"), (40, "c")]))
    window.activateWindow()
    window.setFocus()
    qtbot.keyClick(window, Qt.Key_Right)
    assert tl.position == 1
    qtbot.keyClick(window, Qt.Key_Right, Qt.ShiftModifier)
    assert tl.position == 11
    qtbot.keyClick(window, Qt.Key_End)
    assert tl.position == 49
    qtbot.keyClick(window, Qt.Key_Home)
    assert tl.position == 0
    qtbot.keyClick(window, Qt.Key_PageDown)
    assert tl.position == 20 and tl.current_chapter() == "b"
    qtbot.keyClick(window, Qt.Key_Space)
    assert tl.playing
    qtbot.waitUntil(lambda: tl.position > 21, timeout=3000)
    qtbot.keyClick(window, Qt.Key_Space)
    assert not tl.playing


def test_a_panel_opens_on_its_start_frame_and_play_from_there_restarts(window, qtbot):
    """The memory panel opens on the end of the scenario's own ZeRO stage (not DP's frame 0, which
    contradicted the verdict above it); Play from the last frame starts the animation over."""
    tl = window.ctx.timeline
    window.ctx.scenario.update(strategy="zero2")
    mem = window.show_panel("memory")
    stage_end = mem.chapters[3][0] - 1                   # chapters: DP, ZeRO-1, ZeRO-2, ZeRO-3
    assert tl.position == stage_end and mem._frame == stage_end
    assert "ZeRO-2" in mem.frames[stage_end].stage_label
    window.show_panel("serving")
    assert tl.position == tl.n_frames - 1                # the finished run, not an empty chart
    tl.set_spec(TimelineSpec(10, start=9))
    tl.play()
    assert tl.position == 0 and tl.playing
    tl.stop()
    tl.set_spec(TimelineSpec(5, start=99))               # a start past the end shows the last frame
    assert tl.position == 4


def test_theme_and_font_scale(window):
    window.ctx.set_theme("dark", 1.6)
    assert window.ctx.theme.name == "dark" and window.ctx.theme.font_scale == pytest.approx(1.6)
    app = QtGui.QGuiApplication.instance()
    assert app.font().pointSizeF() == pytest.approx(window.ctx.theme.point_size)
    pal = app.palette()           # colours travel in the palette, so every widget follows the theme …
    assert pal.color(QtGui.QPalette.Window).name().upper() == window.ctx.theme.bg.upper()
    assert pal.color(QtGui.QPalette.WindowText).name().upper() == window.ctx.theme.fg.upper()
    css = app.styleSheet()        # … and no rule puts every plain widget under the slow stylesheet engine
    assert "QWidget {" not in css and "QWidget{" not in css
    tick = css.split('image: url("', 1)[1].split('"', 1)[0]
    assert Path(tick).is_file()   # the check mark of a ticked box
    window.presenter_action.setChecked(True)
    window.toggle_presenter()
    assert window.ctx.theme.name == "light" and window.ctx.theme.font_scale >= 1.5
    window.presenter_action.setChecked(False)
    window.toggle_presenter()


@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_a_disabled_button_looks_disabled(window, theme_name):
    """The stylesheet gave every button the text colour, so an idle Cancel or the player's buttons
    without an animation looked pressable. Disabled text is the theme's muted colour."""
    from PySide6.QtWidgets import QPushButton

    window.ctx.set_theme(theme_name, 1.0)
    theme = window.ctx.theme
    on, off = QPushButton("Cancel", window), QPushButton("Cancel", window)
    off.setEnabled(False)
    ink = []
    for b in (on, off):
        b.resize(b.sizeHint())
        img = b.grab().toImage()
        lum = [QtGui.QColor(img.pixel(x, y)).lightness() for x in range(img.width()) for y in range(img.height())]
        ink.append(min(lum) if theme_name == "light" else max(lum))   # the text's extreme
    fg, muted = QtGui.QColor(theme.fg).lightness(), QtGui.QColor(theme.muted).lightness()
    assert abs(ink[0] - fg) < 40                # enabled: the text colour
    assert abs(ink[1] - muted) < 40 and abs(ink[1] - fg) > 60    # disabled: muted, visibly not the text colour


def test_a_choice_too_long_for_its_box_ends_with_an_ellipsis(window):
    """The scenario dock's combo boxes are narrower than some choices: "ZeRO-3 (+ pai" was cut."""
    combo = window.editor.widgets["strategy"]
    full = combo.currentText()
    shown = combo.shown_text()
    assert combo.fontMetrics().horizontalAdvance(full) > combo.width() - 30     # too long for this dock
    assert shown.endswith("…") and full.startswith(shown[:-1])
    combo.resize(combo.fontMetrics().horizontalAdvance(full) + 80, combo.height())
    assert combo.shown_text() == full


def test_exports_png_at_2x_svg_csv_json(window, tmp_path):
    window.show_panel("overview")
    panel = window.current_panel()
    png = window.export("png", tmp_path / "o.png")
    img = QtGui.QImage(str(png))
    assert img.width() == 2 * panel.width() and img.height() == 2 * panel.height()
    svg = window.export("svg", tmp_path / "o.svg").read_text()
    assert "<svg" in svg and f'width="{panel.width()}' in svg.replace("px", "")
    rows = (window.export("csv", tmp_path / "o.csv")).read_text().splitlines()
    assert rows[0].startswith("# explorer-view: {")      # the view it was made from, as a comment line
    assert rows[1] == "quantity,value" and any(r.startswith("params,8030261248") for r in rows)
    doc = json.loads(window.export("json", tmp_path / "o.json").read_text())
    assert doc["result"]["params"] == 8030261248 and doc["meta"]["panel"] == "overview"


def test_gif_export_walks_the_timeline(window, tmp_path):
    from PIL import Image

    from explorer.exports import export_gif

    panel = window.show_panel("overview")
    panel.show_frame = lambda i: panel.cards["params"].value.setText(f"frame {i}")  # a visibly changing frame
    window.ctx.timeline.set_spec(TimelineSpec(6, fps=5))
    out = export_gif(panel, window.ctx.timeline, tmp_path / "a.gif", scale=0.5)
    assert Image.open(out).n_frames == 6


def test_layout_is_remembered(qtbot, ctx, tmp_path):
    from explorer.main_window import MainWindow

    w = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(w)
    from PySide6.QtWidgets import QDockWidget

    w.show()
    w.findChild(QDockWidget, "lesson_dock").hide()
    w.close()
    w2 = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(w2)
    w2.show()
    assert not w2.findChild(QDockWidget, "lesson_dock").isVisible()
    assert w2.findChild(QDockWidget, "scenario_dock").isVisible()


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from 3.12 (PEP 683)")
def test_none_refcount_stable(qtbot):
    import pyqtgraph as pg

    w = pg.PlotWidget()
    qtbot.addWidget(w)
    curve = w.plot()
    xs = np.linspace(0, 6, 500)
    before = sys.getrefcount(None)
    for i in range(200):
        curve.setData(xs, np.sin(xs + i))
    assert sys.getrefcount(None) - before > -50  # PySide6 6.12.0 on 3.11 drains about 2000


def test_animation_soak_real_timer(window, qtbot):
    """≥ 5 s of real-timer animation at ~60 fps: catches binding refcount bugs short tests miss."""
    import pyqtgraph as pg

    tl = window.ctx.timeline
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.show()
    curve = plot.plot()
    xs = np.linspace(0, 6, 1000)
    tl.position_changed.connect(lambda i: curve.setData(xs, np.sin(xs + i / 10)))
    tl.set_spec(TimelineSpec(100_000, fps=60))
    tl.play()
    qtbot.wait(5500)
    tl.stop()
    assert tl.position > 100  # frames really advanced


def test_cli_screenshot_and_selftest(tmp_path):
    out = tmp_path / "shot.png"
    r = subprocess.run([sys.executable, "-m", "explorer", "--screenshot", str(out), "--panel", "overview",
                        "--preset", "llama3-70b", "--size", "1280x800"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert QtGui.QImage(str(out)).width() == 1280
    bad = subprocess.run([sys.executable, "-m", "explorer", "--screenshot", str(out), "--panel", "nope"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "panel" in bad.stderr


@pytest.mark.parametrize("args, says", [
    (["--screenshot", "{tmp}", "--panel", "overview"], "cannot write"),                 # a directory
    (["--screenshot", "{tmp}/shot.png", "--device", "cuda"], "device"),                 # no CUDA here
    (["--screenshot", "{tmp}/shot.png", "--size", "100000x100000"], "--size"),
])
def test_cli_screenshot_failures_are_one_line_not_a_traceback(tmp_path, args, says):
    if says == "device":
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has CUDA")
    r = subprocess.run([sys.executable, "-m", "explorer", *[a.format(tmp=tmp_path) for a in args]], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_presenter_mode_gives_the_panel_the_room_and_restores_the_layout(window):
    from PySide6.QtWidgets import QDockWidget

    window.ctx.set_theme("dark", 1.0)
    scenario = window.findChild(QDockWidget, "scenario_dock")
    lesson = window.findChild(QDockWidget, "lesson_dock")
    assert window.tabifiedDockWidgets(scenario) == []
    window.resize(1280, 800)
    window.set_presenter(True, full_screen=False)
    assert window.ctx.theme.name == "light" and window.ctx.theme.font_scale == pytest.approx(1.6)
    assert lesson in window.tabifiedDockWidgets(scenario)            # one side column, two tabs
    window.set_presenter(False)
    assert (window.ctx.theme.name, window.ctx.theme.font_scale) == ("dark", 1.0)
    assert window.tabifiedDockWidgets(scenario) == [] and lesson.isVisible()


def test_presenter_text_keeps_its_share_of_the_screen_and_follows_ctrl_plus(window, qtbot):
    """At a fixed point size 1080p text was two-thirds as large against the screen as 800-line text.
    On a tour's slides it keeps its share; a whole panel outside a tour keeps the size it fits at."""
    from explorer.lessons import lesson_tour

    window.resize(1280, 800)
    window.set_presenter(True, full_screen=False)
    at_800 = window.ctx.theme.point_size
    window.resize(1920, 1080)
    qtbot.wait(50)
    assert window.ctx.theme.point_size == pytest.approx(at_800)       # no tour: every panel must still fit
    window.tour.start(lesson_tour("A3"), 0)
    qtbot.waitUntil(lambda: window.ctx.theme.point_size != at_800)
    assert window.ctx.theme.point_size / 1080 == pytest.approx(at_800 / 800, rel=0.02)
    before = window.ctx.theme.point_size
    window.scale_text(0.15)                                           # Ctrl+= in presenter mode
    assert window.ctx.theme.point_size > before
    window.tour.stop()
    assert window.ctx.theme.point_size < before
    window.set_presenter(False)


def test_font_scale_chosen_by_the_user_is_kept_in_presenter_mode(window):
    window.resize(1280, 800)
    window.ctx.set_theme("dark", 2.4)                                # --font-scale 2.4
    window.set_presenter(True, full_screen=False)
    assert window.ctx.theme.font_scale == pytest.approx(2.4)
    window.set_presenter(False)
    assert window.ctx.theme.font_scale == pytest.approx(2.4)


@pytest.mark.parametrize("presenter", [False, True])
def test_every_panel_fits_a_1280x800_screen(window, presenter):
    """A panel larger than the screen scrolls inside its tab; it never pushes the window past it."""
    from PySide6.QtWidgets import QApplication

    window.resize(1280, 800)
    if presenter:
        window.set_presenter(True, full_screen=False)
    for info in window.panel_infos:
        window.show_panel(info.key)
        QApplication.processEvents()
        assert window.width() <= 1280 and window.height() <= 800, (info.key, window.size())


def test_closing_in_presenter_mode_remembers_the_working_layout(qtbot, ctx):
    from PySide6.QtWidgets import QDockWidget

    from explorer.main_window import MainWindow

    w = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(w)
    w.show()
    w.set_presenter(True, full_screen=False)
    w.close()
    w2 = MainWindow(ctx, remember_layout=True)
    qtbot.addWidget(w2)
    w2.show()
    scenario = w2.findChild(QDockWidget, "scenario_dock")
    assert w2.tabifiedDockWidgets(scenario) == [] and ctx.theme.font_scale == pytest.approx(1.0)


def test_a_panel_fills_its_tab_and_scrolls_rather_than_squeezing(window):
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    window.resize(1600, 1000)
    panel = window.show_panel("memory")
    QApplication.processEvents()
    host = window._hosts["memory"]
    assert panel.size() == host.viewport().size()                      # room enough: no scrolling
    window.resize(1280, 800)
    window.set_presenter(True, full_screen=False)
    QApplication.processEvents()
    assert panel.height() > host.viewport().height()                   # too little room: it scrolls …
    for plot in panel.findChildren(pg.PlotWidget):
        if plot.isVisible():
            assert plot.height() >= plot.minimumHeight(), plot.accessibleName()   # … nothing is squeezed


def test_plot_labels_follow_the_presenter_text_size(window):
    import pyqtgraph as pg

    panel = window.show_panel("serving")       # TextItems made without a font of their own
    window.set_presenter(True, full_screen=False)
    size = window.ctx.theme.point_size
    labels = [i for p in panel.findChildren(pg.PlotWidget) for i in p.getPlotItem().items
              if isinstance(i, pg.TextItem) and i.toPlainText()]
    assert labels and all(t.textItem.font().pointSizeF() == pytest.approx(size) for t in labels)
    overview = window.show_panel("overview")   # label-layer labels are drawn at the theme's size
    assert overview.labels.labels and all(label.font.pointSizeF() == pytest.approx(size)
                                          for label in overview.labels.labels)
    window.set_presenter(False)
    assert all(t.textItem.font().pointSizeF() == pytest.approx(window.ctx.theme.point_size) for t in labels)
    assert all(label.font.pointSizeF() == pytest.approx(window.ctx.theme.point_size)
               for label in overview.labels.labels)


def test_stepping_the_timeline_re_lays_out_nothing(window):
    """The player's "frame i/n" label has a fixed size: re-texting a label that may resize posts a
    layout request that climbs to the main window and re-lays out every dock on every frame."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    window.show_panel("memory")
    QApplication.processEvents()
    requests = []

    class _Watch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.LayoutRequest and obj.isWidgetType():
                requests.append((type(obj).__name__, obj.objectName()))
            return False

    tl = window.ctx.timeline
    frames = (1, 2, 3, 9, 10, 11, 40, 76)   # single- to double-digit frame numbers, every stage
    for i in frames:                        # once through: captions take the height their longest text needs
        tl.set_position(i)
        QApplication.processEvents()
    watch = _Watch()
    QApplication.instance().installEventFilter(watch)
    try:
        for i in frames:
            tl.set_position(i)
            QApplication.processEvents()
    finally:
        QApplication.instance().removeEventFilter(watch)
    assert requests == [], requests


def test_frame_counter_has_room_for_its_text_at_presenter_size(qtbot, ctx):
    """The counter's fixed size is measured again when the text grows; a panel chosen before the
    window shows (``explorer --panel … --presenter``) left it measured in the old font, cut off."""
    from explorer.main_window import MainWindow

    win = MainWindow(ctx, remember_layout=False)
    qtbot.addWidget(win)
    win.show_panel("pipeline")
    win.resize(1600, 1000)
    win.show()
    label = win.player.frame_label
    try:
        win.set_presenter(True, full_screen=False)
        qtbot.waitUntil(lambda: label.width() >= label.fontMetrics().horizontalAdvance(label.text()), timeout=2000)
        assert label.font().pointSizeF() == pytest.approx(ctx.theme.point_size)
    finally:
        win.set_presenter(False)
        for p in win.panels:
            p.tasks.cancel()
            p.settle(30_000)


def test_overview_chart_is_log_scaled_so_state_and_one_gpu_stay_comparable(window):
    """Bars are drawn in log10 units from the decade below the smallest value; labels carry GB."""
    import numpy as np

    ov = window.show_panel("overview")
    o = ov.summary
    gb = np.array([o.training_state_bytes, o.gpu_memory_bytes, o.cluster_memory_bytes]) / 1e9
    tops = [label.y for label in ov.labels.labels]
    assert tops == pytest.approx(np.log10(gb).tolist())
    assert [label.text for label in ov.labels.labels] == [f"{v:,.1f} GB" for v in gb]
    lo, hi = ov.plot.getViewBox().viewRange()[1]
    assert lo <= np.log10(gb.min()) and hi > np.log10(gb.max())
    assert ov.plot.getAxis("left").logMode


def test_overview_axis_stays_put_while_the_bars_fit_and_follows_when_they_do_not(window):
    """Dragging the GPU count 64 → 128 → 64 grows the range once and then keeps it (an axis that
    jumps on every edit is hard to read, and re-rendering it was most of an edit's cost); a much
    smaller cluster, or a bar past the top, moves it."""
    import numpy as np

    ov = window.show_panel("overview")
    ctx = window.ctx

    def y_range():
        return tuple(ov.plot.getViewBox().viewRange()[1])

    def cluster_top():
        return float(np.log10(ov.summary.cluster_memory_bytes / 1e9))

    ctx.scenario.update(n_gpus=64)
    ctx.scenario.update(n_gpus=128)
    grown = y_range()
    assert grown[1] > cluster_top()
    ctx.scenario.update(n_gpus=64)
    assert y_range() == pytest.approx(grown)                  # fits with less than a decade to spare
    ctx.scenario.update(n_gpus=2)
    assert y_range()[1] < grown[1] and y_range()[1] > cluster_top()   # over a decade to spare: it follows
    ctx.scenario.update(n_gpus=4096)
    assert y_range()[1] > cluster_top()                       # never cuts a bar off
