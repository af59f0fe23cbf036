"""Start-up time and memory at rest, beside a bare PySide6 + pyqtgraph window.

Both are launched the same way (fresh interpreter, offscreen unless DISPLAY is set) and report the
wall-clock time of their first paint event; the ratio is the figure of merit (target ≤ 1.5×). Then
each runs untouched for ``--idle`` seconds (past the window's device probe) and its resident memory
is read from /proc (Linux): the idle-RSS ratio's target is ≤ 2×.
Usage: python benchmarks/startup.py [--runs 5] [--idle 10]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg
app = QApplication(sys.argv[:1])
win = QMainWindow(); plot = pg.PlotWidget(); plot.plot([0, 1, 2], [0, 1, 4]); win.setCentralWidget(plot)
class W(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Paint and obj.isWidgetType() and obj.window() is win:
            print(f"FIRST_PAINT_EPOCH {time.time():.6f}", flush=True); QTimer.singleShot(0, app.quit)
            app.removeEventFilter(self)
        return False
w = W(); app.installEventFilter(w); win.resize(1500, 950); win.show(); app.exec()
"""


def first_paint(cmd: list[str], env: dict) -> float:
    t0 = time.time()
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    for line in out.stdout.splitlines():
        if line.startswith("FIRST_PAINT_EPOCH"):
            return float(line.split()[1]) - t0
    raise RuntimeError(f"no paint reported by {cmd}: {out.stderr[-2000:]}")


def measure(runs: int = 5) -> dict:
    env = dict(os.environ, EXPLORER_STARTUP_PROBE="1")
    env.setdefault("QT_QPA_PLATFORM", "offscreen" if not env.get("DISPLAY") else "xcb")
    env["EXPLORER_CONFIG_DIR"] = str(ROOT / "build" / "bench-config")
    app_cmd = [sys.executable, "-m", "explorer"]
    bare_cmd = [sys.executable, "-c", BARE]
    first_paint(app_cmd, env), first_paint(bare_cmd, env)  # warm the page cache for both
    app_t, bare_t = [], []
    for _ in range(runs):
        app_t.append(first_paint(app_cmd, env))
        bare_t.append(first_paint(bare_cmd, env))
    a, b = statistics.median(app_t), statistics.median(bare_t)
    return {"app_s": a, "bare_s": b, "ratio": a / b, "platform": env["QT_QPA_PLATFORM"], "runs": runs}


def idle_rss_mb(cmd: list[str], env: dict, seconds: float) -> tuple[float, bool]:
    """Resident MB of ``cmd`` after ``seconds`` untouched, and whether it had loaded torch by then."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(seconds)
        status = Path(f"/proc/{proc.pid}/status").read_text(encoding="ascii")
        maps = Path(f"/proc/{proc.pid}/maps").read_text(encoding="ascii", errors="replace")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return kb / 1024, "libtorch" in maps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=float, default=10.0, help="seconds at rest before reading memory")
    args = ap.parse_args()
    r = measure(args.runs)
    print(f"platform {r['platform']}, median of {r['runs']} runs")
    print(f"bare PySide6 + pyqtgraph window: {r['bare_s'] * 1000:7.0f} ms to first paint")
    print(f"AI Systems Explorer main window:  {r['app_s'] * 1000:7.0f} ms to first paint")
    print(f"ratio: {r['ratio']:.2f}x (target <= 1.5x)")
    if not Path("/proc/self/status").exists():
        print("idle memory: needs /proc (Linux)")
        return
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen" if not env.get("DISPLAY") else "xcb")
    env["EXPLORER_CONFIG_DIR"] = str(ROOT / "build" / "bench-config")
    app_mb, torch_loaded = idle_rss_mb([sys.executable, "-m", "explorer"], env, args.idle)
    bare_mb, _ = idle_rss_mb([sys.executable, "-c", BARE.replace("QTimer.singleShot(0, app.quit)", "None")], env,
                             args.idle)
    print(f"idle memory after {args.idle:g} s: bare {bare_mb:.0f} MB, app {app_mb:.0f} MB "
          f"(torch {'loaded' if torch_loaded else 'not loaded'}), ratio {app_mb / bare_mb:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
