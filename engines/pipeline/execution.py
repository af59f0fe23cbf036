"""Executed mode: run a generated pipeline order on real torch and measure its timeline.

A small MLP is cut into p·v stages (stage s on rank s mod p, as in
:func:`engines.pipeline.schedule`). One Python thread per rank walks that rank's order; each
action does its real work (F: forward; B: full backward; I: gradient w.r.t. the stage input only;
W: gradient w.r.t. the stage weights, the split of Qi et al., arXiv 2401.10241 §2). Activations
and gradients pass between ranks through an in-process mailbox (no communication cost). On the
CPU torch ops release the GIL, so ranks genuinely overlap; on CUDA every rank gets its own stream
and cross-rank hand-offs are ordered with CUDA events, timed with CUDA timing events. All ranks
then share one GPU's multiprocessors, so overlapping ops slow each other and the measured bubble
exceeds the simulated one (the lesson gives figures measured on an H200).

The gradients are checked against one non-pipelined forward/backward over the whole batch, so the
schedule is shown to compute the same result (the point of a *synchronous* pipeline schedule).
torch is imported inside functions only.
"""
from __future__ import annotations

import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable

from engines.core.device import resolve_device
from engines.core.errors import ValidationError, require_int
from engines.core.threads import torch_threads
from engines.pipeline.schedules import Action, Simulation, TimedOp, check_orders, schedule, simulate, \
    timed_from_measurements


@dataclass
class ExecutedRun:
    """Measured timeline of one executed schedule, the simulation with the measured mean costs
    beside it, and the gradient check against a non-pipelined reference."""

    kind: str
    ranks: list[list[Action]]
    device: str
    hidden: int
    layers_per_stage: int
    batch: int
    measured: Simulation          # times in seconds from the first op's start
    simulated: Simulation         # same order, mean measured op costs, no comm cost
    mean_costs: dict[str, float]  # seconds per op kind
    max_grad_error: float         # max |grad_pipeline − grad_reference| over all weights
    loss: float

    def rows(self) -> list[dict]:
        return [dict(row, source="measured") for row in self.measured.rows()] + \
               [dict(row, source="simulated") for row in self.simulated.rows()]


class ExecutionCancelled(Exception):
    """The caller's ``cancelled()`` turned true while the ranks were running."""


