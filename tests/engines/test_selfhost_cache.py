"""The self-hosting study's jobs through the result cache: a cached sizing and day equal a fresh
computation, a knob the sizing depends on recomputes it, one it does not (a price) reuses it, and the
comparison computed from a given sizing equals the one that sizes itself."""
from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engines.core import codec
from engines.core.result_cache import ResultCache, engine_call
from engines.core.scenario import Scenario
from engines.selfhost import Params, open_book, sizing_inputs, tco, tco_sizing
from engines.selfhost.operate import day_of_traffic

TODAY = date(2026, 12, 4)


def _quiet(_f: float, _t: str = "") -> None:
    pass


def _never() -> bool:
    return False


@pytest.fixture
def cache(tmp_path):
    return ResultCache(tmp_path / "cache", 10 << 20, version=lambda: "code-1")


@pytest.fixture(scope="module")
def book():
    return open_book(Path("/nonexistent/prices.json"))[0]      # the shipped price book


def _sizing_call(params: Params):
    return engine_call(tco_sizing, *sizing_inputs(Scenario(), params))


def test_a_cached_sizing_and_day_equal_fresh_ones(cache, book):
    params = Params()
    call = _sizing_call(params)
    sizing, origin = cache.run(call, _quiet, _never)
    assert origin is None                                        # computed
    hit, origin = cache.run(_sizing_call(params), _quiet, _never)
    assert origin is not None and codec.same(hit, tco_sizing(*sizing_inputs(Scenario(), params)))
    result = tco(Scenario(), params, book, TODAY, hit)
    assert result.feasible
    day_call = engine_call(day_of_traffic, Scenario(), result, params)
    cache.run(day_call, _quiet, _never)
    day, origin = cache.run(engine_call(day_of_traffic, Scenario(), result, params), _quiet, _never)
    assert origin is not None and codec.same(day, day_of_traffic(Scenario(), result, params))


def test_the_comparison_from_a_given_sizing_equals_the_one_that_sizes_itself(book):
    params = Params()
    sizing = tco_sizing(*sizing_inputs(Scenario(), params))
    assert codec.same(tco(Scenario(), params, book, TODAY, sizing), tco(Scenario(), params, book, TODAY))


def test_a_sizing_knob_recomputes_and_a_price_knob_does_not(cache):
    params = Params()
    cache.run(_sizing_call(params), _quiet, _never)
    traffic = replace(params, traffic_per_s=params.traffic_per_s * 2)
    assert cache.get(_sizing_call(traffic)) is None                          # more traffic: sized again
    cheaper = replace(params, api_price_change_pct=-50.0, fte=2.0)
    assert cache.get(_sizing_call(cheaper)) is not None                      # a price: the same sizing


def test_the_date_is_an_input_of_the_comparison_not_of_the_sizing(book):
    """Price ages depend on the day (an explicit input); the sizing does not."""
    params = Params()
    sizing = tco_sizing(*sizing_inputs(Scenario(), params))
    now = tco(Scenario(), params, book, TODAY, sizing)
    later = tco(Scenario(), params, book, date(TODAY.year + 5, 1, 1), sizing)
    assert later.stale_rows and set(now.stale_rows) < set(later.stale_rows)
