"""The fault run: real data-parallel training with injected faults, the alarms and the triage ladder.

Runs are short (60 steps, faults at step 40) so each takes a few seconds on two CPU cores."""
from __future__ import annotations

import math

import pytest

from engines.core.errors import Cancelled, ValidationError
from engines.scale.faults import (Ema, Fault, FaultConfig, Incident, alarms_for, next_action, odd_replicas, run)
from engines.scale.tiny_lm import flip_bit, weights_checksum, build_model

SHORT = FaultConfig(steps=60, seed=0)


@pytest.fixture(scope="module")
def clean():
    return run(SHORT)


def test_a_clean_run_learns_raises_no_alarm_and_keeps_replicas_identical(clean):
    assert clean.alarms == () and clean.actions == ()
    assert clean.kept[0].loss == pytest.approx(math.log(256), abs=0.1)   # untrained: uniform over bytes
    assert clean.final_loss < 3.6
    assert all(len(set(r.checksums)) == 1 for r in clean.records)
    assert clean.backend == "gloo" and len(clean.records) == 60


def test_the_run_is_deterministic_for_a_seed(clean):
    again = run(SHORT)
    assert [r.loss for r in again.records] == [r.loss for r in clean.records]
    assert [r.checksums for r in again.records] == [r.checksums for r in clean.records]


def test_a_weight_bit_flip_is_caught_by_the_checksum_at_its_step_and_a_replay_restores_the_clean_run(clean):
    cfg = FaultConfig(steps=60, seed=0, replicas=3)
    r = run(cfg, [Fault("weight_flip", 40, replica=2, bit=30)])
    first = r.first_alarm()
    assert (first.step, first.rule) == (40, "checksum")
    assert r.suspects == (2,)
    assert [(a.kind, a.to_step) for a in r.actions] == [("replay", 30)]
    assert r.actions[0].lost_steps == 10
    reference = run(cfg)
    assert [x.loss for x in r.kept] == [x.loss for x in reference.kept]   # the flip was transient


def test_even_a_low_mantissa_flip_in_weights_breaks_the_checksum():
    r = run(FaultConfig(steps=45, seed=0, triage=False), [Fault("weight_flip", 40, replica=1, bit=3)])
    assert r.first_alarm().step == 40 and r.first_alarm().rule == "checksum"


def test_a_bad_batch_spikes_the_loss_recurs_on_replay_and_is_skipped(clean):
    r = run(SHORT, [Fault("bad_batch", 40, replica=1)])
    first = r.first_alarm()
    assert (first.step, first.rule) == (40, "loss_z") and first.value > SHORT.z_loss
    assert [a.kind for a in r.actions] == ["replay", "skip_batch"]
    assert "skip batch 39" in r.actions[1].detail
    assert 39 not in [x.batch_id for x in r.kept]
    assert r.final_loss < clean.final_loss + 0.3


def test_a_learning_rate_spike_climbs_the_ladder_to_a_lower_rate():
    r = run(SHORT, [Fault("lr_spike", 40, replica=0, factor=100)])
    assert r.first_alarm().step == 41
    assert [a.kind for a in r.actions] == ["replay", "skip_batch", "lower_lr"]
    assert r.kept[-1].lr == pytest.approx(SHORT.planned_lr(60) * SHORT.backoff)


def test_without_triage_the_alarm_is_logged_and_the_damage_stays():
    r = run(FaultConfig(steps=45, seed=0, triage=False), [Fault("grad_flip", 40, replica=1, bit=30)])
    assert r.first_alarm().step == 40 and r.first_alarm().rule == "grad_z"
    assert r.actions == ()


def test_alarm_rules_by_hand():
    cfg = FaultConfig()
    ema = Ema()
    for v in (3.0, 3.1, 2.9, 3.0, 3.1, 2.9):
        ema = ema.update(v)
    assert ema.mean == pytest.approx(0.8 ** 5 * 3.0 + sum(0.2 * 0.8 ** k * v for k, v in
                                                           enumerate((2.9, 3.1, 3.0, 2.9, 3.1))))
    z = ema.z(4.0)
    assert z == pytest.approx((4.0 - ema.mean) / math.sqrt(ema.var))
    rules = [r for r, _v, _d in alarms_for(40, 4.0, 1.0, (7, 7), ema, Ema(1.0, 0.01, 9), cfg)]
    assert rules == (["loss_z"] if z > cfg.z_loss else [])
    assert alarms_for(10, 99.0, 1.0, (7, 7), ema, ema, cfg) == []          # not armed before z_warmup
    assert [r for r, *_ in alarms_for(10, math.nan, 1.0, (7, 8), ema, ema, cfg)] == ["checksum", "nonfinite"]
    assert odd_replicas((5, 5, 9)) == (2,) and odd_replicas((5, 9)) == (0, 1) and odd_replicas((4, 4)) == ()


