"""Measured on your cluster: the fake check's FSDP2 model and set-up, run for real on every rank.

Launch (one process per GPU; gloo on CPUs when there is no CUDA):

    torchrun --nnodes N --nproc-per-node G -m engines.memory.cluster_run --scenario s.json --steps 5 \
        --out measured.json

Each rank trains ``steps`` steps of the scenario's busiest pipeline stage (:mod:`engines.memory.fake_check`
builds and shards it: one code path) and records its peak memory and median step time; rank 0 writes
one versioned JSON file (atomically) that :func:`read_measurement` reads back, validated and bounded.
Peak memory is ``torch.cuda.max_memory_allocated`` / ``max_memory_reserved`` on CUDA; on CPU, where
torch keeps no allocator statistics, the process's peak resident set (``getrusage``), named as such.
Results travel between ranks as fixed-size tensors (no pickled objects).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from engines.core.errors import ValidationError
from engines.core.reading import read_json
from engines.core.scenario import Scenario
from engines.core.versioned import upgrade

MEASUREMENT_VERSION = 1
MEASUREMENT_KIND = "ai-systems-explorer/measurement"
MAX_BYTES = 16 * 2**20
"""A measurement file of 100,000 ranks is about 12 MB; anything larger is not one of ours."""
MAX_RANKS = 100_000
_HOST_BYTES = 64
MEMORY_KINDS = ("cuda-allocated", "cpu-peak-rss")


@dataclass(frozen=True)
class RankMeasurement:
    """One rank's peaks (bytes) and median step time (seconds)."""

    rank: int
    host: str
    peak_allocated: float
    peak_reserved: float
    step_seconds: float


@dataclass(frozen=True)
class Measurement:
    """A cluster run as rank 0 wrote it: the scenario, how it ran, and every rank's figures."""

    scenario: Scenario
    world_size: int
    backend: str
    device: str
    memory_kind: str
    torch_version: str
    steps: int
    layers: int
    ranks: tuple[RankMeasurement, ...]

    @property
    def peak_allocated(self) -> float:
        """The largest rank's peak: what must fit."""
        return max(r.peak_allocated for r in self.ranks)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------
