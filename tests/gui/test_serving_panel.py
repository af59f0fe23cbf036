"""Serving panel: format controls edit the scenario; the batching timeline and curves come from the engine."""
import pytest

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
    assert "GiB" in p.mem_text.text()


def test_batching_timeline_and_curves(make_panel, ctx):
    p = make_panel(ServingPanel)
    assert set(p.sims) == {"static", "continuous"}
    spec = p.timeline()
    assert spec.n_frames == N_FRAMES
    p.show_frame(N_FRAMES - 1)
    assert "done" in p.batch_plots["continuous"][0].getPlotItem().titleLabel.text
    assert p.sim_tasks.wait(120_000)
    best = p.curves["best"]
    assert best["continuous"] > best["static"]
    assert p.sizing.feasible and p.sizing.replicas >= 1
    assert "GPUs" in p.sizing_text.text()


def test_batch_spin_updates_scenario(make_panel, ctx):
    p = make_panel(ServingPanel)
    p.batch_spin.setValue(4)
    assert ctx.scenario.value.serve_batch == 4
    assert max(r.slot.max() for r in p.sims.values()) <= 3
