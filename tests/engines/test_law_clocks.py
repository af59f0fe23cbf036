"""The panel's clocks count calendar periods on the local clock: a deadline a month or 14 days after
a moment before a summer-time change keeps its wall-clock time (Reg. 1182/71 Art 3(2)(c)), while
hours stay elapsed hours (Art 3(2)(a))."""
from __future__ import annotations

import time
from datetime import datetime, timedelta

import pytest

from engines.law.clocks import clocks, local_zone
from engines.law.params import Params


@pytest.fixture
def brussels(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Brussels")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def wall(moment: datetime) -> datetime:
    return moment.astimezone(local_zone()).replace(tzinfo=None)


def test_a_month_after_a_notification_crosses_the_end_of_summer_time(brussels):
    """Brussels leaves summer time on 25 Oct 2026: notified 4 Oct 17:30 CEST, final report 4 Nov
    17:30 CET (16:30 UTC), not 16:30 local as a fixed +02:00 offset gave."""
    c = clocks(Params(event="incident", notified=True, aware="2026-10-02T17:30", notified_at="2026-10-04T17:30"))
    assert wall(c.cra.final_report) == datetime(2026, 11, 4, 17, 30)
    assert c.cra.final_report.utcoffset() == timedelta(hours=1)
    assert any("04 Nov 2026 17:30" in line for line in c.cra.lines)


def test_fourteen_days_after_a_fix_cross_the_change_and_hours_stay_elapsed(brussels):
    c = clocks(Params(aware="2026-10-24T12:00", fix_at="2026-10-20T09:00"))
    assert wall(c.cra.final_report) == datetime(2026, 11, 3, 9, 0)
    # 24 and 72 elapsed hours from noon on 24 Oct end at 11:00 local (the night of the 25th has 25 h)
    assert wall(c.cra.early_warning) == datetime(2026, 10, 25, 11, 0)
    assert wall(c.cra.notification) == datetime(2026, 10, 27, 11, 0)


def test_spring_forward_month(brussels):
    """Summer time starts 28 Mar 2027: notified 10 Mar 08:00 CET, final report 10 Apr 08:00 CEST."""
    c = clocks(Params(event="incident", notified=True, aware="2027-03-09T08:00", notified_at="2027-03-10T08:00"))
    assert wall(c.cra.final_report) == datetime(2027, 4, 10, 8, 0)
    assert c.cra.final_report.utcoffset() == timedelta(hours=2)
