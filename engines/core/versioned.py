"""Versioned documents: every saved file names its schema version and is upgraded one explicit step
at a time (``migrate(old) -> new``) before anything reads it, as Orange migrates widget settings."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engines.core.errors import ValidationError

Step = Callable[[dict], dict]


def upgrade(doc: Any, current: int, steps: Mapping[int, Step], kind: str) -> dict:
    """Check ``doc['schema_version']`` and apply ``steps[v]`` (v → v + 1) until it reads ``current``.

    A file newer than this app, an unknown version or a missing step raises a
    :class:`ValidationError` naming ``schema_version``; the input is never modified.
    """
    if not isinstance(doc, Mapping):
        raise ValidationError("file", f"the top level of a {kind} file must be a JSON object")
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValidationError("schema_version", "missing or not an integer", f"1…{current}")
    if version > current:
        raise ValidationError("schema_version", f"file is version {version}, newer than this app understands",
                              f"1…{current}")
    if version < 1:
        raise ValidationError("schema_version", f"{version} is not a valid version", f"1…{current}")
    out = dict(doc)
    while out["schema_version"] < current:
        v = out["schema_version"]
        if v not in steps:
            raise ValidationError("schema_version", f"no migration from {kind} version {v}", f"1…{current}")
        out = dict(steps[v](out))
        if out.get("schema_version") != v + 1:
            raise RuntimeError(f"{kind} migration from version {v} did not produce version {v + 1}")
    return out


def parse_json(text: str) -> Any:
    """The JSON document in ``text``; anything unreadable, too deep or too big is a ValidationError on ``file``
    (:func:`engines.core.reading.load_json`)."""
    from engines.core.reading import load_json

    return load_json(text, "file")
