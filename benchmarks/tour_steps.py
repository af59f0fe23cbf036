"""Time from "next step" to the step fully painted, for every step of every shipped tour.

A step is done when its panel's jobs have finished, their results have been drawn and the event
loop has painted them. Each tour is walked twice (the first walk also builds panels and warms caches); the
second walk is reported. Beside each step time, the longest single turn of the event loop during it:
a heavy step must show progress at once and never freeze the window. The reference, timed in the
same run, is a plain panel switch (no tour) between the same panels.

Engine jobs go through the result cache (``explorer.job_cache``). ``--cache on`` (default: an empty
user cache and the shipped tour cache), ``user`` (no shipped cache), ``off`` (no cache, no prefetch);
``--walks 1`` reports a first walk (a fresh install), ``--prepare`` runs *Prepare lesson* first, and
``--dwell S`` stays S seconds on each step before the next (the prefetch computes the next steps meanwhile).

Run: ``python benchmarks/tour_steps.py [--lessons A1 A2] [--presenter] [--cache on|user|off] [--walks N]
[--prepare] [--dwell S] [--all-steps]``.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("EXPLORER_CONFIG_DIR", tempfile.mkdtemp(prefix="explorer-bench-"))

TARGET_MS = 150.0
QUIET_S = 0.35        # no job running for this long: the step has settled (jobs debounce for less)
GIVE_UP_S = 120.0     # a window that never stops painting is reported, not waited for


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


class GcPauses:
    """Wall time of each garbage collection (``gc.callbacks``), longest and total since ``reset``."""

    def __init__(self) -> None:
        self.started = 0.0
        self.reset()
        gc.callbacks.append(self._on_gc)

    def reset(self) -> None:
        self.longest = self.total = 0.0

    def _on_gc(self, phase: str, _info: dict) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            ms = (time.perf_counter() - self.started) * 1e3
            self.longest, self.total = max(self.longest, ms), self.total + ms


CPU: list[float] = []   # GUI-thread CPU ms (time.thread_time) of each timed() call, in order


_PAINTS = {}


def _window_paints(win):
    """A counter of the window's update requests (each is one paint of what changed), made once."""
    if id(win) not in _PAINTS:
        from PySide6.QtCore import QEvent, QObject

        class Paints(QObject):
            count = 0

            def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
                if event.type() == QEvent.UpdateRequest:
                    self.count += 1
                return False

        _PAINTS[id(win)] = Paints(win)
        win.installEventFilter(_PAINTS[id(win)])
    counter = _PAINTS[id(win)]
    counter.count = 0
    return counter


