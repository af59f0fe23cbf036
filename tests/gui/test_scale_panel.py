"""Training-at-scale panel: drive its real controls and check the engine state behind the view."""
import pytest

from engines.scale import daly_interval, job_mtbf, llama3_interruptions, young_interval
from panels.scale import N_FRAMES, ScalePanel


def test_sliders_drive_mfu_and_checkpoint_optima(make_panel, ctx):
    p = make_panel(ScalePanel)
    p.sliders["mfu_pct"].setValue(43)
    p.sliders["mfu_pct"].valueCommitted.emit(43.0)
    assert p.params.mfu_pct == 43 and p.analysis.throughput.mfu == pytest.approx(0.43)
    p.sliders["checkpoint_min"].setValue(5.0)
    p.sliders["checkpoint_min"].valueCommitted.emit(5.0)
    assert p.params.checkpoint_min == 5.0
    m = job_mtbf(ctx.scenario.value.n_gpus, llama3_interruptions().gpu_mtbf_seconds)
    assert p.analysis.checkpoint.young_seconds == pytest.approx(young_interval(300, m))
    assert p.analysis.checkpoint.daly_seconds == pytest.approx(daly_interval(300, m))
    assert "MFU 43%" in p.gauge_view.formula.text()
    ctx.scenario.undo_stack.undo()                 # a knob edit is an undo step; the view follows it back
    assert p.params.checkpoint_min == 1.0 and p.sliders["checkpoint_min"].value() == pytest.approx(1.0)
    assert p.analysis.checkpoint.checkpoint_seconds == 60.0


def test_llama3_preset_and_timeline(make_panel, ctx):
    p = make_panel(ScalePanel)
    p.llama_button.click()
    s = ctx.scenario.value
    assert (s.n_gpus, s.model, s.tp, s.pp) == (16384, "llama3-405b", 8, 16)
    assert p.analysis.checkpoint.mtbf_seconds / 60 == pytest.approx(185.6, abs=0.05)
    assert p.settle(), p.tasks.last_error          # the run is simulated in the background
    assert p.run.mtbf_seconds == pytest.approx(p.analysis.checkpoint.mtbf_seconds)
    assert p.sim.mean.shape == (5,)
    spec = p.timeline()
    assert spec.n_frames == N_FRAMES and len(spec.chapters) > 1
    p.show_frame(N_FRAMES - 1)
    assert "failures" in p.run_view.text.text()
    assert p.run.failures and p.run_view.failures.data.size == len(p.run.failures)
    assert p.run.progress_at(p.run.wall_seconds) == pytest.approx(p.run.work_seconds)


def test_edits_are_analytic_at_once_and_simulated_once_after_a_burst(make_panel, ctx, qtbot):
    p = make_panel(ScalePanel)
    assert p.settle()
    first = p.run
    for n in (128, 256, 512):                            # a burst of edits: analytic answers follow each one
        ctx.scenario.update(n_gpus=n)
        assert p.analysis.checkpoint.mtbf_seconds == pytest.approx(job_mtbf(n, llama3_interruptions().gpu_mtbf_seconds))
    assert p.run is first and not p.tasks.running       # the old run stays visible while the edits settle
    qtbot.waitUntil(lambda: p.run is not first and not p.tasks.running, timeout=60_000)
    assert p.run.mtbf_seconds == pytest.approx(p.analysis.checkpoint.mtbf_seconds)


def test_mfu_edits_keep_the_simulation(make_panel):
    p = make_panel(ScalePanel)
    assert p.settle()
    sim = p.sim
    assert p.update_params(mfu_pct=55) is None
    assert p.sim is sim and not p.tasks.running and p.analysis.throughput.mfu == pytest.approx(0.55)


def test_zoom_follows_the_cursor(make_panel):
    p = make_panel(ScalePanel)
    assert p.settle()
    p.show_frame(N_FRAMES // 2)
    lo, hi = p.run_view.plot.viewRange()[0]
    intervals = (hi - lo) * 3600 / (p.run.interval_seconds + p.run.checkpoint_seconds)
    assert intervals == pytest.approx(12, rel=0.05)
    p.zoom_box.setCurrentIndex(p.zoom_box.count() - 1)    # whole run
    assert p.params.zoom_intervals == 0
    lo, hi = p.run_view.plot.viewRange()[0]
    assert hi * 3600 >= p.run.wall_seconds


def test_every_checkpoint_in_view_is_drawn_at_least_two_pixels_wide(make_panel, ctx):
    """A checkpoint of a minute or two is a fraction of a pixel when the view spans the whole run;
    before, most were not drawn. Each is drawn MIN_SPAN_PX wide, and every one in view is drawn."""
    from panels._scale_views import MIN_SPAN_PX

    p = make_panel(ScalePanel)
    p.llama_button.click()
    assert p.settle(), p.tasks.last_error
    p.zoom_box.setCurrentIndex(p.zoom_box.count() - 1)        # whole run
    p.show_frame(N_FRAMES - 1)
    vb = p.run_view.plot.getViewBox()
    lo, hi = vb.viewRange()[0]
    px_per_hour = vb.width() / (hi - lo)
    opts = p.run_view.spans["checkpoint"].opts
    starts, _ends = p.run.kind_arrays["checkpoint"]
    assert len(opts["x0"]) == len(starts) > 10                 # every checkpoint of the run is there
    assert min(opts["width"]) * px_per_hour >= MIN_SPAN_PX - 0.01
    assert p.run.checkpoint_seconds / 3600 * px_per_hour < 1   # which it would not be at its true width


def test_bad_gpu_count_is_shown_inline(make_panel, ctx):
    p = make_panel(ScalePanel)
    ctx.scenario.try_update(tp=8)
    p.gpus_spin.setValue(12)           # not a multiple of TP 8
    assert p.error.isVisible() and "n_gpus" in p.error.text()


def test_optimum_labels_never_overlap(make_panel, ctx):
    """Young's and Daly's intervals are nearly equal when checkpoints are cheap: each label sits on
    the outer side of its own line, so the two never cover each other."""
    p = make_panel(ScalePanel)
    for delta in (0.1, 1.0, 30.0):             # Young below Daly, nearly equal, and the other way round
        p.sliders["checkpoint_min"].setValue(delta)
        p.sliders["checkpoint_min"].valueCommitted.emit(delta)
        young, daly = p.goodput_view.optimum_labels.rects()
        assert not young.intersects(daly), delta


def test_tour_views_are_named(make_panel):
    """Tour steps focus and highlight these names (assets/tours/A4.json)."""
    p = make_panel(ScalePanel)
    views = p.views()
    assert {"mfu", "goodput", "run", "cluster", "triage", "gpus", "llama3"} <= set(views)
    assert p.goodput_view.plot.parentWidget() is views["goodput"] and p.run_view.plot.parentWidget() is views["run"]
    assert p.cluster_view.plot.parentWidget() is views["cluster"] and views["triage"] is p.cluster_view.triage
    for name in ("mfu_pct", "checkpoint_min", "restart_min", "zoom_intervals"):
        assert p.view_widget(name) is not None
