"""engines.pipeline under random shapes: every (stage, micro-batch) runs F and its backward exactly
once, the simulated times respect every dependency, and bad shapes are ValidationErrors."""
from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engines import pipeline
from engines.core.errors import ValidationError

FAST = settings(max_examples=40, deadline=None)


@st.composite
def shapes(draw):
    """A valid (kind, p, m, v): drawn broadly, kept only when schedule() accepts it, so kinds added
    later (e.g. ZB-V) are covered by the same properties."""
    kind = draw(st.sampled_from(pipeline.KINDS))
    p = draw(st.integers(1, 6))
    v = draw(st.sampled_from([1, 2, 3]))
    m = draw(st.one_of(st.integers(1, p + 10), st.integers(1, 4).map(lambda k: k * p)))
    try:
        ranks = pipeline.schedule(kind, p, m, v)
    except ValidationError:
        assume(False)
    return kind, p, m, v, ranks


@FAST
@given(shapes())
def test_every_microbatch_forward_and_backward_exactly_once(shape):
    kind, p, m, v, ranks = shape
    assert len(ranks) == p
    counts: dict[tuple[int, int, str], int] = {}
    for acts in ranks:
        for a in acts:
            counts[(a.stage, a.microbatch, a.op)] = counts.get((a.stage, a.microbatch, a.op), 0) + 1
    assert set(counts.values()) == {1}
    split = any(a.op == "I" for acts in ranks for a in acts)
    backward = ("I", "W") if split else ("B",)
    for s in range(p * v):
        for mb in range(m):
            for op in ("F", *backward):
                assert counts.get((s, mb, op)) == 1, (s, mb, op)
    assert pipeline.check_orders(ranks) == (p * v, m)


@FAST
@given(shapes(), st.floats(0.1, 5), st.floats(0.1, 5), st.floats(0, 1))
def test_simulation_respects_dependencies(shape, t_f, t_b, t_comm):
    kind, p, m, v, ranks = shape
    sim = pipeline.simulate(ranks, t_f=t_f, t_b=t_b, t_comm=t_comm)
    end = {(o.action.stage, o.action.op, o.action.microbatch): o for o in sim.ops}
    n_stages = p * v
    eps = 1e-9
    for o in sim.ops:
        a = o.action
        assert o.end > o.start and math.isfinite(o.end)
        if a.op == "F" and a.stage > 0:
            assert o.start >= end[(a.stage - 1, "F", a.microbatch)].end - eps
        if a.op in ("B", "I"):
            assert o.start >= end[(a.stage, "F", a.microbatch)].end - eps
            if a.stage < n_stages - 1:
                up = end.get((a.stage + 1, "B", a.microbatch)) or end[(a.stage + 1, "I", a.microbatch)]
                assert o.start >= up.end - eps
        if a.op == "W":
            assert o.start >= end[(a.stage, "I", a.microbatch)].end - eps
    # a rank never runs two ops at once, and runs them in its list order
    for r in range(p):
        mine = [o for o in sim.ops if o.rank == r]
        mine.sort(key=lambda o: o.start)
        for x, y in zip(mine, mine[1:]):
            assert y.start >= x.end - eps
    assert 0 <= sim.bubble_fraction < 1
    busy = sum(sim.busy)
    assert busy == pytest.approx(n_stages * m * (t_f + t_b), rel=1e-9)
    # the makespan is at least one micro-batch's critical path and at most everything in series;
    # with a split backward (ZB) the weight-gradient W is off that path except for the last one
    split = any(a.op == "I" for rank in ranks for a in rank)
    backward_path = n_stages * sim.costs["I"] + sim.costs["W"] if split else n_stages * t_b
    assert sim.makespan >= n_stages * t_f + backward_path - eps
    assert sim.makespan <= busy + 2 * n_stages * m * t_comm + eps


@FAST
@given(shapes())
def test_bubble_shrinks_with_more_microbatches_for_1f1b(shape):
    _, p, m, _, _ = shape
    a = pipeline.simulate(pipeline.schedule("1f1b", p, max(m, p)))
    b = pipeline.simulate(pipeline.schedule("1f1b", p, max(m, p) + p))
    assert b.bubble_fraction <= a.bubble_fraction + 1e-12


@FAST
@given(st.sampled_from(pipeline.KINDS), st.integers(-3, 80), st.integers(-3, 600), st.integers(-1, 20))
def test_invalid_shapes_raise_validation_error_naming_the_field(kind, p, m, v):
    try:
        ranks = pipeline.schedule(kind, p, m, v)
    except ValidationError as e:
        assert e.field in ("kind", "stages", "microbatches", "chunks"), e.field
        assert e.field in str(e)
        return
    assert 1 <= p <= pipeline.MAX_STAGES and 1 <= m <= pipeline.MAX_MICROBATCHES
    assert len(ranks) == p


@FAST
@given(st.one_of(st.text(max_size=5), st.none(), st.floats(), st.integers()))
def test_garbage_arguments_are_validation_errors(bad):
    assume(bad not in pipeline.KINDS)
    for call, field in ((lambda: pipeline.schedule(bad, 2, 4), "kind"),
                        (lambda: pipeline.schedule("1f1b", bad, 4), "stages"),
                        (lambda: pipeline.op_costs(t_f=bad), "t_f")):
        if field == "stages" and isinstance(bad, int) and not isinstance(bad, bool) and 1 <= bad <= 64:
            continue  # a legal stage count (m = 4 < p is then the microbatches rule, tested above)
        if field == "t_f" and isinstance(bad, (int, float)) and math.isfinite(bad) and bad > 0:
            continue
        with pytest.raises(ValidationError) as e:
            call()
        assert e.value.field == field


@FAST
@given(shapes(), st.randoms(use_true_random=False))
def test_shuffled_orders_either_simulate_or_raise_validation_error(shape, rnd):
    ranks = [list(r) for r in shape[4]]
    for r in ranks:
        rnd.shuffle(r)
    try:
        sim = pipeline.simulate(ranks)
    except ValidationError as e:
        assert e.field == "ranks"
        return
    assert math.isfinite(sim.makespan)
