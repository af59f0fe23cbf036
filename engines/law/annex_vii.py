"""CRA Annex VII, the technical documentation (Art 31), as a checklist of its own: for each point the
user records whether the file holds it, a note and where it lives, beside what the Annex I answers
and the support calculator already supply for that point. Reg. (EU) 2024/2847, CELEX 32024R2847.

Statuses: ``present``, ``missing``, ``n/a``, or ``""`` (still open). Annex VII asks for each point "as
applicable to the relevant product"; only point 8 (the SBOM on a market surveillance authority's
reasoned request, "where applicable") is offered as not applicable here, with its reason. A point
marked present needs a reference to where it sits in the file. Summaries are our words; the OJ text
of each point is in engines.law.oj_text. Educational, not legal advice.
"""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass
from datetime import date

from engines.law import annex
from engines.law.oj_text import ANNEX_VII as OJ_VII, ANNEX_VII_LEAD, SOURCE

STATUSES = ("present", "missing", "n/a")
STATUS_TEXT = {"present": "in the file", "missing": "missing", "n/a": "not applicable", "": "open"}


@dataclass(frozen=True)
class Point:
    id: str            # "2(b)"
    short: str         # a few words
    what: str          # what the file holds, our words
    may_be_na: bool

    @property
    def point(self) -> str:
        return f"Annex VII({self.id})"

    @property
    def quote(self) -> str:
        return OJ_VII[self.id]


POINTS: tuple[Point, ...] = (
    Point("1", "General description",
          "General description: intended purpose, software versions that affect compliance, photographs or "
          "illustrations for hardware, the Annex II user information", False),
    Point("2(a)", "Design and architecture",
          "Design and development, including the system architecture: how software components build on "
          "each other and fit together", False),
    Point("2(b)", "Vulnerability handling, SBOM",
          "Vulnerability handling: the SBOM, the coordinated disclosure policy, evidence of the reporting "
          "contact, the technical means of distributing updates securely", False),
    Point("2(c)", "Production and monitoring",
          "Production and monitoring processes and how they were validated", False),
    Point("3", "Cybersecurity risk assessment",
          "The cybersecurity risk assessment (Art 13), including how each Part I requirement applies", False),
    Point("4", "Basis of the support period",
          "What was taken into account to set the support period (Art 13(8))", False),
    Point("5", "Standards or solutions applied",
          "Harmonised standards, common specifications or certification schemes applied; where none, how "
          "the essential requirements were met", False),
    Point("6", "Conformity test reports",
          "Reports of the tests that verify conformity with Annex I Parts I and II", False),
    Point("7", "EU declaration of conformity",
          "A copy of the EU declaration of conformity", False),
    Point("8", "SBOM on an authority's request",
          "The SBOM, when a market surveillance authority asks for it with reasons", True),
)
BY_ID = {p.id: p for p in POINTS}
#: the points the Annex I answers and the support period feed (:func:`_links`)
LINKED = ("2(b)", "3", "4", "6", "8")

#: What a substantial modification starts again, (article, our words).
ANNEX_VII: tuple[tuple[str, str], ...] = tuple((p.id, p.what) for p in POINTS)
"""(point, what it asks) pairs: the shape scripts read before the points had their own answers."""

SUBSTANTIAL_MODIFICATION: tuple[tuple[str, str], ...] = (
    ("CRA Art 69(2)", "a product placed on the market before 11 Dec 2027 comes under the CRA's requirements once "
                      "it is substantially modified from that date"),
    ("CRA Arts 21-22", "whoever makes the modification (importer, distributor or anyone else) takes on the "
                       "manufacturer's obligations of Arts 13-14, the Art 32 conformity assessment and this "
                       "technical file among them, for the part affected or for the whole product when its "
                       "cybersecurity as a whole is affected"),
    ("PLD Art 8(2), 17(1)", "the modifier is liable as a manufacturer, and the ten-year expiry runs again from when "
                            "the modified product is made available"),
)


