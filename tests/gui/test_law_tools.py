"""The law panel's working tools: support period and fines, four reporting clocks, the Annex I
checklist; each edits the panel's Params (so it saves with the view) and shows engine numbers."""
from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from PySide6.QtCore import QDate
from PySide6.QtWidgets import QBoxLayout, QVBoxLayout

from engines.law import annex, annex_vii, support
from engines.law.params import Params
from panels.law import LawPanel


def _working_in(p, view):
    """The user works in the tool's tab; tabs not showing draw when shown."""
    p.tabs.setCurrentIndex(next(i for i in range(p.tabs.count())
                                if p.tabs.widget(i) is view or p.tabs.widget(i).isAncestorOf(view)))


def test_support_and_fine_tools_follow_their_controls(make_panel):
    p = make_panel(LawPanel)
    _working_in(p, p.support)
    p.support.placed_edit.setDate(QDate(2028, 2, 29))
    p.update_params(expected_use_years=4.0)
    p.support.updates_edit.setText("2029-01-15, 2031-07-01")
    p.support.updates_edit.editingFinished.emit()
    plan = p.tools_result.support
    assert p.params.cra_placed == "2028-02-29" and p.params.updates == ("2029-01-15", "2031-07-01")
    assert plan.end == support.support_period_end(date(2028, 2, 29), 4) == date(2032, 2, 29)
    assert "29 Feb 2032" in p.support.support_text.text() and "shorter than five years" in p.support.support_text.text()
    assert [u.until for u in plan.updates] == [date(2039, 1, 15), date(2041, 7, 1)]
    p.support.updates_edit.setText("2026-01-01")                       # before placing on the market
    p.support.updates_edit.editingFinished.emit()
    assert "updates[0]" in p.support.support_text.text() and p.tools_result.support_error

    p.support.turnover.setValue(1000.0)
    assert p.tools_result.fine.max_eur == support.max_fine(1e9, 1) == 25e6
    assert "€25.0 M" in p.support.fine_text.text()
    p.support.size_box.setCurrentText("small enterprise")
    p.support.ew_check.setChecked(True)
    assert p.params.early_warning_only and p.tools_result.fine.max_eur == 0
    assert "64(10)(a)" in p.support.fine_text.text()
    p.support.tier_box.setCurrentIndex(1)                               # tier 2: the exemption does not apply
    assert p.params.fine_tier == 2 and p.tools_result.fine.max_eur == 20e6 and not p.support.ew_check.isEnabled()


def test_the_fine_chart_moves_its_dot_and_keeps_its_lines(make_panel):
    """A fine edit redraws the chart with the items it has: the dot and its label at the new fine,
    one legend entry per tier, no item made again."""
    p = make_panel(LawPanel)
    _working_in(p, p.support)
    plot = p.support.fine_plot.getPlotItem()
    p.support.turnover.setValue(1000.0)
    items = list(plot.items)
    lines = p.support._fine_lines
    assert len(lines) == 3 and len(plot.legend.items) == 3
    for item, tier in zip(lines, p.tools_result.fine_curve.tiers):      # each line: its tier's ceiling
        assert item.yData[-1] == pytest.approx(support.max_fine(item.xData[-1] * 1e6, tier.tier) / 1e6)
    dot = p.support._fine_dot
    assert tuple(dot.data["y"]) == (25.0,) and p.support._fine_label.toPlainText() == "you: €25.0 M"
    p.support.size_box.setCurrentText("small enterprise")
    p.support.ew_check.setChecked(True)
    assert list(plot.items) == items and len(plot.legend.items) == 3
    assert tuple(dot.data["y"]) == (0.0,) and p.support._fine_label.toPlainText().strip() == "you: exempt"
    p.support.turnover.setValue(400.0)
    p.support.ew_check.setChecked(False)
    assert tuple(dot.data["x"]) == (400.0,) and tuple(dot.data["y"]) == (support.max_fine(400e6, 1) / 1e6,)


def test_four_clocks_table_and_regime_switches(make_panel):
    p = make_panel(LawPanel)
    _working_in(p, p.four_clocks)
    p.update_params(event="incident", aware="2027-01-28T12:00", classified_at="2027-01-28T20:00")
    rows = [p.four_clocks.table.item(i, 1).text() for i in range(p.four_clocks.table.rowCount())]
    assert rows[0] == "DORA initial notification" and len(rows) == 10
    nis2_final = rows.index("NIS2 final report")
    assert p.four_clocks.table.item(nis2_final, 0).text() == "28 Feb 2027 12:00"        # 31 Jan + 1 month
    p.four_clocks.regime_checks["clock_dora"].setChecked(False)
    assert not p.params.clock_dora and p.four_clocks.table.rowCount() == 7 and not p.four_clocks.classified_edit.isEnabled()
    assert "2025/301" not in p.four_clocks.starts.text()
    for f in ("clock_cra", "clock_nis2", "clock_gdpr"):
        p.four_clocks.regime_checks[f].setChecked(False)
    assert p.four_clocks.table.rowCount() == 0 and not p.four_clocks.clock_error.isHidden()
    p.update_params(clock_gdpr=True)
    assert p.four_clocks.table.rowCount() == 1 and "Art 34(1)" in p.four_clocks.notes.text()


