"""Every panel under abuse: garbage typed into every number/text field, every slider dragged to both
ends, presets switched while the timeline plays and workers run, every task cancelled, tiny and huge
windows. No exception may reach sys.excepthook and the event loop must stay responsive."""
from __future__ import annotations

import sys
import time

import pytest
from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QLineEdit

from explorer.panel import discover_panels
from explorer.tasks import TaskRunner

PANEL_KEYS = [c.key for c in discover_panels()]
GARBAGE = ["abc", "-1e999", "999999999999", "", "0", "-0", "nan", "1/0", "   ", "١٢٣", "9" * 40, "-"]
MAX_WIDGETS = 25           # per kind and panel: keeps the whole file well under 90 s
PRESET_MODELS = ["llama3-70b", "gpt3-175b", "llama3-8b"]


@pytest.fixture
def hook():
    """Record anything that reaches sys.excepthook (slots, virtual overrides, timers)."""
    seen: list[str] = []
    old = sys.excepthook
    sys.excepthook = lambda t, v, tb: seen.append(f"{t.__name__}: {v}")
    yield seen
    sys.excepthook = old


def pump(ms: int = 30) -> None:
    timer = QElapsedTimer()
    timer.start()
    while timer.elapsed() < ms:
        QApplication.processEvents()


def responsive(limit_s: float = 3.0) -> float:
    """Seconds until a zero-delay timer fires; fails when the GUI thread is stuck."""
    fired: list[float] = []
    t0 = time.perf_counter()
    QTimer.singleShot(0, lambda: fired.append(time.perf_counter() - t0))
    while not fired and time.perf_counter() - t0 < limit_s:
        QApplication.processEvents()
    assert fired, f"event loop did not run a 0 ms timer within {limit_s} s"
    return fired[0]


def runners(panel) -> list[TaskRunner]:
    return panel.findChildren(TaskRunner)


def cancel_all(panel) -> None:
    for r in runners(panel):
        r.cancel()
    for r in runners(panel):
        assert r.wait(30_000), "a cancelled task did not stop"


def model_names(ctx) -> list[str]:
    from engines.core.models import PRESETS

    return [m for m in PRESET_MODELS if m in PRESETS and m != ctx.scenario.value.model] or list(PRESETS)[:2]


@pytest.mark.parametrize("key", PANEL_KEYS)
def test_panel_survives_abuse(window, qtbot, hook, key):
    t_start = time.perf_counter()
    ctx = window.ctx
    panel = window.show_panel(key)
    pump(50)

    # 1. garbage into every spin box and line edit (typed, then Enter), then the extremes
    spins = [w for w in panel.findChildren(QAbstractSpinBox) if w.isEnabled()][:MAX_WIDGETS]
    for w in spins:
        for text in GARBAGE[:4]:
            w.setFocus()
            w.selectAll()
            qtbot.keyClicks(w, text)
            qtbot.keyClick(w, Qt.Key_Return)
        w.stepBy(10**6)
        w.stepBy(-(10**6))
        w.clearFocus()
    pump()
    edits = [w for w in panel.findChildren(QLineEdit)
             if w.isEnabled() and not w.isReadOnly() and not isinstance(w.parent(), (QAbstractSpinBox, QComboBox))]
    for w in edits[:MAX_WIDGETS]:
        for text in GARBAGE:
            w.setText(text)
            w.editingFinished.emit()
            w.returnPressed.emit()
    pump()

    # 2. every slider dragged to both ends (press, move, release: what a mouse drag emits)
    for s in [w for w in panel.findChildren(QAbstractSlider) if w.isEnabled()][:MAX_WIDGETS]:
        for end in (s.minimum(), s.maximum(), s.minimum()):
            s.setSliderDown(True)
            s.setSliderPosition(end)
            s.setSliderDown(False)
            pump(5)
    pump()

    # 3. every combo box through every choice (bounded)
    for c in [w for w in panel.findChildren(QComboBox) if w.isEnabled()][:MAX_WIDGETS]:
        for i in list(range(c.count()))[:8]:
            c.setCurrentIndex(i)
            c.activated.emit(i)
        pump(5)

    # 4. start workers (the panel's own self-test drives them), play the timeline, switch presets
    try:
        panel.selftest()
    except Exception as exc:  # noqa: BLE001 - a self-test failure after abuse is a finding
        pytest.fail(f"{key}.selftest() failed after abuse: {exc!r}")
    ctx.timeline.set_spec(panel.timeline())
    ctx.timeline.play()
    for model in model_names(ctx):
        ctx.scenario.update(model=model)
        window.apply_preset(model)
        pump(40)
    from engines.core.presets import scenario_presets

    for name in list(scenario_presets())[:3]:
        window.apply_preset(name)
        pump(40)
    ctx.timeline.stop()

    # 5. cancel everything still running, then once more while freshly started
    cancel_all(panel)
    try:
        panel.selftest()
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{key}.selftest() failed after cancel: {exc!r}")
    cancel_all(panel)

    # 6. tiny and huge windows, with the timeline stepping
    for size in ((200, 150), (3000, 2000), (1500, 950)):
        window.resize(*size)
        pump(30)
        if ctx.timeline.spec is not None:
            ctx.timeline.end()
            ctx.timeline.home()
        pump(20)

    assert hook == [], f"{key}: exceptions reached sys.excepthook:\n" + "\n".join(hook)
    assert responsive() < 3.0
    for r in runners(panel):
        assert r.last_error is None or "Cancelled" in r.last_error, f"{key}: task failed: {r.last_error[:500]}"
    elapsed = time.perf_counter() - t_start
    print(f"{key}: {len(spins)} spin boxes, {len(edits)} line edits abused in {elapsed:.1f} s")