def execute(kind: str, stages: int, microbatches: int, chunks: int = 1, device: str = "cpu",
            hidden: int = 128, layers_per_stage: int = 2, batch: int = 32, seed: int = 0,
            progress: Callable[[float, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> ExecutedRun:
    """Generate ``schedule(kind, stages, microbatches, chunks)`` and run it (see :func:`run_order`).

    One thread per rank, so the executed mode is limited to 16 ranks and 64 micro-batches."""
    require_int(stages, "stages", 1, 16)
    require_int(microbatches, "microbatches", 1, 64)
    ranks = schedule(kind, stages, microbatches, chunks)
    return run_order(ranks, kind=kind, device=device, hidden=hidden, layers_per_stage=layers_per_stage,
                     batch=batch, seed=seed, progress=progress, cancelled=cancelled)


def run_order(ranks: list[list[Action]], kind: str = "custom", device: str = "cpu", hidden: int = 128,
              layers_per_stage: int = 2, batch: int = 32, seed: int = 0,
              progress: Callable[[float, str], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> ExecutedRun:
    """Execute the per-rank orders with real forward/backward work and record when each op ran.

    The ranks are the parallelism: each uses one intra-op thread, so p ranks need p cores to
    overlap fully (on a busy machine the measured bubble grows: the timeline shows it honestly).
    """
    import torch

    with torch_threads(1):
        return _run_order(torch, ranks, kind, device, hidden, layers_per_stage, batch, seed, progress, cancelled)


def _run_order(torch, ranks, kind, device, hidden, layers_per_stage, batch, seed, progress, cancelled) -> ExecutedRun:
    device = resolve_device(device)
    hidden = require_int(hidden, "hidden", 8, 4096)
    layers_per_stage = require_int(layers_per_stage, "layers_per_stage", 1, 16)
    batch = require_int(batch, "batch", 1, 4096)
    n_stages, n_mb = check_orders(ranks)
    p = len(ranks)
    total_ops = sum(len(a) for a in ranks)

    gen = torch.Generator().manual_seed(seed)
    modules = [_make_stage(torch, hidden, layers_per_stage, gen).to(device) for _ in range(n_stages)]
    inputs = [torch.randn(batch, hidden, generator=gen).to(device) for _ in range(n_mb)]
    targets = [torch.randn(batch, hidden, generator=gen).to(device) for _ in range(n_mb)]

    cuda = device == "cuda"
    streams = [torch.cuda.Stream() for _ in range(p)] if cuda else [None] * p
    mailbox: dict[tuple[int, str, int], tuple[object, object]] = {}  # (stage, "F"|"G", mb) -> (tensor, event)
    cond = threading.Condition()
    stop = threading.Event()
    errors: list[BaseException] = []
    stamps: list[tuple[int, Action, object, object]] = []
    losses: list[object] = []  # detached loss tensors (no sync inside the ranks)
    done_count = [0]
    ready = threading.Barrier(p + 1)  # every rank warmed up, and the clock's zero taken
    go = threading.Event()

    def post(key, tensor, stream) -> None:
        event = None
        if cuda:
            event = torch.cuda.Event()
            event.record(stream)
        with cond:
            mailbox[key] = (tensor, event)
            cond.notify_all()

    def take(key, stream):
        with cond:
            while key not in mailbox:
                if stop.is_set():
                    raise ExecutionCancelled()
                cond.wait(0.05)
            tensor, event = mailbox.pop(key)
        if cuda:
            stream.wait_event(event)
            tensor.record_stream(stream)
        return tensor

    def worker(rank: int) -> None:
        stream = streams[rank]
        saved: dict[tuple[int, int], tuple[object, object]] = {}  # (stage, mb) -> (input, output/loss)
        ctx = torch.cuda.stream(stream) if cuda else nullcontext()
        try:
            with ctx:
                # first-call set-up (allocator, kernels, autograd in this thread) is not pipeline time
                _warm_up(torch, [modules[s] for s in sorted({a.stage for a in ranks[rank]})], inputs[0])
                ready.wait()
                go.wait()
                for a in ranks[rank]:
                    if stop.is_set() or (cancelled is not None and cancelled()):
                        stop.set()
                        raise ExecutionCancelled()
                    s, mb, last = a.stage, a.microbatch, a.stage == n_stages - 1
                    # gather inputs before starting the clock (waiting is bubble, not work)
                    if a.op == "F":
                        x_in = inputs[mb] if s == 0 else take((s - 1, "F", mb), stream)
                    elif a.op in ("B", "I") and not last:
                        grad_out = take((s + 1, "G", mb), stream)
                    start = _stamp(torch, cuda, stream)
                    if a.op == "F":
                        x = x_in.detach().requires_grad_(True)
                        y = modules[s](x)
                        if last:
                            y = torch.nn.functional.mse_loss(y, targets[mb]) / n_mb
                        saved[(s, mb)] = (x, y)
                        if not last:
                            post((s, "F", mb), y.detach(), stream)
                    elif a.op == "B":
                        x, y = saved.pop((s, mb))
                        torch.autograd.backward(y, None if last else grad_out)
                        if last:
                            losses.append(y.detach())
                        if s > 0:
                            post((s, "G", mb), x.grad, stream)
                    elif a.op == "I":
                        x, y = saved[(s, mb)]
                        (gx,) = torch.autograd.grad(y, [x], None if last else grad_out, retain_graph=True)
                        saved[(s, mb)] = (x, (y, None if last else grad_out))
                        if last:
                            losses.append(y.detach())
                        if s > 0:
                            post((s, "G", mb), gx, stream)
                    else:  # W
                        x, (y, g) = saved.pop((s, mb))
                        params = list(modules[s].parameters())
                        grads = torch.autograd.grad(y, params, g)
                        for prm, gw in zip(params, grads):
                            prm.grad = gw if prm.grad is None else prm.grad + gw
                    end = _stamp(torch, cuda, stream)
                    with cond:
                        stamps.append((rank, a, start, end))
                        done_count[0] += 1
        except ExecutionCancelled:
            stop.set()
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)
            stop.set()
            with cond:
                cond.notify_all()

    threads = [threading.Thread(target=worker, args=(r,), name=f"pipeline-rank-{r}", daemon=True)
               for r in range(p)]
    for t in threads:
        t.start()
    ready.wait()
    if cuda:
        torch.cuda.synchronize()
    base = _stamp(torch, cuda, torch.cuda.current_stream() if cuda else None)
    go.set()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(0.05)
        if progress is not None:
            try:
                progress(done_count[0] / total_ops, f"{done_count[0]}/{total_ops} actions")
            except BaseException:  # the caller cancelled through its progress callback
                stop.set()
                raise
        if cancelled is not None and cancelled():
            stop.set()
    if cuda:
        torch.cuda.synchronize()
    if errors:
        raise errors[0]
    if stop.is_set() or done_count[0] != total_ops:
        raise ExecutionCancelled()

    ops = [TimedOp(r, a, _elapsed(base, st, cuda), _elapsed(base, en, cuda)) for r, a, st, en in stamps]
    measured = timed_from_measurements(ops, p)
    mean = _mean_costs(measured.ops)
    split = "I" in mean
    simulated = simulate(ranks, t_f=mean["F"], t_b=mean["I"] + mean["W"] if split else mean["B"],
                         t_i=mean.get("I"), t_w=mean.get("W"))
    error = _gradient_error(torch, modules, inputs, targets, n_mb)
    return ExecutedRun(kind=kind, ranks=ranks, device=device, hidden=hidden, layers_per_stage=layers_per_stage,
                       batch=batch, measured=measured, simulated=simulated, mean_costs=mean,
                       max_grad_error=error, loss=float(sum(float(v) for v in losses)))


def _warm_up(torch, modules, x) -> None:
    """One untimed forward/backward per stage, then clear the gradients it left."""
    for m in modules:
        y = m(x.detach().requires_grad_(True))
        torch.autograd.backward(y, torch.ones_like(y))  # non-scalar backward, as the B/I ops do
        for prm in m.parameters():
            prm.grad = None


def _make_stage(torch, hidden: int, layers: int, gen):
    """A stage = ``layers`` × (Linear, tanh), deterministic initial weights."""
    mods = []
    for _ in range(layers):
        lin = torch.nn.Linear(hidden, hidden)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(hidden, hidden, generator=gen) / hidden ** 0.5)
            lin.bias.copy_(torch.randn(hidden, generator=gen) * 0.01)
        mods += [lin, torch.nn.Tanh()]
    return torch.nn.Sequential(*mods)


def _stamp(torch, cuda: bool, stream):
    """A time mark: perf_counter on the CPU, a timing event on the rank's CUDA stream."""
    if cuda:
        ev = torch.cuda.Event(enable_timing=True)
        ev.record(stream)
        return ev
    return time.perf_counter()


def _elapsed(base, mark, cuda: bool) -> float:
    return base.elapsed_time(mark) / 1000.0 if cuda else mark - base


def _mean_costs(ops: list[TimedOp]) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for o in ops:
        sums.setdefault(o.action.op, []).append(o.end - o.start)
    return {k: max(sum(v) / len(v), 1e-9) for k, v in sums.items()}


def _gradient_error(torch, modules, inputs, targets, n_mb: int) -> float:
    """Largest difference between the pipelined gradients and one plain forward/backward."""
    clones = [_clone(torch, m) for m in modules]
    loss = 0.0
    for x, t in zip(inputs, targets):
        y = x
        for m in clones:
            y = m(y)
        loss = loss + torch.nn.functional.mse_loss(y, t) / n_mb
    loss.backward()
    err = 0.0
    for m, c in zip(modules, clones):
        for a, b in zip(m.parameters(), c.parameters()):
            if a.grad is None:
                raise ValidationError("ranks", "a stage finished without weight gradients", "complete orders")
            err = max(err, float((a.grad - b.grad).abs().max()))
    return err


def _clone(torch, module):
    import copy

    c = copy.deepcopy(module)
    for prm in c.parameters():
        prm.grad = None
    return c