def test_annex_checklist_saves_in_params_and_exports(make_panel, tmp_path):
    p = make_panel(LawPanel)
    _working_in(p, p.annex)
    a = p.annex
    row_b = [it.id for it in annex.ITEMS].index("I.2.b")
    row_sbom = [it.id for it in annex.ITEMS].index("II.1")
    assert a.table.boxes[row_sbom].findData("n/a") == -1                    # Part II applies to every product
    a.table.boxes[row_b].setCurrentIndex(a.table.boxes[row_b].findData("n/a"))
    assert p.params.annex_i == (("I.2.b", "n/a", "", ""),)
    assert "justification" in a.todo.text()
    a.table.item(row_b, 3).setText("no configuration: fixed-function sensor")
    a.table.boxes[row_sbom].setCurrentIndex(a.table.boxes[row_sbom].findData("met"))
    a.table.item(row_sbom, 4).setText("TD 4.2")
    assert p.params.annex_i == (("I.2.b", "n/a", "no configuration: fixed-function sensor", ""),
                                ("II.1", "met", "", "TD 4.2"))
    assert "Still to do" not in a.todo.text()
    vii = p.vii                                                       # the Annex VII tab reads the same answers
    _working_in(p, vii)
    assert "VII(2(b))</b> Part II(1) met (TD 4.2)" in vii.links.text() and "CRA Art 69(2)" in vii.modification.text()
    _working_in(p, a)
    a.table.setCurrentCell(row_sbom, 1)
    assert "“Manufacturers of products with digital elements shall: … identify and document" in a.detail.text()
    assert a.table.isColumnHidden(5)
    a.quotes.setChecked(True)                                         # the OJ text beside each item, a view state
    assert p.params.annex_quotes and not a.table.isColumnHidden(5)
    assert a.table.item(row_sbom, 5).text() == "“… " + annex.BY_ID["II.1"].point_text + "”"
    md = p.export_annex(tmp_path / "c.md", "md").read_text()
    assert "| I(2)(b)" not in md and "| Annex I Part I(2)(b) | Secure by default" in md and "not applicable" in md
    assert "Secure by default" in p.export_annex(tmp_path / "c.html", "html").read_text()
    csv_text = p.export_annex(tmp_path / "c.csv", "csv").read_text()
    assert csv_text.splitlines()[0].startswith("item,point,requirement,article_text") and len(csv_text.splitlines()) == len(annex.ITEMS) + 1
    q = make_panel(LawPanel)                                          # a restored view shows the same answers
    q.set_params(Params(**p.params.to_dict()), record=False)
    _working_in(q, q.annex)
    assert q.annex.table.item(row_sbom, 4).text() == "TD 4.2" and q.annex.table.boxes[row_b].currentData() == "n/a"
    assert not q.annex.table.isColumnHidden(5)


def test_annex_vii_tab_has_answers_of_its_own(make_panel, tmp_path):
    p = make_panel(LawPanel)
    _working_in(p, p.vii)
    v = p.vii
    rows = [pt.id for pt in annex_vii.POINTS]
    r7, r8 = rows.index("7"), rows.index("8")
    assert v.table.boxes[r7].findData("n/a") == -1 and v.table.boxes[r8].findData("n/a") >= 0
    v.table.boxes[r7].setCurrentIndex(v.table.boxes[r7].findData("present"))
    assert p.params.annex_vii == (("7", "present", "", ""),) and "without saying where" in v.todo.text()
    v.table.item(r7, 4).setText("DoC-2027-001.pdf")
    assert p.params.annex_vii == (("7", "present", "", "DoC-2027-001.pdf"),)
    assert "Every answered point" in v.todo.text() and "1 in the file" in v.summary.text()
    v.table.setCurrentCell(r7, 1)
    assert "“The technical documentation referred to in Article 31" in v.detail.text()
    assert "a copy of the EU declaration of conformity”" in v.detail.text()
    md = p.export_vii(tmp_path / "vii.md", "md").read_text()
    assert "| VII(7) | A copy of the EU declaration of conformity |" in md and "DoC-2027-001.pdf" in md
    assert p.export_vii(tmp_path / "vii.csv", "csv").read_text().count("\n") == 11
    assert "annex_vii" in p.views() and "vii_table" in p.views()
    assert p.result()["annex_vii"][r7] == ["7", "present", ""]


