"""panels.REGISTRY (read at start-up without importing panels) must match the PANEL classes."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


def test_registry_matches_discovered_panels():
    from explorer.panel import discover_panels, registered_panels

    found = {(c.__module__.rsplit(".", 1)[-1], c.key, c.title, c.order) for c in discover_panels()}
    listed = {(i.module, i.key, i.title, i.order) for i in registered_panels()}
    assert listed == found, f"update panels/__init__.py REGISTRY: missing {found - listed}, stale {listed - found}"
