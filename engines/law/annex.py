"""CRA Annex I as a checklist: Part I (properties of the product) and Part II (vulnerability handling),
every item with its point, a short plain-words line, a longer paraphrase of what the point asks (both
our words) and the point's Official Journal text as a quote (engines.law.oj_text; Reg. (EU) 2024/2847
Annex I, CELEX 32024R2847).

Answers are ``met``, ``not-met`` or ``n/a`` (``""``: still open, with the note typed so far).
Only Part I point 2 may be "not applicable": Art 13(3)
has the cybersecurity risk assessment say whether, and how, each Part I(2) requirement applies, and
Art 13(4) puts a clear justification of any requirement that does not apply in the technical
documentation, so an n/a answer needs that justification. Part I point 1 and every Part II
duty apply to every product (Art 13(1), 13(8); Annex I Part II). Educational, not legal advice.
"""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.law.oj_text import ANNEX_I, SOURCE, annex_i_quote

STATUSES = ("met", "not-met", "n/a")
STATUS_TEXT = {"met": "met", "not-met": "not met", "n/a": "not applicable", "": "open"}


@dataclass(frozen=True)
class Item:
    id: str            # "I.2.a", "II.1"
    point: str         # "Annex I Part I(2)(a)"
    short: str         # plain words, one line
    asks: str          # what the point asks, paraphrased
    may_be_na: bool

    @property
    def quote(self) -> str:
        """The point's Official Journal text, with the lead-in that governs it (a quote, not our words)."""
        return annex_i_quote(self.id)

    @property
    def point_text(self) -> str:
        """The point's own Official Journal words, without the lead-in its part shares."""
        return ANNEX_I[self.id]


def _i2(letter: str, short: str, asks: str) -> Item:
    return Item(f"I.2.{letter}", f"Annex I Part I(2)({letter})", short, asks, True)


def _ii(n: int, short: str, asks: str) -> Item:
    return Item(f"II.{n}", f"Annex I Part II({n})", short, asks, False)


ITEMS: tuple[Item, ...] = (
    Item("I.1", "Annex I Part I(1)", "Security proportionate to the risks",
         "Design, development and production give a level of cybersecurity that fits the risks found.", False),
    _i2("a", "No known exploitable vulnerabilities",
        "When the product is made available, it carries no vulnerability that is known and can be exploited."),
    _i2("b", "Secure by default, with a reset",
        "Shipped in a secure default configuration (unless agreed otherwise with a business user for a "
        "tailor-made product), and can be put back to its original state."),
    _i2("c", "Security updates, automatic by default",
        "Vulnerabilities can be fixed by security updates; where applicable installed automatically by "
        "default within a suitable time, with an easy opt-out, a notice to users and the option to postpone."),
    _i2("d", "Protection from unauthorised access",
        "Authentication, identity or access management and similar controls keep out unauthorised access, "
        "and possible unauthorised access is reported."),
    _i2("e", "Confidentiality of data",
        "Data stored, sent or processed, personal or not, is kept confidential, e.g. encrypted at rest and in "
        "transit with state-of-the-art mechanisms."),
    _i2("f", "Integrity of data, commands, programs, configuration",
        "Data, commands, programs and configuration are protected against changes the user did not "
        "authorise, and corruption is reported."),
    _i2("g", "Data minimisation",
        "Only the data that is adequate, relevant and necessary for the intended purpose is processed."),
    _i2("h", "Availability, also after an incident",
        "Essential and basic functions stay available, including resilience and mitigation against "
        "denial-of-service attacks."),
    _i2("i", "Little harm to other devices and networks",
        "The product and connected devices minimise their negative effect on services other devices or "
        "networks provide."),
    _i2("j", "Limited attack surface",
        "Designed, developed and produced to limit attack surfaces, external interfaces included."),
    _i2("k", "Exploitation mitigation",
        "Designed, developed and produced to reduce the impact of an incident with suitable exploitation "
        "mitigation mechanisms and techniques."),
    _i2("l", "Security logging, with an opt-out",
        "Security-relevant information is recorded by monitoring relevant internal activity (access to or "
        "change of data, services, functions); the user can opt out."),
    _i2("m", "Secure deletion and transfer of data",
        "Users can remove all data and settings permanently, securely and easily; where data can move to "
        "other products or systems, the move is secure."),
    _ii(1, "Identify vulnerabilities and components; an SBOM",
        "Identify and document vulnerabilities and components, including a software bill of materials in a "
        "commonly used, machine-readable format that covers at least the top-level dependencies."),
    _ii(2, "Remediate without delay; security updates separate",
        "Address and fix vulnerabilities without delay, in relation to the risks, including by security "
        "updates; where technically feasible, security updates come apart from feature updates."),
    _ii(3, "Regular security testing and review",
        "Apply effective and regular tests and reviews of the product's security."),
    _ii(4, "Advisories once a fix is out",
        "After a security update is available, publish what was fixed: description, affected product, "
        "impact, severity and how to remediate; publication may wait, where duly justified, until users "
        "could apply the patch."),
    _ii(5, "A coordinated vulnerability disclosure policy",
        "Put in place and enforce a policy on coordinated vulnerability disclosure."),
    _ii(6, "A contact address for vulnerability reports",
        "Make it easy to share information on potential vulnerabilities in the product and its third-party "
        "components, including a contact address for reports."),
    _ii(7, "Secure distribution of updates",
        "Mechanisms distribute updates securely so vulnerabilities are fixed or mitigated in time, and "
        "automatically for security updates where applicable."),
    _ii(8, "Updates without delay, free, with advice",
        "Available security updates are disseminated without delay and free of charge (unless agreed "
        "otherwise for a tailor-made product), with advisory messages on what users should do."),
)
BY_ID = {it.id: it for it in ITEMS}
PARTS = (("I", "Part I: properties of the product"), ("II", "Part II: vulnerability handling"))