#: CRA Annex II, what must accompany the product for its user (Art 13(18)), (point, short, our words).
#: Beside Annex VII because the file's point 1 holds this same information; unlike the file, it goes to
#: the user, not to an authority on request. Checked against the Annex II list of the Regulation.
ANNEX_II: tuple[tuple[str, str, str], ...] = (
    ("Annex II(1)", "Who made it and how to reach them",
     "The manufacturer's name or trademark, a postal address, an e-mail or other digital contact, and a website where one exists"),
    ("Annex II(2)", "Where to report vulnerabilities",
     "The single point of contact for reporting and hearing about vulnerabilities, and where the disclosure policy is published"),
    ("Annex II(3)", "What exactly the product is",
     "Name, type and whatever else identifies the product uniquely"),
    ("Annex II(4)", "Intended purpose and security properties",
     "The intended purpose, the security environment the manufacturer provides, the essential functions and the security properties"),
    ("Annex II(5)", "Foreseeable significant risks",
     "Known or foreseeable circumstances of use, or of reasonably foreseeable misuse, that may bring significant cybersecurity risks"),
    ("Annex II(6)", "Where the declaration of conformity is",
     "Where applicable, the web address at which the EU declaration of conformity can be read"),
    ("Annex II(7)", "Support offered and its end date",
     "The kind of technical security support offered and the date until which vulnerabilities will be handled"),
    ("Annex II(8)", "Instructions for secure use",
     "Detailed instructions or their web address: secure set-up and use over the lifetime, how changes affect data security, "
     "installing security updates, secure decommissioning and data removal, switching automatic updates off, what an integrator needs"),
    ("Annex II(9)", "Where the SBOM is, if shared",
     "If the manufacturer chooses to make the SBOM available to users, where it can be found"),
)


def normalise(answers) -> tuple[annex.Answer, ...]:
    """Checked Annex VII answers in Annex order; "n/a" only where the point allows it."""
    return annex.normalise_answers(answers, "annex_vii", BY_ID, STATUSES, "Annex VII")


@dataclass(frozen=True)
class FilePoint:
    point: str          # "2(b)"
    what: str
    from_annex_i: str   # what the Annex I answers (and the support calculator) already give this point
    gaps: str           # what they leave open ("" when nothing is known to be missing)
    status: str = ""    # the user's own answer for this point
    note: str = ""
    evidence: str = ""
    warning: str = ""   # what that answer still lacks

    @property
    def quote(self) -> str:
        return OJ_VII[self.point]


def _links(answers, support_end: date | None) -> dict[str, tuple[str, str]]:
    """What the Annex I checklist supplies: 2(b) from Part II(1), (5), (6), (7); 3 from the Part I
    answers and their justifications; 4 from the support period; 6 from the evidence references of
    'met' items; 8 from Part II(1)."""
    c = annex.checklist(answers)
    by = {r.item.id: r for r in c.rows}

    def state(ids) -> tuple[str, str]:
        got = [f"{by[i].item.point.replace('Annex I ', '')} {annex.STATUS_TEXT[by[i].status]}"
               + (f" ({by[i].evidence})" if by[i].evidence else "") for i in ids if by[i].status]
        missing = [by[i].item.point.replace("Annex I ", "") for i in ids if by[i].status != "met"]
        return "; ".join(got), ("not yet met or open: " + ", ".join(missing)) if missing else ""

    part1 = [r for r in c.rows if r.item.id.startswith("I.")]
    na_ok = [r for r in part1 if r.status == "n/a" and r.note.strip()]
    na_bad = [r for r in part1 if r.status == "n/a" and not r.note.strip()]
    open_1 = [r for r in part1 if not r.status]
    evidence = sorted({r.evidence for r in c.rows if r.status == "met" and r.evidence})
    return {
        "2(b)": state(("II.1", "II.5", "II.6", "II.7")),
        "3": (f"{len(part1) - len(open_1)} of {len(part1)} Part I items answered, {len(na_ok)} 'not applicable' "
              "with a justification",
              "; ".join(x for x in (
                  f"justify {', '.join(r.item.point.replace('Annex I ', '') for r in na_bad)}" if na_bad else "",
                  f"{len(open_1)} Part I items open" if open_1 else "") if x)),
        "4": (f"support period ends {support_end:%d %b %Y} (Support and fines tab)" if support_end else "",
              "" if support_end else "no support period computed"),
        "6": ("evidence references of 'met' items: " + ", ".join(evidence) if evidence else "",
              "" if evidence else "no test reports referenced"),
        "8": state(("II.1",)),
    }


