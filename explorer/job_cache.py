"""The app's engine-result cache and the background prefetch that fills it during a tour.

The cache (:class:`engines.core.result_cache.ResultCache`) lives in ``<config>/job_cache`` (bounded,
safe to delete); the cache shipped with the tours (``assets/tour_cache``) is read after it.
``EXPLORER_JOB_CACHE=off`` turns caching off, ``=user`` ignores the shipped cache (benchmarks, tests).
``EXPLORER_JOB_CACHE_DIR`` puts the user's folder elsewhere (the fill script writes the shipped one).
"""
from __future__ import annotations

import atexit
import logging
import os
import queue
import sys
import threading
import weakref
from pathlib import Path
from typing import Callable

from engines.core.errors import Cancelled
from engines.core.result_cache import DEFAULT_LIMIT, EngineCall, Origin, ResultCache

log = logging.getLogger("explorer")

Planner = Callable[[], "list[EngineCall]"]      # works out calls on the prefetch thread (may import torch)

_cache: ResultCache | None = None
_configured: tuple[str, Path] | None = None     # the environment the cache was made for
_lock = threading.Lock()


def user_folder() -> Path:
    explicit = os.environ.get("EXPLORER_JOB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("EXPLORER_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")), "ai-systems-explorer")
    return Path(base) / "job_cache"


def shipped_folder() -> Path:
    from engines.core.assets import asset_path

    return asset_path("tour_cache")


def app_cache() -> ResultCache | None:
    """The cache jobs use (None when switched off), made again when the environment names another one."""
    global _cache, _configured
    want = (os.environ.get("EXPLORER_JOB_CACHE", "on").strip().lower(), user_folder())
    with _lock:
        if _configured != want:
            mode, folder = want
            shipped = (shipped_folder(),) if mode != "user" else ()
            _cache = None if mode == "off" else ResultCache(folder, DEFAULT_LIMIT, shipped)
            _configured = want
        return _cache


def _lower_priority() -> None:
    """Niceness 19 for the calling thread only (Linux applies it per thread); elsewhere nothing."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (OSError, AttributeError):
            pass


_LIVE: "weakref.WeakSet[Prefetcher]" = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    """A daemon thread still inside torch or gloo while the interpreter tears down aborts the
    process ("terminate called without an active exception"): cancel every prefetch and wait."""
    for prefetcher in list(_LIVE):
        prefetcher.stop(wait_s=30.0)


class Prefetcher:
    """One low-priority thread computing the calls it is given into the cache, one at a time.

    ``want(items)`` replaces the list of calls not yet started (the tour moved on); the one running
    finishes unless ``stop()``. An item is an :class:`EngineCall` or a planner returning calls: planning
    a step (importing its panel's module, reading tensors, importing torch) runs on a planning thread of
    normal priority, not the GUI's (nor the low-priority one: the GUI thread may need the module being
    imported, and must not wait on a thread the system lets starve). A job that needs a call being
    prefetched waits for it (the cache knows which calls are in flight) instead of computing it twice.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[int, EngineCall]] = queue.Queue()
        self._generation = 0             # bumped by want()/stop(): calls queued or planned before are dropped
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._planning = 0               # planning threads still running
        self._lock = threading.Lock()
        self.done = 0
        self.failed: list[str] = []
        _LIVE.add(self)

    def want(self, items: "list[EngineCall | Planner]") -> None:
        cache = app_cache()
        if cache is None:
            return
        self._drain()
        with self._lock:
            self._generation += 1
            generation = self._generation
            self._stop.clear()
            self._planning += 1
        threading.Thread(target=self._feed, args=(list(items), generation), name="explorer-prefetch-plan",
                         daemon=True).start()

    def _feed(self, items: "list[EngineCall | Planner]", generation: int) -> None:
        try:
            for item in items:
                calls = [item] if isinstance(item, EngineCall) else item()   # a planner logs its own failures
                for call in calls:
                    with self._lock:
                        if self._generation != generation:
                            return            # the tour moved on while this step was planned
                        self._queue.put((generation, call))
                        if self._thread is None or not self._thread.is_alive():
                            self._thread = threading.Thread(target=self._loop, name="explorer-prefetch",
                                                            daemon=True)
                            self._thread.start()
        finally:
            with self._lock:
                self._planning -= 1

    def _drain(self) -> None:
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass

    def stop(self, wait_s: float = 0.0) -> None:
        """Drop what is queued and cancel the running call at its next progress check; with
        ``wait_s``, wait that long for the thread to end (a window closing, the app exiting)."""
        self._drain()
        with self._lock:
            self._generation += 1
            self._stop.set()
        thread = self._thread
        if wait_s > 0 and thread is not None and thread is not threading.current_thread():
            thread.join(wait_s)

    def idle(self) -> bool:
        return self._queue.empty() and not self._planning and (self._thread is None or not self._busy)

    _busy = False

    def _loop(self) -> None:
        _lower_priority()
        while True:
            try:
                generation, call = self._queue.get(timeout=30)
            except queue.Empty:
                return                        # a new thread starts with the next call queued
            if generation != self._generation:
                continue
            self._busy = True
            try:
                self._compute(call)
            finally:
                self._busy = False

    def _compute(self, call: EngineCall) -> None:
        cache = app_cache()
        if cache is None:
            return
        try:
            def progress(_f: float, _t: str = "") -> None:
                if self._stop.is_set():
                    raise Cancelled()
            cache.run(call, progress, self._stop.is_set, hand_over=True)   # decoded for the step, too
            self.done += 1
        except Cancelled:
            pass
        except Exception as exc:          # a bad step is the tour's business; the panel shows the error
            log.warning("prefetch of %s failed: %s", call.name, exc)
            self.failed.append(call.name)


def stored(call: EngineCall) -> "tuple[object, Origin] | None":
    """``call``'s stored result and where it was computed, without computing it (None: not stored, or
    caching is off): a job can then deliver in one go what would otherwise take a second job."""
    cache = app_cache()
    return None if cache is None else cache.get(call)


def computed(call: EngineCall) -> object:
    """``call``'s result through the app cache (computed and stored on a miss): for a plan whose next
    call needs this one's result (the self-hosting day needs the sizing)."""
    def progress(_f: float, _t: str = "") -> None:
        pass

    cache = app_cache()
    if cache is None:
        return call(progress, lambda: False)
    return cache.run(call, progress, lambda: False)[0]
