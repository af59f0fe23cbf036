"""Root test configuration. Qt-free on purpose: tests/engines must run on a machine with torch
but without PySide6 (the GPU box). Qt fixtures (ctx, make_panel, window) live in tests/gui/conftest.py."""
from __future__ import annotations

import gc
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    """After a test's fixtures are gone, delete what its widgets left and collect its garbage.

    pytest-qt closes a test's widgets with ``deleteLater``, which only an event loop returning to
    its top level would carry out: without this, every closed window and its plots stay alive, and
    each later app-wide restyle (presenter mode, text size) walks all of them. The collection that
    follows walks only what the test made: whatever survives it is frozen (``gc.freeze``), so the
    next test's collection skips torch's and the modules' million objects. A test that froze
    objects itself (``explorer.gc_guard``) gets them collected first."""
    result = yield
    _collect_test_garbage()
    return result


_frozen_by_tests = 0


def _collect_test_garbage() -> None:
    global _frozen_by_tests
    import sys

    qt = "PySide6.QtWidgets" in sys.modules
    if qt:
        from PySide6.QtCore import QCoreApplication, QEvent

        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    if gc.get_freeze_count() != _frozen_by_tests:
        gc.unfreeze()
    gc.collect()
    if qt:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.freeze()
    _frozen_by_tests = gc.get_freeze_count()
