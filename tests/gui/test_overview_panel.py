"""Scenario overview: the headline cards and the chart tours point at."""
from __future__ import annotations

from engines.overview import summarize
from panels.overview import OverviewPanel


def test_tour_views_are_named_and_show_the_headline_numbers(make_panel, ctx):
    """A1 and A2 focus the cards and the chart by these names and quote the numbers they show."""
    assert ctx.scenario.try_update(model="llama3-70b", n_gpus=64) is None
    p = make_panel(OverviewPanel)
    views = p.views()
    assert {"headline", "state_chart", "params", "state", "gpu", "layout", "sharded", "min_gpus"} <= set(views)
    assert views["state_chart"] is p.plot and views["state"] is p.cards["state"]
    assert all(card.parentWidget() is views["headline"] for card in p.cards.values())
    o = summarize(ctx.scenario.value)
    assert "1,128.86 GB" in p.cards["state"].text() and o.training_state_bytes == 16 * o.params
    assert "17.64 GB" in p.cards["sharded"].text() and p.cards["min_gpus"].text() == "15"
