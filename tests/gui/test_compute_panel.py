"""Compute panel: every view draws the engine's numbers, the links to the scale and serving panels, the
machine measurement in its job slot, and a source behind every figure."""
from __future__ import annotations

import pytest

from engines.compute import (cost_per_gpu_hour, demand, node_power, power_budget, scenario_run, step_network,
                             tokens_per_day)
from panels._compute_machine import _rate_text
from panels.compute import TAB_TITLES, ComputePanel


def test_views_are_named_for_tours(make_panel):
    p = make_panel(ComputePanel)
    assert {"scaling", "frontier", "isoflop", "scaling_readout", "scaling_tables", "experiment", "experiment_losses",
            "experiment_frontier", "demand",
            "demand_chart", "demand_statements", "machine", "machine_flops", "machine_bytes", "allreduce", "market",
            "cost", "cost_bar", "campus", "power", "power_levels", "power_trace", "grid", "lead_times", "deals",
            "fit", "tokens_b", "mfu_pct", "pue", "server_life_years"} <= set(p.views())
    assert [p.tabs.tabText(i) for i in range(p.tabs.count())] == list(TAB_TITLES)


def test_the_scenario_run_is_drawn_from_the_engine(make_panel, ctx):
    p = make_panel(ComputePanel)
    run = scenario_run(ctx.scenario.value, 15e12, 0.4, "besiroglu")
    assert p.study.run == run
    text = p.scaling_view.run_line.text()     # the star's run, under the frontier chart (its tour focus)
    assert "7.23×10²³ FLOP" in text and f"{run.days:,.1f} days" in text and f"on {run.n_gpus:,} GPUs" in text
    assert p.view_widget("frontier").isAncestorOf(p.scaling_view.run_line)
    assert ctx.scenario.try_update(model="llama3-70b") is None
    assert p.study.run.point.N > run.point.N * 8


def test_the_fit_choice_moves_the_frontier_and_the_readout(make_panel):
    p = make_panel(ComputePanel)
    before = p.scaling_view.text.text()
    p.fit_combo.setCurrentText("Hoffmann 2022, printed (rounded)")
    assert p.params.fit == "hoffmann" and p.study.scaling.fit == "hoffmann"
    assert p.scaling_view.text.text() != before and "93 tokens per parameter" in p.scaling_view.text.text()
    assert "(chosen)" in p.scaling_view.fits_table.item(0, 0).text()
    runs, table = p.study.scaling.runs, p.scaling_view.runs_table
    assert [table.item(i, 0).text() for i in range(len(runs))] == [x.label for x in runs]
    notes = [table.item(i, 0).text() for i in range(len(runs), table.rowCount())]   # under the runs, spanning
    assert len(notes) == 2 and table.columnSpan(len(runs), 0) == table.columnCount()
    assert "989 TFLOP/s" in notes[0] and "38–43%" in notes[1]       # what D1 step 2 cites beside the 34.6%


def test_demand_crossover_follows_the_traffic(make_panel, ctx):
    p = make_panel(ComputePanel)
    n = float(ctx.scenario.value.arch.param_count())
    assert p.update_params(serve_req_per_s=10_000.0) is None
    d = p.study.demand
    p.tabs.setCurrentIndex(TAB_TITLES.index("Training vs inference (D1)"))
    assert d.crossover_days == pytest.approx(demand(n, 15e12, tokens_per_day(10_000, 640)).crossover_days)
    assert f"day {d.crossover_days:,.0f}" in p.demand_view.text.text()
    legend = [label.text for _sample, label in p.demand_view.plot.getPlotItem().legend.items]
    assert "inference: 10,000 req/s × 640 tokens" in legend     # the chart alone names the traffic
    assert p.demand_view.table.rowCount() == len(d.statements)


