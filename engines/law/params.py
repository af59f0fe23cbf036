"""The law panel's knobs as one value: the walk (tree and moves), the example product, the Art 14
reporting clock and the PLD clocks. Moments are ISO strings on this machine's clock
("2026-10-02T17:30"), days ISO dates ("2027-03-15"), so a saved view reads as it was entered."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from engines.core.errors import ValidationError
from engines.law import annex, annex_vii, defect, support
from engines.law.cra import EVENTS
from engines.law.trees import Walk, load_examples, load_trees
from engines.core.params import ParamsBase, param

MOMENTS = ("aware", "fix_at", "notified_at", "classified_at")
DAYS = ("placed", "knowledge", "cra_placed", "request_day")
#: the four-clocks tab's regime switches, in the order the tab shows them
REGIME_FIELDS = ("clock_cra", "clock_nis2", "clock_gdpr", "clock_dora")


def parse_moment(value: object, name: str) -> datetime:
    """A naive local date and time from its ISO text ("2026-10-02T17:30")."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is None:
            return moment
    raise ValidationError(name, f"expected a local date and time, got {value!r}", "YYYY-MM-DDTHH:MM")


def parse_day(value: object, name: str) -> date:
    """A calendar day from its ISO text ("2027-03-15")."""
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValidationError(name, f"expected a date, got {value!r}", "YYYY-MM-DD")


def moment_text(moment: datetime) -> str:
    """The ISO text :func:`parse_moment` reads, to the minute (what the date edits show)."""
    return f"{moment:%Y-%m-%dT%H:%M}"


@dataclass(frozen=True)
class Params(ParamsBase):
    """What the law panel shows: the walk from ``tree`` with the user's ``answers`` (answer ids, and
    ``"continue"`` into a linked tree: :attr:`engines.law.trees.Walk.moves`), the example the
    Start button loads, and the inputs of the two deadline clocks."""

    tree: str = param("cra-scope", choices=tuple(load_trees()), label="Decision tree",
                      tip="The tree the walk starts from")
    example: str = param(next(iter(load_examples())), choices=tuple(load_examples()), label="Example product")
    event: str = param("vulnerability", choices=EVENTS, label="Event")
    fix_available: bool = param(True, label="fix / mitigation available at")
    notified: bool = param(False, label="notification (b) submitted at")
    latent_injury: bool = param(False, label="latent personal injury (Art 17(2))")
    answers: tuple[str, ...] = ()
    aware: str = "2026-10-02T17:30"
    fix_at: str = "2026-10-09T17:30"
    notified_at: str = "2026-10-04T17:30"
    placed: str = "2027-03-15"
    knowledge: str = "2029-06-01"
    # one incident, four clocks (engines.law.reporting); aware, fix_at and event are shared with Art 14
    clock_cra: bool = param(True, label="CRA Art 14")
    clock_nis2: bool = param(True, label="NIS2 Art 23")
    clock_gdpr: bool = param(True, label="GDPR Art 33")
    clock_dora: bool = param(True, label="DORA Art 19")
    classified_at: str = "2026-10-02T21:00"
    # support period, updates and fines (engines.law.support)
    cra_placed: str = "2027-12-11"
    expected_use_years: float = param(5.0, 0.5, 30.0, label="Expected use time", unit="years", step=0.25,
                                      decimals=2, tip="How long the product is expected to be in use (Art 13(8))")
    updates: tuple[str, ...] = ("2028-06-01", "2031-03-15")
    turnover_m_eur: float = param(200.0, 0.0, 1_000_000.0, label="Worldwide annual turnover", unit="M€",
                                  step=10, decimals=1, tip="Of the preceding financial year (Art 64(2)-(4))")
    fine_tier: int = param(1, 1, 3, label="Infringement", choices=(1, 2, 3))
    enterprise: str = param("large", choices=support.ENTERPRISES, label="Enterprise size")
    early_warning_only: bool = param(False, label="only a missed 24 h early warning")
    steward: bool = param(False, label="open-source software steward")
    # Annex I checklist: (item, status, note, evidence) per answered item (engines.law.annex)
    annex_i: tuple = ()
    annex_quotes: bool = param(False, label="Official Journal text beside each item")
    # Annex VII technical documentation: (point, status, note, where in the file) per answered point
    annex_vii: tuple = ()
    # PLD: the Art 7(2) worksheet, (letter, stance, note) per weighed point (engines.law.defect), and the
    # distributor's one-month rule (Art 8(3)) on the clocks tab
    art7: tuple = ()
    later_improvement: bool = param(False, label="a better version or update came out later (Art 7(3))")
    distributor_request: bool = param(False, label="claimant asked the distributor (Art 8(3)) on")
    request_day: str = "2029-07-01"
    # the SBOM tab: "" (none), ":example" (assets/law/example-sbom.cdx.json), ":environment" (what this
    # app's bundle ships, built by the CycloneDX library) or a file path (engines.law.sbom)
    sbom_source: str = param("", hi=4096, label="SBOM")
    # an OSV or CSAF 2.0 file the user downloaded, matched against that SBOM: "" (none), ":example"
    # (assets/law/example-advisory.csaf.json, invented flaws for the example camera) or a path
    advisory_source: str = param("", hi=4096, label="Advisories")

    def __post_init__(self) -> None:
        super().__post_init__()
        answers = self.answers
        if isinstance(answers, list):                       # a JSON round trip gives a list
            answers = tuple(answers)
        if not isinstance(answers, tuple):
            raise ValidationError("answers", f"expected a list of answer ids, got {type(answers).__name__}")
        object.__setattr__(self, "answers", answers)
        self.walk()                                         # refuses moves the walk cannot make
        for name in MOMENTS:
            parse_moment(getattr(self, name), name)
        for name in DAYS:
            parse_day(getattr(self, name), name)
        updates = self.updates
        if not isinstance(updates, (tuple, list)) or len(updates) > 50:
            raise ValidationError("updates", "expected a list of at most 50 ISO dates", "YYYY-MM-DD, …")
        object.__setattr__(self, "updates", tuple(updates))
        for i, text in enumerate(self.updates):
            parse_day(text, f"updates[{i}]")
        support.expected_use_months(self.expected_use_years)
        object.__setattr__(self, "annex_i", annex.normalise(self.annex_i))
        object.__setattr__(self, "annex_vii", annex_vii.normalise(self.annex_vii))
        object.__setattr__(self, "art7", defect.normalise(self.art7))

    def walk(self) -> Walk:
        """A fresh walk from :attr:`tree` that has made :attr:`answers`."""
        w = Walk(self.tree, load_trees())
        w.follow(self.answers)
        return w
