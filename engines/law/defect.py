"""PLD defectiveness as a worksheet, the exemptions one by one, and the distributor's one-month rule,
from Directive (EU) 2024/2853 (OJ L, 18.11.2024; CELEX 32024L2853). Summaries are our words, not the
article text. Educational, not legal advice.

- Art 7(1): a product is defective when it does not give the safety a person is entitled to expect,
  or that Union or national law requires; Art 7(2): all circumstances count, among them points
  (a)-(i) below. The weighing is the court's overall judgement: the worksheet records which way each
  circumstance points and why; it does not add them up into a score.
- Art 7(3): a better product, including an update or upgrade, placed on the market later is not by
  itself a reason to find the earlier product defective.
- Meeting a requirement is one circumstance (7(2)(f)), not a defence: Art 11(1)(d) exempts only a
  defect that is *due to* compliance with legal requirements.
- Art 10(2)(b): a breach of mandatory safety requirements meant to protect against the risk of the
  damage suffered makes the court presume the defect (rebuttable, 10(5)).
- Art 11(1)(a)-(g): the exemptions, each for the operator to prove; 11(2) removes (c) for causes in the
  manufacturer's control; Art 18 lets Member States keep liability despite (e).
- Art 8(3)-(4): a distributor (or an online platform presenting the product as in DSA Art 6(3)) is
  liable when, on the claimant's request, it does not name an EU operator or its own supplier within
  one month of receiving the request.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from engines.core.errors import ValidationError
from engines.law.support import add_months

STANCES = ("toward", "against", "neutral")
STANCE_TEXT = {"toward": "points toward a defect", "against": "points against a defect", "neutral": "neutral",
               "": "not weighed"}


@dataclass(frozen=True)
class Circumstance:
    letter: str
    short: str
    for_software: str      # what the point means for a product with software (our words)


CIRCUMSTANCES: tuple[Circumstance, ...] = (
    Circumstance("a", "Presentation and instructions",
                 "what the product says it does, its labels, and the instructions for installing, using and "
                 "maintaining it, security settings included"),
    Circumstance("b", "Reasonably foreseeable use",
                 "uses the manufacturer can foresee, including predictable misuse"),
    Circumstance("c", "Ability to keep learning after release",
                 "behaviour a model or feature acquires after placing on the market is the product's own"),
    Circumstance("d", "Effect of products used with it, inter-connection",
                 "what devices, services and software it is expected to run with can do to its safety"),
    Circumstance("e", "When it left the manufacturer's control",
                 "placing on the market, or later where the manufacturer keeps control through updates or "
                 "related services"),
    Circumstance("f", "Safety requirements, incl. cybersecurity",
                 "safety-relevant cybersecurity requirements, such as CRA Annex I, are part of the yardstick"),
    Circumstance("g", "Recalls and other safety interventions",
                 "a recall or other intervention by an authority or an operator bears on what could be expected"),
    Circumstance("h", "Needs of the intended users",
                 "e.g. children, or users who cannot judge security settings themselves"),
    Circumstance("i", "Failure of a protective product",
                 "for a product whose very purpose is to prevent damage (a security product), failing to "
                 "do so"),
)
BY_LETTER = {c.letter: c for c in CIRCUMSTANCES}


@dataclass(frozen=True)
class Exemption:
    letter: str
    who: str
    proves: str
    limits: str


EXEMPTIONS: tuple[Exemption, ...] = (
    Exemption("a", "a manufacturer or an importer",
              "it did not place the product on the market or put it into service (e.g. stolen stock)", ""),
    Exemption("b", "a distributor", "it did not make the product available on the market", ""),
    Exemption("c", "any operator",
              "the defect that caused the damage probably did not exist when the product was placed on the "
              "market, put into service or (distributor) made available, or came into being afterwards",
              "Art 11(2): not available when the cause is within the manufacturer's control: a related "
              "service, software incl. updates and upgrades, a missing update needed to keep it safe, or a "
              "substantial modification"),
    Exemption("d", "any operator",
              "the defect is due to the product complying with legal requirements (the law made it so)",
              "narrow: meeting a requirement, the CRA included, does not by itself exclude a defect; the "
              "requirement itself must have caused it"),
    Exemption("e", "a manufacturer",
              "the objective state of scientific and technical knowledge, when the product was placed on the "
              "market or while it was in the manufacturer's control, could not reveal the defect",
              "Art 18: Member States may keep or bring in liability despite this defence"),
    Exemption("f", "the maker of a defective component",
              "the defect is due to the design of the product it went into, or to that manufacturer's "
              "instructions", ""),
    Exemption("g", "a person who substantially modified the product (Art 8(2))",
              "the defect is in a part the modification did not affect", ""),
)

Weight = tuple[str, str, str]            # (letter, stance, note)


def normalise(weights) -> tuple[Weight, ...]:
    """Checked worksheet rows in Art 7(2) order, JSON lists as tuples; bad letters or stances raise
    ValidationError naming the row."""
    if not isinstance(weights, (tuple, list)):
        raise ValidationError("art7", f"expected a list of rows, got {type(weights).__name__}")
    seen: dict[str, Weight] = {}
    for i, w in enumerate(weights):
        name = f"art7[{i}]"
        if not isinstance(w, (tuple, list)) or len(w) != 3 or not all(isinstance(x, str) for x in w):
            raise ValidationError(name, f"expected [letter, stance, note] texts, got {w!r}")
        letter, stance, note = w
        if letter not in BY_LETTER:
            raise ValidationError(name, f"no Art 7(2) point ({letter})", ", ".join(BY_LETTER))
        if stance not in ("", *STANCES):
            raise ValidationError(name, f"unknown stance {stance!r}", "'' (not weighed), " + ", ".join(STANCES))
        if letter in seen:
            raise ValidationError(name, f"point ({letter}) is weighed twice")
        if len(note) > 2000:
            raise ValidationError(name, "note too long", "≤ 2000 characters")
        seen[letter] = (letter, stance, note)
    return tuple(seen[c.letter] for c in CIRCUMSTANCES if c.letter in seen)


@dataclass(frozen=True)
class Weighing:
    rows: tuple[tuple[Circumstance, str, str], ...]     # (circumstance, stance, note)
    lines: tuple[tuple[str, str], ...]                  # (article, what it means for this case)


def weigh(weights, later_improvement: bool = False) -> Weighing:
    """The worksheet with the rules that apply to it, in our words: no score, the court weighs all
    circumstances together (Art 7(1)-(2))."""
    by = {w[0]: w for w in normalise(weights)}
    rows = tuple((c, by.get(c.letter, ("", "", ""))[1], by.get(c.letter, ("", "", ""))[2]) for c in CIRCUMSTANCES)
    toward = [c.letter for c, s, _ in rows if s == "toward"]
    against = [c.letter for c, s, _ in rows if s == "against"]
    lines = [("Art 7(1)-(2)", "The court weighs every circumstance together against the safety a person is "
              "entitled to expect; the worksheet records them, it does not add them up. "
              f"Toward a defect: {', '.join(f'({x})' for x in toward) or 'none'}; "
              f"against: {', '.join(f'({x})' for x in against) or 'none'}.")]
    if "f" in toward:
        lines.append(("Art 10(2)(b), 10(5)", "If the product breaches a mandatory safety requirement meant to protect "
                      "against this kind of damage, the defect is presumed (rebuttable); whether a CRA requirement "
                      "has that purpose is for the court."))
    if "f" in against:
        lines.append(("Art 7(2)(f), Art 11(1)(d)", "Meeting the requirements does not by itself rule out a defect: "
                      "it is one circumstance, and the exemption covers only a defect caused by complying."))
    if later_improvement:
        lines.append(("Art 7(3)", "A better product or a later update or upgrade does not by itself show that "
                      "this product was defective."))
    if "e" in toward or "c" in toward:
        lines.append(("Art 11(2)", "Software, its updates and a missing safety update stay within the "
                      "manufacturer's control: the 'defect arose later' defence does not cover them."))
    return Weighing(rows, tuple(lines))


def distributor_deadline(request_received: date) -> date:
    """Art 8(3)-(4): the last day a distributor (or platform) has to name an EU operator or its own
    supplier: one month after it received the claimant's request (Reg. 1182/71 Art 3(2)(c))."""
    if not isinstance(request_received, date) or hasattr(request_received, "hour"):
        raise ValidationError("request_received", f"expected a date, got {type(request_received).__name__}",
                              "datetime.date")
    if not 2000 <= request_received.year <= 9000:
        raise ValidationError("request_received", f"year {request_received.year} is out of range", "2000-9000")
    return add_months(request_received, 1)
