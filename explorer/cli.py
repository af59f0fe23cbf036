"""``explorer``: open the window, render a screenshot offscreen, or run the self-test."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

FONT_SCALE_RANGE = (0.6, 3.0)   # the range the theme keeps the text scale in (explorer.theme.Theme.scaled)


def font_scale(text: str) -> float:
    """``--font-scale``: a finite number in the theme's range, refused with a message otherwise
    (nan, inf, 0 and -1 were silently clamped to a size nobody asked for)."""
    import math

    lo, hi = FONT_SCALE_RANGE
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (allowed: {lo}…{hi})") from None
    if not math.isfinite(value) or not lo <= value <= hi:
        raise argparse.ArgumentTypeError(f"{text} is out of range (allowed: {lo}…{hi})")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="explorer", description="AI Systems Explorer: linked, animated panels "
                                "for the arithmetic of AI infrastructure.")
    p.add_argument("--panel", help="panel to open (e.g. overview, memory, pipeline, quant, k8s, law)")
    p.add_argument("--preset", help="model or scenario preset (e.g. llama3-70b, zero-paper-7.5b)")
    p.add_argument("--scenario", help="scenario JSON file to load")
    p.add_argument("--state", metavar="FILE", help="saved view to open (File ▸ Save view, or an export's state)")
    p.add_argument("--save-state", metavar="OUT.json", help="write the view this command would show and exit")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="compute device for torch work")
    p.add_argument("--theme", choices=("light", "dark"), default="light")
    p.add_argument("--font-scale", type=font_scale, default=1.0, help="global text scale (presenter: 1.6)")
    p.add_argument("--presenter", action="store_true", help="light theme, large text, full screen")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window offscreen to a PNG and exit")
    p.add_argument("--frame", type=int, default=None, help="timeline frame to show for --screenshot")
    p.add_argument("--size", default="1600x1000", help="window size for --screenshot, WxH")
    p.add_argument("--selftest", action="store_true", help="open every panel offscreen, drive it, export, exit")
    p.add_argument("--list-panels", action="store_true", help="print the panel keys and exit")
    p.add_argument("--list-lessons", action="store_true",
                   help="print every lesson (id, ready/coming, title) and exit")
    p.add_argument("--lesson", metavar="ID", help="open the guided tour of lesson ID (e.g. A2)")
    p.add_argument("--step", type=int, default=1, metavar="N", help="with --lesson: the step to show (from 1)")
    p.add_argument("--tour", metavar="FILE", help="open a tour file (a teacher's own), like --lesson")
    p.add_argument("--export-lesson", nargs=2, metavar=("ID", "OUT"),
                   help="write lesson ID's tour as slides, OUT.html or OUT.pdf, and exit")
    p.add_argument("--export-exercises", nargs="+", metavar="ID [OUT]",
                   help="write lesson ID's exercises as OUT.xml (Moodle), OUT.html or OUT.pdf, and exit "
                        "(OUT may also come last: --export-exercises A2 --variants 20 OUT)")
    p.add_argument("out", nargs="?", help=argparse.SUPPRESS)   # OUT of --export-exercises, given last
    p.add_argument("--variants", type=int, default=10, metavar="N", help="with --export-exercises: variants per template")
    p.add_argument("--seed", type=int, default=1, help="with --export-exercises: the draw (same seed, same sheet)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.out is not None and not args.export_exercises:
        parser.error(f"unrecognized argument: {args.out}")
    if args.list_lessons:
        return _list_lessons()
    if args.export_exercises:
        return _export_exercises(args)
    headless = bool(args.screenshot or args.selftest or args.list_panels or args.save_state or args.export_lesson)
    if headless and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if headless and not os.environ.get("EXPLORER_CONFIG_DIR"):
        os.environ["EXPLORER_CONFIG_DIR"] = tempfile.mkdtemp(prefix="explorer-")

    from explorer.app import install_excepthook, make_app, probe_device, setup_logging
    from explorer.fonts import font_problems

    setup_logging()
    app = make_app()
    sink = install_excepthook()
    from engines.core.errors import ValidationError
    from engines.core.presets import apply_preset
    from engines.core.scenario import Scenario
    from explorer.context import AppContext
    from explorer.files import FileProblem
    from explorer.main_window import MainWindow
    from explorer.view_state import load_view_state, save_view_state

    view = None
    if args.state:
        try:
            view = load_view_state(args.state)
        except FileProblem as exc:
            print(f"explorer: {exc}", file=sys.stderr)
            if headless:
                return 2
    scenario = view.scenario if view is not None else Scenario()
    try:
        if args.preset:
            scenario = apply_preset(scenario, args.preset)
    except ValidationError as exc:
        print(f"explorer: {exc}", file=sys.stderr)
        return 2
    # --presenter switches after the window is built, so leaving presenter mode returns to these
    ctx = AppContext(scenario, device="cpu", theme=args.theme, font_scale=args.font_scale)
    win = MainWindow(ctx, remember_layout=not headless, freeze_objects=not headless)
    sink.error.connect(win.show_error)
    if view is not None:
        from dataclasses import replace

        try:
            win.apply_view_state(replace(view, scenario=scenario))
        except ValidationError as exc:
            print(f"explorer: {args.state}: {exc}", file=sys.stderr)
            if headless:
                return 2
            win.show_error(f"{args.state}: {exc}")
    if args.list_panels:
        for c in win.panel_infos:
            print(f"{c.key}\t{c.title}")
        return 0
    if args.scenario:
        try:
            ctx.scenario.load(args.scenario)
        except FileProblem as exc:
            print(f"explorer: {exc}", file=sys.stderr)
            if headless:
                return 2
            win.show_error(str(exc))
    if args.panel:
        try:
            win.show_panel(args.panel)
        except ValidationError as exc:
            print(f"explorer: {exc}", file=sys.stderr)
            return 2
    elif headless and view is None and not (args.lesson or args.tour):
        win.lessons.show_start()          # what the app can teach, as a first start shows it
    tour = None
    if args.lesson or args.tour or args.export_lesson:
        from explorer.lessons import lesson_tour, load_tour

        try:
            tour = (load_tour(args.tour) if args.tour else
                    lesson_tour(args.export_lesson[0] if args.export_lesson else args.lesson))
            if not 1 <= args.step <= len(tour.steps):
                raise ValidationError("step", f"{args.step} is not a step of {tour.lesson}", f"1…{len(tour.steps)}")
        except (ValidationError, FileProblem) as exc:
            print(f"explorer: {exc}", file=sys.stderr)
            if headless:
                return 2
            win.show_error(str(exc))
            tour = None
    if args.export_lesson:
        return _quit(win, _export_lesson(win, tour, args))
    if tour is not None and headless:
        win.resize(*_size(args))
        win.show()
        if args.presenter:
            win.set_presenter(True, full_screen=False)
        if not win.tour.start(tour, args.step - 1, shipped=not args.tour):
            print(f"explorer: {win.tour.error}", file=sys.stderr)
            return _quit(win, 2)

    if args.save_state:
        if args.frame is not None:
            win.set_frame(args.frame)
        try:
            save_view_state(win.view_state(), args.save_state)
        except OSError as exc:
            print(f"explorer: cannot write {args.save_state}: {exc.strerror or exc}", file=sys.stderr)
            return _quit(win, 2)
        print(f"wrote {args.save_state}")
        return _quit(win, 0)
    if args.selftest:
        from explorer.selftest import run_selftest

        return _quit(win, run_selftest(win, sink, font_problems(), requested_device=args.device))
    if args.screenshot:
        return _quit(win, _screenshot(win, args, font_problems()))

    win.show()
    if args.presenter:
        win.set_presenter(True)
    if tour is not None:
        win.tour.start(tour, args.step - 1, shipped=not args.tour)
    # torch (~1.5 s to import) is loaded on a worker thread once the window has painted, so the
    # import does not compete with the first paint for the interpreter.
    from PySide6.QtCore import QTimer

    win.set_device("cpu", "detecting…")
    QTimer.singleShot(1500, lambda: probe_device(args.device, win.set_device))
    if os.environ.get("EXPLORER_STARTUP_PROBE"):
        _report_first_paint(win)
    return app.exec()


def _list_lessons() -> int:
    """One line per lesson: id, ready/coming, title (no window, no Qt)."""
    from explorer.lessons import lessons

    for item in lessons():
        print(f"{item.id}\t{item.status}\t{item.title}")
    return 0


def _size(args) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        w, h = 1600, 1000
    return max(400, min(w, MAX_SIDE)), max(300, min(h, MAX_SIDE))


def _export_lesson(win, tour, args) -> int:
    from explorer.lessons.slides import export_tour

    win.resize(*_size(args))
    win.show()
    win.set_presenter(True, full_screen=False)     # slides: large type, each step's view given the room
    out = args.export_lesson[1]
    try:
        export_tour(win, tour, out, progress=lambda i, n: print(f"step {i} of {n}", file=sys.stderr))
    except (OSError, ValueError) as exc:
        print(f"explorer: cannot export {tour.lesson} to {out}: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return 2
    print(f"wrote {out} ({len(tour.steps)} steps)")
    return 0


def _export_exercises(args) -> int:
    """Qt-free for Moodle XML and HTML; a PDF lays the worksheet out with Qt (offscreen)."""
    names = [*args.export_exercises, *([args.out] if args.out else [])]
    if len(names) != 2:
        print("explorer: --export-exercises takes a lesson id and an output file (OUT.xml, .html or .pdf)",
              file=sys.stderr)
        return 2
    lesson, out = names
    if out.lower().endswith(".pdf"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from explorer.app import make_app

        make_app()
    from engines.core.errors import ValidationError
    from explorer.practice_export import export_exercises

    try:
        path, n = export_exercises(lesson, out, args.variants, args.seed)
    except (OSError, ValidationError) as exc:
        print(f"explorer: cannot export exercises of {lesson} to {out}: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return 2
    print(f"wrote {path} ({n} questions)")
    return 0


def _quit(win, code: int) -> int:
    """Leave a headless run cleanly: stop every panel's jobs and wait for the workers, so none signals
    an object being destroyed at exit (a restored view may have started one)."""
    from PySide6.QtCore import QThreadPool

    for panel in win.panels:
        panel.cancel_jobs()
    QThreadPool.globalInstance().waitForDone(30_000)
    return code


MAX_SIDE = 16_384   # pixels: past this Qt cannot encode the PNG (a 100000×100000 grab fails)


def _screenshot(win, args, problems: list[str]) -> int:
    from PySide6.QtWidgets import QApplication

    from explorer.exports import export_png

    if problems:
        print("explorer: " + "; ".join(problems), file=sys.stderr)
        return 1
    from engines.core.errors import ValidationError

    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(f"explorer: --size must be WxH, got {args.size!r}", file=sys.stderr)
        return 2
    if not (1 <= w <= MAX_SIDE and 1 <= h <= MAX_SIDE):
        print(f"explorer: --size must be between 1x1 and {MAX_SIDE}x{MAX_SIDE}, got {args.size!r}", file=sys.stderr)
        return 2
    if args.device != "cpu":
        from engines.core.device import device_label, resolve_device

        try:
            dev = resolve_device(args.device)
        except ValidationError as exc:
            print(f"explorer: {exc}", file=sys.stderr)
            return 2
        win.set_device(dev, device_label(dev))
    win.resize(w, h)
    win.show()
    QApplication.processEvents()
    if args.presenter:
        win.set_presenter(True, full_screen=False)   # the presenter layout at the requested size
    panel = win.current_panel()
    if args.frame is not None:
        win.set_frame(args.frame)
    if panel is not None and not panel.settle():
        print(f"explorer: {panel.key} was still working after 120 s; the screenshot shows it unfinished",
              file=sys.stderr)
    try:
        export_png(win, args.screenshot, scale=1.0)
    except OSError as exc:    # a directory, an unwritable place, an image Qt cannot encode
        print(f"explorer: cannot write {args.screenshot}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.screenshot}")
    return 0


def _report_first_paint(win) -> None:
    """Benchmarks set EXPLORER_STARTUP_PROBE: print the wall-clock time of the window's first paint."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    class _Watch(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802
            if ev.type() == QEvent.Paint and obj.isWidgetType() and obj.window() is win:
                print(f"FIRST_PAINT_EPOCH {time.time():.6f}", flush=True)
                QTimer.singleShot(0, QApplication.instance().quit)
                QApplication.instance().removeEventFilter(self)
            return False

    watch = _Watch(win)
    QApplication.instance().installEventFilter(watch)
    win._startup_watch = watch


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
