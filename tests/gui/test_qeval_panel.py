"""Quantization-evaluation panel: comparison built and shown, compounding drawn from the engine's law,
the addition model's shipped sweep with its seed, jobs with progress and cancel."""
from __future__ import annotations

import pytest

from engines.qeval import DEFAULT_COMPARISON, QuantConfig
from engines.qeval import addition as A
from engines.qeval.compare import comparison, survival_prediction
from engines.qeval.params import compared_configs, config_code
from engines.qeval.result import Evaluation
from panels.qeval import TAB_TITLES, QevalPanel


def _ev(config: QuantConfig, ppl: float, p: float, budget: str = "quick") -> Evaluation:
    return Evaluation(config=config.canonical(), budget=budget, perplexity=ppl,
                      perplexity_by_domain={"prose": ppl * 1.1, "code": ppl * 0.9}, flip_rate=p, mean_kl=p / 10,
                      survival={t: (1 - 1.5 * p) ** t if p < 0.6 else 0.0 for t in range(1, 129)},
                      task_accuracy={"facts": 0.9 - p, "copy-4": 0.9, "copy-8": 0.8 - p, "copy-16": 0.6 - p},
                      task_items={"facts": 20, "copy-4": 16, "copy-8": 16, "copy-16": 16},
                      flip_profile=(p, p, p), profile_bin=64, measured="test, not a measurement")


def _fill(panel, budget="quick"):
    for i, cfg in enumerate(panel.shown_configs()):
        p = 0.0 if cfg == QuantConfig() else 0.004 + 0.02 * i
        panel.here[(cfg, budget)] = _ev(cfg, 11.0 * (1 + p), p, budget)
    panel._refresh_comparison()


def test_views_are_named_for_tours(make_panel):
    p = make_panel(QevalPanel)
    assert {"comparison", "looks_vs_is", "builder", "survival", "flip_profile", "tasks", "copy_length", "ranking",
            "calibration", "addition", "addition_chart", "model_note"} <= set(p.views())
    assert p.view_widget("weight_bits") is not None and p.view_widget("add_seed") is not None
    assert [p.tabs.tabText(i) for i in range(p.tabs.count())] == list(TAB_TITLES)


def test_the_screen_says_the_baseline_is_the_dequantized_q4_1(make_panel):
    p = make_panel(QevalPanel)
    text = p.view_widget("model_note").text()
    assert "GGUF Q4_1" in text and "de-quantized" in text and "further" in text


def test_building_and_adding_a_configuration(make_panel):
    p = make_panel(QevalPanel)
    n = p.compare_view.table.rowCount()
    assert n == len(p.shown_configs()) >= len(DEFAULT_COMPARISON)      # the shipped calibration rows join them
    assert p.update_params(weight_bits=3, group_size=64, method="gptq", calib_domain="code") is None
    p.add_button.click()
    added = QuantConfig(weight_bits=3, group_size=64, method="gptq", calib_domain="code").canonical()
    assert compared_configs(p.params.compared) == (added,)
    assert p.compare_view.table.rowCount() == n + 1
    assert p.compare_view.table.item(n, 0).text() == added.label()
    assert "Run here" in p.compare_view.table.item(n, 8).text()          # not measured yet, and it says so
    assert p.params.curve == config_code(added)
    p.add_button.click()                                                  # adding twice changes nothing
    assert p.compare_view.table.rowCount() == n + 1


def test_compounding_draws_the_measured_curve_and_the_geometric_prediction(make_panel):
    p = make_panel(QevalPanel)
    _fill(p)
    assert p.update_params(curve=config_code(QuantConfig(weight_bits=8))) is None
    assert p.settle()                                   # its tab is not showing: drawn by settle()
    ev = p.lookup(QuantConfig(weight_bits=8))[0]
    xs, ys = p.compound_view.curve.getData()
    assert ys[-1] == pytest.approx(100 * ev.survival[128])
    _xp, yp = p.compound_view.pred.getData()
    assert yp[-1] == pytest.approx(100 * survival_prediction(ev.flip_rate, [128])[0])
    floor = next(e for (c, _b), e in p.here.items() if c.method == "bf16")
    assert p.compound_view.floor.getData()[1][-1] == pytest.approx(100 * floor.survival[128])
    assert "(1 − p)^t" in p.compound_view.note.text()


def test_tables_rank_and_tasks_follow_the_evaluations(make_panel):
    p = make_panel(QevalPanel)
    _fill(p)
    assert p.settle()                                   # the ranking and tasks tabs are not showing
    t = p.compare_view.table
    assert all(t.item(r, 3).text() != "" for r in range(t.rowCount()))
    assert "here" in t.item(0, 8).text()
    assert p.ranking_view.table.rowCount() == len(p.shown_configs())
    assert p.tasks_view.table.item(0, 1).text().startswith("90 [")        # accuracy with its interval
    curves = list(p.tasks_view.curves)
    assert curves and [c.name() for c in curves] == [c.name() for c in p.tasks_view.length_plot.getPlotItem().curves]
    legend = p.tasks_view.length_plot.getPlotItem().legend
    entries = len(legend.items)
    again = comparison(p.shown_configs(), p.lookup)                     # the same configurations, drawn again:
    p.tasks_view.show_result(again)                                     # the lines are kept, their data set anew
    assert p.tasks_view.curves == curves and len(legend.items) == entries == len(curves)
    for c, e in zip(curves, [e for e in again.evaluations if e.config.label() in {c.name() for c in curves}]):
        assert list(c.getData()[1]) == [100 * e.task_accuracy[k] for k in ("copy-4", "copy-8", "copy-16")]
    assert p.update_params(budget="full") is None                        # nothing measured at full here
    shipped_full = {c for (c, b) in p.shipped if b == "full"}            # what the build machine measured at full
    for r, cfg in enumerate(p.shown_configs()):                          # quick results never stand in for full
        want = "shipped, build machine" if cfg in shipped_full else "not measured at this budget: Run here"
        assert t.item(r, 8).text().startswith(want), (cfg.label(), t.item(r, 8).text())


