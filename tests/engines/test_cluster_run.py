"""The cluster run (torchrun, gloo on CPU, NCCL on CUDA) and its measurement file (issue 39)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from engines.core.errors import ValidationError
from engines.core.models import ModelArch
from engines.core.scenario import Scenario
from engines.memory.cluster_run import MEASUREMENT_KIND, command, read_measurement

ROOT = Path(__file__).resolve().parents[2]
TINY = ModelArch(label="tiny llama", layers=2, hidden=64, heads=4, kv_heads=2, ffn=128, vocab=256)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(tmp_path: Path, scenario: Scenario, nproc: int, steps: int = 2) -> Path:
    pytest.importorskip("torch")
    path = tmp_path / "s.json"
    path.write_text(scenario.to_json())
    out = tmp_path / "measured.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    args = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
            "--master-port", str(_port()), "-m", "engines.memory.cluster_run", "--scenario", str(path),
            "--steps", str(steps), "--out", str(out)]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-6000:]   # a rank's own last words come before torchrun's traceback
    return out


def _doc(**changes) -> dict:
    doc = {"schema_version": 1, "kind": MEASUREMENT_KIND,
           "scenario": Scenario(model="custom", arch=TINY, n_gpus=2).to_json_dict(), "world_size": 2,
           "backend": "gloo", "device": "cpu", "memory_kind": "cpu-peak-rss", "torch_version": "2.13.0",
           "steps": 5, "layers": 2,
           "ranks": [{"rank": r, "host": "h", "peak_allocated": 1e6, "peak_reserved": 1e6, "step_seconds": 0.1}
                     for r in range(2)]}
    doc.update(changes)
    return doc


def test_two_cpu_ranks_write_a_measurement_that_reads_back(tmp_path):
    sc = Scenario(model="custom", arch=TINY, n_gpus=2, strategy="zero3", seq_len=32, micro_batch=1)
    m = read_measurement(_torchrun(tmp_path, sc, 2))
    assert m.world_size == 2 and m.backend == "gloo" and m.memory_kind == "cpu-peak-rss"
    assert [r.rank for r in m.ranks] == [0, 1]
    assert all(r.peak_allocated > 10e6 and r.step_seconds > 0 for r in m.ranks)   # a Python process with torch
    assert m.scenario.arch == TINY and m.layers == 2


@pytest.mark.parametrize("change, field", [
    ({"schema_version": 2}, "schema_version"),
    ({"kind": "something else"}, "kind"),
    ({"world_size": 3}, "ranks"),
    ({"memory_kind": "vibes"}, "memory_kind"),
    ({"steps": True}, "steps"),
])
def test_a_broken_file_names_what_is_wrong(tmp_path, change, field):
    p = tmp_path / "m.json"
    p.write_text(json.dumps(_doc(**change)))
    with pytest.raises(ValidationError) as exc:
        read_measurement(p)
    assert exc.value.field == field
    assert "m.json" in str(exc.value)


def test_a_bad_rank_value_is_named(tmp_path):
    doc = _doc()
    doc["ranks"][1]["peak_allocated"] = -1
    p = tmp_path / "m.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ValidationError, match=r"ranks\[1\]\.peak_allocated"):
        read_measurement(p)
    assert read_measurement(_write(tmp_path, _doc())).peak_allocated == 1e6


def _write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "ok.json"
    p.write_text(json.dumps(doc))
    return p


def test_reading_is_bounded(tmp_path):
    p = tmp_path / "big.json"
    p.write_text(" " * (17 * 2**20))
    with pytest.raises(ValidationError, match="larger than"):
        read_measurement(p)


def test_the_command_names_the_module():
    assert command("s.json", 2, 8) == ("torchrun --nnodes 2 --nproc-per-node 8 -m engines.memory.cluster_run "
                                       "--scenario s.json --steps 5 --out measured.json")


@pytest.mark.gpu
def test_cuda_allocated_matches_the_fake_check(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from engines.memory import fake_step

    arch = ModelArch(label="small llama", layers=4, hidden=1024, heads=16, kv_heads=4, ffn=2816, vocab=32000)
    sc = Scenario(model="custom", arch=arch, n_gpus=1, strategy="zero3", seq_len=1024, micro_batch=4,
                  recompute="none")
    m = read_measurement(_torchrun(tmp_path, sc, 1, steps=3))
    fake = fake_step(sc)
    assert m.memory_kind == "cuda-allocated"
    print(f"CUDA max allocated {m.peak_allocated / 1e9:.3f} GB, fake check peak {fake.peak_total / 1e9:.3f} GB")
    assert m.peak_allocated == pytest.approx(fake.peak_total, rel=0.10)


@pytest.mark.parametrize("n_gpus,per_node,tp,nodes,procs", [(2, 8, 1, 1, 2), (64, 8, 1, 8, 8), (64, 8, 2, 8, 8),
                                                             (12, 8, 1, 2, 8)])
def test_launch_commands_run_one_stage_of_ranks_over_whole_nodes(n_gpus, per_node, tp, nodes, procs):
    from engines.memory.cluster_run import launch_commands

    sc = Scenario(model="llama3-8b", n_gpus=n_gpus, gpus_per_node=per_node, tp=tp, strategy="zero3")
    c = launch_commands(sc, "my.json", steps=3)
    assert (c.nodes, c.gpus_per_node) == (nodes, procs)
    for text in (c.torchrun, c.slurm, c.kubernetes):
        assert f"--nnodes {nodes} --nproc-per-node {procs}" in text
        assert "-m engines.memory.cluster_run --scenario my.json --steps 3 --out measured.json" in text
    assert f"#SBATCH --nodes={nodes}" in c.slurm and "srun torchrun" in c.slurm
    assert f"completions: {nodes}" in c.kubernetes and "JOB_COMPLETION_INDEX" in c.kubernetes
    assert ("--rdzv-endpoint" in c.torchrun) == (nodes > 1)
    yaml = pytest.importorskip("yaml")
    service, job = yaml.safe_load_all(c.kubernetes)         # valid YAML a cluster accepts as written
    assert service["spec"]["clusterIP"] == "None" and job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["template"]["spec"]["subdomain"] == service["metadata"]["name"]


def test_overlay_predicts_for_the_layers_the_run_trained(tmp_path):
    from engines.memory import breakdown
    from engines.memory.cluster_run import overlay, parse_measurement

    sc = Scenario(model="custom", arch=TINY.__class__(**{**TINY.__dict__, "layers": 4}), n_gpus=2)
    full = overlay(parse_measurement(_doc(scenario=sc.to_json_dict(), layers=4)), "a.json")
    short = overlay(parse_measurement(_doc(scenario=sc.to_json_dict(), layers=2)), "b.json")
    b = breakdown(sc)
    assert full.predicted == pytest.approx(b.total - b.reserve)
    assert short.predicted < full.predicted and any("--layers" in n for n in short.notes)
    assert any("resident set" in n for n in full.notes)       # CPU peaks are the process's RSS, named
    assert full.pytorch_peak is None and "2 ranks on 1 host" in full.machine
