"""The self-hosting panel's engine jobs as cacheable calls (``EngineCall``) of plain frozen inputs, and
the plan a tour prefetches: the serving engine's sizing (seconds) and the simulated day (seconds)."""
from __future__ import annotations

from datetime import date

from engines.core.result_cache import EngineCall, engine_call
from engines.selfhost import PriceBook, Tco, open_book, sizing_inputs, tco, tco_sizing
from engines.selfhost.operate import day_of_traffic


def sizing_call(scenario, params) -> EngineCall:
    """The sizing :func:`engines.selfhost.tco` rests on; a price or staff knob leaves its inputs equal."""
    return engine_call(tco_sizing, *sizing_inputs(scenario, params))


def day_call(scenario, result: Tco, params) -> EngineCall:
    return engine_call(day_of_traffic, scenario, result, params)


def planned(scenario, params, book: PriceBook | None = None, today: date | None = None,
            with_day: bool = False) -> list[EngineCall]:
    """The calls the panel makes for ``params``: the sizing (the slow part, the same on any date). The
    day's inputs include the comparison, which carries today's date and the price book, so a day computed
    ahead would only match on the day it was computed: only ``with_day`` plans it too (planning then
    computes the sizing through the cache, where the prefetch finds it)."""
    from explorer.job_cache import computed
    from panels._selfhost_prices import user_price_path

    first = sizing_call(scenario, params)
    if not with_day:
        return [first]
    if book is None:
        book = open_book(user_price_path())[0]
    result = tco(scenario, params, book, today or date.today(), computed(first))
    return [first, day_call(scenario, result, params)] if result.feasible else [first]
