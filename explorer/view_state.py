"""A view as data: the scenario, the panel, every panel's parameters, the inner tabs and the frame.

Qt-free, so a script can write or read one; the window turns it into widgets
(``MainWindow.view_state`` / ``apply_view_state``). Files are versioned JSON, migrated step by step
(:func:`engines.core.versioned.upgrade`), saved atomically; a broken file raises :class:`FileProblem`
saying what is wrong, and nothing is changed.
"""
from __future__ import annotations

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


@dataclass(frozen=True)
class ViewState:
    """Everything that puts the app back into one view."""

    scenario: Scenario = field(default_factory=Scenario)
    panel: str = "overview"
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)   # per panel key: its Params as a dict
    tabs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)       # per panel key: its inner tabs' titles
    frame: int | None = None

    def to_json_dict(self) -> dict:
        return {"kind": KIND, "schema_version": VIEW_STATE_VERSION, "panel": self.panel,
                "scenario": self.scenario.to_json_dict(),
                "params": {k: dict(v) for k, v in self.params.items()},
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
        frame = doc.get("frame")
        if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int) or not 0 <= frame <= MAX_FRAME):
            raise ValidationError("frame", f"{frame!r} is not a frame number", f"integer 0…{MAX_FRAME} or null")
        return cls(scenario=Scenario.from_json_dict(doc.get("scenario")), panel=panel,
                   params={str(k): dict(v) for k, v in params.items()},
                   tabs={str(k): tuple(v) for k, v in tabs.items()}, frame=frame)

    @classmethod
    def from_json(cls, text: str) -> "ViewState":
        return cls.from_json_dict(parse_json(text))


def save_view_state(state: ViewState, path: str | Path) -> Path:
    """Write ``state`` atomically: an interrupted save leaves the old file whole."""
    atomic_write_text(path, state.to_json() + "\n")
    return Path(path)


def load_view_state(path: str | Path) -> ViewState:
    """Read a saved view; any problem is a :class:`FileProblem` naming the file and the reason."""
    text = read_text_limited(path)
    try:
        return ViewState.from_json(text)
    except ValidationError as exc:
        raise FileProblem(f"{Path(path).name}: {exc}") from None
