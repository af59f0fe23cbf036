"""``explorer --selftest``: open every panel offscreen, drive its controls, show each of its inner tabs,
walk its timeline, export once.

Exits non-zero on any error, including exceptions that reached the exception hook and background
tasks that failed. Used by CI against both the venv and the frozen bundle.
"""
from __future__ import annotations

import sys
import tempfile
import time
import traceback
from pathlib import Path

from PySide6.QtWidgets import QApplication, QTabWidget


def run_selftest(win, sink, font_problems: list[str], requested_device: str = "auto") -> int:
    failures: list[str] = [f"fonts: {p}" for p in font_problems]
    out = Path(tempfile.mkdtemp(prefix="explorer-selftest-"))
    try:
        from engines.core.device import device_label, resolve_device

        dev = resolve_device(requested_device)
        win.set_device(dev, device_label(dev))
        print(f"device: {device_label(dev)}")
    except Exception as exc:  # noqa: BLE001
        failures.append(f"device: {exc}")
    win.resize(1500, 950)
    win.show()
    QApplication.processEvents()
    tl = win.ctx.timeline
    for cls in win.panel_classes:
        t0 = time.perf_counter()
        before = len(sink.errors)
        panel = cls  # for the report if construction itself fails
        try:
            panel = win.show_panel(cls.key)
            QApplication.processEvents()
            panel.selftest()
            for tabs in panel.findChildren(QTabWidget):   # every inner tab paints once: an error in a
                shown = tabs.currentIndex()               # paint() there (a date axis asked too early)
                for i in range(tabs.count()):             # crashed the app when a user opened that tab
                    tabs.setCurrentIndex(i)
                    QApplication.processEvents()
                tabs.setCurrentIndex(shown)
            if not panel.settle(300_000):
                raise RuntimeError("background work still running after 300 s")
            if panel.tasks.last_error:
                raise RuntimeError("background task failed: " + panel.tasks.last_error)
            if tl.spec is not None:
                for i in sorted({0, 1, tl.n_frames // 2, tl.n_frames - 1}):
                    tl.set_position(i)
                    QApplication.processEvents()
                tl.home()
            for fmt in ("png", "svg", "json", "csv"):
                path = win.export(fmt, out / f"{panel.key}.{fmt}")
                if not path.exists() or path.stat().st_size == 0:
                    raise RuntimeError(f"{fmt} export is empty")
            if tl.spec is not None and tl.n_frames > 1:
                # a short GIF proves the frame path; cap frames to keep the self-test quick
                from explorer.exports import export_gif

                export_gif(panel, tl, out / f"{panel.key}.gif", scale=0.5, max_frames=4)
        except Exception:  # noqa: BLE001
            failures.append(f"{panel.key}: {traceback.format_exc()}")
        if len(sink.errors) > before:
            failures.append(f"{panel.key}: unhandled exception(s):\n" + "\n".join(sink.errors[before:]))
        status = "FAIL" if failures and failures[-1].startswith(panel.key) else "ok"
        print(f"{status:4} {panel.key:12} {time.perf_counter() - t0:6.2f} s", flush=True)
    scenario_file = out / "scenario.json"
    try:
        win.ctx.scenario.save(scenario_file)
        win.ctx.scenario.update(n_gpus=8, tp=1, pp=1)
        win.ctx.scenario.load(scenario_file)
    except Exception:  # noqa: BLE001
        failures.append("scenario save/load: " + traceback.format_exc())
    print(f"exports in {out}")
    if failures:
        print("SELFTEST FAILED", file=sys.stderr)
        for f in failures:
            print(f, file=sys.stderr)
        return 1
    print(f"SELFTEST OK: {len(win.panel_classes)} panels")
    return 0
