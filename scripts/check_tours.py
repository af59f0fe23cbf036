"""Apply every step of the given tours (default: all ready lessons) in an offscreen window, report
what does not match its file, and optionally save a screenshot per step.

    python scripts/check_tours.py A2 B1 --shots /tmp/shots [--presenter] [--size 1280x800]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("lessons", nargs="*")
    ap.add_argument("--file", help="a tour file instead of shipped lessons")
    ap.add_argument("--shots", help="folder for one PNG per step")
    ap.add_argument("--presenter", action="store_true")
    ap.add_argument("--size", default="1600x1000")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("EXPLORER_CONFIG_DIR", tempfile.mkdtemp(prefix="explorer-"))
    from explorer.app import make_app
    from explorer.context import AppContext
    from explorer.exports import export_png
    from explorer.lessons import lesson_tour, lessons, load_tour
    from explorer.lessons.checks import step_problems
    from explorer.main_window import MainWindow
    from PySide6.QtWidgets import QApplication

    make_app()
    win = MainWindow(AppContext(), remember_layout=False)
    w, h = (int(v) for v in args.size.split("x"))
    win.resize(w, h)
    win.show()
    QApplication.processEvents()
    if args.presenter:
        win.set_presenter(True, full_screen=False)
    tours = [load_tour(args.file)] if args.file else [
        lesson_tour(i) for i in (args.lessons or [x.id for x in lessons() if x.ready])]
    bad = 0
    for tour in tours:
        for i in range(len(tour.steps)):
            problems = step_problems(win, tour, i)
            for p in problems:
                print("PROBLEM", p)
            bad += len(problems)
            if args.shots:
                win.current_panel().settle()
                Path(args.shots).mkdir(parents=True, exist_ok=True)
                export_png(win, Path(args.shots) / f"{tour.lesson}-{i + 1}.png", scale=1.0)
        print(f"{tour.lesson}: {len(tour.steps)} steps checked")
    for p in win.panels:
        p.cancel_jobs()
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
