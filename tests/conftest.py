"""Root test configuration. Qt-free on purpose: tests/engines must run on a machine with torch
but without PySide6 (the GPU box). Qt fixtures (ctx, make_panel, window) live in tests/gui/conftest.py."""
from __future__ import annotations

import gc
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _threads_per_worker() -> int:
    """CPU cores each test process may use: the README runs two processes on a two-core machine, and
    torch's thread pools in both, each the size of the machine, spin waiting for each other (a GPTQ
    loop ran 25-50 times slower). Set before torch is first imported, so its pools start this size."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, workers))


if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", str(_threads_per_worker()))


def pytest_collection_modifyitems(config, items):
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before each test, delete what earlier tests' widgets left and collect their garbage.

    pytest-qt closes a test's widgets with ``deleteLater``, which only an event loop returning to
    its top level would carry out: without this, every closed window and its plots stay alive, and
    each later app-wide restyle (presenter mode, text size) walks all of them. It runs at the next
    test's set-up, once pytest has dropped the last test's fixture values. The collection walks only
    what the last test made: whatever survives it is frozen (``gc.freeze``), so the next collection
    skips torch's and the modules' million objects. A test that froze objects itself
    (``explorer.gc_guard``) has them collected first."""
    _collect_test_garbage()


_frozen_by_tests = 0


def _qt_app():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance()


def _collect_test_garbage() -> None:
    global _frozen_by_tests
    import sys

    qt = "PySide6.QtWidgets" in sys.modules and _qt_app() is not None
    if qt:
        from PySide6.QtCore import QCoreApplication, QEvent
        from PySide6.QtWidgets import QApplication

        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        # what no window owns any more: pyqtgraph's context menus are parentless and hold their
        # plot through signal connections that Python's collector cannot see, so they live on
        for orphan in QApplication.topLevelWidgets():
            if orphan.parent() is None and not orphan.isVisible():
                orphan.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    if gc.get_freeze_count() > _frozen_by_tests:   # a test froze objects itself: collect those too
        gc.unfreeze()                              # (fewer only means frozen objects died: no full pass)
    gc.collect()
    if qt:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.freeze()
    _frozen_by_tests = gc.get_freeze_count()