Answer = tuple[str, str, str, str]          # (item id, status, note, evidence reference)


def normalise_answers(answers, field: str, items: dict, statuses: tuple[str, ...], what: str) -> tuple:
    """Checked ``(item, status, note, evidence)`` answers in the order of ``items`` (id → object with
    ``point`` and ``may_be_na``), one per item; JSON lists become tuples. A bad id or status, an "n/a"
    an item does not allow, or a repeated item raises ValidationError naming the answer."""
    if not isinstance(answers, (tuple, list)):
        raise ValidationError(field, f"expected a list of answers, got {type(answers).__name__}")
    seen: dict[str, Answer] = {}
    for i, a in enumerate(answers):
        name = f"{field}[{i}]"
        if not isinstance(a, (tuple, list)) or len(a) != 4 or not all(isinstance(x, str) for x in a):
            raise ValidationError(name, f"expected [item, status, note, evidence] texts, got {a!r}")
        item, status, note, evidence = a
        if item not in items:
            raise ValidationError(name, f"unknown {what} item {item!r}", ", ".join(items))
        if status not in ("", *statuses):
            raise ValidationError(name, f"unknown status {status!r}", "'' (open), " + ", ".join(statuses))
        if status == "n/a" and not items[item].may_be_na:
            raise ValidationError(name, f"{items[item].point} applies to every product; it cannot be "
                                        "'not applicable'", ", ".join(s for s in statuses if s != "n/a"))
        if item in seen:
            raise ValidationError(name, f"{item} is answered twice")
        if len(note) > 2000 or len(evidence) > 500:
            raise ValidationError(name, "note or evidence too long", "note ≤ 2000, evidence ≤ 500 characters")
        seen[item] = (item, status, note, evidence)
    return tuple(seen[k] for k in items if k in seen)


def normalise(answers) -> tuple[Answer, ...]:
    """Checked Annex I answers in Annex order (a Part II or Part I(1) "n/a" is refused)."""
    return normalise_answers(answers, "annex_i", BY_ID, STATUSES, "Annex I")


@dataclass(frozen=True)
class Row:
    item: Item
    status: str        # "" when not answered
    note: str
    evidence: str
    warning: str       # what the answer still lacks


@dataclass(frozen=True)
class Checklist:
    rows: tuple[Row, ...]
    counts: dict       # status text → number of items

    @property
    def warnings(self) -> list[str]:
        return [f"{r.item.point}: {r.warning}" for r in self.rows if r.warning]


