"""Interaction latency: a scenario edit → every visible linked panel repainted.

For each panel, alternate a field it reads between two valid values and time ``update()`` →
event processing until Qt has painted the dirty regions of the window (the visible panel and the
scenario dock) *and* whatever that paint set off (an axis whose labels grew re-lays out its plot,
which paints again): the clock stops at the end of the last event pass that painted anything. A
paint counter on the panel proves each sample really repainted it.
Prints p50/p95 per panel; the target is p95 ≤ 16 ms. For scale, the same loop also times a bare
pyqtgraph window of the same size whose one 1,000-point line gets new data (``--no-reference`` skips it).
``--layout`` picks the window: ``default`` (scenario dock beside the panel), ``no-dock`` (the dock
closed: the panel gets the whole width) or ``presenter`` (presenter mode: large text, the dock in a
narrow column). A readout that re-lays out its panel on every edit shows up in one layout only.
Usage: python benchmarks/interaction.py [--n 60] [--panel KEY] [--layout default|no-dock|presenter]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("EXPLORER_CONFIG_DIR", tempfile.mkdtemp(prefix="explorer-bench-"))

# (field, value A, value B): edits a teacher makes while talking, all valid for the default scenario
EDITS = [("n_gpus", 64, 128), ("micro_batch", 1, 2), ("seq_len", 4096, 2048), ("serve_batch", 8, 16),
         ("strategy", "zero3", "zero2"), ("gpu", "h100-sxm", "h200"), ("serve_context", 8192, 4096),
         ("model", "llama3-8b", "llama3-70b")]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


FOLLOW_PASSES = 10  # event passes after the first while each one still paints (re-layouts settle in 1–2)


class _PaintCounter:
    """Counts paint events delivered to a panel (or any widget inside it) and to the whole window."""

    def __init__(self, panel) -> None:
        from PySide6.QtCore import QEvent, QObject

        counter = self
        window = panel.window()

        class _F(QObject):
            def eventFilter(self, obj, ev):  # noqa: N802
                if ev.type() == QEvent.Paint and obj.isWidgetType():
                    if obj is panel or panel.isAncestorOf(obj):
                        counter.paints += 1
                    if obj is window or window.isAncestorOf(obj):
                        counter.window_paints += 1
                return False

        from PySide6.QtWidgets import QApplication

        self.paints = 0
        self.window_paints = 0
        self._filter = _F()
        QApplication.instance().installEventFilter(self._filter)


def _repaint_ms(app, counter: _PaintCounter, edit) -> float:
    """Milliseconds from ``edit()`` to the end of the last event pass that painted anything: the
    first pass, then as long as each further pass still paints (a re-layout the paint set off)."""
    t0 = time.perf_counter()
    edit()
    app.processEvents()
    end = time.perf_counter()
    for _ in range(FOLLOW_PASSES):
        painted = counter.window_paints
        app.processEvents()
        if counter.window_paints == painted:
            break
        end = time.perf_counter()
    return (end - t0) * 1000


LAYOUTS = ("default", "no-dock", "presenter")


def _apply_layout(win, layout: str) -> None:
    from PySide6.QtWidgets import QDockWidget

    if layout == "no-dock":
        for dock in win.findChildren(QDockWidget):
            dock.hide()
    elif layout == "presenter":
        win.set_presenter(True, full_screen=False)   # offscreen has no screen to fill: keep 1600×1000
    elif layout != "default":
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")


def measure(n: int = 60, only: str | None = None, layout: str = "default") -> list[dict]:
    from explorer.app import make_app
    from explorer.context import AppContext
    from explorer.main_window import MainWindow

    app = make_app()
    ctx = AppContext(device="cpu")
    win = MainWindow(ctx, remember_layout=False, freeze_objects=True)   # as the command line opens it
    win.resize(1600, 1000)
    win.show()
    app.processEvents()
    _apply_layout(win, layout)
    app.processEvents()
    rows = []
    for cls in win.panel_classes:
        if only and cls.key != only:
            continue
        edit = next((e for e in EDITS if e[0] in cls.reads), None)
        if edit is None:
            rows.append({"panel": cls.key, "field": "-", "p50_ms": None, "p95_ms": None, "n": 0,
                         "note": "reads no scenario field"})
            continue
        panel = win.show_panel(cls.key)
        for _ in range(3):
            app.processEvents()
        field, a, b = edit
        counter = _PaintCounter(panel)
        times = []
        for i in range(n + 5):
            panel.settle()  # background results of the previous edit land outside the timed window
            before = counter.paints
            dt = _repaint_ms(app, counter, lambda: ctx.scenario.update(**{field: b if i % 2 == 0 else a}))
            if i >= 5 and counter.paints > before:  # warm-up; count only samples that repainted
                times.append(dt)
        if not times:
            rows.append({"panel": cls.key, "field": field, "p50_ms": None, "p95_ms": None, "n": 0,
                         "note": "edit changes nothing on the visible view"})
            continue
        ctx.scenario.update(**{field: a})
        panel.tasks.cancel()
        app.removeEventFilter(counter._filter)
        rows.append({"panel": cls.key, "field": field, "p50_ms": statistics.median(times),
                     "p95_ms": pct(times, 0.95), "n": len(times)})
    win.close()
    return rows


def bare_reference(n: int = 60) -> tuple[float, float]:
    """p50/p95 of a bare PlotWidget (1600×1000, one 1,000-point line, autorange) repainted after new
    data: what pyqtgraph alone costs on this machine, measured like the panels (follow-up passes too)."""
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    w = pg.PlotWidget()
    w.resize(1600, 1000)
    w.show()
    curve = w.plot(np.arange(1000), np.zeros(1000))
    app.processEvents()
    counter = _PaintCounter(w)
    rng = np.random.default_rng(0)
    times = []
    for i in range(n + 5):
        time.sleep(0.02)
        app.processEvents()
        y = rng.random(1000) * (1 + i % 2)
        dt = _repaint_ms(app, counter, lambda: curve.setData(np.arange(1000), y))
        if i >= 5:
            times.append(dt)
    app.removeEventFilter(counter._filter)
    w.close()
    return statistics.median(times), pct(times, 0.95)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--panel")
    ap.add_argument("--layout", choices=LAYOUTS, default="default")
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args()
    rows = measure(args.n, args.panel, args.layout)
    print(f"layout: {args.layout}")
    print(f"{'panel':12} {'edited field':14} {'p50 ms':>8} {'p95 ms':>8}")
    for r in rows:
        if r["n"]:
            print(f"{r['panel']:12} {r['field']:14} {r['p50_ms']:8.1f} {r['p95_ms']:8.1f}")
        else:
            print(f"{r['panel']:12} {r['field']:14} {'-':>8} {'-':>8}  ({r['note']})")
    if not args.no_reference:
        p50, p95 = bare_reference(args.n)
        print(f"{'bare plot':12} {'(reference)':14} {p50:8.1f} {p95:8.1f}  (pyqtgraph window, one 1,000-point line)")
    worst = max(r["p95_ms"] for r in rows if r["n"])
    print(f"worst p95: {worst:.1f} ms (target <= 16 ms)")


if __name__ == "__main__":
    main()
