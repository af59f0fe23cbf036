"""The panel's dated, cited figures: shipped JSON files under ``assets/compute/`` a user may edit.

Every row names its source, its date and how sure it is (``confidence``), in the one cited-row scheme
of :mod:`engines.core.cited` (``Cited``, ``CONFIDENCE`` and ``DATE`` stay importable here). A file is versioned
(``schema_version``) and validated field by field when read: a broken file raises
:class:`ValidationError` naming the section, row and key, and nothing is half-loaded.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from engines.core.assets import asset_path
from engines.core.cited import CITED_FIELDS, CONFIDENCE, CONFIDENCE_LABELS, DATE, Cited, check_cited  # noqa: F401
from engines.core.errors import ValidationError
from engines.core.versioned import upgrade

MAX_TABLE_BYTES = 2_000_000   # the shipped tables are a few kB

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Run(Cited):
    id: str = ""
    label: str = ""
    short: str = ""
    N: float = 0.0
    D: float = 0.0
    reported_flop: float | None = None
    gpu_hours: float | None = None
    gpu: str | None = None


@dataclass(frozen=True)
class Assumption(Cited):
    id: str = ""
    label: str = ""
    value: float = 0.0
    unit: str = ""
    lo: float = 0.0
    hi: float = 0.0


@dataclass(frozen=True)
class Node(Cited):
    id: str = ""
    label: str = ""
    gpus: tuple = ()
    gpus_per_node: int = 8
    kw: float = 0.0


@dataclass(frozen=True)
class Preset(Cited):
    id: str = ""
    label: str = ""
    value: float = 0.0


@dataclass(frozen=True)
class LeadTime(Cited):
    id: str = ""
    label: str = ""
    lo: float = 0.0
    hi: float = 0.0


@dataclass(frozen=True)
class Deal(Cited):
    parties: str = ""
    what: str = ""
    mw: str = ""
    fuel: str = ""


@dataclass(frozen=True)
class Consumption(Cited):
    id: str = ""
    label: str = ""
    twh: float = 0.0


@dataclass(frozen=True)
class Cpu(Cited):
    id: str = ""
    label: str = ""
    flops: float = 0.0
    precision: str = ""
    bytes_per_s: float = 0.0
    watts: float = 0.0


@dataclass(frozen=True)
class Figure(Cited):
    id: str = ""
    label: str = ""
    value: float = 0.0
    unit: str = ""


@dataclass(frozen=True)
class Share(Cited):
    id: str = ""
    label: str = ""
    share: float = 0.0


@dataclass(frozen=True)
class Statement(Cited):
    who: str = ""
    statement: str = ""


@dataclass(frozen=True)
class Note(Cited):
    value: float | None = None


# file -> (kind, {section: row class}, {section: single-object class})
LAYOUT: dict[str, tuple[str, dict[str, type], dict[str, type]]] = {
    "runs.json": ("explorer-compute-runs", {"rows": Run}, {}),
    "assumptions.json": ("explorer-compute-assumptions", {"rows": Assumption}, {}),
    "power.json": ("explorer-compute-power", {"nodes": Node, "pue_presets": Preset, "lead_times": LeadTime,
                                              "deals": Deal, "consumption": Consumption},
                   {"node_factor": Note, "swings": Note}),
    "market.json": ("explorer-compute-market", {"cpus": Cpu, "share": Figure, "campus_split": Share,
                                                "facility_split": Share, "demand_statements": Statement}, {}),
}
MIGRATIONS: dict[int, Any] = {}
"""Data-file migrations, ``{v: step}`` (none yet: version 1 is current)."""


def _row(cls: type, raw: Any, where: str):
    if not isinstance(raw, dict):
        raise ValidationError(where, "each row must be a JSON object")
    names = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise ValidationError(f"{where}.{unknown[0]}", "is not a field of this table", ", ".join(names))
    values: dict[str, Any] = check_cited(raw, where)        # the one cited-row scheme (engines.core.cited)
    for name, f in names.items():
        if name in CITED_FIELDS:
            continue
        v = raw.get(name, f.default)
        key = f"{where}.{name}"
        if name == "gpus":
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ValidationError(key, "expected a list of GPU keys")
            v = tuple(v)
        elif f.type in ("float", "int", "float | None"):
            if v is None and "None" in f.type:
                pass
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValidationError(key, f"{v!r} is not a non-negative number", "a number ≥ 0")
            elif f.type == "int":
                if v != int(v) or v < 1:
                    raise ValidationError(key, f"{v!r} is not a positive integer", "integer ≥ 1")
                v = int(v)
            else:
                v = float(v)
        else:
            if v is not None and not isinstance(v, str):
                raise ValidationError(key, f"expected text, got {type(v).__name__}")
            if name in ("label", "statement", "parties") and not (v or "").strip():
                raise ValidationError(key, "must not be empty")
        values[name] = v
    return cls(**values)


def _check_gpu_keys(row, where: str) -> None:
    """A run's GPU and a node's GPUs must be catalogue keys (assets/presets/gpus.json)."""
    from engines.core.hardware import GPUS

    keys = ([row.gpu] if isinstance(row, Run) and row.gpu is not None else []) + \
        (list(row.gpus) if isinstance(row, Node) else [])
    for k in keys:
        if k not in GPUS:
            raise ValidationError(f"{where}.{'gpu' if isinstance(row, Run) else 'gpus'}", f"{k!r} is not in the GPU "
                                  "catalogue", ", ".join(GPUS))


def parse_table(name: str, doc: Any) -> dict[str, Any]:
    """Validate the document of data file ``name`` and return ``{section: tuple of rows | row}`` plus ``as_of``."""
    if name not in LAYOUT:
        raise ValidationError("name", f"no data file {name!r}", ", ".join(LAYOUT))
    kind, tables, singles = LAYOUT[name]
    doc = upgrade(doc, SCHEMA_VERSION, MIGRATIONS, name)
    if doc.get("kind") != kind:
        raise ValidationError("kind", f"{doc.get('kind')!r} is not a {name} file", kind)
    as_of = doc.get("as_of")
    if not isinstance(as_of, str) or not DATE.match(as_of):
        raise ValidationError("as_of", f"{as_of!r} is not a date", "YYYY-MM-DD")
    out: dict[str, Any] = {"as_of": as_of}
    for section, cls in tables.items():
        rows = doc.get(section)
        if not isinstance(rows, list) or not rows:
            raise ValidationError(section, "missing or empty: expected a list of rows")
        out[section] = tuple(_row(cls, r, f"{section}[{i}]") for i, r in enumerate(rows))
        for i, r in enumerate(out[section]):
            _check_gpu_keys(r, f"{section}[{i}]")
            if isinstance(r, Assumption) and not r.lo <= r.value <= r.hi:
                raise ValidationError(f"{section}[{i}].value", f"{r.value:g} is outside its own range",
                                      f"{r.lo:g}…{r.hi:g}")
        ids = [getattr(r, "id", None) for r in out[section] if getattr(r, "id", None)]
        if len(ids) != len(set(ids)):
            raise ValidationError(section, "two rows share an id")
    for section, cls in singles.items():
        out[section] = _row(cls, doc.get(section), section)
    return out


def load_table(name: str, path: str | Path | None = None) -> dict[str, Any]:
    """Read and validate ``assets/compute/<name>`` (or a user's edited copy at ``path``)."""
    if path is None:
        return _shipped(name)
    from engines.core.reading import read_json

    return parse_table(name, read_json(path, MAX_TABLE_BYTES))


@lru_cache(maxsize=None)
def _shipped(name: str) -> dict[str, Any]:
    return load_table(name, asset_path("compute", name))


def data_path(name: str) -> Path:
    """Where the shipped file lives (the panel shows it so a user can edit it)."""
    return asset_path("compute", name)


def assumption(key: str) -> Assumption:
    """One row of ``assumptions.json`` by id."""
    rows = {r.id: r for r in _shipped("assumptions.json")["rows"]}
    if key not in rows:
        raise ValidationError("assumption", f"no assumption {key!r}", ", ".join(rows))
    return rows[key]
