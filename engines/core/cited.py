"""Cited rows: every figure a data file ships (compute runs and assumptions, self-hosting prices) says
when it was seen (``date``), where (``source``) and how sure that is (``confidence``), in one
vocabulary, checked by one validator. A broken row raises a :class:`ValidationError` naming the row
and key (``rows[2].confidence``)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date as _date

from engines.core.errors import ValidationError

CONFIDENCE = ("checked", "secondary", "estimate", "unverified", "assumption")
"""How sure a figure is, from most to least."""
CONFIDENCE_LABELS = {"checked": "checked in the primary source", "secondary": "secondary source",
                     "estimate": "an estimate", "unverified": "unverified", "assumption": "an assumption"}
DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
"""YYYY, YYYY-MM or YYYY-MM-DD: a figure is dated as precisely as its source is."""
CITED_FIELDS = ("date", "source", "confidence")
SOURCE_CHARS = 400


@dataclass(frozen=True)
class Cited:
    """What every cited row carries: when, where from, how sure."""

    date: str
    source: str
    confidence: str

    @property
    def citation(self) -> str:
        return f"{self.source} ({self.date}; {CONFIDENCE_LABELS[self.confidence]})"


def cited_date(text: object, field: str = "date") -> _date:
    """The day ``text`` names; a year or a month without a day is read as its first day."""
    m = DATE.match(text) if isinstance(text, str) else None
    if not m:
        raise ValidationError(field, f"{text!r} is not a date", "YYYY, YYYY-MM or YYYY-MM-DD")
    try:
        return _date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
    except ValueError as exc:
        raise ValidationError(field, f"{text!r}: {exc}", "a real calendar date") from None


def check_cited(raw: Mapping, where: str) -> dict[str, str]:
    """The row's ``date``, ``source`` and ``confidence``, each checked; the first problem raises a
    :class:`ValidationError` on ``<where>.<key>``."""
    if not isinstance(raw, Mapping):
        raise ValidationError(where, f"expected an object, got {type(raw).__name__}")
    missing = [k for k in CITED_FIELDS if k not in raw]
    if missing:
        raise ValidationError(f"{where}.{missing[0]}", "is missing: every figure needs its date, source and "
                              "confidence")
    cited_date(raw["date"], f"{where}.date")
    source = raw["source"]
    if not isinstance(source, str) or not source.strip() or len(source) > SOURCE_CHARS:
        raise ValidationError(f"{where}.source", f"expected text of 1…{SOURCE_CHARS} characters, got {source!r}",
                              "text")
    if raw["confidence"] not in CONFIDENCE:
        raise ValidationError(f"{where}.confidence", f"{raw['confidence']!r} is not a confidence tag",
                              ", ".join(CONFIDENCE))
    return {k: raw[k] for k in CITED_FIELDS}


__all__ = ["CONFIDENCE", "CONFIDENCE_LABELS", "DATE", "CITED_FIELDS", "Cited", "cited_date", "check_cited"]
