"""Evaluations as a versioned JSON document: the shipped default comparison and saved results.

``assets/qeval/shipped.json`` holds the default comparison measured on the build machine by
``scripts/measure_qeval.py`` (each entry says where and when in ``measured``), so the panel
opens with numbers before anything runs. A broken file raises ValidationError and changes nothing.
"""
from __future__ import annotations

import json
from pathlib import Path

from engines.core.errors import ValidationError
from engines.core.versioned import parse_json, upgrade
from engines.core.writing import atomic_write_text
from engines.qeval.result import SCHEMA_VERSION, Evaluation

MAX_EVALUATION_BYTES = 20_000_000   # the shipped file is 56 kB; a cache of every configuration stays far below

KIND = "quantization evaluation"
SHIPPED = ("qeval", "shipped.json")


def to_document(evaluations, note: str = "") -> dict:
    return {"schema_version": SCHEMA_VERSION, "kind": KIND, "note": note,
            "evaluations": [e.to_dict() for e in evaluations]}


def from_document(doc) -> tuple[Evaluation, ...]:
    doc = upgrade(doc, SCHEMA_VERSION, {}, KIND)
    if doc.get("kind") != KIND:
        raise ValidationError("kind", f"expected {KIND!r}, got {doc.get('kind')!r}", KIND)
    items = doc.get("evaluations")
    if not isinstance(items, list):
        raise ValidationError("evaluations", "missing or not a list", "a list of evaluations")
    return tuple(Evaluation.from_dict(e) for e in items)


def save_evaluations(path: str | Path, evaluations, note: str = "") -> None:
    """Write atomically (temporary file, then rename)."""
    path = Path(path)
    text = json.dumps(to_document(evaluations, note), indent=1, ensure_ascii=False)
    atomic_write_text(path, text)


def load_evaluations(path: str | Path) -> tuple[Evaluation, ...]:
    from engines.core.reading import read_json

    return from_document(read_json(path, MAX_EVALUATION_BYTES))


def shipped_evaluations(budget: str | None = None) -> tuple[Evaluation, ...]:
    """The default comparison measured on the build machine (``budget`` filters quick/full)."""
    from engines.core.assets import asset_path

    items = load_evaluations(asset_path(*SHIPPED))
    return tuple(e for e in items if budget is None or e.budget == budget)


def shipped_note() -> str:
    from engines.core.assets import asset_path

    return str(parse_json(asset_path(*SHIPPED).read_text(encoding="utf-8")).get("note", ""))
