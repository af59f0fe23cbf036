"""One incident, four reporting clocks: CRA Art 14, NIS2 Art 23, GDPR Art 33 and DORA Art 19, each as
a list of :class:`Deadline` s computed from the moment its clock starts. Educational, not legal advice.

Sources:
- CRA, Reg. (EU) 2024/2847 Art 14(2) (actively exploited vulnerability) and 14(4) (severe incident):
  early warning within 24 h and notification within 72 h of becoming aware; final report 14 days
  after a corrective or mitigating measure is available (vulnerability) or one month after the
  notification (incident); to the CSIRT designated as coordinator and ENISA through the single
  reporting platform (Art 14(1), 14(3), Art 16).
- NIS2, Dir. (EU) 2022/2555 Art 23(4): early warning within 24 h and incident notification within
  72 h of becoming aware of a significant incident (23(3)); final report within one month of the
  notification; to the CSIRT or competent authority (23(1)). Intermediate reports on request (23(4)(c)).
- GDPR, Reg. (EU) 2016/679 Art 33(1): the personal data breach to the supervisory authority without
  undue delay and, where feasible, within 72 h of becoming aware; Art 34(1): data subjects without
  undue delay when the risk to them is high (no fixed hour, so no deadline here).
- DORA, Reg. (EU) 2022/2554 Art 19(1), 19(4): initial notification, intermediate and final report of a
  major ICT-related incident to the competent authority; the time limits are set by the RTS,
  Commission Delegated Regulation (EU) 2025/301 (CELEX 32025R0301) Art 5: the initial notification
  within 4 h of classification as major and no later than 24 h after awareness (5(1)(a)), or, when
  the incident is classified as major only after those 24 h, within 4 h of that classification
  (5(2)); the intermediate report within 72 h of the initial notification (5(1)(b)); the final
  report one month after the (latest updated) intermediate report (5(1)(c)). A deadline on a
  weekend or bank holiday may move to noon of the next working day, except for credit
  institutions, CCPs, trading venues and NIS2 essential or important entities (5(4)-(5)); the
  panel shows that as a note, not as a moved date.

CRA, NIS2 and GDPR figures were checked against the EUR-Lex text of each act, DORA's against the
EUR-Lex text of 2025/301.

A report that counts from an earlier one counts from that one's deadline (the latest it may be sent),
so the chain shows the latest lawful date of every report. Hours are elapsed hours (added in UTC);
days and months are calendar periods on the zone given (Reg. 1182/71 Art 3(2)).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from engines.core.errors import ValidationError, require_choice
from engines.law.cra import _after_hours, _moment, add_months

REGIMES = ("cra", "nis2", "gdpr", "dora")
KINDS = ("incident", "vulnerability")

#: regime → (act, what starts its clock (the hard part), recipient)
REGIME_INFO: dict[str, tuple[str, str, str]] = {
    "cra": ("CRA, Reg. (EU) 2024/2847",
            "awareness of an actively exploited vulnerability or a severe incident (Art 14(2), 14(4)-(5))",
            "CSIRT designated as coordinator and ENISA, via the single reporting platform (Art 14(1), 16)"),
    "nis2": ("NIS2, Dir. (EU) 2022/2555",
             "awareness of a significant incident, i.e. one that meets the Art 23(3) test",
             "CSIRT or competent authority (Art 23(1))"),
    "gdpr": ("GDPR, Reg. (EU) 2016/679",
             "awareness of a personal data breach (Art 33(1))",
             "supervisory authority (Art 33(1)); data subjects when the risk is high (Art 34(1))"),
    "dora": ("DORA, Reg. (EU) 2022/2554 with Del. Reg. (EU) 2025/301",
             "classification of the ICT-related incident as major (Art 18): 4 h from it, but no later than 24 h "
             "after awareness unless the classification itself comes later (Del. Reg. 2025/301 Art 5(1)(a), 5(2))",
             "competent authority (Art 19(1), Art 46)"),
}

#: the recipient of each regime's reports, in short
RECIPIENT = {"cra": "coordinator CSIRT + ENISA", "nis2": "CSIRT or competent authority",
             "gdpr": "supervisory authority", "dora": "competent authority"}

#: duties with no fixed hour ("without undue delay"), shown beside the deadlines
NO_FIXED_HOUR: dict[str, tuple[tuple[str, str], ...]] = {
    "cra": (("inform impacted users of the event and the measures they can take", "Art 14(8)"),),
    "nis2": (("notify recipients of the service of a significant incident that may affect them", "Art 23(1)"),
             ("intermediate report when the CSIRT or authority asks for one", "Art 23(4)(c)")),
    "gdpr": (("communicate the breach to the data subjects when it is likely to result in a high risk",
              "Art 34(1)"),
             ("a processor notifies the controller of a breach", "Art 33(2)")),
    "dora": (("inform clients whose financial interests the major incident affects", "Art 19(3)"),
             ("a deadline on a weekend or bank holiday may move to noon of the next working day, except for "
              "credit institutions, CCPs, trading venues and NIS2 essential or important entities",
              "Del. Reg. 2025/301 Art 5(4)-(5)")),
}


@dataclass(frozen=True)
class Deadline:
    """One report: its name, the latest moment it is due, to whom, the article, what it counts
    from (``"awareness"``, ``"classification"``, a fix, or an earlier report's name) and the period
    the article gives from there ("24 h", "72 h", "14 days", "1 month"): a slide citing "the 72-hour
    notice" shows that figure, not only the date it leads to."""
    name: str
    due: datetime
    recipient: str
    basis: str
    counts_from: str = "awareness"
    content: str = ""
    period: str = ""


def _same_kind(aware: datetime, name: str, value: datetime | None) -> datetime | None:
    if value is None:
        return None
    value = _moment(value, name)
    if (value.tzinfo is None) != (aware.tzinfo is None):
        raise ValidationError(name, "mixes time-zone-aware and naive datetimes", "same kind as aware")
    if value < aware:
        raise ValidationError(name, "cannot precede awareness", f"≥ {aware.isoformat()}")
    return value


def deadlines(regime: str, aware: datetime, *, classified: datetime | None = None,
              fix_available: datetime | None = None, kind: str = "incident") -> list[Deadline]:
    """Every timed report ``regime`` asks for after one event, in order. ``kind`` ("incident" or
    "vulnerability") matters for the CRA only; DORA needs ``classified``; a CRA vulnerability's final
    report needs ``fix_available`` (left out until it is given)."""
    require_choice(regime, "regime", REGIMES)
    require_choice(kind, "kind", KINDS)
    aware = _moment(aware, "aware")
    classified = _same_kind(aware, "classified", classified)
    fix_available = _same_kind(aware, "fix_available", fix_available)
    recipient = RECIPIENT[regime]
    out: list[Deadline] = []
    if regime == "cra":
        para = "14(2)" if kind == "vulnerability" else "14(4)"
        early = Deadline("CRA early warning", _after_hours(aware, 24), recipient, f"CRA Art {para}(a)",
                         content="Member States where the product is available"
                                 + ("" if kind == "vulnerability" else "; whether a malicious act is suspected"),
                         period="24 h")
        note = Deadline("CRA notification", _after_hours(aware, 72), recipient, f"CRA Art {para}(b)",
                        content="the product, the nature of the exploit or incident, measures taken and advised",
                        period="72 h")
        out += [early, note]
        if kind == "vulnerability":
            if fix_available is not None:
                out.append(Deadline("CRA final report", fix_available + timedelta(days=14), recipient,
                                    "CRA Art 14(2)(c)", "fix available",
                                    "severity and impact, the malicious actor where known, the fix", "14 days"))
        else:
            out.append(Deadline("CRA final report", add_months(note.due, 1), recipient, "CRA Art 14(4)(c)",
                                note.name, "severity and impact, root cause, mitigations", "1 month"))
    elif regime == "nis2":
        early = Deadline("NIS2 early warning", _after_hours(aware, 24), recipient, "NIS2 Art 23(4)(a)",
                         content="suspected unlawful or malicious act; possible cross-border impact", period="24 h")
        note = Deadline("NIS2 incident notification", _after_hours(aware, 72), recipient, "NIS2 Art 23(4)(b)",
                        content="initial assessment: severity, impact, indicators of compromise", period="72 h")
        final = Deadline("NIS2 final report", add_months(note.due, 1), recipient, "NIS2 Art 23(4)(d)", note.name,
                         "detailed description, threat or root cause, mitigation, cross-border impact", "1 month")
        out += [early, note, final]
    elif regime == "gdpr":
        out.append(Deadline("GDPR breach notification", _after_hours(aware, 72), recipient,
                            "GDPR Art 33(1)", content="nature of the breach, data subjects and records concerned, "
                            "likely consequences, measures (Art 33(3)); may come in phases (33(4))", period="72 h"))
    else:
        if classified is None:
            raise ValidationError("classified", "DORA's clock starts when the incident is classified as major",
                                  "a datetime ≥ aware")
        four_h, cap = _after_hours(classified, 4), _after_hours(aware, 24)
        if classified > cap:                    # classified as major only after 24 h: 4 h from then (5(2))
            initial_due, start, para = four_h, "classification", "5(2)"
        else:
            initial_due, para = min(four_h, cap), "5(1)(a)"
            start = "classification" if initial_due == four_h else "awareness"
        initial = Deadline("DORA initial notification", initial_due, recipient,
                           f"DORA Art 19(4)(a); Del. Reg. 2025/301 Art {para}", start,
                           "the incident, its classification, first impact",
                           "4 h" if start == "classification" else "24 h")
        inter = Deadline("DORA intermediate report", _after_hours(initial_due, 72), recipient,
                         "DORA Art 19(4)(b); Del. Reg. 2025/301 Art 5(1)(b)", initial.name,
                         "status, impact and recovery so far", "72 h")
        final = Deadline("DORA final report", add_months(inter.due, 1), recipient,
                         "DORA Art 19(4)(c); Del. Reg. 2025/301 Art 5(1)(c)", inter.name,
                         "root cause analysis, measures, costs and losses", "1 month")
        out += [initial, inter, final]
    return out


def all_deadlines(regimes, aware: datetime, **kw) -> list[Deadline]:
    """The deadlines of several regimes for one event, merged in time order."""
    out: list[Deadline] = []
    for r in regimes:
        out += deadlines(r, aware, **kw)
    return sorted(out, key=lambda d: (d.due.timestamp(), d.name))