def test_power_and_cost_follow_their_inputs(make_panel, ctx):
    p = make_panel(ComputePanel)
    sc = ctx.scenario.value
    assert p.update_params(pue=1.58) is None
    b = p.study.power.budget
    assert b == power_budget(sc.gpu, sc.n_gpus, sc.gpus_per_node, 1.58, 0.0892, 0.414, 1.0, p.study.run.gpu_hours)
    p.tabs.setCurrentIndex(TAB_TITLES.index("Power (D3)"))
    assert "PUE 1.58" in " ".join(a for a, _ in p.power_view.sources.rows())
    c = p.study.cost.breakdown
    p.tabs.setCurrentIndex(TAB_TITLES.index("Cost of a GPU-hour (D2)"))
    assert c == cost_per_gpu_hour(40_000, 5.0, 11.7e6, node_power(sc.gpu).kw_per_gpu, 15.0, 1.58, 0.0892, 0.8)
    assert f"${c.total:,.2f} per utilised GPU-hour" in p.cost_view.text.text()
    assert p.update_params(server_capex_k=20.0) is None
    assert p.study.cost.breakdown.server == pytest.approx(c.server / 2)


def test_pue_presets_set_the_parameter(make_panel):
    p = make_panel(ComputePanel)
    buttons = [b for b in p.findChildren(type(p.mfu_link)) if b.text().startswith("PUE 1.09")]
    buttons[0].click()
    assert p.params.pue == 1.09 and p.study.power.budget.pue == 1.09


def test_network_view_compares_nvlink_network_and_compute(make_panel, ctx):
    p = make_panel(ComputePanel)
    assert p.study.machine.network == step_network(ctx.scenario.value, 0.5)
    p.tabs.setCurrentIndex(TAB_TITLES.index("One computer (D2)"))
    assert "not measured yet" in " ".join(lbl.text for lbl in p.machine_view.flops_plot.getPlotItem()._label_layer.labels)


def test_showing_the_machine_tab_measures_this_machine(make_panel):
    p = make_panel(ComputePanel)
    p.update_params(gemm_n=256)
    p.tabs.setCurrentIndex(TAB_TITLES.index("One computer (D2)"))
    assert p.settle()
    m = p.measured
    assert m.get("cpu", "gemm").value > 0 and m.get("cpu", "copy").value > 0 and m.get("cpu", "gemm").size == 256
    labels = " ".join(lbl.text for lbl in p.machine_view.flops_plot.getPlotItem()._label_layer.labels)
    assert "not measured yet" not in labels and _rate_text(m.get("cpu", "gemm").value, "FLOP/s") in labels
    assert any("measured here" in src for _, src in p.machine_view.sources.rows())


def test_every_view_lists_its_sources(make_panel):
    p = make_panel(ComputePanel)
    for i in range(p.tabs.count()):
        p.tabs.setCurrentIndex(i)
    for view in (p.scaling_view, p.demand_view, p.machine_view, p.cost_view, p.power_view, p.grid_view):
        rows = view.sources.rows()
        assert rows and all(a and b for a, b in rows)
    assert p.grid_view.deals.rowCount() == 8


def test_links_take_the_scale_and_serving_panels_values(window):
    window.show_panel("scale").update_params(mfu_pct=55)
    window.show_panel("serving").update_params(traffic_per_s=250.0, prompt_tokens=1024, output_tokens=256)
    p = window.show_panel("compute")
    p.mfu_link.click()
    p.traffic_link.click()
    assert p.params.mfu_pct == 55 and p.params.serve_req_per_s == 250.0 and p.params.tokens_per_request == 1280
    assert p.study.run.mfu == 0.55
    for q in window.panels:
        q.cancel_jobs()


def test_theme_switch_redraws(make_panel, ctx):
    p = make_panel(ComputePanel)
    before = p.study.power.budget
    ctx.set_theme("dark")
    assert p.study.power.budget == before and p.scaling_view.theme.name == "dark"


def test_selftest_drives_the_panel(make_panel):
    p = make_panel(ComputePanel)
    p.update_params(gemm_n=256)
    p.selftest()
    assert p.params.fit == "besiroglu"
    gemm = p.measured.get("cpu", "gemm")            # the panel's n and the app's device reached the engine
    assert gemm.size == 256 and gemm.value > 0 and {r.device for r in p.measured.rates} == {"cpu"}
    fresh = make_panel(ComputePanel)                  # the figures follow the params the self-test left,
    assert fresh.update_params(**p.params.to_dict()) is None      # not the ones it passed through
    assert p.params.pue != 1.58 and p.study.power.budget == fresh.study.power.budget
    assert p.study.cost.breakdown == fresh.study.cost.breakdown


