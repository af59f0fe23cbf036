"""Fill the engine-result cache shipped with the tours (``assets/tour_cache``), so the packaged app shows
every step of these lessons at once, before any computation.

It walks each lesson's tour in an offscreen window exactly as *Tour ▸ Prepare lesson* does (every
step shown, its jobs waited for), with the cache folder pointed at ``assets/tour_cache``; entries of
other code versions are removed first (``--keep`` keeps them). Run it at build time, after the last
engine or data change, on the CPU (the entries say where they were computed):

    QT_QPA_PLATFORM=offscreen python scripts/fill_tour_cache.py              # every ready lesson
    QT_QPA_PLATFORM=offscreen python scripts/fill_tour_cache.py A4 A5 B2     # some lessons

``tests/engines/test_result_cache.py`` recomputes a sample of the entries and fails on a stale cache.
"""
from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("EXPLORER_CONFIG_DIR", tempfile.mkdtemp(prefix="explorer-fill-"))
FOLDER = ROOT / "assets" / "tour_cache"
MANIFEST = "MANIFEST.json"


def remove_stale(folder: Path, version: str) -> int:
    """Delete entries written for another code version (or unreadable); returns how many."""
    gone = 0
    for path in folder.glob("*.json.gz"):
        try:
            stale = json.loads(json.loads(gzip.decompress(path.read_bytes()))["key"])["version"] != version
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            stale = True
        if stale:
            path.unlink()
            gone += 1
    return gone


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lessons", nargs="*", help="lesson ids (default: every ready lesson)")
    ap.add_argument("--keep", action="store_true", help="keep entries of other code versions")
    a = ap.parse_args()
    FOLDER.mkdir(parents=True, exist_ok=True)
    os.environ["EXPLORER_JOB_CACHE_DIR"] = str(FOLDER)
    os.environ["EXPLORER_JOB_CACHE"] = "user"           # the folder being filled is the only one read

    from engines.core.result_cache import code_version
    from scripts.provenance import record
    from engines.core.writing import atomic_write_text
    from explorer.app import make_app
    from explorer.context import AppContext
    from explorer.lessons import lesson_tour, lessons
    from explorer.lessons.prefetch import walk
    from explorer.main_window import MainWindow

    version = code_version()
    if not a.keep:
        print(f"removed {remove_stale(FOLDER, version)} entries of other code versions")
    make_app()
    win = MainWindow(AppContext(device="cpu"), remember_layout=False)
    win.resize(1600, 1000)
    win.show()
    ids = a.lessons or [x.id for x in lessons() if x.ready]
    for lesson_id in ids:
        t0 = time.perf_counter()
        win.tour.start(lesson_tour(lesson_id), 0)
        walk(win.tour, lambda done, n: print(f"\r{lesson_id}: step {done} of {n}", end="", flush=True) or True)
        win.tour.stop()
        print(f"\r{lesson_id}: {time.perf_counter() - t0:.0f} s")
    for p in win.panels:
        p.cancel_jobs()
    manifest_path = FOLDER / MANIFEST
    old = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    lessons_done = sorted(set(old.get("lessons", []) if old.get("code_version") == version else []) | set(ids))
    entries = sorted(FOLDER.glob("*.json.gz"))
    atomic_write_text(manifest_path, json.dumps({
        "kind": "explorer-tour-cache", "code_version": version, "lessons": lessons_done,
        "filled": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "entries": len(entries), "bytes": sum(p.stat().st_size for p in entries),
        "generated_by": record("scripts/fill_tour_cache.py", ap, a)}, indent=1) + "\n")
    print(f"{len(entries)} entries, {sum(p.stat().st_size for p in entries) / 1e6:.2f} MB in {FOLDER}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
