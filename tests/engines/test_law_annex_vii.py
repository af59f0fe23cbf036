"""CRA Annex VII technical file as a checklist of its own, linked to the Annex I answers, and the
Official Journal text quoted beside the plain words of Annex I and Annex VII."""
from __future__ import annotations

import csv
import io
from datetime import date

import pytest

from engines.core.errors import ValidationError
from engines.law import annex, annex_vii, oj_text
from engines.law.params import Params


def test_every_item_carries_its_article_text_as_a_quote():
    assert set(oj_text.ANNEX_I) == {it.id for it in annex.ITEMS}
    assert set(oj_text.ANNEX_VII) == {p.id for p in annex_vii.POINTS}
    for it in annex.ITEMS:
        assert it.quote.endswith(oj_text.ANNEX_I[it.id]) and it.asks not in it.quote   # quote and paraphrase differ
    # points checked word for word against OJ L, 2024/2847 (20.11.2024), Annex I
    assert annex.BY_ID["I.2.f"].quote.endswith("not authorised by the user, and report on corruptions")
    assert annex.BY_ID["I.2.a"].quote == ("On the basis of the cybersecurity risk assessment referred to in Article "
                                          "13(2) and where applicable, products with digital elements shall: … be made "
                                          "available on the market without known exploitable vulnerabilities")
    assert annex.BY_ID["II.5"].quote == ("Manufacturers of products with digital elements shall: … put in place and "
                                         "enforce a policy on coordinated vulnerability disclosure")
    assert annex.BY_ID["I.1"].quote.startswith("Products with digital elements shall be designed")
    assert annex_vii.BY_ID["7"].quote == "a copy of the EU declaration of conformity"


def test_the_technical_file_links_annex_vii_to_the_answers():
    points = {f.point: f for f in annex_vii.technical_file(
        [["II.1", "met", "", "TD 4.2"], ["II.5", "not-met", "next release", ""], ["I.2.b", "n/a", "", ""]],
        date(2032, 12, 11))}
    assert list(points) == ["1", "2(a)", "2(b)", "2(c)", "3", "4", "5", "6", "7", "8"]
    assert "Part II(1) met (TD 4.2)" in points["2(b)"].from_annex_i
    assert points["2(b)"].gaps == "not yet met or open: Part II(5), Part II(6), Part II(7)"
    assert "justify Part I(2)(b)" in points["3"].gaps and "13 Part I items open" in points["3"].gaps
    assert "11 Dec 2032" in points["4"].from_annex_i and "TD 4.2" in points["6"].from_annex_i
    assert points["8"].gaps == "" and points["7"].gaps == "not recorded in the Annex I checklist"
    assert annex_vii.technical_file([], None)[5].gaps == "no support period computed"


def test_annex_vii_answers_of_its_own():
    pts = {f.point: f for f in annex_vii.technical_file(
        [["II.1", "met", "", "TD 4.2"]], date(2032, 12, 11),
        [["7", "present", "", "DoC v1.pdf"], ["1", "present", "", ""], ["5", "missing", "", ""],
         ["8", "n/a", "", ""], ["2(b)", "present", "", "TD 4"], ["4", "missing", "legal, by March", ""]])}
    assert pts["7"].warning == "" and pts["7"].evidence == "DoC v1.pdf"
    assert "without saying where" in pts["1"].warning
    assert "without a note" in pts["5"].warning and pts["4"].warning == "missing; plan: legal, by March"
    assert pts["8"].warning == "'not applicable' needs its reason"
    assert "Annex I answers leave open: not yet met or open: Part II(5)" in pts["2(b)"].warning
    assert pts["3"].status == "" and pts["3"].warning == ""
    assert annex_vii.counts(tuple(pts.values())) == {"in the file": 3, "missing": 2, "not applicable": 1, "open": 4}


@pytest.mark.parametrize("answers, field", [
    ([["7", "n/a", "no DoC", ""]], "annex_vii[0]"),          # only point 8 may be not applicable
    ([["9", "present", "", "x"]], "annex_vii[0]"),
    ([["3", "met", "", ""]], "annex_vii[0]"),                # Annex I's status words are not Annex VII's
    ([["3", "present", "", "a"], ["3", "missing", "", ""]], "annex_vii[1]"),
    ("3", "annex_vii"),
])
def test_bad_annex_vii_answers_name_the_answer(answers, field):
    with pytest.raises(ValidationError) as err:
        annex_vii.normalise(answers)
    assert err.value.field == field
    with pytest.raises(ValidationError):
        Params(annex_vii=answers)


def test_annex_vii_exports_quote_the_official_journal():
    pts = annex_vii.technical_file([], None, [["6", "present", "pen test | 2027", "TR-12"]])
    md = annex_vii.to_markdown(pts)
    assert "“a copy of the EU declaration of conformity”" in md and "pen test \\| 2027" in md
    assert md.count("\n| VII(") == 10 and "VII(8)" in md
    rows = list(csv.DictReader(io.StringIO(annex_vii.to_csv(pts))))
    assert len(rows) == 10 and rows[7]["status"] == "in the file" and rows[7]["evidence"] == "TR-12"
    page = annex_vii.to_html(annex_vii.technical_file([], None, [["1", "missing", "<b>x</b>", ""]]))
    assert "&lt;b&gt;x&lt;/b&gt;" in page and page.count("<q>") == 11     # the lead-in and ten points


def test_params_round_trip_keeps_annex_vii():
    p = Params(annex_vii=[["8", "n/a", "no MSA request yet", ""], ["2(a)", "present", "", "ARCH.md"]],
               annex_quotes=True)
    assert p.annex_vii == (("2(a)", "present", "", "ARCH.md"), ("8", "n/a", "no MSA request yet", ""))
    assert Params.from_dict(p.to_dict()) == p


def test_annex_ii_is_the_user_information_the_file_points_to():
    """Annex II has nine points, in order; the file's point 1 refers to it, and the support period's end
    and the SBOM's location (when shared) are among what reaches the user."""
    points = [p for p, _, _ in annex_vii.ANNEX_II]
    assert points == [f"Annex II({i})" for i in range(1, 10)]
    assert "Annex II" in annex_vii.BY_ID["1"].what
    by_point = {p: what for p, _, what in annex_vii.ANNEX_II}
    assert "date" in by_point["Annex II(7)"] and "SBOM" in by_point["Annex II(9)"]
    assert len({short for _, short, _ in annex_vii.ANNEX_II}) == 9          # nine distinct labels