def test_run_here_measures_in_the_job_slot_and_can_be_cancelled(make_panel, monkeypatch):
    import panels.qeval as module

    calls = []

    def fake_measure(configs, budget, device, progress=None, cancelled=None):
        calls.append((tuple(configs), budget, device))
        for i, _c in enumerate(configs):
            progress(i / len(configs), "measuring")
        return tuple(_ev(c, 11.0 + i, 0.01 * i, budget) for i, c in enumerate(configs))

    monkeypatch.setattr(module, "measure_all", fake_measure)
    monkeypatch.setattr(module, "available", lambda: True)
    p = make_panel(QevalPanel)
    p.run_here(only_missing=True)
    assert p.jobs("measure").wait(10_000)
    assert calls and calls[0][1] == "quick" and calls[0][2] == "cpu"
    assert all((c, "quick") in p.here for c in p.shown_configs())
    assert "here" in p.compare_view.table.item(1, 8).text()
    p.run_here(only_missing=True)                                         # nothing left to measure
    assert len(calls) == 1 and "already measured" in p.error.text()


def test_addition_tab_shows_the_shipped_sweep_and_its_seed(make_panel):
    p = make_panel(QevalPanel)
    run = A.shipped_run(32)
    assert p.addition_run == run
    assert f"Seed {run.seed}" in p.addition_view.facts.text()
    assert "build machine" in p.addition_view.facts.text() or "shipped" in p.addition_view.facts.text()
    assert len(p.addition_view.curves) == len(run.rows)
    xs, ys = p.addition_view.curves[-1].getData()
    assert list(xs) == [1, 2, 3, 4, 5, 6]
    assert list(ys) == pytest.approx([100 * v for v in run.rows[-1].score.exact_match().values()])
    assert p.update_params(add_group=None) is None
    assert p.addition_run.group_size is None and p.addition_view.table.item(4, 0).text() == "W2 per channel"


def test_retraining_runs_as_a_job_and_cancel_keeps_the_view(make_panel):
    p = make_panel(QevalPanel)
    before = p.addition_run
    p.retrain_button.click()
    assert p.jobs("addition").running
    p.jobs("addition").widget().cancel_button.click()
    assert not p.jobs("addition").running
    p.jobs("addition").wait(5_000)
    assert p.addition_run == before
    assert p.jobs("addition").widget().label.text() == "Cancelled."


def test_theme_switch_and_selftest(make_panel, ctx):
    p = make_panel(QevalPanel)
    _fill(p)
    ctx.set_theme("dark")
    assert p.compare_view.table.rowCount() == len(p.shown_configs())
    p.selftest()
    assert p.table() and "configuration" in p.table()[0]


def test_shipped_rows_say_they_were_measured_on_the_build_machine(make_panel):
    from engines.qeval import shipped_evaluations

    p = make_panel(QevalPanel)
    shipped = {e.config.canonical() for e in shipped_evaluations("quick")}
    rows = [r for r, c in enumerate(p.shown_configs()) if c in shipped]
    assert rows, "the default comparison ships measured"
    for r in rows:
        assert p.compare_view.table.item(r, 8).text().startswith("shipped, build machine")
    assert "measured on the" in p.status.text()


def test_the_comparison_is_drawn_once_when_shown_and_again_for_a_new_theme(qtbot, ctx, monkeypatch):
    """Binding applies the theme the views were just drawn in: drawing it all again froze B3's step."""
    from explorer.theme import THEMES

    panel = QevalPanel(ctx)
    qtbot.addWidget(panel)
    draws = []
    monkeypatch.setattr(panel, "_refresh_comparison", lambda: draws.append(1))
    panel.bind()
    assert draws == []
    other = THEMES["dark" if ctx.theme.name == "light" else "light"]
    panel.apply_theme(other)
    assert draws == [1] and panel.compare_view.theme is other
    panel.unbind()


def test_a_redraw_moves_the_same_row_numbers_and_hides_the_spare_ones(make_panel, monkeypatch):
    """Each measured point carries its table row's number. A redraw reuses the labels (making two
    dozen anew took 20 ms of a tour step); with fewer measured rows the spare ones are hidden."""
    import pyqtgraph as pg

    p = make_panel(QevalPanel)
    _fill(p)
    view = p.compare_view

    def labels() -> list:
        return [i for i in view.plot.getPlotItem().items if isinstance(i, pg.TextItem)]

    n = len(p.shown_configs())
    made = labels()
    assert sorted(int(label.toPlainText()) for label in view.labels) == list(range(1, n + 1))
    assert all(label.isVisible() for label in view.labels) and len(made) == n
    unmeasured = set(p.shown_configs()[1::2])                 # every other row: not measured yet
    lookup = p.lookup
    monkeypatch.setattr(p, "lookup", lambda cfg: (None, "") if cfg in unmeasured else lookup(cfg))
    p._refresh_comparison()
    assert labels() == made                                    # the same items, none added or removed
    shown = sorted(int(label.toPlainText()) for label in view.labels)
    assert shown == list(range(1, n + 1, 2))                   # the measured rows' numbers
    assert all(label.isVisible() for label in view.labels)
    assert sum(label.isVisible() for label in made) == len(shown)