def test_the_triage_ladder():
    assert next_action(("checksum",), 40, None)[0] == "replay"
    kind, inc = next_action(("loss_z",), 40, None)
    assert kind == "replay"
    kind, inc = next_action(("loss_z",), 40, inc)
    assert kind == "skip_batch"
    kind, inc = next_action(("loss_z",), 41, inc)
    assert kind == "lower_lr"
    assert next_action(("loss_z",), 60, Incident(40, 2))[0] == "replay"   # a new incident


def test_bit_flip_and_checksum_primitives():
    import torch

    t = torch.tensor([0.5, 1.0])
    assert flip_bit(t, 0, 30) == (0.5, 0.5 * 2.0 ** 128)
    assert flip_bit(t, 1, 31) == (1.0, -1.0)
    m = build_model(16, 1, 2, 8, 0)
    before = weights_checksum(m)
    p = next(m.parameters())
    flip_bit(p.data, 0, 5)
    assert abs(weights_checksum(m) - before) == 2 ** 5


def test_bad_input_and_cancel():
    with pytest.raises(ValidationError, match="replica"):
        run(SHORT, [Fault("weight_flip", 40, replica=2)])
    with pytest.raises(ValidationError, match="kind"):
        Fault("meteor", 40)
    with pytest.raises(ValidationError, match="heads"):
        FaultConfig(d_model=30, heads=4)
    with pytest.raises(Cancelled):
        run(SHORT, cancelled=lambda: True)


def test_a_job_stopped_through_its_progress_stops_every_replica_together():
    """A job's progress raises Cancelled once the job is stopped (explorer.tasks). A replica that
    left the loop there left the others in the all-reduce until gloo's 120 s timeout, and the job then
    failed instead of ending cancelled."""
    import threading
    import time

    calls = []

    def progress(_fraction, _text):
        calls.append(1)
        if len(calls) >= 3:
            raise Cancelled()

    done = []
    worker = threading.Thread(target=lambda: done.append(_outcome(lambda: run(SHORT, progress=progress))), daemon=True)
    t0 = time.monotonic()
    worker.start()
    worker.join(100)
    assert done and done[0] is Cancelled, f"not cancelled after {time.monotonic() - t0:.0f} s: {done}"


def _outcome(fn):
    try:
        fn()
    except Exception as exc:   # noqa: BLE001 - the test looks at which
        return type(exc)
    return None


@pytest.mark.gpu
def test_the_fault_run_on_cuda_detects_a_flip_at_its_step():
    r = run(FaultConfig(steps=60, seed=0, replicas=3), [Fault("weight_flip", 40, replica=1)], device="cuda")
    assert r.device == "cuda"
    assert (r.first_alarm().step, r.first_alarm().rule) == (40, "checksum") and r.suspects == (1,)
    b = run(FaultConfig(steps=60, seed=0), [Fault("bad_batch", 40, replica=1)], device="cuda")
    assert b.first_alarm().step == 40 and [a.kind for a in b.actions] == ["replay", "skip_batch"]


def test_the_fault_runs_gpt_and_the_addition_model_share_one_block():
    """One hand-written decoder block (engines.core.gpt_block), whose names are the shipped addition
    weights' keys and whose order is the one the fault run's flat gradient and bit flips read."""
    from engines.core.gpt_block import block_class
    from engines.qeval.addition import ModelShape, build_model as addition_model

    tiny, adder = build_model(32, 2, 4, 32, 0), addition_model(ModelShape(d_model=32, n_layers=1, n_heads=4, d_ff=64))
    assert type(tiny.blocks[0]) is type(adder.blocks[0]) is block_class()
    assert [n for n, _ in tiny.blocks[0].named_parameters()] == [
        f"{m}.{p}" for m in ("ln1", "ln2", "qkv", "proj", "fc1", "fc2") for p in ("weight", "bias")]


def test_models_built_at_once_in_many_threads_start_equal():
    """Seeding and initialising share torch's global generator: builds on other threads (a tour's
    prefetch beside the panel's job) must not draw in between, or a cached run is not reproducible."""
    import threading

    import torch

    from engines.scale.tiny_lm import build_model

    models: list = []
    barrier = threading.Barrier(6)

    def build() -> None:
        barrier.wait()
        for _ in range(5):
            models.append(build_model(64, 2, 4, 64, seed=0))

    threads = [threading.Thread(target=build) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = models[0].state_dict()
    assert len(models) == 30
    assert all(all(torch.equal(first[k], m.state_dict()[k]) for k in first) for m in models[1:])
