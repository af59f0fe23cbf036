"""Self-hosting panel: a scenario or traffic change moves the cost as the formulas say, the price file is
validated before it is used, prices show their age, the privacy walk follows the buttons."""
from __future__ import annotations

import json
from datetime import date

import pytest

from engines.selfhost import api_monthly_cost, dump_prices, load_prices, replicas_for_peak
from engines.serving.params import workload
from engines.serving.steady import size_deployment
from panels.selfhost import SelfHostPanel, user_price_path


def _panel(make_panel):
    p = make_panel(SelfHostPanel)
    p.today = date(2026, 12, 1)
    assert p.settle()
    return p


def _expected(p, scenario):
    """The fleet and its GPU bill computed here from the serving engine and the formulas."""
    q = p.params
    sizing = size_deployment(scenario, q.traffic_per_s * q.peak_to_average, q.target, "continuous",
                             workload(q, scenario.serve_context, 1.0, seed=1), q.max_utilisation_pct / 100)
    rate = q.efficiency_pct / 100 * sizing.max_rate_per_replica
    replicas = replicas_for_peak(q.traffic_per_s * q.peak_to_average, rate, q.spares)
    price = p.book.rental_row(q.gpu_offer, scenario.gpu).usd_per_gpu_hour
    return sizing, replicas, price * sizing.gpus_per_replica * replicas * 730


def test_views_are_named_for_tours(make_panel):
    p = make_panel(SelfHostPanel)
    assert {"cost", "cost_chart", "bill", "api", "gpu_offer", "ownership", "prices", "privacy", "privacy_card", "day",
            "capacity", "upgrade", "security", "retire", "traffic_per_s", "day_usd_per_mtok"} <= set(p.views())


def test_a_traffic_or_scenario_change_moves_the_cost_as_the_formulas_say(make_panel, ctx):
    p = _panel(make_panel)
    t0 = p.result_tco
    sizing, replicas, gpu_month = _expected(p, ctx.scenario.value)
    assert t0.sizing.max_rate_per_replica == pytest.approx(sizing.max_rate_per_replica)
    assert t0.replicas == replicas and t0.gpu_monthly == pytest.approx(gpu_month)

    assert p.update_params(traffic_per_s=60.0) is None
    assert p.settle()
    t1 = p.result_tco
    sizing, replicas, gpu_month = _expected(p, ctx.scenario.value)
    assert t1.replicas == replicas > t0.replicas and t1.gpu_monthly == pytest.approx(gpu_month)
    assert t1.api_monthly == pytest.approx(3 * t0.api_monthly)            # the API bill is linear in traffic
    assert t1.api_monthly == pytest.approx(api_monthly_cost(60.0, 512, 128, 0.15, 0.60))

    assert ctx.scenario.try_update(serve_batch=64) is None                  # a scenario change re-sizes
    assert p.settle()
    t2 = p.result_tco
    sizing, replicas, gpu_month = _expected(p, ctx.scenario.value)
    assert t2.sizing.max_rate_per_replica == pytest.approx(sizing.max_rate_per_replica) != t1.rate_per_replica
    assert t2.replicas == replicas and t2.gpu_monthly == pytest.approx(gpu_month)
    assert str(f"{t2.self_monthly:,.0f}") in p.cost_view.bill.text().replace("$", "")


def test_a_broken_price_file_explains_itself_and_changes_nothing(make_panel):
    p = _panel(make_panel)
    before = p.book
    doc = json.loads(dump_prices(p.book))
    doc["api"][0]["date"] = "yesterday"
    error = p.use_price_text(json.dumps(doc), "test")
    assert error and "api[0].date" in error
    assert "api[0].date" in p.price_error.text() and "nothing changed" in p.price_error.text()
    assert p.book is before and not user_price_path().exists()


def test_an_edited_price_is_saved_validated_and_used(make_panel):
    p = _panel(make_panel)
    doc = json.loads(dump_prices(p.book))
    row = next(r for r in doc["api"] if r["id"] == p.params.api)
    row["output_per_mtok"] = 1.20
    assert p.use_price_text(json.dumps(doc), "test") is None
    assert user_price_path().exists()
    assert p.settle()
    assert p.result_tco.api_price_out == 1.20
    p.restore_prices()
    assert not user_price_path().exists() and p.book == load_prices()


def test_prices_show_their_age_and_stale_ones_are_marked(make_panel):
    p = _panel(make_panel)
    table = p.price_table.table
    ages = {table.item(i, 0).text().lstrip("▶ "): table.item(i, 1).text() for i in range(table.rowCount())}
    dgx = next(v for k, v in ages.items() if "DGX H100" in k)
    assert "STALE" in dgx
    fresh = next(v for k, v in ages.items() if "GPT-4o-mini" in k)
    assert fresh == "today" and "STALE" not in fresh
    assert "observed 2026-12-01, today" in p.cost_view.bill.text()


def test_no_break_even_is_said_plainly(make_panel, ctx):
    p = _panel(make_panel)
    assert p.update_params(api="groq/llama-3.1-8b-instant") is None
    assert p.settle()
    assert p.result_tco.never
    assert "Cannot break even at any utilisation" in p.cost_view.verdict.text()


