"""A real sharded run: N CPU processes, gloo backend, torch FSDP2 ``fully_shard``; each rank reports
the bytes of its own parameter, gradient and optimizer-state shards after one training step.

FSDP2 (torch.distributed.fsdp.fully_shard; Zhao et al. 2023, arXiv 2304.11277, and the FSDP2 RFC
pytorch/pytorch#114299) shards every parameter on dim 0 across the ranks as a DTensor. With
``MixedPrecisionPolicy(param_dtype=bf16)`` the *sharded* parameters stay fp32 and double as the
master copy, so the per-rank model states are 4Ψ/N (params) + 4Ψ/N (fp32 grads) + 8Ψ/N (Adam m, v)
= 16Ψ/N: the same total as ZeRO-3's (2 + 2 + 12)Ψ/N, split differently. ``reshard_after_forward``
True is FULL_SHARD (≈ ZeRO-3), False is SHARD_GRAD_OP (≈ ZeRO-2): the at-rest shards are the same,
only the transient unsharded parameters between forward and backward differ.

Run as ``python -m engines.memory.fsdp_probe --rank R --world N --port P --arch JSON``; the panel and tests
call :func:`run_fsdp_probe`, which starts the N processes and collects one JSON line from each.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from engines.core.errors import ValidationError, require_int
from engines.memory.measure import (ComparisonRow, MeasureConfig, MeasurementCancelled, build_model,
                                    scaled_down_arch)
from engines.core.models import ModelArch


@dataclass(frozen=True)
class RankBytes:
    """One rank's shard bytes (measured) beside the even split of the analytic 4 + 4 + 8 B/param."""

    rank: int
    params: int
    grads: int
    optimizer: int
    analytic_params: float
    analytic_grads: float
    analytic_optimizer: float


@dataclass(frozen=True)
class FsdpProbeResult:
    world_size: int
    reshard_after_forward: bool
    param_count: int
    ranks: list[RankBytes]
    seconds: float
    mixed_precision: bool
    note: str
    allgather_seconds: float = 0.0     # one all-gather of the 16-bit weights (2Ψ bytes) over gloo, median of 3
    allgather_buffer_bytes: float = 0.0

    @property
    def allgather_bytes_per_rank(self) -> float:
        """Ring all-gather: each rank sends (N − 1)/N of the buffer (Patarasuk & Yuan 2009)."""
        return self.allgather_buffer_bytes * (self.world_size - 1) / self.world_size

    @property
    def allgather_gbps(self) -> float:
        """The measured per-rank rate, GB/s: what the step-time model's link would need to be for this run."""
        return self.allgather_bytes_per_rank / self.allgather_seconds / 1e9 if self.allgather_seconds else 0.0

    def rows(self) -> tuple[ComparisonRow, ...]:
        """Each rank's measured shard bytes beside the even Ψ/N split, per model-state category."""
        why = "dim-0 sharding pads uneven tensors"
        return tuple(ComparisonRow(c, r.rank, a, m, why) for r in self.ranks
                     for c, m, a in (("params", r.params, r.analytic_params), ("grads", r.grads, r.analytic_grads),
                                     ("optimizer", r.optimizer, r.analytic_optimizer)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_fsdp_probe(arch: ModelArch, world_size: int = 2, reshard_after_forward: bool = True,
                   config: MeasureConfig | None = None, timeout_s: float = 180.0,
                   progress: Callable[[float, str], None] | None = None,
                   cancelled: Callable[[], bool] | None = None) -> FsdpProbeResult:
    """Start ``world_size`` gloo ranks of the scaled-down ``arch`` and gather their shard bytes."""
    world_size = require_int(world_size, "world_size", 2, 8)
    config = config or MeasureConfig()
    progress = progress or (lambda f, m: None)
    cancelled = cancelled or (lambda: False)
    small = scaled_down_arch(arch, config)
    port = _free_port()
    root = str(Path(__file__).resolve().parents[2])   # the repository: engines/memory/ is two below
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1"}
    args = ["--world", str(world_size), "--port", str(port), "--arch", json.dumps(small.to_dict()),
            "--seq", str(config.seq_len), "--batch", str(config.micro_batch),
            "--reshard", "1" if reshard_after_forward else "0"]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "engines.memory.fsdp_probe", "--rank", str(r), *args], cwd=root,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(world_size)]
    try:
        while any(p.poll() is None for p in procs):
            if cancelled():
                raise MeasurementCancelled()
            if time.perf_counter() - start > timeout_s:
                raise ValidationError("timeout_s", f"FSDP ranks did not finish within {timeout_s:.0f} s", "a larger timeout")
            done = sum(p.poll() is not None for p in procs)
            progress(min(0.95, 0.1 + 0.8 * (time.perf_counter() - start) / 30), f"{done}/{world_size} ranks finished")
            time.sleep(0.1)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    ranks, notes, mixed, gather = [], [], True, []
    for r, p in enumerate(procs):
        out, err = p.communicate()
        if p.returncode != 0:
            tail = (err or out).strip().splitlines()[-3:]
            raise ValidationError("fsdp", f"rank {r} failed: {' | '.join(tail)}", "torch with torch.distributed and gloo")
        doc = json.loads(out.strip().splitlines()[-1])
        mixed = mixed and doc["mixed_precision"]
        gather.append(doc.get("allgather_seconds", 0.0))
        if doc.get("note"):
            notes.append(doc["note"])
        ranks.append(RankBytes(rank=r, params=doc["params"], grads=doc["grads"], optimizer=doc["optimizer"],
                               analytic_params=4 * small.param_count() / world_size,
                               analytic_grads=4 * small.param_count() / world_size,
                               analytic_optimizer=8 * small.param_count() / world_size))
    progress(1.0, "done")
    return FsdpProbeResult(world_size, reshard_after_forward, small.param_count(), ranks,
                           time.perf_counter() - start, mixed, "; ".join(sorted(set(notes))),
                           allgather_seconds=max(gather), allgather_buffer_bytes=2.0 * small.param_count())


