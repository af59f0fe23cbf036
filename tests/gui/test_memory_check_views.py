"""Memory panel: the PyTorch check's step animation and the cluster page (issue 39)."""
from __future__ import annotations

import json

import pytest

from engines.core.models import ModelArch
from engines.core.scenario import Scenario
from engines.memory.cluster_run import MEASUREMENT_KIND, launch_commands
from panels.memory import MemoryPanel

TINY = ModelArch(label="tiny llama", layers=2, hidden=256, heads=8, kv_heads=2, ffn=512, vocab=1024)


def _tiny(ctx) -> None:
    ctx.scenario.try_update(model="custom", arch=TINY, n_gpus=8, gpus_per_node=8, tp=1, pp=1, strategy="zero3",
                            seq_len=128, micro_batch=2, recompute="none")


def _measurement(scenario: Scenario, peaks=(3e9, 3.2e9), **changes) -> dict:
    doc = {"schema_version": 1, "kind": MEASUREMENT_KIND, "scenario": scenario.to_json_dict(),
           "world_size": len(peaks), "backend": "nccl", "device": "NVIDIA H100 80GB HBM3",
           "memory_kind": "cuda-allocated", "torch_version": "2.13.0", "steps": 5, "layers": scenario.arch.layers,
           "ranks": [{"rank": r, "host": f"node{r}", "peak_allocated": p, "peak_reserved": p * 1.1,
                      "step_seconds": 0.5} for r, p in enumerate(peaks)]}
    doc.update(changes)
    return doc


def test_the_check_animates_rank_0_through_the_step(make_panel, ctx):
    _tiny(ctx)
    p = make_panel(MemoryPanel)
    assert p.timeline().name == ""                        # before a check the timeline is the sharding one
    p.update_params(pytorch_check=True)                   # what a tour step sets: the check runs as a job
    assert p.settle()
    t = p.check.timeline
    view = p.step_view
    assert view.cursor.value() == t.peak_index            # opens on the peak
    assert f"{t.peak.total / 1e9:,.2f} GB" in view.readout.text()
    phases = [name for _, name in t.chapters]
    assert phases[:3] == ["start", "forward", "backward"] and phases[-1] == "optimizer"
    # activations grow through the forward and are gone once the backward is done
    fwd_end = max(f.index for f in t.frames if f.phase == "forward")
    assert t.frames[fwd_end].bytes["activations"] > t.frames[1].bytes["activations"]
    opt = [f for f in t.frames if f.phase == "optimizer"][-1]
    assert opt.bytes["activations"] < t.frames[fwd_end].bytes["activations"] / 10
    # the page showing, the panel's timeline is the step's: its frames, its chapters, opening on the peak
    p.measure_view.show_page(view)
    spec = p.timeline()
    assert (spec.name, spec.n_frames, spec.start) == ("step", len(t.frames), t.peak_index)
    assert spec.chapters == list(t.chapters)
    # a timeline frame moves the cursor and the words to that frame's bytes (the sharding view stays)
    sharding = p._frame
    p.show_frame(fwd_end)
    assert view.cursor.value() == fwd_end and p._frame == sharding
    assert f"{t.frames[fwd_end].total / 1e9:,.2f} GB" in view.readout.text()
    assert "forward" in view.readout.text()
    assert p.views()["step"] is view
    p.measure_view.show_page(p.cluster_view)              # another page: the sharding animation again
    assert p.timeline().name == "" and p.timeline().n_frames == len(p.frames)


def test_a_hidden_step_view_draws_its_bands_when_shown(make_panel, ctx):
    _tiny(ctx)
    p = make_panel(MemoryPanel)
    p.update_params(pytorch_check=True)
    assert p.settle()
    view = p.step_view
    assert not view.isVisible() and view._items == []      # the check's page is not shown: nothing laid out
    assert f"{p.check.timeline.peak.total / 1e9:,.2f} GB" in view.readout.text()   # its words are in step
    p.measure_view.show_page(view)
    top = view._items[-2]                                    # the highest band's upper edge: the totals
    assert top.yData is not None and max(top.yData) == pytest.approx(p.check.timeline.peak.total / 1e9)


def test_the_shared_player_drives_the_step_view(window):
    """Keys, play and the timeline dock move the check's step like every animation: the window binds
    the step's spec when its page shows, opens it on the peak, and hands the sharding one back."""
    _tiny(window.ctx)
    p = window.show_panel("memory")
    p.update_params(pytorch_check=True)
    assert p.settle()
    tl, t = window.ctx.timeline, p.check.timeline
    sharding_spec = tl.spec
    p.measure_view.show_page(p.step_view)
    assert tl.spec.name == "step" and tl.n_frames == len(t.frames)
    assert tl.position == t.peak_index and p.step_view.cursor.value() == t.peak_index
    tl.home()                                             # the Home key's action
    assert p.step_view.cursor.value() == 0 and "1 of" in p.step_view.readout.text()
    tl.step(3)                                            # → three times
    assert p.step_view.cursor.value() == 3
    p.lower_tabs.setCurrentIndex(0)                       # the sweep tab: the sharding animation is back
    assert tl.spec == sharding_spec and tl.position == sharding_spec.start


