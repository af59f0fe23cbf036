"""Run every benchmark once and write benchmarks/REPORT.md (one Markdown table per kind of figure).

Each script in benchmarks/ runs in its own interpreter and prints its figures; this runner keeps
their output, pulls the headline numbers out with the patterns below, and adds one measurement of
its own: the animation frame time per panel (p50/p95 of ``set_position`` → panel drawn, stepping
each panel's timeline in the real main window offscreen).

    python benchmarks/run_all.py [--quick] [--only startup,frames] [--skip gptq] [--out benchmarks/REPORT.md]
    python benchmarks/run_all.py --report-only    # rewrite REPORT.md from build/bench-results.json

``--quick`` passes smaller sizes to the scripts that accept them (CI on shared runners).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FRAME_TARGET_MS = 16.0

# extra arguments per script: (normal, --quick)
ARGS = {
    "startup.py": (["--runs", "5"], ["--runs", "2"]),
    "interaction.py": (["--n", "60"], ["--n", "20"]),
    "gptq.py": ([], ["--size", "1024", "--tokens", "512"]),
    "pipeline.py": ([], ["--skip-exec"]),
    "serving_sizing.py": ([], ["--repeats", "3"]),
    "fault_run.py": ([], ["--steps", "50"]),
    "scaling_experiment.py": ([], ["--quick"]),
    "qeval.py": ([], ["--quick"]),
    "fake_step.py": ([], ["--quick"]),
}
# headline figures: script → [(label, regex with one group, unit)]
HEADLINES = {
    "startup.py": [("start-up ratio to a bare Qt window", r"ratio:\s*([\d.]+)x", "×"),
                   ("app first paint", r"Explorer main window:\s*([\d.]+) ms", "ms"),
                   ("bare window first paint", r"pyqtgraph window:\s*([\d.]+) ms", "ms")],
    "interaction.py": [("interaction worst p95", r"worst p95:\s*([\d.]+) ms", "ms"),
                       ("bare pyqtgraph plot p95", r"bare plot\s+\(reference\)\s+[\d.]+\s+([\d.]+)", "ms")],
    "memory_sweep.py": [("memory sweep worst median", r"worst median\s*([\d.]+) ms", "ms")],
    "fake_step.py": [("PyTorch memory check (FSDP2, fake tensors), wall", r"fake step wall:\s*([\d.]+) s", "s")],
    "serving_sizing.py": [("serving sizing worst p95", r"sizing worst p95:\s*([\d.]+) ms", "ms")],
    "tour_steps.py": [("tour step, all steps p95", r"all steps: \d+, p95 ([\d.]+) ms", "ms"),
                      ("tour step worst per-tour p95", r"tour step worst p95:\s*([\d.]+) ms", "ms")],
    "k8s.py": [("k8s simulated seconds per wall second", r"→\s*([\d.]+) simulated s per wall s", "s/s"),
               ("k8s with kubectl commands mixed in", r"commands mixed in:.*→\s*([\d.]+) simulated s per wall s", "s/s")],
    "fault_run.py": [("fault run, CPU (steps/s)", r"fault run cpu steps/s:\s*([\d.]+)", "steps/s"),
                     ("fault run, CUDA (steps/s)", r"fault run cuda steps/s:\s*([\d.]+)", "steps/s")],
    "scaling_experiment.py": [("scaling experiment, wall", r"scaling experiment wall:\s*([\d.]+) s", "s"),
                              ("scaling experiment, CPU time", r"scaling experiment cpu:\s*([\d.]+) s", "s")],
    "qeval.py": [("qeval quick evaluation, CPU (worst config)", r"qeval cpu quick worst evaluation:\s*([\d.]+) s", "s"),
                 ("qeval full evaluation, CPU (worst config)", r"qeval cpu full worst evaluation:\s*([\d.]+) s", "s"),
                 ("qeval quick evaluation, CUDA (worst config)", r"qeval cuda quick worst evaluation:\s*([\d.]+) s", "s")],
    "trading_extraction.py": [
        ("trading extraction, CPU cold (embed + train + evaluate)", r"trading extraction cpu cold:\s*([\d.]+) s", "s"),
        ("trading extraction, CPU warm re-run", r"trading extraction cpu cold:.*warm re-run:\s*([\d.]+) s", "s"),
        ("trading extraction, CUDA cold", r"trading extraction cuda cold:\s*([\d.]+) s", "s")],
    "gptq.py": [("GPTQ, lazy blocks", r"gptq \(lazy blocks of \d+\)\s+([\d.]+) s", "s"),
                ("GPTQ, plain column-by-column", r"plain column-by-column\s+([\d.]+) s", "s")],
}
PIPELINE_ROW = re.compile(r"^\S+\s+\d+\s+\d+\s+\d+\s+\d+\s+([\d.]+)\s+[\d.]+\s*$", re.M)
RESULTS_CACHE = ROOT / "build" / "bench-results.json"


def extra_headlines(script: str, stdout: str) -> list[tuple[str, str]]:
    """Headlines a single regex cannot give (the worst row of a table)."""
    if script == "pipeline.py":
        ms = [float(x) for x in PIPELINE_ROW.findall(stdout)]
        return [("schedule + simulate, worst shape", f"{max(ms):.1f} ms" if ms else "not reported")]
    return []


def run_script(path: Path, quick: bool, timeout: int) -> dict:
    args = ARGS.get(path.name, ([], []))[1 if quick else 0]
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
               EXPLORER_CONFIG_DIR=tempfile.mkdtemp(prefix="explorer-bench-"), PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, str(path), *args], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=timeout)
        code, stdout, stderr = out.returncode, out.stdout, out.stderr
    except subprocess.TimeoutExpired as exc:
        code, stdout, stderr = "timeout", (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (
            exc.stdout or ""), f"killed after {timeout} s"
    wall = time.perf_counter() - t0
    heads = []
    for label, pattern, unit in HEADLINES.get(path.name, []):
        m = re.search(pattern, stdout)
        heads.append((label, f"{m.group(1)} {unit}" if m else "not reported"))
    heads += extra_headlines(path.name, stdout)
    if not heads:  # unknown or new script: its last printed line is its headline
        lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
        heads.append(("last line", lines[-1] if lines else "no output"))
    print(f"  {path.name:18} exit {code} in {wall:6.1f} s", flush=True)
    return {"script": path.name, "args": args, "exit": code, "wall_s": wall, "stdout": stdout,
            "stderr": stderr[-4000:], "headlines": heads}


# --- animation frame time, measured here ------------------------------------------------------
def settle(app, quiet_ms: float = 1.0, most: int = 30) -> float:
    """Let the event loop finish what a frame started (layouts, the refit a layout request defers
    to a later turn, the paint Qt posts at low priority) and return its longest turn in ms. A forced
    ``repaint()`` right after the change would paint before the layout settles and push the rest
    into the next frame's time."""
    longest = 0.0
    for _ in range(most):
        t = time.perf_counter()
        app.processEvents()
        ms = (time.perf_counter() - t) * 1000
        longest = max(longest, ms)
        if ms < quiet_ms:
            break
    return longest