def _rank_main(rank: int, world: int, port: int, arch: ModelArch, seq: int, batch: int, reshard: bool) -> dict:
    """One rank: shard each block and the root, run forward/backward/AdamW step, count local bytes."""
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        model = build_model(arch, seq, torch.float32, "cpu")
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for block in model.blocks:  # one FSDP unit per block, then the root (embedding, norm, head)
            fully_shard(block, mp_policy=policy, reshard_after_forward=reshard)
        fully_shard(model, mp_policy=policy, reshard_after_forward=reshard)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
        tokens = torch.randint(0, arch.vocab, (batch, seq))
        loss = model(tokens, tokens)
        loss.backward()
        opt.step()

        def local(t) -> int:
            t = t.to_local() if hasattr(t, "to_local") else t
            return t.numel() * t.element_size()

        params = sum(local(p) for p in model.parameters())
        grads = sum(local(p.grad) for p in model.parameters() if p.grad is not None)
        optim = sum(local(v) for s in opt.state.values() for k, v in s.items() if torch.is_tensor(v) and k != "step")
        # the collective ZeRO-3 runs twice per micro-batch: all-gather the 16-bit weights (2Ψ bytes), timed
        piece = torch.zeros(-(-arch.param_count() // (2 * world)))   # fp32 elements: 2Ψ/N bytes from each rank
        parts = [torch.empty_like(piece) for _ in range(world)]
        times = []
        for _ in range(4):                                           # one warm-up, then the median of three
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_gather(parts, piece)
            times.append(time.perf_counter() - t0)
        gathered = sorted(times[1:])[1]
        dist.barrier()      # every rank is past its last collective before any rank leaves
        return {"rank": rank, "params": params, "grads": grads, "optimizer": optim, "mixed_precision": True,
                "allgather_seconds": gathered,
                "note": "bf16 compute, fp32 sharded master parameters and fp32 gradient reduction"}
    except BaseException:
        dist.destroy_process_group()
        raise


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--arch", required=True)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--reshard", type=int, default=1)
    a = ap.parse_args(argv)
    arch = ModelArch.from_dict(json.loads(a.arch))
    print(json.dumps(_rank_main(a.rank, a.world, a.port, arch, a.seq, a.batch, bool(a.reshard))), flush=True)
    # Leave without tearing gloo down: its worker threads can abort the process at interpreter exit
    # ("terminate called without an active exception") after the result is already printed.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