def test_tool_views_are_named_and_the_tabs_recorded(make_panel):
    p = make_panel(LawPanel)
    assert {"support", "support_timeline", "fine", "fine_plot", "four_clocks", "clock_starts", "clock_table",
            "clock_timeline", "annex_i", "annex_table", "annex_todo"} <= set(p.views())
    p.set_inner_tabs(["Four clocks"])
    assert p.inner_tabs() == ("Four clocks",)
    assert p.result()["tools"]["clocks"][0][0] == "DORA initial notification"
    p.apply_theme(p.theme)


def test_pld_worksheet_saves_in_params_and_states_art_7_3(make_panel):
    p = make_panel(LawPanel)
    _working_in(p, p.defect)
    w = p.defect
    row_f = [c.letter for c, _s, _n in w.weighing.rows].index("f")
    w.boxes[row_f].setCurrentIndex(w.boxes[row_f].findData("against"))
    w.table.item(row_f, 3).setText("meets the harmonised standard")
    assert p.params.art7 == (("f", "against", "meets the harmonised standard"),)
    assert "Art 11(1)(d)" in w.reading.text() and "Art 7(3)" not in w.reading.text()
    # the reading names what was weighed, with its note (a slide on its own); unweighed rows stay out
    assert "(f) Safety requirements" in w.reading.text() and "against a defect: meets the harmonised" in w.reading.text()
    assert "(a) Presentation" not in w.reading.text()
    w.later.setChecked(True)
    assert p.params.later_improvement and "Art 7(3)" in w.reading.text()
    assert "(d)" in w.exemptions.text() and "Art 15" in w.no_waiver.text()
    p.clock_tab.request_check.setChecked(True)
    p.clock_tab.request_edit.setDate(QDate(2030, 1, 31))
    _working_in(p, p.clock_tab)                                       # the PLD clock reads the request day
    assert p.params.request_day == "2030-01-31" and "28 Feb 2030" in p.clock_tab.pld_result.text()


def test_sbom_tab_opens_files_refuses_broken_ones_and_generates_this_apps(make_panel, qtbot):
    from engines.law import sbom

    corpus = Path(__file__).resolve().parents[1] / "data" / "sbom"
    p = make_panel(LawPanel)
    v = p.sbom
    assert v.findings.text() == "No SBOM open."
    v.example_btn.click()
    assert p.params.sbom_source == ":example" and v.table.rowCount() == 4
    assert "covers the top-level dependencies" in v.findings.text()
    col = [v.table.item(r, 3).text() for r in range(4)]
    assert col.count("top-level") == 3 and col.count("transitive") == 1
    p.update_params(sbom_source=str(corpus / "thermostat-app.spdx.json"))
    assert v.sbom.format == "SPDX-2.3" and v.table.rowCount() == 3
    p.update_params(sbom_source=str(corpus / "broken-truncated.cdx.json"))
    assert not v.error.isHidden() and "not valid JSON" in v.error.text() and v.table.rowCount() == 0
    if not sbom.generator_available():
        pytest.skip("cyclonedx-python-lib not installed")
    v.env_btn.click()
    qtbot.waitUntil(lambda: v.sbom is not None and v.sbom.product == sbom.PROJECT, timeout=120_000)
    assert "covers the top-level dependencies" in v.findings.text() and v.check.absent == ()
    assert p.result()["sbom"]["product"] == sbom.PROJECT


def test_sbom_reading_holds_the_clause_and_the_advisory(make_panel):
    """F2 4's view: what the SBOM holds against the clause and which components the advisory hits,
    one view (the advisory line alone was a short paragraph stretched over a slide)."""
    p = make_panel(LawPanel)
    p.update_params(sbom_source=":example", advisory_source=":example")
    reading = p.view_widget("sbom_reading")
    assert reading.isAncestorOf(p.view_widget("sbom_check")) and reading.isAncestorOf(p.view_widget("sbom_advisories"))
    assert "top-level" in p.view_widget("sbom_check").text() and "openssl" in p.view_widget("sbom_advisories").text()


