"""A tour at lecture speed: the next steps' jobs computed in the background while a step is shown, and
*Prepare lesson* computing every step ahead (the same walk fills the shipped cache at build time)."""
from __future__ import annotations

import logging
from typing import Callable

from PySide6.QtCore import QObject, QTimer

from engines.core.result_cache import EngineCall
from explorer.job_cache import Prefetcher
from explorer.lessons.tour import TourStep

log = logging.getLogger("explorer")

AHEAD = 2              # steps computed ahead of the one shown
DELAY_MS = 250         # after the step is painted


def planned_calls(win, step: TourStep) -> list[EngineCall]:
    """The engine calls ``step``'s panel will run for it (``Panel.planned_jobs``); none if it cannot say."""
    return _planner(win, step)()


def _planner(win, step: TourStep) -> Callable[[], list[EngineCall]]:
    """``planned_calls`` as a function of no Qt object, so the prefetch thread can run it: planning may
    import the panel's module, read tensors and import torch, seconds the GUI thread must not wait."""
    infos, device = list(win.panel_infos), win.ctx.device

    def plan() -> list[EngineCall]:
        try:
            info = next(i for i in infos if i.key == step.panel)
            cls = info.load()
            view = step.view_state()
            params = view.panel_params(step.panel, cls.Params) if step.panel in view.params else cls.Params()
            return list(cls.planned_jobs(view.scenario, params, tuple(step.tabs or ()), device))
        except Exception as exc:        # a step that cannot be planned is simply not prefetched
            log.info("step on %s not prefetched: %s", step.panel, exc)
            return []
    return plan


class TourPrefetch(QObject):
    """Follows the tour player: after each step, the next ``AHEAD`` steps' calls go to a low-priority
    thread (replacing what was queued); ending the tour stops it."""

    def __init__(self, player) -> None:
        super().__init__(player)
        self.player = player
        self.prefetcher = Prefetcher()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DELAY_MS)
        self._timer.timeout.connect(self._plan)
        self._shown: tuple[int, int] | None = None
        player.changed.connect(self._changed)
        prefetcher = self.prefetcher
        player.destroyed.connect(lambda *_: prefetcher.stop())    # the window went: nothing to prepare for

    def _changed(self) -> None:
        if self.player.tour is None:
            self._timer.stop()
            self.prefetcher.stop()
            self._shown = None
            return
        where = (id(self.player.tour), self.player.index)
        if where != self._shown:
            self._shown = where
            self._timer.start()

    def _plan(self) -> None:
        tour, i = self.player.tour, self.player.index
        if tour is None:
            return
        self.prefetcher.want([_planner(self.player.win, step) for step in tour.steps[i + 1:i + 1 + AHEAD]])

    def stop(self) -> None:
        self._timer.stop()
        self.prefetcher.stop()


def walk(player, report: Callable[[int, int], bool], timeout_ms: int = 600_000) -> bool:
    """Show every step of the player's tour and wait for its jobs (they land in the cache), then go back
    to the step shown before. ``report(done, total)`` returning False stops early; False if stopped."""
    tour, back = player.tour, player.index
    if tour is None:
        return False
    n, finished = len(tour.steps), True
    for i in range(n):
        if not report(i, n):
            finished = False
            break
        if player.go(i):
            player.win.current_panel().settle(timeout_ms)
    report(n, n)
    player.go(back)
    return finished


def prepare_dialog(win, player) -> bool:
    """*Tour ▸ Prepare lesson*: one progress bar over the lesson's steps; Cancel stops after the step."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QProgressDialog

    tour = player.tour
    if tour is None:
        return False
    dialog = QProgressDialog(f"Computing every step of {tour.lesson} · {tour.title}…", "Cancel", 0,
                             len(tour.steps), win)
    dialog.setWindowTitle("Prepare lesson")
    dialog.setWindowModality(Qt.WindowModal)
    dialog.setMinimumDuration(0)

    def report(done: int, total: int) -> bool:
        dialog.setValue(done)
        if done < total:
            dialog.setLabelText(f"Computing step {done + 1} of {total} of {tour.lesson} · {tour.title}…")
        return not dialog.wasCanceled()

    try:
        return walk(player, report)
    finally:
        dialog.close()