def test_a_tour_step_that_switches_the_tab_draws_that_tab_once(window, qtbot, monkeypatch):
    """Back to D3 step 1 from the grid's tab: the step selects the power tab and sets its view in one
    hold. The tab switch drew the stale tab with the study it had, then the recompute drew it again
    (36 of go()'s 68 ms, profiled)."""
    from explorer.lessons import lesson_tour
    from panels._compute_power import PowerView

    drawn = []
    show = PowerView.show_result
    monkeypatch.setattr(PowerView, "show_result", lambda self, study: (drawn.append(study), show(self, study)))
    assert window.tour.start(lesson_tour("D3"), 4)          # the grid's tab, then back to the first step
    qtbot.wait(200)
    try:
        drawn.clear()
        assert window.tour.go(0)
        qtbot.wait(200)
        panel = window.current_panel()
        assert panel.tabs.tabText(panel.tabs.currentIndex()) == "Power (D3)"
        assert len(drawn) == 1 and drawn[0] is panel.study.power
    finally:
        window.tour.stop()


def test_an_edit_draws_the_visible_view_and_hidden_ones_when_shown(make_panel):
    p = make_panel(ComputePanel)
    assert p.cost_view.result is None and p.power_view.budget is None       # never shown yet: never drawn
    assert p.update_params(pue=1.30) is None
    assert p.scaling_view.result is p.study.scaling and p.power_view.budget is None
    p.tabs.setCurrentIndex(TAB_TITLES.index("Power (D3)"))
    assert p.power_view.budget is p.study.power.budget and p.power_view.budget.pue == 1.30
    assert p.update_params(server_capex_k=20.0) is None
    assert p.cost_view.result is None and p.scaling_view.result is not p.study.scaling
    p.tabs.setCurrentIndex(TAB_TITLES.index("Scaling laws (D1)"))
    assert p.scaling_view.result is p.study.scaling


def _chart_items(plot) -> list:
    return [item for item in plot.getPlotItem().items if item.isVisible()]


def _legend_items(plot) -> list:
    legend = plot.getPlotItem().legend
    return [sample.item for sample, _label in (legend.items if legend is not None else ())]


def test_an_edit_gives_the_charts_new_figures_and_keeps_their_items(make_panel):
    """The power, cost, demand and network charts move their bars and lines: an edit used to clear
    each chart and build every bar, line and legend row again."""
    p = make_panel(ComputePanel)
    views = {"Power (D3)": (p.power_view.levels, p.power_view.trace), "Cost of a GPU-hour (D2)":
             (p.cost_view.bar_plot, p.cost_view.campus_plot), "Training vs inference (D1)": (p.demand_view.plot,),
             "One computer (D2)": (p.machine_view.net_plot,)}
    for title in views:
        p.tabs.setCurrentIndex(TAB_TITLES.index(title))
    before = {plot: (_chart_items(plot), _legend_items(plot))
              for plots in views.values() for plot in plots}
    assert p.update_params(pue=1.58, serve_req_per_s=2_000.0, waiting_pct=50) is None
    assert p.study.power.budget.pue == 1.58
    for title in views:
        p.tabs.setCurrentIndex(TAB_TITLES.index(title))
    for plot, (items, legend) in before.items():
        assert _chart_items(plot) == items, plot
        assert _legend_items(plot) == legend
    tr = p.study.power.trace
    busy = [b for b in _chart_items(p.power_view.trace) if hasattr(b, "opts") and "x0" in b.opts]
    assert max(float(max(b.opts["height"])) for b in busy) / 2 == pytest.approx(tr.busy_w / 1e6)
    assert any("facility: IT × PUE 1.58" in lbl.text for lbl in p.power_view.levels.getPlotItem()._label_layer.labels)
    cost = [b for b in _chart_items(p.cost_view.bar_plot) if "x0" in getattr(b, "opts", {})]
    assert sum(float(b.opts["width"][0]) for b in cost) == pytest.approx(p.study.cost.breakdown.total)
    legend = [label.text for _s, label in p.demand_view.plot.getPlotItem().legend.items]
    assert "inference: 2,000 req/s × 640 tokens" in legend
    assert p.update_params(serve_req_per_s=0.0) is None           # never overtakes: the crossover line goes
    p.tabs.setCurrentIndex(TAB_TITLES.index("Training vs inference (D1)"))
    assert p.study.demand.crossover_days == float("inf")
    assert not any(type(i).__name__ == "InfiniteLine" for i in _chart_items(p.demand_view.plot))
