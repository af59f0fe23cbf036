"""Serving panel: format controls edit the scenario; the batching timeline and curves come from the engine."""

from engines.serving import GIB, replica_memory
from panels.serving import N_FRAMES, ServingPanel


def test_format_controls_drive_replica_memory(make_panel, ctx):
    p = make_panel(ServingPanel)
    ctx.scenario.try_update(model="llama3-70b", serve_batch=32, serve_context=8192)
    assert p.memory.kv_bytes == 80 * GIB
    p.weight_combo.setCurrentText("int4 (g128)")
    assert ctx.scenario.value.weight_bits == 4
    assert p.memory == replica_memory(ctx.scenario.value)
    p.kv_combo.setCurrentText("8-bit (fp8/int8)")
    assert p.memory.kv_bytes == 40 * GIB
    assert "GiB" in p.replica.text.text()
    from engines.core.hardware import gpu
    assert f"× {gpu(ctx.scenario.value.gpu).label} (" in p.replica.text.text()   # the GPU's name, not its key
    # int4 sizes every weight at 4.25 bits; the text says so and points to the quantization panel's rule
    assert "4.25 bits" in p.replica.text.text() and "embeddings" in p.replica.text.text()
    p.weight_combo.setCurrentText("bf16 (16-bit)")
    assert "embeddings" not in p.replica.text.text()


def test_batching_timeline_and_curves(make_panel, ctx):
    p = make_panel(ServingPanel)
    assert p.settle(), p.tasks.last_error     # timeline, then load curves, in the background
    assert set(p.sims) == {"static", "continuous"}
    spec = p.timeline()
    assert spec.n_frames == N_FRAMES
    p.show_frame(N_FRAMES - 1)
    assert "48/48 done" in p.batch_plots["continuous"][0].getPlotItem().titleLabel.text
    curves = p.study.curves
    assert curves["continuous"].saturation_rate_per_s > curves["static"].saturation_rate_per_s
    z = p.sizing
    assert z.feasible and z.replicas >= 1 and z.max_rate_per_replica < z.saturation_rate_per_replica
    text = p.sizing_text.text()
    assert "GPUs" in text and f"utilisation {z.utilisation:.0%}" in text
    assert f"{z.at_rate.requests:,} simulated requests" in text and "warm-up" in text and "drain" in text
    # the curves stop at saturation: nothing drawn past it, the saturation line sits there
    for policy, (ttft_curve, _) in p.load.curves.items():
        xs, _ = ttft_curve.getData()
        assert xs.max() < curves[policy].saturation_rate_per_s
        assert p.load.sat_lines[policy].value() == curves[policy].saturation_rate_per_s


def test_headroom_control_changes_the_sizing(make_panel, ctx):
    p = make_panel(ServingPanel)
    assert p.settle(), p.tasks.last_error
    roomy = p.sizing
    p.sliders["max_utilisation_pct"].setValue(50)
    p.sliders["max_utilisation_pct"].valueCommitted.emit(50.0)
    assert p.params.max_utilisation_pct == 50
    assert p.settle(), p.tasks.last_error
    tight = p.sizing
    assert tight.max_utilisation == 0.5 and tight.utilisation <= 0.5 + 1e-9
    assert tight.max_rate_per_replica < roomy.max_rate_per_replica and tight.replicas >= roomy.replicas
    # the knob is part of the undo history, like a scenario edit
    ctx.scenario.undo_stack.undo()
    assert p.params.max_utilisation_pct == 80 and p.sliders["max_utilisation_pct"].value() == 80
    ctx.scenario.undo_stack.redo()
    assert p.params.max_utilisation_pct == 50


def test_a_bad_parameter_is_refused_with_its_range(make_panel, ctx):
    p = make_panel(ServingPanel)
    before = p.params
    assert "max_utilisation_pct" in p.update_params(max_utilisation_pct=120)
    assert p.params is before


def test_batch_spin_updates_scenario(make_panel, ctx):
    p = make_panel(ServingPanel)
    assert p.settle()
    first = p.sims
    p.batch_spin.setValue(4)
    assert ctx.scenario.value.serve_batch == 4 and p.memory.batch == 4     # analytic: at once
    assert p.sims is first                                                 # simulations: debounced
    assert p.settle()
    assert max(r.slot.max() for r in p.sims.values()) <= 3


def test_a_burst_of_edits_simulates_once(make_panel, ctx, qtbot):
    p = make_panel(ServingPanel)
    assert p.settle()
    runs = []
    p.tasks.started.connect(runs.append)
    for batch in (4, 6, 10, 12):
        ctx.scenario.update(serve_batch=batch)
    assert runs == []
    qtbot.waitUntil(lambda: p.sims["static"].max_batch == 12 and p.study is not None
                    and not p.tasks.running, timeout=120_000)
    assert runs == ["simulating batching", "simulating load"]


def test_extreme_scenario_values_show_as_they_are_and_do_not_freeze(make_panel, ctx):
    """The panel's batch box stopped at 1,024 while the scenario allowed 100,000 (it showed 1,024 for
    2,000); a 1.8-million-GPU replica added one line item per GPU and froze the window."""
    import time

    from panels._serving_views import MAX_GPU_LINES

    p = make_panel(ServingPanel)
    ctx.scenario.try_update(serve_batch=2000)
    assert p.batch_spin.value() == 2000
    t0 = time.perf_counter()
    ctx.scenario.try_update(serve_batch=100_000, serve_context=10_000_000)
    assert time.perf_counter() - t0 < 10
    assert p.memory.gpus_needed > MAX_GPU_LINES
    assert len(p.replica.gpu_lines) <= MAX_GPU_LINES and sum(line.isVisible() for line in p.replica.gpu_lines) == 1
    ctx.scenario.try_update(serve_batch=8, serve_context=8192)
    assert sum(line.isVisible() for line in p.replica.gpu_lines) == p.memory.gpus_needed


def test_named_views(make_panel, ctx):
    p = make_panel(ServingPanel)
    views = p.views()
    assert {"replica_memory", "batching", "load", "sizing", "weight_format"} <= set(views)
    assert p.batch_text.parentWidget() is views["batching"]      # the figures stay with the timelines
    assert p.view_widget("traffic_per_s") is p.sliders["traffic_per_s"]


def _count_frames(p) -> list[int]:
    drawn: list[int] = []
    draw = p.show_frame

    def counting(index: int) -> None:
        drawn.append(index)
        draw(index)

    p.show_frame = counting        # the window and the panel both call it through the instance
    return drawn


def test_a_finished_timeline_is_drawn_once_in_the_window(window, ctx):
    p = window.show_panel("serving")
    assert p.settle(), p.tasks.last_error
    drawn = _count_frames(p)
    ctx.scenario.try_update(serve_batch=ctx.scenario.value.serve_batch + 8)   # new simulations
    assert p.settle(), p.tasks.last_error
    assert drawn == [window.ctx.timeline.position]    # the window placed it; the panel did not draw it again
    assert f"{p.sims['continuous'].arrival.size}/" in p.batch_plots["continuous"][0].getPlotItem().titleLabel.text


def test_a_finished_timeline_is_drawn_without_a_window(make_panel, ctx):
    p = make_panel(ServingPanel)
    drawn = _count_frames(p)
    assert p.settle(), p.tasks.last_error
    assert drawn == [p._frame]
