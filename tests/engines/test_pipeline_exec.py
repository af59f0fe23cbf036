"""Executed mode: real torch work following the generated order, measured timeline has its shape."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from engines.pipeline import schedule  # noqa: E402
from engines.pipeline.execution import execute  # noqa: E402


def _assert_schedule_shape(run, p, n_stages, slack=0.0):
    """Dependencies hold in the measured times (``slack`` absorbs CUDA event-timer resolution)."""
    ranks = run.ranks
    ops = run.measured.ops
    assert len(ops) == sum(len(r) for r in ranks)
    end = {(o.action.stage, o.action.op, o.action.microbatch): o.end for o in ops}
    for o in ops:
        s, op, mb = o.action.stage, o.action.op, o.action.microbatch
        assert o.end > o.start  # real work took real time
        if op == "F" and s > 0:
            assert o.start >= end[(s - 1, "F", mb)] - slack
        if op in ("B", "I") and s < n_stages - 1:
            assert o.start >= end.get((s + 1, "B", mb), end.get((s + 1, "I", mb))) - slack
    for r in range(p):  # each rank ran its own order, one action at a time
        mine = sorted((o for o in ops if o.rank == r), key=lambda o: o.start)
        assert [o.action for o in mine] == ranks[r]
        assert all(a.end <= b.start + slack for a, b in zip(mine, mine[1:]))
    # the pipeline fill: rank r cannot start before the previous rank's first forward finished
    first = [min(o.start for o in ops if o.rank == r) for r in range(p)]
    first_end = [min(o.end for o in ops if o.rank == r) for r in range(p)]
    assert all(first[r] >= first_end[r - 1] - slack for r in range(1, p))


@pytest.mark.parametrize("kind,v", [("1f1b", 1), ("gpipe", 1), ("zb-h1", 1), ("interleaved-1f1b", 2), ("zb-v", 2)])
def test_executed_timeline_has_the_schedule_shape(kind, v):
    p, m = 3, 6
    run = execute(kind, p, m, v, device="cpu", hidden=64, layers_per_stage=1, batch=16)
    assert run.ranks == schedule(kind, p, m, v)
    _assert_schedule_shape(run, p, p * v)
    # in-flight memory is a property of the order, so the measured peaks equal the simulated ones
    assert run.measured.peak_in_flight == run.simulated.peak_in_flight
    # the pipelined gradients equal one plain forward/backward over the whole batch
    assert run.max_grad_error < 1e-5
    assert 0 < run.measured.bubble_fraction < 1


def test_1f1b_executed_peak_is_p_minus_rank():
    run = execute("1f1b", 4, 8, device="cpu", hidden=32, layers_per_stage=1, batch=8)
    assert run.measured.peak_in_flight == [4, 3, 2, 1]


@pytest.mark.gpu
def test_executed_on_cuda_streams():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    for kind, v in (("1f1b", 1), ("zb-h1", 1), ("interleaved-1f1b", 2)):
        run = execute(kind, 4, 8, v, device="cuda", hidden=1024, layers_per_stage=4, batch=256)
        assert run.device == "cuda"
        _assert_schedule_shape(run, 4, 4 * v, slack=1e-5)
        assert run.measured.peak_in_flight == run.simulated.peak_in_flight
        assert run.max_grad_error < 1e-3
