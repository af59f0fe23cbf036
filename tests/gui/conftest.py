"""Qt fixtures: real widgets, offscreen, with settings redirected to a temporary folder."""
from __future__ import annotations

import time
import warnings

import pytest


def stop_jobs(panels) -> None:
    """Unbind every panel (its debounces stopped, its jobs cancelled) and settle it, so no cancelled
    worker keeps a pool thread busy in the next test; a worker slow to notice its cancel is reported."""
    for p in panels:
        p.unbind()
        t0 = time.perf_counter()
        p.settle(30_000)
        if time.perf_counter() - t0 > 3:
            warnings.warn(f"{type(p).__name__}: a cancelled job ran {time.perf_counter() - t0:.1f} s more", stacklevel=1)


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture(autouse=True)
def _app_text_restored(qapp):
    """Every test starts with the application's text as the app sets it (``make_app``: DejaVu Sans),
    whichever tests ran before it in its worker, and a test that changes it is undone: one that ends
    presenting left the font at 1.6x, and the next test measured text at presenter size (a wrapped
    cell then read as cut). Taken before ``make_app``, the font put back was Qt's own, so only the
    first test of a worker had the app's font."""
    from explorer.app import make_app

    make_app()
    font, sheet = qapp.font(), qapp.styleSheet()
    yield
    if qapp.font() != font:
        qapp.setFont(font)
    if qapp.styleSheet() != sheet:
        qapp.setStyleSheet(sheet)


@pytest.fixture
def ctx(qapp):
    """A fresh AppContext (scenario model, timeline, theme) on the CPU, in the app as ``explorer``
    configures it (fonts, the undo shortcut filter)."""
    from explorer.app import make_app
    from explorer.context import AppContext

    make_app()

    c = AppContext(device="cpu")
    yield c
    c.close()


@pytest.fixture
def make_panel(qtbot, ctx):
    """make_panel(PanelClass) → a bound, shown panel of realistic size, cleaned up afterwards."""
    made = []

    def _make(cls, size=(1400, 900)):
        panel = cls(ctx)
        qtbot.addWidget(panel)
        panel.resize(*size)
        panel.show()
        panel.bind()
        made.append(panel)
        return panel

    yield _make
    stop_jobs(made)


@pytest.fixture
def window(qtbot, ctx):
    """The real main window with every discovered panel, shown offscreen."""
    from explorer.main_window import MainWindow

    win = MainWindow(ctx, remember_layout=False)
    qtbot.addWidget(win)
    win.resize(1500, 950)
    win.show()
    yield win
    stop_jobs(win.panels)


@pytest.fixture
def new_window(qtbot):
    """new_window(remember=False) → another real main window with its own context (a second user's
    app: views saved in one are reopened in it); remember=True reads and writes the saved layout."""
    from explorer.context import AppContext
    from explorer.main_window import MainWindow

    contexts = []

    def _make(remember: bool = False):
        contexts.append(AppContext(device="cpu"))
        win = MainWindow(contexts[-1], remember_layout=remember)
        qtbot.addWidget(win)
        win.resize(1500, 950)
        win.show()
        return win

    yield _make
    for c in contexts:
        c.close()