def _number(value, field: str, lo: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < lo:
        raise ValidationError(field, f"{value!r} is not a finite number ≥ {lo:g}", f"a number ≥ {lo:g}")
    return float(value)


def _int(value, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(field, f"{value!r} is not an integer in {lo}…{hi}", f"{lo}…{hi}")
    return value


def _text(value, field: str, limit: int = 200) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ValidationError(field, f"must be text of at most {limit} characters", "text")
    return value


def parse_measurement(doc) -> Measurement:
    """A :class:`Measurement` from a parsed document; every problem names its field."""
    doc = upgrade(doc, MEASUREMENT_VERSION, {}, "measurement")
    if doc.get("kind") != MEASUREMENT_KIND:
        raise ValidationError("kind", f"{doc.get('kind')!r} is not a measurement file", MEASUREMENT_KIND)
    scenario = Scenario.from_json_dict(doc.get("scenario"))
    world = _int(doc.get("world_size"), "world_size", 1, MAX_RANKS)
    ranks_doc = doc.get("ranks")
    if not isinstance(ranks_doc, list) or len(ranks_doc) != world:
        raise ValidationError("ranks", f"expected a list of {world} ranks (world_size)", f"{world} entries")
    memory_kind = doc.get("memory_kind")
    if memory_kind not in MEMORY_KINDS:
        raise ValidationError("memory_kind", f"{memory_kind!r} is not known", ", ".join(MEMORY_KINDS))
    ranks = []
    for i, r in enumerate(ranks_doc):
        if not isinstance(r, dict):
            raise ValidationError(f"ranks[{i}]", "must be an object")
        ranks.append(RankMeasurement(
            rank=_int(r.get("rank"), f"ranks[{i}].rank", i, i), host=_text(r.get("host"), f"ranks[{i}].host"),
            peak_allocated=_number(r.get("peak_allocated"), f"ranks[{i}].peak_allocated"),
            peak_reserved=_number(r.get("peak_reserved"), f"ranks[{i}].peak_reserved"),
            step_seconds=_number(r.get("step_seconds"), f"ranks[{i}].step_seconds")))
    return Measurement(scenario=scenario, world_size=world, backend=_text(doc.get("backend"), "backend", 20),
                       device=_text(doc.get("device"), "device"), memory_kind=memory_kind,
                       torch_version=_text(doc.get("torch_version"), "torch_version", 50),
                       steps=_int(doc.get("steps"), "steps", 1, 10_000),
                       layers=_int(doc.get("layers"), "layers", 1, 100_000), ranks=tuple(ranks))


def read_measurement(path: str | os.PathLike) -> Measurement:
    """The measurement file at ``path``: bounded read, versioned, validated; a broken file raises a
    :class:`ValidationError` naming the file and what is wrong."""
    doc = read_json(path, MAX_BYTES, "measurement")
    try:
        return parse_measurement(doc)
    except ValidationError as exc:
        raise ValidationError(exc.field, f"{Path(path).name}: {str(exc).split(': ', 1)[-1]}") from None


# --------------------------------------------------------------------------------------------
# The run (inside torchrun)
# --------------------------------------------------------------------------------------------
def _peak_rss_bytes() -> float:
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(rss if sys.platform == "darwin" else rss * 1024)   # Linux reports KiB, macOS bytes


def run(scenario: Scenario, steps: int, layers: int | None = None) -> dict:
    """Train ``steps`` steps on this rank (torchrun's environment) and return rank 0's document
    (``{}`` on the other ranks)."""
    import torch
    import torch.distributed as dist

    from engines.memory.analytic import stage_layers
    from engines.memory.fake_check import (_build_model, _check_expressible, loss_context, make_mesh,
                                            make_optimizer, shard_model, tensor_parallel)
    from engines.memory.params import Params

    _check_expressible(scenario)
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        device = "cpu"
        if cuda:
            local = int(os.environ.get("LOCAL_RANK", 0))
            torch.cuda.set_device(local)
            device = f"cuda:{local}"
        run_scenario = scenario.with_changes(n_gpus=world * scenario.pp)   # this run's ranks are DP × TP
        n_layers = layers or stage_layers(scenario.arch.layers, scenario.pp)[0]
        torch.manual_seed(0)
        with torch.device(device):
            model = _build_model(scenario.arch, n_layers, scenario.pp == 1, scenario.recompute)
        mesh = make_mesh(run_scenario, world, "cuda" if cuda else "cpu")
        if scenario.tp > 1:
            tensor_parallel(model, mesh["tp"])
        shard_model(model, run_scenario, Params(), mesh["dp"] if scenario.tp > 1 else mesh)
        opt = make_optimizer(model, run_scenario)
        shape = (scenario.micro_batch, scenario.seq_len)
        tokens = torch.randint(0, scenario.arch.vocab, shape, device=device)
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            with loss_context(run_scenario):
                model(tokens, tokens).backward()
            opt.step()
            opt.zero_grad()
            if cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        if cuda:
            mine = [float(torch.cuda.max_memory_allocated()), float(torch.cuda.max_memory_reserved())]
        else:
            mine = [_peak_rss_bytes()] * 2
        host = socket.gethostname().encode()[:_HOST_BYTES].ljust(_HOST_BYTES, b"\0")
        row = torch.tensor(mine + [statistics.median(times)] + list(host), dtype=torch.float64, device=device)
        rows = [torch.empty_like(row) for _ in range(world)]
        dist.all_gather(rows, row)
        if rank != 0:
            return {}
        ranks = []
        for r, t in enumerate(rows):
            v = t.cpu().tolist()
            name = bytes(int(x) for x in v[3:]).rstrip(b"\0").decode(errors="replace")
            ranks.append({"rank": r, "host": name, "peak_allocated": v[0], "peak_reserved": v[1],
                          "step_seconds": v[2]})
        return {"schema_version": MEASUREMENT_VERSION, "kind": MEASUREMENT_KIND,
                "scenario": run_scenario.to_json_dict(), "world_size": world, "backend": backend,
                "device": torch.cuda.get_device_name() if cuda else "cpu",
                "memory_kind": "cuda-allocated" if cuda else "cpu-peak-rss",
                "torch_version": torch.__version__, "steps": steps, "layers": n_layers, "ranks": ranks}
    finally:
        dist.barrier()
        dist.destroy_process_group()


def command(scenario_path: str, nodes: int, gpus_per_node: int, steps: int = 5, out: str = "measured.json") -> str:
    """The copyable torchrun line for a scenario file (what the panel shows)."""
    return (f"torchrun --nnodes {nodes} --nproc-per-node {gpus_per_node} -m engines.memory.cluster_run "
            f"--scenario {scenario_path} --steps {steps} --out {out}")


@dataclass(frozen=True)
class LaunchCommands:
    """How to run the measurement of one scenario: plain torchrun on each node, a Slurm batch
    script (``srun`` starts one torchrun per node) and a Kubernetes Indexed Job (one pod per node).
    ``nodes`` × ``gpus_per_node`` processes: the DP × TP ranks of one pipeline stage."""

    nodes: int
    gpus_per_node: int
    torchrun: str
    slurm: str
    kubernetes: str


def launch_commands(scenario: Scenario, scenario_path: str = "s.json", steps: int = 5,
                    out: str = "measured.json", image: str = "YOUR_IMAGE") -> LaunchCommands:
    """The copyable commands for ``scenario`` saved at ``scenario_path``.

    Sources: torchrun's rendezvous options (PyTorch docs, "torchrun (Elastic Launch)"); Slurm's
    ``srun`` and ``SLURM_JOB_NODELIST`` (Slurm docs, sbatch/srun); Kubernetes Indexed Jobs with
    ``JOB_COMPLETION_INDEX`` and a headless Service for stable pod names (Kubernetes docs, "Job")."""
    world = scenario.dp * scenario.tp          # one pipeline stage's ranks: what cluster_run runs
    per_node = max(1, min(scenario.gpus_per_node, world))
    nodes = -(-world // per_node)
    module = f"-m engines.memory.cluster_run --scenario {scenario_path} --steps {steps} --out {out}"
    single = command(scenario_path, nodes, per_node, steps, out)
    if nodes > 1:
        single = (f"torchrun --nnodes {nodes} --nproc-per-node {per_node} --rdzv-backend c10d "
                  f"--rdzv-endpoint HEAD_NODE:29500 --rdzv-id measure {module}    # on each node")
    slurm = "\n".join([
        "#!/bin/bash",
        f"#SBATCH --nodes={nodes}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --gpus-per-node={per_node}",
        "head=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)",
        f"srun torchrun --nnodes {nodes} --nproc-per-node {per_node} --rdzv-backend c10d \\",
        f"    --rdzv-endpoint \"$head:29500\" --rdzv-id \"$SLURM_JOB_ID\" {module}"])
    kube = "\n".join([
        "# YOUR_IMAGE: a container with torch, this app's engines/ and the scenario file",
        "apiVersion: v1",
        "kind: Service",
        "metadata: {name: measure}",
        "spec: {clusterIP: None, selector: {job-name: measure}}",
        "---",
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata: {name: measure}",
        "spec:",
        f"  completions: {nodes}",
        f"  parallelism: {nodes}",
        "  completionMode: Indexed",
        "  template:",
        "    spec:",
        "      subdomain: measure",
        "      restartPolicy: Never",
        "      containers:",
        "      - name: torchrun",
        f"        image: {image}",
        f"        resources: {{limits: {{nvidia.com/gpu: {per_node}}}}}",
        "        command: [\"sh\", \"-c\"]",
        f"        args: [\"torchrun --nnodes {nodes} --nproc-per-node {per_node} --node-rank $JOB_COMPLETION_INDEX "
        f"--master-addr measure-0.measure --master-port 29500 {module}\"]",
        "# rank 0's pod writes the file: copy it out with kubectl cp before the pod goes"])
    return LaunchCommands(nodes, per_node, single, slurm, kube)


@dataclass(frozen=True)
class MeasurementOverlay:
    """A measurement beside what the app predicts for the same scenario: our analytic bytes per GPU
    (without the reserve allowance, as the PyTorch check compares) and, when the check was run for
    that scenario, PyTorch's peak on rank 0; ``machine`` names where it ran."""

    source: str
    measurement: Measurement
    predicted: float
    pytorch_peak: float | None
    machine: str
    notes: tuple[str, ...]


def overlay(measurement: Measurement, source: str, check=None, options=None) -> MeasurementOverlay:
    """:class:`MeasurementOverlay` of ``measurement`` (read from ``source``) and, if its scenario is
    the one ``check`` (a :class:`~engines.memory.fake_check.PyTorchCheck`) ran, the check's peak."""
    from engines.memory.analytic import breakdown, stage_layers

    sc = measurement.scenario
    notes = []
    if measurement.layers != stage_layers(sc.arch.layers, sc.pp)[0]:
        sc = sc.with_changes(model="custom", arch=replace(sc.arch, layers=measurement.layers * sc.pp))
        notes.append(f"the run trained {measurement.layers} layers (--layers): predicted for that many")
    b = breakdown(sc, options=options)
    predicted = b.total - b.reserve
    peak = None
    if check is not None and check.fake.scenario == measurement.scenario:
        peak = float(check.fake.peak_total)
    elif check is not None:
        notes.append("the PyTorch check shown is of another scenario: run it for this one to compare")
    if measurement.memory_kind == "cpu-peak-rss":
        notes.append("on CPU torch keeps no allocator statistics: the peak is the process's resident set, "
                     "Python and torch's own libraries included")
    hosts = sorted({r.host for r in measurement.ranks})
    machine = (f"{measurement.world_size} ranks on {len(hosts)} host{'s' if len(hosts) > 1 else ''} "
               f"({', '.join(hosts[:4])}{'…' if len(hosts) > 4 else ''}), {measurement.device}, "
               f"{measurement.backend}, torch {measurement.torch_version}, {measurement.steps} steps")
    return MeasurementOverlay(source, measurement, predicted, peak, machine, tuple(notes))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", required=True, help="a scenario file saved by the app")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=None, help="run fewer blocks than the stage has (a smoke test)")
    a = ap.parse_args(argv)
    from engines.core.reading import read_text
    from engines.core.writing import atomic_write_text

    if not 1 <= a.steps <= 10_000:
        raise ValidationError("steps", f"{a.steps} is outside 1…10000", "1…10000")
    scenario = Scenario.from_json(read_text(a.scenario, MAX_BYTES))
    doc = run(scenario, a.steps, a.layers)
    if doc:
        atomic_write_text(a.out, json.dumps(doc, indent=1))
        peak = max(r["peak_allocated"] for r in doc["ranks"])
        print(f"wrote {a.out}: {doc['world_size']} ranks, peak {peak / 1e9:.3f} GB")
    return 0


if __name__ == "__main__":
    status = main()
    # Leave without the interpreter's teardown: with gloo, a rank whose group is already destroyed
    # sometimes aborted there ("terminate called without an active exception", no Python frame left;
    # about 1 run in 60 on two busy cores), and torchrun then failed a run whose file was written.
    # Compare pytorch/pytorch#190489 and the abandoned atexit fix in pytorch/pytorch#179291.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


__all__ = ["Measurement", "RankMeasurement", "read_measurement", "parse_measurement", "run", "command",
           "MEASUREMENT_VERSION", "LaunchCommands", "launch_commands", "MeasurementOverlay", "overlay"]