def test_a_deadline_chart_asks_for_its_least_height_not_its_last(make_panel, qtbot):
    """A graphics view's size hint followed its last size: back from presenter mode the Support and
    fines page kept the chart's presenter height and scrolled in a 1280×800 window (F2 5 and 6)."""
    p = make_panel(LawPanel)
    plot = p.support.support_plot
    plot.resize(900, 700)
    qtbot.wait(10)
    assert plot.sizeHint().height() == plot.minimumHeight() < 700


def test_the_deadline_axis_drops_a_day_tick_that_would_run_into_a_months_name(qapp):
    """F3 6: "Dec" on the 1st and "03" two days later read as one label, "Dec03"."""
    from datetime import datetime, timezone

    from PySide6.QtGui import QFont, QFontMetrics

    from panels._law_views import DayAxis

    axis = DayAxis()
    font = QFont()
    font.setPointSizeF(9.0)                        # whatever size earlier tests left the app's font at
    axis.fontMetrics = QFontMetrics(font)          # set by the first paint in the app
    start, end = (datetime(2026, m, d, tzinfo=timezone.utc).timestamp() for m, d in ((11, 13), (12, 16)))
    levels = dict(axis.tickValues(start, end, 400))
    months = [v for spacing, vals in levels.items() if spacing >= 28 * 86400 for v in vals]
    days = [v for spacing, vals in levels.items() if spacing < 28 * 86400 for v in vals]
    assert months and len(days) >= 4
    step = min(b - a for a, b in zip(days, days[1:]))
    assert all(abs(d - m) >= 0.6 * step for d in days for m in months)


def test_the_deadline_axis_leaves_out_ticks_too_close_to_read(qapp):
    """Sixteen years on 900 px: a month tick every 5 px, each one's text written and measured and
    none drawn. The axis keeps the years; over two years, the months 40 px apart stay."""
    from PySide6.QtGui import QFont, QFontMetrics

    from explorer.ui.tick_grid import MIN_MEAN_GAP_PX
    from panels._law_views import DayAxis

    axis = DayAxis()
    axis.fontMetrics = QFontMetrics(QFont())
    start, year = 1.82e9, 365.25 * 86400
    levels = axis.tickValues(start, start + 16 * year, 900)
    assert [len(vals) for _spacing, vals in levels] == [16]                  # the years only
    per_px = 16 * year / 900
    assert all(spacing / per_px >= MIN_MEAN_GAP_PX for spacing, _vals in levels)
    assert [len(vals) >= 20 for _spacing, vals in axis.tickValues(start, start + 2 * year, 900)] == [False, True]


def test_the_clock_tools_row_never_widens_its_page(qtbot, qapp):
    """The form beside the clock starts is a row only where the row fits; the page's minimum width is
    the column's, so a scroll area just narrower than the row shows a column inside its view (a row's
    minimum widened the page past the view, which made it a column again, round and round)."""
    from PySide6.QtWidgets import QLabel, QLineEdit, QWidget

    from panels._law_tools import _Flow, scrolled

    page = QWidget()
    lay = QVBoxLayout(page)
    flow = _Flow()
    field, note = QLineEdit(), QLabel("clock starts " * 30)
    field.setMinimumWidth(520)
    note.setWordWrap(True)
    note.setMinimumWidth(440)
    flow.addWidget(field, 2)
    flow.addWidget(note, 3)
    lay.addLayout(flow)
    area = scrolled(page)
    qtbot.addWidget(area)
    row = 520 + 440 + max(0, flow.spacing()) + lay.contentsMargins().left() + lay.contentsMargins().right()
    assert flow.minimumSize().width() == 520             # the column's, whichever way the items stand
    for width, side_by_side in ((row + 200, True), (row - 30, False), (row + 200, True), (_Flow.WIDE - 60, False)):
        area.resize(width, 500)
        area.show()
        for _ in range(3):
            qapp.processEvents()
        assert page.width() <= area.viewport().width(), width
        assert (flow.direction() == QBoxLayout.LeftToRight) == side_by_side, width


def test_closing_a_tour_at_the_four_clocks_when_presenting(window, qapp):
    """F3's last step presents the clocks table alone; closing the tour there brings the whole tab back
    at 1280×800, where the tools' row and column used to take turns until the stack overflowed."""
    from explorer.lessons import lesson_tour

    window.resize(1280, 800)
    window.set_presenter(True, full_screen=False)
    try:
        tour = lesson_tour("F3")
        assert window.tour.start(tour, len(tour.steps) - 1)
        for _ in range(20):
            qapp.processEvents()
        window.tour.stop()
        for _ in range(20):
            qapp.processEvents()
        page = window.current_panel().four_clocks
        assert page.width() <= page.parentWidget().width()
    finally:
        window.set_presenter(False)
