"""The one cited-row scheme: compute figures and self-hosting prices are both ``Cited`` rows, checked by
one validator with one vocabulary of confidence words."""
from __future__ import annotations

import json
from datetime import date

import pytest

from engines.compute.data import LAYOUT, data_path, load_table, parse_table
from engines.core.cited import CONFIDENCE, Cited, check_cited, cited_date
from engines.core.errors import ValidationError
from engines.selfhost.prices import dump_prices, load_prices, parse_price_text


def _all_rows():
    book = load_prices()
    rows = [*book.api, *book.gpu_rental, *book.hardware]
    for name in LAYOUT:
        for section, value in load_table(name).items():
            if section != "as_of":
                rows += list(value) if isinstance(value, tuple) else [value]
    return rows


def test_every_shipped_row_of_both_files_is_a_cited_row_in_the_one_vocabulary():
    rows = _all_rows()
    assert len(rows) > 50
    assert all(isinstance(r, Cited) and r.confidence in CONFIDENCE and cited_date(r.date) for r in rows)
    assert {type(r).__module__ for r in rows} == {"engines.compute.data", "engines.selfhost.prices"}


@pytest.mark.parametrize("edit, key, why", [
    (lambda r: r.pop("source"), "source", "is missing"),
    (lambda r: r.update(source="  "), "source", "expected text"),
    (lambda r: r.update(date="2026-02-30"), "date", "day is out of range"),
    (lambda r: r.update(date="last year"), "date", "is not a date"),
    (lambda r: r.update(confidence="price table"), "confidence", "is not a confidence tag"),
])
def test_both_readers_refuse_the_same_broken_row_the_same_way(edit, key, why):
    runs = json.loads(data_path("runs.json").read_text(encoding="utf-8"))
    edit(runs["rows"][1])
    with pytest.raises(ValidationError, match=why) as a:
        parse_table("runs.json", runs)
    prices = json.loads(dump_prices(load_prices()))
    edit(prices["api"][1])
    with pytest.raises(ValidationError, match=why) as b:
        parse_price_text(json.dumps(prices))
    assert (a.value.field, b.value.field) == (f"rows[1].{key}", f"api[1].{key}")


def test_a_date_is_as_precise_as_its_source():
    assert cited_date("2025") == date(2025, 1, 1)
    assert cited_date("2025-07") == date(2025, 7, 1)
    assert cited_date("2025-07-18") == date(2025, 7, 18)
    assert check_cited({"date": "2025", "source": "s", "confidence": "estimate", "x": 1}, "r") == \
        {"date": "2025", "source": "s", "confidence": "estimate"}
