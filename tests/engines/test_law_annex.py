"""CRA Annex I checklist: 13 Part I(2) properties, Part I(1) and 8 Part II duties; n/a only where
Art 13(3) allows it; what each answer still lacks; Markdown and CSV exports."""
from __future__ import annotations

import csv
import io

import pytest

from engines.core.errors import ValidationError
from engines.law import annex
from engines.law.params import Params


def test_the_items_are_annex_i():
    ids = [it.id for it in annex.ITEMS]
    assert ids[:1] == ["I.1"] and ids[1:14] == [f"I.2.{c}" for c in "abcdefghijklm"]
    assert ids[14:] == [f"II.{n}" for n in range(1, 9)]
    assert [it.may_be_na for it in annex.ITEMS] == [False] + [True] * 13 + [False] * 8


def test_what_each_answer_still_lacks():
    c = annex.checklist([["II.5", "not-met", "", ""], ["I.2.b", "n/a", "", ""], ["I.2.a", "met", "", ""],
                         ["I.2.c", "not-met", "postponing comes in 2.1", ""], ["I.2.d", "met", "", "TD 4"]])
    w = "\n".join(c.warnings)
    assert "I(2)(b): 'not applicable' needs its justification" in w and "Art 13(3)" in w
    assert "I(2)(a): 'met' without an evidence reference" in w
    assert "II(5): 'not met' without a note" in w and "I(2)(c): not met; plan: postponing comes in 2.1" in w
    assert "I(2)(d)" not in w
    assert c.counts == {"met": 2, "not met": 2, "not applicable": 1, "open": 17}


@pytest.mark.parametrize("answers, field", [
    ([["II.1", "n/a", "", ""]], "annex_i[0]"),          # Part II applies to every product
    ([["I.1", "n/a", "", ""]], "annex_i[0]"),
    ([["I.2.z", "met", "", ""]], "annex_i[0]"),
    ([["I.2.a", "done", "", ""]], "annex_i[0]"),
    ([["I.2.a", "met", "", ""], ["I.2.a", "n/a", "x", ""]], "annex_i[1]"),
    ([["I.2.a", "met"]], "annex_i[0]"),
    ("I.2.a", "annex_i"),
])
def test_bad_answers_name_the_answer(answers, field):
    with pytest.raises(ValidationError) as err:
        annex.normalise(answers)
    assert err.value.field == field
    with pytest.raises(ValidationError):
        Params(annex_i=answers)


def test_exports_in_annex_order():
    c = annex.checklist((("II.1", "met", "CycloneDX, top-level and transitive", "TD 4.2"),
                         ("I.2.m", "n/a", "stores no user data | by design", "")))
    md = annex.to_markdown(c)
    assert md.index("## Part I") < md.index("| Annex I Part I(2)(m)") < md.index("## Part II") < md.index("II(1)")
    assert "stores no user data \\| by design" in md                   # a pipe in a note keeps the table
    rows = list(csv.DictReader(io.StringIO(annex.to_csv(c))))
    assert len(rows) == 22 and rows[13]["item"] == "I.2.m" and rows[13]["status"] == "not applicable"
    assert rows[14]["evidence"] == "TD 4.2" and rows[0]["status"] == "open"
    assert rows[14]["article_text"].endswith("at the very least the top-level dependencies of the products")
    assert "| Annex I Part I(2)(m) | Secure deletion and transfer of data | “On the basis of" in md


def test_html_export_escapes_the_answers():
    page = annex.to_html(annex.checklist([["I.2.m", "n/a", "no <script>alert(1)</script> data", ""]]))
    assert page.startswith("<!DOCTYPE html>") and "&lt;script&gt;" in page and "<script>" not in page
    assert page.count("<tr>") == len(annex.ITEMS) + 2                   # two header rows
    assert page.count("<q>") == len(annex.ITEMS)                        # the article text, quoted