def test_the_privacy_walk_follows_the_buttons(make_panel):
    p = make_panel(SelfHostPanel)
    p.tabs.setCurrentIndex(2)
    p.privacy.buttons[1].click()                       # "No: open weights we run"
    assert p.params.privacy_answers == ("no",)
    labels = [b.text() for b in p.privacy.buttons]
    p.privacy.buttons[labels.index("▸ Our own servers")].click()
    assert p.privacy.walk.current.id == "o_onprem"
    assert p.privacy.continue_btn.isVisibleTo(p)
    p.privacy.continue_btn.click()
    assert p.privacy.walk.tree.key == "selfhost-rules"
    p.privacy.back_btn.click()
    assert p.privacy.walk.current.id == "o_onprem"


def test_a_tour_step_on_the_privacy_walk_shows_the_outcome_whole(make_panel, qtbot):
    """C1 step 1 on a 1280x800 slide: the outcome (the ~30 days of logs the caption cites) was half scrolled
    away below the article. Pointing a step at the walk folds the other parts behind one button instead."""
    p = make_panel(SelfHostPanel, size=(1000, 480))
    p.tabs.setCurrentIndex(2)
    p.update_params(privacy_answers=("yes", "no"))
    card = p.privacy.card
    qtbot.waitUntil(lambda: card.viewport().height() > 100)
    width, room = card.viewport().width(), card.viewport().height()
    assert card.body.layout().totalHeightForWidth(width) > room        # too tall to show whole: the case at hand
    assert p.view_widget("privacy") is p.privacy
    assert card.outcome.isVisible() and "30 days" in card.outcome.text()
    assert not card.source.isVisible() and card.more_btn.isVisible()
    top = card.outcome.mapTo(card.body, card.outcome.rect().topLeft()).y() - card.verticalScrollBar().value()
    assert top >= 0 and top + card.outcome.height() <= room          # on screen, uncut
    card.more_btn.click()
    assert card.source.isVisible()


def test_operating_views_are_drawn_from_the_engine(make_panel, ctx):
    p = _panel(make_panel)
    assert p.day is not None and len(p.day.hours) == 24
    assert p.months[0].replicas == p.result_tco.replicas
    text, signals = p.retire_text.text(), p.signals
    assert len(signals) >= 4                                              # every computed signal is listed …
    for s in signals:                                                     # … in its own state, not just any
        assert f"{'● FIRING' if s.firing else '○ quiet'}: {s.name} — " in text, s.name
    firing = sum(s.firing for s in signals)
    assert (f"{firing} of {len(signals)} retirement signals are firing" if firing
            else "No retirement signal is firing") in text
    assert p.update_params(upgrade_days=6.0) is None                     # cheap: no new sizing
    assert p.upgrade.blue_green_usd == pytest.approx(
        p.result_tco.gpu_price.usd_per_gpu_hour * p.result_tco.gpus * 24 * 6)


def test_a_tall_hidden_page_does_not_stretch_the_page_shown(make_panel):
    """The retirement text, wrapped narrow, is the tallest operations page; it used to set the stack's
    minimum, pushing the day's charts past a 1280×800 slide (C2 steps 2–5)."""
    p = _panel(make_panel)
    p.resize(640, 700)
    p.tabs.setCurrentIndex(3)
    retire = p.ops_tabs.widget(p.ops_tabs.count() - 1)
    p.retire_text.setText("a long retirement note, " * 120)   # as tall as presenter text makes it
    p.ops_tabs.setCurrentIndex(0)
    tall = retire.minimumSizeHint().height()
    shown = p.ops_tabs.currentWidget().minimumSizeHint().height()
    assert tall > shown + 50                                  # the case: a hidden page much taller
    assert p.ops_tabs.minimumSizeHint().height() < tall       # it no longer sets the minimum
    p.ops_tabs.setCurrentIndex(p.ops_tabs.count() - 1)
    assert p.ops_tabs.minimumSizeHint().height() >= tall      # shown, its text keeps its room


def test_the_price_table_moves_its_marks_and_refills_only_for_a_new_book_or_day(qapp):
    from datetime import date

    from engines.selfhost import load_prices
    from panels._selfhost_prices import PriceTable, book_rows

    book, today = load_prices(), date(2026, 12, 4)
    ids = [r["id"] for r in book_rows(book, today)]
    view = PriceTable()
    view.show_book(book, today, "shipped", {ids[0]})
    table = view.table
    price_cell = table.item(1, 2)

    def marked() -> list[int]:
        return [i for i in range(table.rowCount()) if table.item(i, 0).text().startswith("▶ ")]

    assert marked() == [0]
    view.show_book(book, today, "shipped", {ids[1], ids[2]})
    assert marked() == [1, 2] and table.item(1, 2) is price_cell          # marks moved, cells kept
    later = date(2028, 1, 1)                                               # another day: ages change
    view.show_book(book, later, "shipped", {ids[1]})
    assert marked() == [1] and table.item(1, 2) is not price_cell
    assert all("STALE" in table.item(i, 1).text() for i in range(table.rowCount()))   # all over a year old
