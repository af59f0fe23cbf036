"""A view as data: the scenario, the panel, every panel's parameters, the inner tabs and the frame.

Qt-free, so a script can write or read one; the window turns it into widgets
(``MainWindow.view_state`` / ``apply_view_state``). Files are versioned JSON, migrated step by step
(:func:`engines.core.versioned.upgrade`), saved atomically; a broken file raises :class:`FileProblem`
saying what is wrong, and nothing is changed. Each panel's parameters carry the version of its
``Params`` (:class:`engines.core.params.ParamsBase`), so a renamed field is migrated, not lost.
"""
from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.core.errors import ValidationError
from engines.core.scenario import Scenario
from engines.core.versioned import Step, parse_json, upgrade
from explorer.files import FileProblem, atomic_write_text, read_text_limited

MAX_FRAME = 2**31 - 1
"""The timeline's position is a Qt int (a C int): a larger frame cannot be shown."""

VIEW_STATE_VERSION = 1
MIGRATIONS: dict[int, Step] = {}
"""View-state migrations, ``{v: step}`` turning version v into v + 1 (version 1 is current)."""
KIND = "explorer-view"


def params_class(panel: str):
    """The ``Params`` class of panel ``panel`` (``engines.<key>.params.Params``, which the panel
    declares; a test checks they agree), imported now; ``None`` for a key that is not a panel."""
    from panels import REGISTRY

    if panel not in {row[1] for row in REGISTRY}:
        return None
    return getattr(importlib.import_module(f"engines.{panel}.params"), "Params", None)


def current_params_version(panel: str) -> int:
    cls = params_class(panel)
    return cls.version if cls is not None else 1


@dataclass(frozen=True)
class ViewState:
    """Everything that puts the app back into one view."""

    scenario: Scenario = field(default_factory=Scenario)
    panel: str = "overview"
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)   # per panel key: its Params as a dict
    tabs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)       # per panel key: its inner tabs' titles
    frame: int | None = None
    params_versions: Mapping[str, int] = field(default_factory=dict)   # per panel key: the version of its params

    def __post_init__(self) -> None:
        missing = [k for k in self.params if k not in self.params_versions]
        if missing:   # params made by this app (not read from a file) are of its current version
            object.__setattr__(self, "params_versions", {**self.params_versions,
                                                         **{k: current_params_version(k) for k in missing}})

    def panel_params(self, key: str, cls):
        """Panel ``key``'s parameters as a ``cls`` instance, migrated from the version they were saved at."""
        return cls.from_dict(cls.upgrade(dict(self.params[key]), self.params_versions.get(key, cls.version),
                                         f"params.{key}"))

    def upgraded(self) -> "ViewState":
        """The same view with every panel's parameters migrated to this app's version; a panel's
        parameters saved by a newer app raise a ValidationError naming the panel and both versions."""
        params, versions = {}, {}
        for key, values in self.params.items():
            cls = params_class(key)
            params[key] = cls.upgrade(dict(values), self.params_versions[key], f"params.{key}") if cls else dict(values)
            versions[key] = cls.version if cls else self.params_versions[key]
        return ViewState(self.scenario, self.panel, params, self.tabs, self.frame, versions)

    def to_json_dict(self) -> dict:
        return {"kind": KIND, "schema_version": VIEW_STATE_VERSION, "panel": self.panel,
                "scenario": self.scenario.to_json_dict(),
                "params": {k: dict(v) for k, v in self.params.items()},
                "params_versions": {k: self.params_versions[k] for k in self.params},
                "tabs": {k: list(v) for k, v in self.tabs.items()}, "frame": self.frame}

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json_dict(cls, doc: Any) -> "ViewState":
        """Rebuild from :meth:`to_json_dict` output (any older version migrated first)."""
        doc = upgrade(doc, VIEW_STATE_VERSION, MIGRATIONS, "view")
        if doc.get("kind") != KIND:
            raise ValidationError("kind", f"{doc.get('kind')!r} is not a saved view", KIND)
        panel = doc.get("panel")
        if not isinstance(panel, str) or not panel:
            raise ValidationError("panel", "missing or not a panel key")
        params, tabs = doc.get("params", {}), doc.get("tabs", {})
        if not isinstance(params, Mapping) or not all(isinstance(v, Mapping) for v in params.values()):
            raise ValidationError("params", "must map panel keys to objects")
        if not isinstance(tabs, Mapping) or not all(
                isinstance(v, list) and all(isinstance(t, str) for t in v) for v in tabs.values()):
            raise ValidationError("tabs", "must map panel keys to lists of tab titles")
        versions = doc.get("params_versions", {})   # absent: written before params had versions (all 1)
        if not isinstance(versions, Mapping) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in versions.values()):
            raise ValidationError("params_versions", "must map panel keys to version numbers", "integers ≥ 1")
        frame = doc.get("frame")
        if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int) or not 0 <= frame <= MAX_FRAME):
            raise ValidationError("frame", f"{frame!r} is not a frame number", f"integer 0…{MAX_FRAME} or null")
        return cls(scenario=Scenario.from_json_dict(doc.get("scenario")), panel=panel,
                   params={str(k): dict(v) for k, v in params.items()},
                   tabs={str(k): tuple(v) for k, v in tabs.items()}, frame=frame,
                   params_versions={str(k): int(versions.get(k, 1)) for k in params})

    @classmethod
    def from_json(cls, text: str) -> "ViewState":
        return cls.from_json_dict(parse_json(text))


def save_view_state(state: ViewState, path: str | Path) -> Path:
    """Write ``state`` atomically: an interrupted save leaves the old file whole."""
    atomic_write_text(path, state.to_json() + "\n")
    return Path(path)


def load_view_state(path: str | Path) -> ViewState:
    """Read a saved view, its panels' parameters migrated to this app's versions; any problem is a
    :class:`FileProblem` naming the file and the reason."""
    text = read_text_limited(path)
    try:
        return ViewState.from_json(text).upgraded()
    except ValidationError as exc:
        raise FileProblem(f"{Path(path).name}: {exc}") from None
