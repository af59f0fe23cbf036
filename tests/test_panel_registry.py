"""panels.REGISTRY (read at start-up without importing panels) must match the PANEL classes."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


def test_registry_matches_discovered_panels():
    from explorer.panel import discover_panels, registered_panels

    found = {(c.__module__.rsplit(".", 1)[-1], c.key, c.title, c.order) for c in discover_panels()}
    listed = {(i.module, i.key, i.title, i.order) for i in registered_panels()}
    assert listed == found, f"update panels/__init__.py REGISTRY: missing {found - listed}, stale {listed - found}"


def test_each_panels_params_is_the_one_saved_views_look_up():
    """explorer.view_state.params_class finds a panel's Params without importing the panel (Qt): it
    must be the class the panel declares, or a saved view would migrate with the wrong versions."""
    from explorer.panel import discover_panels
    from explorer.view_state import params_class

    for c in discover_panels():
        assert params_class(c.key) is c.Params, f"{c.key}: Params is not engines.{c.key}.params.Params"
