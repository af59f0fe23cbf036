"""Trading panel: the sliders move the study's curves, the look-ahead job is seeded, views are named for tours."""
from __future__ import annotations

import numpy as np

from engines.trading import price_stack, simulate_lookahead, study
from panels.trading import TradingPanel


def test_views_are_named_for_tours(make_panel):
    p = make_panel(TradingPanel)
    assert {"stack", "stack_chart", "study", "study_cumulative", "study_costs", "study_decay", "study_stats",
            "lookahead", "lookahead_pnl", "lookahead_hits", "lookahead_figures", "cost_bp", "turnover_pct",
            "remedy", "n_prompts"} <= set(p.views())


def test_cost_and_turnover_sliders_move_the_net_curves(make_panel):
    p = make_panel(TradingPanel)
    v = p.study_view
    gross0 = v.gross_curve.getData()[1].copy()
    net0 = v.net_curve.getData()[1].copy()
    assert p.update_params(cost_bp=20.0) is None
    net20 = v.net_curve.getData()[1]
    assert net20[-1] < 0 < net0[-1]                       # a loss at 20 bp, a gain at 10 bp
    assert np.array_equal(v.gross_curve.getData()[1], gross0)
    assert net20[-1] == 100 * study(20.0, 1.9).net_path[-1]
    cost_curve0 = v.cost_curve.getData()[1].copy()
    assert p.update_params(turnover_pct=50.0) is None
    assert v.cost_curve.getData()[1][-1] > cost_curve0[-1]   # less turnover: a flatter line
    assert not v.break_even.isVisible()                    # break-even 68 bp: past the 30 bp axis


def test_stack_text_comes_from_the_engine(make_panel, ctx):
    p = make_panel(TradingPanel)
    r = price_stack(ctx.scenario.value)
    assert p.stack_result == r
    assert f"{r.latency_s * 1e3:,.0f} ms" in p.stack_view.text.text()
    assert "$28.95 per million" in p.stack_view.text.text()
    assert ctx.scenario.try_update(model="llama3-70b") is None
    assert p.stack_result.n_gpus == price_stack(ctx.scenario.value).n_gpus and p.stack_result.latency_s > r.latency_s


def test_lookahead_job_is_seeded_and_the_prompt_remedy_changes_nothing(make_panel):
    p = make_panel(TradingPanel)
    assert p.settle()
    first = p.lookahead_result
    assert np.array_equal(first.daily, simulate_lookahead(seed=1).daily)
    assert p.update_params(remedy="prompt") is None
    assert p.settle()
    assert np.array_equal(p.lookahead_result.daily, first.daily)
    assert p.update_params(remedy="after_cutoff", n_prompts=100) is None
    assert p.settle()
    r = p.lookahead_result
    assert r.evaluated_from == 500 and f"{r.deflated:.2f}" in p.lookahead_view.text.text()


def test_theme_switch_redraws(make_panel, ctx):
    from explorer.theme import THEMES

    p = make_panel(TradingPanel)
    p.apply_theme(THEMES["dark"])
    assert p.study_view.theme is THEMES["dark"] and p.stack_view.theme is THEMES["dark"]
    p.selftest()


def test_study_figures_table_comes_to_rest(window, qapp):
    """H2's figures table, trimmed to whole rows, once laid itself out for ever (a hundred paints a
    second at 1600×1000: column shares of the viewport changed the wrap, which toggled the scroll bar,
    which changed the viewport). Shown and settled, it must stop resizing."""
    import time

    from PySide6.QtCore import QEvent, QObject

    from explorer.lessons import lesson_tour

    class Resizes(QObject):
        count = 0

        def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt name)
            if event.type() == QEvent.Resize:
                self.count += 1
            return False

    for size in ((1600, 1000), (1500, 950), (1280, 800)):
        window.resize(*size)
        assert window.tour.start(lesson_tour("H2"), 0)
        table = window.current_panel().study_view.figures
        assert table.isVisible()
        window.current_panel().settle()
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            qapp.processEvents()
        resizes = Resizes()
        table.viewport().installEventFilter(resizes)
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            qapp.processEvents()
            time.sleep(0.002)
        table.viewport().removeEventFilter(resizes)
        window.tour.stop()
        assert resizes.count == 0, f"at {size} the table resized {resizes.count} times in 0.3 s at rest"