def checklist(answers) -> Checklist:
    """Every Annex I item with its answer, and what each answer still needs: a "not applicable" needs
    the justification the Art 13(3) risk assessment holds, a "met" an evidence reference (the Annex VII
    technical documentation shows how each requirement is met); a "not met" stays to do, with its plan."""
    by_item = {a[0]: a for a in normalise(answers)}
    rows, counts = [], {t: 0 for t in STATUS_TEXT.values()}
    for it in ITEMS:
        _, status, note, evidence = by_item.get(it.id, (it.id, "", "", ""))
        warning = ""
        if status == "n/a" and not note.strip():
            warning = "'not applicable' needs its justification from the risk assessment (Art 13(3)-(4))"
        elif status == "met" and not evidence.strip():
            warning = "'met' without an evidence reference (technical documentation, Art 31, Annex VII)"
        elif status == "not-met":
            warning = f"not met; plan: {note.strip()}" if note.strip() else \
                "'not met' without a note on the remediation plan"
        counts[STATUS_TEXT[status]] += 1
        rows.append(Row(it, status, note, evidence, warning))
    return Checklist(tuple(rows), counts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(c: Checklist, title: str = "CRA Annex I checklist") -> str:
    lines = [f"# {title}", "",
             f"{SOURCE}, Annex I. 'Requirement' is our plain-words summary; 'Article text' quotes the "
             "Official Journal. Educational, not legal advice.", "",
             "Summary: " + ", ".join(f"{n} {t}" for t, n in c.counts.items()), ""]
    for part, heading in PARTS:
        lines += [f"## {heading}", "",
                  "| Point | Requirement | Article text | Status | Note / justification | Evidence |",
                  "|---|---|---|---|---|---|"]
        for r in c.rows:
            if r.item.id.split(".")[0] == part:
                lines.append(f"| {r.item.point} | {_cell(r.item.short)} | “{_cell(r.item.quote)}” | "
                             f"{STATUS_TEXT[r.status]} | "
                             f"{_cell(r.note)} | {_cell(r.evidence)} |")
        lines.append("")
    if c.warnings:
        lines += ["## Still to do", ""] + [f"- {w}" for w in c.warnings] + [""]
    return "\n".join(lines)


def to_html(c: Checklist, title: str = "CRA Annex I checklist") -> str:
    """A standalone HTML page: the same tables as :func:`to_markdown`, every text escaped."""
    e = html.escape
    out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}</title></head><body>",
           f"<h1>{e(title)}</h1>",
           f"<p>{e(SOURCE)}, Annex I. 'Requirement' is our plain-words summary; 'Article text' quotes the Official "
           "Journal. Educational, not legal advice.</p>",
           "<p>Summary: " + e(", ".join(f"{n} {t}" for t, n in c.counts.items())) + "</p>"]
    for part, heading in PARTS:
        out += [f"<h2>{e(heading)}</h2>", "<table border='1'><tr><th>Point</th><th>Requirement</th>"
                "<th>Article text</th><th>Status</th><th>Note / justification</th><th>Evidence</th></tr>"]
        out += [f"<tr><td>{e(r.item.point)}</td><td>{e(r.item.short)}</td><td><q>{e(r.item.quote)}</q></td>"
                f"<td>{e(STATUS_TEXT[r.status])}</td>"
                f"<td>{e(r.note)}</td><td>{e(r.evidence)}</td></tr>"
                for r in c.rows if r.item.id.split(".")[0] == part]
        out.append("</table>")
    if c.warnings:
        out += ["<h2>Still to do</h2><ul>"] + [f"<li>{e(w)}</li>" for w in c.warnings] + ["</ul>"]
    return "\n".join(out + ["</body></html>", ""])


def to_csv(c: Checklist) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item", "point", "requirement", "article_text", "status", "note", "evidence", "warning"])
    for r in c.rows:
        w.writerow([r.item.id, r.item.point, r.item.short, r.item.quote, STATUS_TEXT[r.status], r.note,
                    r.evidence, r.warning])
    return buf.getvalue()
