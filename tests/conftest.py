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


@pytest.fixture(autouse=True)
def _thaw_frozen_objects():
    """The app freezes long-lived objects (explorer.gc_guard); a test's window is not long-lived:
    give what it froze back to the collector, so tests do not pile up each other's objects."""
    yield
    if gc.get_freeze_count():
        gc.unfreeze()