def measure_frames(max_frames: int) -> list[dict]:
    """Per panel: time from ``timeline.set_position(i)`` until the event loop is quiet again (the
    panel's paint included), and the longest single turn of the loop among those frames."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("EXPLORER_CONFIG_DIR", tempfile.mkdtemp(prefix="explorer-bench-"))
    sys.path.insert(0, str(ROOT))

    from explorer.app import make_app
    from explorer.context import AppContext
    from explorer.main_window import MainWindow

    app = make_app()
    win = MainWindow(AppContext(device="cpu"), remember_layout=False)
    win.resize(1500, 950)
    win.show()
    app.processEvents()
    rows = []
    tl = win.ctx.timeline
    for cls in win.panel_classes:
        panel = win.show_panel(cls.key)
        panel.settle()
        if tl.spec is None or tl.n_frames < 2:
            rows.append({"panel": cls.key, "frames": 0})
            continue
        n = tl.n_frames
        idx = [int(i * (n - 1) / max(1, min(max_frames, n) - 1)) for i in range(min(max_frames, n))]
        for i in idx[:3]:  # warm-up: first draws fill caches
            tl.set_position(i)
            settle(app)
        times, turns = [], []
        for i in idx:
            if tl.position == i:  # an unchanged position draws nothing: step away first (untimed)
                tl.set_position(i - 1 if i > 0 else i + 1)
                app.processEvents()
            t0 = time.perf_counter()
            tl.set_position(i)
            turns.append(settle(app))
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        rows.append({"panel": cls.key, "frames": len(times), "of": n,
                     "p50_ms": times[len(times) // 2], "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))],
                     "max_ms": times[-1], "turn_ms": max(turns)})
        print(f"  frames {cls.key:10} p95 {rows[-1]['p95_ms']:7.1f} ms over {len(times)} frames, "
              f"longest turn {max(turns):.1f} ms", flush=True)
    win.close()
    return rows


def frames_subprocess(max_frames: int, timeout: int) -> tuple[list[dict], str]:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"), PYTHONPATH=str(ROOT))
    try:
        out = subprocess.run([sys.executable, __file__, "--frames-json", "--max-frames", str(max_frames)], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], f"frame measurement killed after {timeout} s"
    for line in out.stdout.splitlines():
        if line.startswith("FRAMES_JSON "):
            return json.loads(line[len("FRAMES_JSON "):]), ""
    return [], out.stderr[-3000:]


# --- report ------------------------------------------------------------------------------------
def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def write_report(path: Path, results: list[dict], frames: list[dict], frames_error: str, quick: bool,
                 total_s: float) -> None:
    by = {r["script"]: r for r in results}

    def head(script: str, label: str) -> str:
        r = by.get(script)
        if r is None:
            return "not run"
        return next((v for lab, v in r["headlines"] if lab == label), "not reported")

    animated = [f for f in frames if f.get("frames")]
    worst = max(animated, key=lambda f: f["p95_ms"]) if animated else None
    lines = [
        "# Benchmark report",
        "",
        f"Generated by `python benchmarks/run_all.py{' --quick' if quick else ''}` on "
        f"{dt.datetime.now().strftime('%Y-%m-%d %H:%M')}: Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"Qt platform `{os.environ.get('QT_QPA_PLATFORM', 'offscreen')}`; total {total_s:.0f} s. "
        "Figures from a shared or loaded machine are upper bounds.",
        "",
        "## Headline",
        "",
        "| figure | value | target |",
        "|---|---|---|",
        f"| start-up time ratio to a bare PySide6 + pyqtgraph window | {head('startup.py', 'start-up ratio to a bare Qt window')} | ≤ 1.5× |",
        f"| scenario edit → linked panels repainted, worst p95 | {head('interaction.py', 'interaction worst p95')} | ≤ 16 ms |",
        f"| the same for a bare pyqtgraph window (one 1,000-point line), p95 | {head('interaction.py', 'bare pyqtgraph plot p95')} | (reference) |",
        f"| animation frame, worst panel p95 | "
        f"{(fmt(worst['p95_ms']) + ' ms (' + worst['panel'] + ')') if worst else 'not measured'} | ≤ {FRAME_TARGET_MS:g} ms |",
        "",
        "## Animation frame time per panel",
        "",
        "Time from `timeline.set_position(i)` until the event loop is quiet again (layouts and the "
        "panel's paint done, offscreen), over frames spread evenly across each panel's timeline after three "
        "warm-up frames; a frame that starts a new chapter switches the panel's view. Longest turn: the "
        "longest single pass of the event loop during those frames (target ≤ 50 ms).",
        "",
        "| panel | frames timed | p50 ms | p95 ms | max ms | longest turn ms | ≤ 16 ms p95 |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in frames:
        if not f.get("frames"):
            lines.append(f"| {f['panel']} | no timeline | – | – | – | – | – |")
        else:
            ok = "yes" if f["p95_ms"] <= FRAME_TARGET_MS else "**no**"
            lines.append(f"| {f['panel']} | {f['frames']} of {f['of']} | {fmt(f['p50_ms'])} | {fmt(f['p95_ms'])} | "
                         f"{fmt(f['max_ms'])} | {fmt(f.get('turn_ms'))} | {ok} |")
    if frames_error:
        lines += ["", f"Frame measurement problem: `{frames_error.strip().splitlines()[-1] if frames_error.strip() else '?'}`"]
    lines += ["", "## Each benchmark", "", "| script | arguments | exit | wall s | headline |", "|---|---|---|---|---|"]
    for r in results:
        heads = "; ".join(f"{lab}: {v}" for lab, v in r["headlines"])
        lines.append(f"| `{r['script']}` | `{' '.join(r['args']) or '–'}` | {r['exit']} | {r['wall_s']:.1f} | {heads} |")
    lines += ["", "## Full output", ""]
    for r in results:
        lines += [f"<details><summary><code>{r['script']}</code> (exit {r['exit']})</summary>", "", "```text",
                  r["stdout"].rstrip() or "(no output)", "```"]
        if r["exit"] != 0 and r["stderr"].strip():
            lines += ["", "stderr (tail):", "", "```text", r["stderr"].rstrip(), "```"]
        lines += ["", "</details>", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes for shared CI runners")
    ap.add_argument("--only", help="comma-separated script stems to run (e.g. startup,frames)")
    ap.add_argument("--skip", default="", help="comma-separated script stems to skip")
    ap.add_argument("--out", default=str(HERE / "REPORT.md"))
    ap.add_argument("--timeout", type=int, default=2400,
                    help="seconds allowed per script (tour_steps walks 30 tours twice: 15–20 min on two cores)")
    ap.add_argument("--max-frames", type=int, default=60, help="frames timed per panel")
    ap.add_argument("--report-only", action="store_true",
                    help=f"rewrite the report from the last run's figures ({RESULTS_CACHE.relative_to(ROOT)})")
    ap.add_argument("--frames-json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.frames_json:
        print("FRAMES_JSON " + json.dumps(measure_frames(a.max_frames)), flush=True)
        return 0
    if a.report_only:
        last = json.loads(RESULTS_CACHE.read_text(encoding="utf-8"))
        for r in last["results"]:  # re-extract: headline patterns may have improved since
            path = HERE / r["script"]
            heads = [(lab, f"{m.group(1)} {unit}" if (m := re.search(pat, r["stdout"])) else "not reported")
                     for lab, pat, unit in HEADLINES.get(path.name, [])] + extra_headlines(path.name, r["stdout"])
            r["headlines"] = heads or r["headlines"]
        write_report(Path(a.out), last["results"], last["frames"], last["frames_error"], last["quick"], last["total_s"])
        print(f"wrote {a.out}")
        return 0
    only = {s.strip() for s in a.only.split(",")} if a.only else None
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    wanted = lambda stem: (only is None or stem in only) and stem not in skip  # noqa: E731
    t0 = time.perf_counter()
    scripts = [p for p in sorted(HERE.glob("*.py")) if p.name != Path(__file__).name and wanted(p.stem)]
    print(f"running {len(scripts)} benchmark scripts{' (quick)' if a.quick else ''}:", flush=True)
    results = [run_script(p, a.quick, a.timeout) for p in scripts]
    frames, frames_error = ([], "not run")
    if wanted("frames"):
        print("measuring animation frame times:", flush=True)
        frames, frames_error = frames_subprocess(a.max_frames, a.timeout)
    total = time.perf_counter() - t0
    frames_error = frames_error if wanted("frames") else ""
    RESULTS_CACHE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_CACHE.write_text(json.dumps({"results": results, "frames": frames, "frames_error": frames_error,
                                         "quick": a.quick, "total_s": total}), encoding="utf-8")
    write_report(Path(a.out), results, frames, frames_error, a.quick, total)
    print(f"wrote {a.out}")
    failed = [r["script"] for r in results if r["exit"] != 0]
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed or (wanted("frames") and not frames) else 0


if __name__ == "__main__":
    sys.exit(main())
