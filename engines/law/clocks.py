"""The panel's two deadline clocks, computed from its :class:`~engines.law.params.Params`: the CRA
Art 14 reporting clock and the PLD limitation and expiry clocks, each with the lines that explain
it and the marks of its timeline. Moments are read on this machine's clock and made aware in its
time zone (a ``zoneinfo`` zone with its summer-time rules, not today's fixed offset): 24 hours across
a summer-time change are 24 real hours (the engine adds hours in UTC), while 14 days or a month are
calendar periods counted on the local clock and converted afterwards (Reg. 1182/71 Art 3(2)(c)), so
a final report due a month after 17:30 in October is due at 17:30 in November, not 16:30."""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engines.core.errors import ValidationError
from engines.law import cra, defect, pld
from engines.law.params import Params, parse_day, parse_moment

FMT = "%d %b %Y %H:%M"


class Mark(NamedTuple):
    """One line on a deadline timeline; ``kind`` is "event", "deadline" or "rule"."""
    moment: date | datetime
    text: str
    kind: str


def _zone_from(tz: str, localtime: Path) -> tzinfo:
    key = tz.lstrip(":")
    if key:
        try:
            return ZoneInfo(key)
        except (ZoneInfoNotFoundError, ValueError):
            pass                                     # a POSIX rule string: fall back to the system file
    try:
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            return ZoneInfo(target.split("zoneinfo/", 1)[1])
        with localtime.open("rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ZoneInfoNotFoundError, ValueError):
        return datetime.now().astimezone().tzinfo    # last resort: today's offset (no DST rules known)


@lru_cache(maxsize=8)
def _cached_zone(tz: str) -> tzinfo:
    return _zone_from(tz, Path("/etc/localtime"))


def local_zone() -> tzinfo:
    """This machine's time zone with its rules: ``$TZ`` if it names a zone, else /etc/localtime."""
    return _cached_zone(os.environ.get("TZ", ""))


def local(moment: datetime) -> str:
    """A deadline as this machine's clock shows it (its offset may differ from the start's)."""
    return f"{moment.astimezone(local_zone()):{FMT}}"


@dataclass(frozen=True)
class CraClock:
    applies: bool
    early_warning: datetime
    notification: datetime
    final_report: datetime | None
    lines: tuple[str, ...]
    marks: tuple[Mark, ...]

    def deadlines(self) -> dict:
        """As :func:`engines.law.cra.reporting_deadlines` returns them."""
        return {"applies": self.applies, "early_warning": self.early_warning, "notification": self.notification,
                "final_report": self.final_report}


@dataclass(frozen=True)
class PldClock:
    regime: str
    claim_deadline: date
    expiry: date
    lines: tuple[str, ...]
    marks: tuple[Mark, ...]

    def deadlines(self) -> dict:
        return {"regime": self.regime, "claim_deadline": self.claim_deadline, "expiry": self.expiry}


@dataclass(frozen=True)
class Clocks:
    """Each clock, or the error (field and reason) that stops it."""
    cra: CraClock | None
    cra_error: str | None
    pld: PldClock | None
    pld_error: str | None


def _aware(text: str, name: str) -> datetime:
    """The moment on this machine's clock, made aware in its zone (year checked first: year 1 moved
    across a UTC offset leaves datetime's range)."""
    moment = parse_moment(text, name)
    if not cra.FIRST_YEAR <= moment.year <= cra.LAST_YEAR:
        raise ValidationError(name, f"year {moment.year} is out of range",
                              f"a datetime from year {cra.FIRST_YEAR} to {cra.LAST_YEAR}")
    return moment.replace(tzinfo=local_zone())


def cra_clock(p: Params) -> CraClock:
    aware = _aware(p.aware, "aware")
    fix = _aware(p.fix_at, "fix_available") if p.fix_available else None
    notified = _aware(p.notified_at, "notified") if p.notified else None
    d = cra.reporting_deadlines(p.event, aware, fix, notified)
    final_need = "a fix time" if p.event == "vulnerability" else "the notification time"
    lines = (f"<b>Art 14 applies at awareness: {'YES' if d['applies'] else 'NO — applies from 11 Sep 2026 (Art 71(2))'}</b>",
             f"Early warning due: {local(d['early_warning'])} (24 h)",
             f"Notification due: {local(d['notification'])} (72 h)",
             "Final report due: " + (local(d["final_report"]) if d["final_report"] else f"— needs {final_need}"))
    marks = [Mark(aware, "aware", "event"), Mark(d["early_warning"], "24 h early warning", "deadline"),
             Mark(d["notification"], "72 h notification", "deadline")]
    if fix and p.event == "vulnerability":
        marks.append(Mark(fix, "fix available", "event"))
    if notified and p.event == "incident":
        marks.append(Mark(notified, "notified", "event"))
    if d["final_report"]:
        marks.append(Mark(d["final_report"], "final report", "deadline"))
    return CraClock(d["applies"], d["early_warning"], d["notification"], d["final_report"], lines, tuple(marks))


def pld_clock(p: Params) -> PldClock:
    placed, known = parse_day(p.placed, "placed_on_market"), parse_day(p.knowledge, "knowledge")
    lim = pld.limitation(placed, known, p.latent_injury)
    reg = pld.regime(placed)
    lines = (f"<b>Regime: {'Directive (EU) 2024/2853' if reg == '2024/2853' else 'Directive 85/374/EEC (Art 2(1), 21)'}</b>",
             f"Start proceedings by: {lim['claim_deadline']:%d %b %Y} (3 years from knowledge, Art 16)",
             f"Rights expire: {lim['expiry']:%d %b %Y} ({lim['expiry_years']} years, "
             + ("85/374/EEC Art 11)" if reg != "2024/2853" else
                "latent injury, Art 17(2))" if lim["expiry_years"] == 25 else "Art 17(1))"))
    marks = (Mark(placed, "placed on market", "event"), Mark(known, "knowledge", "event"),
             Mark(lim["claim_deadline"], "claim deadline", "deadline"), Mark(lim["expiry"], "expiry", "deadline"),
             Mark(pld.NEW_REGIME_AFTER, "new PLD: after this day", "rule"))
    if p.distributor_request:
        request = parse_day(p.request_day, "request_day")
        due = defect.distributor_deadline(request)
        lines += (f"Distributor must name an EU operator or its supplier by {due:%d %b %Y}, one month after the "
                  f"request, or answer for the product itself (Art 8(3)-(4))",)
        marks += (Mark(request, "request to distributor", "event"), Mark(due, "distributor: name by", "deadline"))
    return PldClock(reg, lim["claim_deadline"], lim["expiry"], lines, marks)


def clocks(p: Params) -> Clocks:
    """Both clocks; an input a clock refuses (a notification before awareness, knowledge before
    placing on the market, a year out of range) stops that clock only, with its reason."""
    out: dict = {}
    for key, fn in (("cra", cra_clock), ("pld", pld_clock)):
        try:
            out[key], out[key + "_error"] = fn(p), None
        except ValidationError as exc:
            out[key], out[key + "_error"] = None, str(exc)
    return Clocks(**out)