def timed(win, action) -> tuple[float, float]:
    """(ms until settled and painted, longest event-loop turn in ms) for ``action()``; the GUI
    thread's CPU time for it is appended to ``CPU`` (the machine may be shared: wall time is not).

    The step is settled once no job has run and the window has not painted for ``QUIET_S``. The
    paint is the loop's own (the window's update request, posted after layouts and drawn results); a
    forced repaint of the whole window afterwards would paint it twice and count the second as a
    block. Animation frames of a playing timeline are not the step's work."""
    from PySide6.QtWidgets import QApplication

    paints = _window_paints(win)

    c0 = time.thread_time()
    t0 = time.perf_counter()
    action()
    after = time.perf_counter()
    block = (after - t0) * 1e3
    last_busy = after
    while True:
        start = time.perf_counter()
        QApplication.processEvents()
        now = time.perf_counter()
        turn = (now - start) * 1e3
        block = max(block, turn)
        panel = win.current_panel()
        jobs = panel is not None and any(r.running for r in panel._jobs.values())
        painted, paints.count = paints.count, 0
        if jobs or (painted and not win.ctx.timeline.playing):
            last_busy = now
        elif now - last_busy >= QUIET_S or now - t0 > GIVE_UP_S:
            break
        time.sleep(0.001)
    CPU.append((time.thread_time() - c0) * 1e3)
    return (last_busy - t0) * 1e3, block


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lessons", nargs="*")
    ap.add_argument("--presenter", action="store_true", help="presenter layout at 1280x800")
    ap.add_argument("--cache", choices=("on", "user", "off"), default="on", help="EXPLORER_JOB_CACHE")
    ap.add_argument("--walks", type=int, default=2, help="walk each tour this many times, report the last")
    ap.add_argument("--prepare", action="store_true", help="Tour > Prepare lesson before the walks")
    ap.add_argument("--dwell", type=float, default=0.0, help="seconds on each step before the next")
    ap.add_argument("--all-steps", action="store_true", help="list every step's time and block, not only slow ones")
    a = ap.parse_args()
    os.environ["EXPLORER_JOB_CACHE"] = a.cache
    from PySide6.QtWidgets import QApplication

    from explorer.app import make_app
    from explorer.context import AppContext
    from explorer.lessons import lesson_tour, lessons
    from explorer.lessons.prefetch import walk as walk_tour
    from explorer.main_window import MainWindow

    make_app()
    pauses = GcPauses()
    win = MainWindow(AppContext(device="cpu"), remember_layout=False, freeze_objects=True)   # as the command line opens it
    win.resize(*((1280, 800) if a.presenter else (1600, 1000)))
    win.show()
    QApplication.processEvents()
    if a.presenter:
        win.set_presenter(True, full_screen=False)
    ids = a.lessons or [x.id for x in lessons() if x.ready]
    print(f"cache {a.cache}, walk {a.walks} of {a.walks} reported{', prepared' if a.prepare else ''}"
          f"{f', {a.dwell:g} s on each step' if a.dwell else ''}")
    print(f"{'tour':6s} {'steps':>5s} {'p50 ms':>8s} {'p95 ms':>8s} {'worst':>8s} {'longest block':>14s} "
          f"{'over target':>12s}  {'reference panel switch p95':>27s}")
    worst_p95, all_steps, refs = 0.0, [], []
    for lesson_id in ids:
        tour = lesson_tour(lesson_id)
        win.tour.start(tour, 0)
        if a.prepare:
            t0 = time.perf_counter()
            walk_tour(win.tour, lambda _done, _n: True)
            print(f"{lesson_id}: Prepare lesson took {time.perf_counter() - t0:.1f} s", flush=True)
        for walk in range(a.walks):
            times, blocks, cpus, gcs = [], [], [], []
            for i in range(len(tour.steps)):
                pauses.reset()
                ms, block = timed(win, lambda i=i: win.tour.go(i))
                times.append(ms)
                blocks.append(block)
                cpus.append(CPU[-1])
                gcs.append((pauses.longest, pauses.total))
                dwell_until = time.perf_counter() + a.dwell
                while time.perf_counter() < dwell_until:
                    QApplication.processEvents()
                    time.sleep(0.01)
        ref = []
        panels = [s.panel for s in tour.steps]
        for key in panels + panels:
            other = "overview" if key != "overview" else "law"
            timed(win, lambda o=other: win.show_panel(o))
            ref.append(timed(win, lambda k=key: win.show_panel(k))[0])
        win.tour.stop()
        p95 = _p95(times)
        worst_p95 = max(worst_p95, p95)
        all_steps += times
        refs += ref
        over = sum(t > TARGET_MS for t in times)
        print(f"{lesson_id:6s} {len(times):5d} {statistics.median(times):8.1f} {p95:8.1f} {max(times):8.1f} "
              f"{max(blocks):14.1f} {over:12d}  {_p95(ref):27.1f}", flush=True)
        for i, (ms, block) in enumerate(zip(times, blocks)):
            if ms > TARGET_MS or a.all_steps:
                print(f"   step {i + 1} ({tour.steps[i].panel}): {ms:.0f} ms, event loop blocked {block:.0f} ms, "
                      f"GUI-thread CPU {cpus[i]:.0f} ms, gc longest {gcs[i][0]:.0f} ms (total {gcs[i][1]:.0f} ms)")
    print(f"all steps: {len(all_steps)}, p95 {_p95(all_steps):.1f} ms (target ≤ {TARGET_MS:.0f} ms for cheap steps); "
          f"reference panel switch p95 {_p95(refs):.1f} ms")
    print(f"tour step worst p95: {worst_p95:.1f} ms")
    for p in win.panels:
        p.cancel_jobs()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