def _warning(status: str, note: str, evidence: str, gaps: str) -> str:
    if status == "present" and not evidence.strip():
        return "'in the file' without saying where (section, document or link)"
    if status == "present" and gaps:
        return f"marked in the file, but the Annex I answers leave open: {gaps}"
    if status == "missing":
        return f"missing; plan: {note.strip()}" if note.strip() else "'missing' without a note on who writes it by when"
    if status == "n/a" and not note.strip():
        return "'not applicable' needs its reason"
    return ""


def technical_file(answers=(), support_end: date | None = None, file_answers=()) -> tuple[FilePoint, ...]:
    """Annex VII point by point: the user's own answer (``file_answers``, as :func:`normalise` takes them),
    what the Annex I checklist (``answers``, its answers) and the support period already supply, what
    stays open, and what the answer still lacks. Points the checklist cannot know say so."""
    links = _links(answers, support_end)
    mine = {a[0]: a for a in normalise(file_answers)}
    out = []
    for p in POINTS:
        from_i, gaps = links.get(p.id, ("", "not recorded in the Annex I checklist"))
        _, status, note, evidence = mine.get(p.id, (p.id, "", "", ""))
        out.append(FilePoint(p.id, p.what, from_i, gaps, status, note, evidence,
                             _warning(status, note, evidence, gaps if p.id in links else "")))
    return tuple(out)


def counts(points: tuple[FilePoint, ...]) -> dict[str, int]:
    out = {t: 0 for t in STATUS_TEXT.values()}
    for f in points:
        out[STATUS_TEXT[f.status]] += 1
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(points: tuple[FilePoint, ...], title: str = "CRA Annex VII technical documentation") -> str:
    lines = [f"# {title}", "", f"{SOURCE}, Annex VII: “{ANNEX_VII_LEAD}” 'Holds' is our summary; 'Article "
             "text' quotes the Official Journal. Educational, not legal advice.", "",
             "Summary: " + ", ".join(f"{n} {t}" for t, n in counts(points).items()), "",
             "| Point | Holds | Article text | Status | Note | Where in the file | From the Annex I answers | Open |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| VII({f.point}) | {_cell(f.what)} | “{_cell(f.quote)}” | {STATUS_TEXT[f.status]} | "
              f"{_cell(f.note)} | {_cell(f.evidence)} | {_cell(f.from_annex_i)} | {_cell(f.gaps)} |" for f in points]
    todo = [f"VII({f.point}): {f.warning}" for f in points if f.warning]
    if todo:
        lines += ["", "## Still to do", ""] + [f"- {w}" for w in todo]
    return "\n".join(lines + [""])


def to_html(points: tuple[FilePoint, ...], title: str = "CRA Annex VII technical documentation") -> str:
    e = html.escape
    out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}</title></head><body>",
           f"<h1>{e(title)}</h1>", f"<p>{e(SOURCE)}, Annex VII: <q>{e(ANNEX_VII_LEAD)}</q> 'Holds' is our summary; "
           "'Article text' quotes the Official Journal. Educational, not legal advice.</p>",
           "<p>Summary: " + e(", ".join(f"{n} {t}" for t, n in counts(points).items())) + "</p>",
           "<table border='1'><tr><th>Point</th><th>Holds</th><th>Article text</th><th>Status</th><th>Note</th>"
           "<th>Where in the file</th><th>From the Annex I answers</th><th>Open</th></tr>"]
    out += [f"<tr><td>VII({e(f.point)})</td><td>{e(f.what)}</td><td><q>{e(f.quote)}</q></td>"
            f"<td>{e(STATUS_TEXT[f.status])}</td><td>{e(f.note)}</td><td>{e(f.evidence)}</td>"
            f"<td>{e(f.from_annex_i)}</td><td>{e(f.gaps)}</td></tr>" for f in points]
    out.append("</table>")
    todo = [f"VII({f.point}): {f.warning}" for f in points if f.warning]
    if todo:
        out += ["<h2>Still to do</h2><ul>"] + [f"<li>{e(w)}</li>" for w in todo] + ["</ul>"]
    return "\n".join(out + ["</body></html>", ""])


def to_csv(points: tuple[FilePoint, ...]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["point", "holds", "article_text", "status", "note", "evidence", "from_annex_i", "open", "warning"])
    for f in points:
        w.writerow([f.point, f.what, f.quote, STATUS_TEXT[f.status], f.note, f.evidence, f.from_annex_i, f.gaps,
                    f.warning])
    return buf.getvalue()
