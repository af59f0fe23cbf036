"""Root test configuration. Qt-free on purpose: tests/engines must run on a machine with torch
but without PySide6 (the GPU box). Qt fixtures (ctx, make_panel, window) live in tests/gui/conftest.py."""
from __future__ import annotations

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