def test_cluster_page_shows_the_launch_commands_of_the_scenario(make_panel, ctx):
    ctx.scenario.try_update(n_gpus=16, gpus_per_node=8, tp=1, pp=1)
    p = make_panel(MemoryPanel)
    text = p.cluster_view.text.toPlainText()
    cmds = launch_commands(ctx.scenario.value)
    assert cmds.nodes == 2 and cmds.gpus_per_node == 8
    assert "--nnodes 2 --nproc-per-node 8" in text and "srun torchrun" in text and "kind: Job" in text
    ctx.scenario.try_update(n_gpus=8)                     # an edit reaches the page
    assert "--nnodes 1 --nproc-per-node 8" in p.cluster_view.text.toPlainText()
    p.cluster_view.copy("torchrun")
    from PySide6.QtGui import QGuiApplication
    assert QGuiApplication.clipboard().text() == launch_commands(ctx.scenario.value).torchrun


def test_open_measurement_overlays_ranks_and_a_broken_file_changes_nothing(make_panel, ctx, tmp_path):
    p = make_panel(MemoryPanel)
    good = tmp_path / "measured.json"
    good.write_text(json.dumps(_measurement(ctx.scenario.value)))
    assert p.open_measurement(str(good)) is None
    t = p.cluster_view.table
    assert t.rowCount() == 2 and t.item(1, 1).text() == "node1" and t.item(1, 2).text() == "3.20 GB"
    from engines.memory import breakdown
    b = breakdown(ctx.scenario.value, options=p.params.options)
    assert t.item(0, 5).text() == f"{(b.total - b.reserve) / 1e9:,.2f} GB"     # our prediction beside it
    assert "NVIDIA H100" in p.cluster_view.note.text() and "2 hosts" in p.cluster_view.note.text()
    assert p.measure_view.current_page() is p.cluster_view
    bad = tmp_path / "broken.json"
    bad.write_text(json.dumps(_measurement(ctx.scenario.value, memory_kind="gpu-vibes")))
    err = p.open_measurement(str(bad))
    assert err and "broken.json" in err and "memory_kind" in err and "\n" not in err
    assert err in p.cluster_view.note.text()
    assert t.rowCount() == 2 and t.item(1, 2).text() == "3.20 GB"           # the last good file stays
    missing = p.open_measurement(str(tmp_path / "nowhere.json"))
    assert missing and "nowhere.json" in missing


@pytest.mark.parametrize("peaks", [(1e9,), (1e9, 2e9, 3e9, 4e9)])
def test_the_pytorch_check_peak_shows_beside_a_measurement_of_its_scenario(make_panel, ctx, tmp_path, peaks):
    _tiny(ctx)
    p = make_panel(MemoryPanel)
    f = tmp_path / "m.json"
    f.write_text(json.dumps(_measurement(ctx.scenario.value, peaks)))
    assert p.open_measurement(str(f)) is None
    assert p.cluster_view.table.item(0, 6).text() == "—"      # no check yet
    p.measure_view.check_button.click()                        # the check joins the open measurement
    assert p.settle()
    assert p.cluster_view.table.item(0, 6).text() == f"{p.check.fake.peak_total / 1e9:,.2f} GB"
    other = ctx.scenario.value.with_changes(seq_len=64)
    f.write_text(json.dumps(_measurement(other, peaks)))
    assert p.open_measurement(str(f)) is None
    assert p.cluster_view.table.item(0, 6).text() == "—" and "another scenario" in p.cluster_view.note.text()


def test_file_menu_opens_a_measurement_on_the_memory_panel(window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    f = tmp_path / "cluster.json"
    f.write_text(json.dumps(_measurement(window.ctx.scenario.value, (5e9,))))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(f), "")))
    window.show_panel("overview")
    action = next(a for a in window.menuBar().actions()[0].menu().actions() if a.text() == "Open measurement…")
    action.trigger()
    panel = window.current_panel()
    assert panel.key == "memory" and panel.cluster_view.table.item(0, 2).text() == "5.00 GB"
    assert "cluster.json" in panel.cluster_view.note.text()


def test_json_and_csv_exports_carry_the_check_table(window, tmp_path):
    """File ▸ Export as JSON / CSV: once the check has run, the comparison table (category, ours,
    PyTorch's, why) comes with the export; before it, nothing of it."""
    import csv

    _tiny(window.ctx)
    p = window.show_panel("memory")
    window.export("json", tmp_path / "before.json")
    assert "pytorch_check" not in json.loads((tmp_path / "before.json").read_text())["result"]
    p.update_params(pytorch_check=True)
    assert p.settle()
    doc = json.loads(window.export("json", tmp_path / "m.json").read_text())["result"]["pytorch_check"]
    diffs = {d.category: d for d in p.check.diffs}
    assert [r["category"] for r in doc["rows"]] == list(diffs)
    for r in doc["rows"]:
        d = diffs[r["category"]]
        assert (r["ours"], r["pytorch"], r["why"]) == (d.ours, d.pytorch, d.reason) and r["why"]
    lines = window.export("csv", tmp_path / "m.csv").read_text().splitlines()
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    checked = [r for r in rows if r["check_category"]]
    assert [r["check_category"] for r in checked] == list(diffs)
    total = checked[-1]
    assert float(total["pytorch_GB"]) == pytest.approx(p.check.fake.peak_total / 1e9, abs=1e-4)
    assert total["why"] == diffs["total"].reason and any(r["strategy"] == "zero3" for r in rows)
