"""Soak: the main window animates every panel with its timeline; resident memory, live widgets and
gc-tracked objects must level off (final vs. after warm-up within a margin). Prints the figures.

SOAK_SECONDS_PER_PANEL (default 8) sets the animated time per panel; CI keeps the total < 3 min."""
from __future__ import annotations

import gc
import os

import pytest
from PySide6.QtCore import QElapsedTimer
from PySide6.QtWidgets import QApplication

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
SECONDS = float(os.environ.get("SOAK_SECONDS_PER_PANEL", "8"))
RSS_MARGIN_MB = 60          # allocator noise and caches; a leak per frame grows far past this
OBJECT_MARGIN = 0.10        # gc-tracked objects may grow 10 % at most after warm-up
WIDGET_MARGIN = 5


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


def sample() -> dict:
    gc.collect()
    return {"rss_mb": rss_mb(), "widgets": len(QApplication.allWidgets()), "gc_objects": len(gc.get_objects())}


def animate(window, seconds: float) -> int:
    """Step the shared timeline as fast as frames draw (what playing does, without timer slack)."""
    tl = window.ctx.timeline
    frames = 0
    clock = QElapsedTimer()
    clock.start()
    while clock.elapsed() < seconds * 1000:
        if tl.spec is not None:
            tl.set_position((tl.position + 1) % tl.n_frames)
            frames += 1
        QApplication.processEvents()
    return frames


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_every_panel_animates_without_unbounded_growth(window):
    # build every panel once, so warm-up includes first-draw caches
    for cls in window.panel_classes:
        window.show_panel(cls.key)
        animate(window, 0.3)
    rounds = []
    for round_no in range(3):   # round 0 is the warm-up; rounds 1-2 must not keep growing
        per_panel = {}
        for cls in window.panel_classes:
            window.show_panel(cls.key)
            per_panel[cls.key] = animate(window, SECONDS / 3)
        rounds.append((sample(), per_panel))
    (warm, frames0), (_, frames1), (final, frames2) = rounds
    print("\nsoak figures (after warm-up → final):")
    for k in ("rss_mb", "widgets", "gc_objects"):
        print(f"  {k:10} {warm[k]:12,.1f} → {final[k]:12,.1f}")
    print("  frames per panel per round:", {k: (frames0[k], frames1[k], frames2[k]) for k in frames0})
    assert final["rss_mb"] - warm["rss_mb"] < RSS_MARGIN_MB, (warm, final)
    assert final["widgets"] - warm["widgets"] <= WIDGET_MARGIN, (warm, final)
    assert final["gc_objects"] <= warm["gc_objects"] * (1 + OBJECT_MARGIN), (warm, final)
    for cls in window.panel_classes:
        assert window.panel(cls.key).tasks.last_error is None, cls.key
