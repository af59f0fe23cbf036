"""One incident, four clocks: CRA Art 14, NIS2 Art 23(4), GDPR Art 33(1) and DORA Art 19 with the
time limits of Del. Reg. 2025/301, on hand-worked dates (month ends, the DORA 24-hour cap)."""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from engines.core.errors import ValidationError
from engines.law.reporting import all_deadlines, deadlines


def table(ds):
    return [(d.name, d.due, d.counts_from) for d in ds]


def test_cra_incident_final_report_counts_from_the_notification_deadline():
    ds = deadlines("cra", datetime(2026, 10, 2, 17, 30))
    assert table(ds) == [("CRA early warning", datetime(2026, 10, 3, 17, 30), "awareness"),
                         ("CRA notification", datetime(2026, 10, 5, 17, 30), "awareness"),
                         ("CRA final report", datetime(2026, 11, 5, 17, 30), "CRA notification")]
    assert ds[0].basis == "CRA Art 14(4)(a)" and "ENISA" in ds[0].recipient and "CSIRT" in ds[0].recipient


def test_cra_vulnerability_final_report_counts_from_the_fix():
    aware = datetime(2026, 10, 2, 17, 30)
    assert len(deadlines("cra", aware, kind="vulnerability")) == 2          # no fix yet, no final date
    ds = deadlines("cra", aware, kind="vulnerability", fix_available=datetime(2026, 10, 20, 9, 0))
    assert ds[-1].due == datetime(2026, 11, 3, 9, 0) and ds[-1].basis == "CRA Art 14(2)(c)"


def test_nis2_month_ends_clamp():
    ds = deadlines("nis2", datetime(2027, 1, 28, 12, 0))
    assert [d.due for d in ds] == [datetime(2027, 1, 29, 12, 0), datetime(2027, 1, 31, 12, 0),
                                   datetime(2027, 2, 28, 12, 0)]        # no 31 February
    leap = deadlines("nis2", datetime(2028, 1, 26, 8, 0))
    assert leap[-1].due == datetime(2028, 2, 29, 8, 0)


def test_gdpr_is_one_72_hour_notification():
    (d,) = deadlines("gdpr", datetime(2027, 2, 27, 23, 0))
    assert d.due == datetime(2027, 3, 2, 23, 0) and d.basis == "GDPR Art 33(1)"


@pytest.mark.parametrize("classified, initial, start", [
    (datetime(2027, 3, 1, 10, 0), datetime(2027, 3, 1, 14, 0), "classification"),
    (datetime(2027, 3, 1, 22, 0), datetime(2027, 3, 2, 2, 0), "classification"),
    (datetime(2027, 3, 2, 6, 0), datetime(2027, 3, 2, 8, 0), "awareness"),      # the 24 h cap decides
    (datetime(2027, 3, 2, 8, 0), datetime(2027, 3, 2, 8, 0), "awareness"),      # classified at the cap itself
    (datetime(2027, 3, 3, 9, 30), datetime(2027, 3, 3, 13, 30), "classification"),  # after 24 h: Art 5(2)
])
def test_dora_initial_is_4_h_after_classification_capped_at_24_h_after_awareness(classified, initial, start):
    ds = deadlines("dora", datetime(2027, 3, 1, 8, 0), classified=classified)
    assert ds[0].due == initial and ds[0].counts_from == start
    assert ds[0].basis.endswith("5(2)") == (classified > datetime(2027, 3, 2, 8, 0))
    assert ds[1].due == initial + timedelta(hours=72) and ds[1].counts_from == ds[0].name
    inter = ds[1].due
    assert ds[2].due == inter.replace(month=inter.month + 1)


def test_each_period_leads_from_its_start_to_its_due_date():
    """The period shown beside a deadline is the one its date was computed with: hours from awareness,
    classification or the earlier report's deadline, or a calendar month / 14 days (CRA Art 14(2)(c))."""
    aware, classified = datetime(2026, 11, 13, 17, 30), datetime(2026, 11, 13, 19, 0)
    ds = all_deadlines(("cra", "nis2", "gdpr", "dora"), aware, classified=classified)
    ds += deadlines("cra", aware, kind="vulnerability", fix_available=datetime(2026, 11, 20, 9, 0))
    by_name = {d.name: d.due for d in ds}
    starts = {"awareness": aware, "classification": classified, "fix available": datetime(2026, 11, 20, 9, 0)}
    for d in ds:
        start = starts.get(d.counts_from, by_name.get(d.counts_from))
        n, unit = d.period.split()
        if unit == "h":
            assert d.due == start + timedelta(hours=int(n)), d
        elif unit == "days":
            assert d.due == start + timedelta(days=int(n)), d
        else:
            assert unit == "month" and n == "1" and d.due == start.replace(month=start.month % 12 + 1), d
    assert sorted({d.period for d in ds}) == ["1 month", "14 days", "24 h", "4 h", "72 h"]


@pytest.mark.parametrize("kwargs, field", [
    ({"regime": "hipaa"}, "regime"),
    ({"regime": "cra", "kind": "breach"}, "kind"),
    ({"regime": "dora"}, "classified"),
    ({"regime": "dora", "classified": datetime(2027, 2, 28)}, "classified"),
    ({"regime": "cra", "kind": "vulnerability", "fix_available": datetime(2027, 3, 1, tzinfo=ZoneInfo("UTC"))},
     "fix_available"),
])
def test_bad_input_names_the_field(kwargs, field):
    regime = kwargs.pop("regime")
    with pytest.raises(ValidationError) as err:
        deadlines(regime, datetime(2027, 3, 1, 8, 0), **kwargs)
    assert err.value.field == field


def test_one_incident_merged_across_a_summer_time_change():
    """Brussels leaves summer time on 25 Oct 2026: the 24 h clocks add real hours, the month keeps
    the wall-clock time."""
    bru = ZoneInfo("Europe/Brussels")
    aware = datetime(2026, 10, 24, 12, 0, tzinfo=bru)
    ds = all_deadlines(("cra", "nis2", "gdpr", "dora"), aware, classified=aware + timedelta(hours=2))
    assert [d.due for d in ds] == sorted(d.due for d in ds)
    first = ds[0]
    assert first.name == "DORA initial notification" and first.due.replace(tzinfo=None) == datetime(2026, 10, 24, 18)
    nis2_final = next(d for d in ds if d.name == "NIS2 final report")
    assert nis2_final.due.replace(tzinfo=None) == datetime(2026, 11, 27, 11, 0)
    assert nis2_final.due.utcoffset() == timedelta(hours=1)
