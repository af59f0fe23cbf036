"""engines.scale: the panel's knobs as a validated value, the analytic study and the failure simulation
(Qt-free)."""
import math
from dataclasses import asdict

import numpy as np
import pytest

from engines.core.errors import Cancelled, ValidationError
from engines.scale import (CLUSTER_SIZES, GRID_POINTS, MC_RUNS, PROBE_FACTORS, WORK_MTBFS, Params, ZOOM_INTERVALS,
                           checkpoint_study, cluster_sweep, daly_interval, decades, expected_goodput,
                           interruptions_per_day, job_mtbf, llama3_interruptions, monte_carlo_goodput, scale_analysis,
                           simulate_failures, simulate_run, training_throughput, young_interval)
from engines.core.scenario import Scenario


def test_params_defaults_ranges_and_round_trip():
    p = Params()
    assert (p.mfu_pct, p.checkpoint_min, p.restart_min, p.zoom_intervals) == (40, 1.0, 5, 12)
    assert (p.mfu, p.checkpoint_seconds, p.restart_seconds) == (0.4, 60.0, 300.0)
    assert Params(**asdict(p)) == p and Params.from_dict(p.to_dict()) == p
    assert Params.spec("checkpoint_min")["lo"] == 0.1 and Params.spec("checkpoint_min")["hi"] == 30
    assert Params.spec("zoom_intervals")["choices"] == ZOOM_INTERVALS


@pytest.mark.parametrize("field,value", [("mfu_pct", 4), ("mfu_pct", 81), ("mfu_pct", 40.5), ("checkpoint_min", 0.0),
                                         ("checkpoint_min", 31), ("restart_min", -1), ("restart_min", 61),
                                         ("zoom_intervals", 13), ("mfu_pct", "40"), ("checkpoint_min", float("nan"))])
def test_params_refuse_bad_values_naming_the_field(field, value):
    with pytest.raises(ValidationError, match=field):
        Params(**{field: value})
    with pytest.raises(ValidationError, match="nope"):
        Params.from_dict({"nope": 1})


def test_decades_widen_to_powers_of_ten():
    assert decades(31.0, 3100.0) == (10.0, 10_000.0)
    assert decades(1.0, 10.0) == (1.0, 10.0)
    with pytest.raises(ValidationError):
        decades(0.0, 1.0)


def test_checkpoint_study_matches_the_formulas():
    data = llama3_interruptions()
    c = checkpoint_study(16384, 300.0, 600.0)
    m = job_mtbf(16384, data.gpu_mtbf_seconds)
    assert c.mtbf_seconds == pytest.approx(m) and c.mtbf_seconds / 60 == pytest.approx(185.6, abs=0.05)
    assert c.young_seconds == young_interval(300.0, m) and c.daly_seconds == daly_interval(300.0, m)
    assert c.intervals_seconds.size == GRID_POINTS
    lo, hi = c.intervals_seconds[0], c.intervals_seconds[-1]
    assert math.log10(lo) == pytest.approx(round(math.log10(lo))) and lo <= c.daly_seconds / 10
    assert math.log10(hi) == pytest.approx(round(math.log10(hi))) and hi >= c.daly_seconds * 10
    np.testing.assert_allclose(c.goodput, expected_goodput(c.intervals_seconds, 300.0, m, 600.0))
    assert c.best_goodput == pytest.approx(c.goodput.max())
    assert c.goodput_at_daly == pytest.approx(expected_goodput(c.daly_seconds, 300.0, m, 600.0))
    assert c.goodput_at_daly <= c.best_goodput * (1 + 1e-3)
    assert c.interruptions_per_day == pytest.approx(interruptions_per_day(16384, data.gpu_mtbf_seconds))
    np.testing.assert_allclose(c.probes_seconds, np.array(PROBE_FACTORS) * c.daly_seconds)
    assert c.failure_key == (c.mtbf_seconds, 300.0, 600.0)


def test_cluster_sweep_is_shared_for_the_same_costs():
    data = llama3_interruptions()
    a, b = checkpoint_study(64, 60.0, 300.0), checkpoint_study(512, 60.0, 300.0)
    assert a.cluster is b.cluster is cluster_sweep(60.0, 300.0, data.gpu_mtbf_seconds)
    assert checkpoint_study(64, 120.0, 300.0).cluster is not a.cluster
    sweep = a.cluster
    assert list(sweep.n_gpus) == list(CLUSTER_SIZES) and sweep.largest.n_gpus == 131072
    assert np.all(np.diff(sweep.interruptions_per_day) > 0)
    assert sweep.largest.interruptions_per_day == pytest.approx(interruptions_per_day(131072, data.gpu_mtbf_seconds))


def test_scale_analysis_is_throughput_and_the_study():
    s = Scenario()
    p = Params(mfu_pct=43, checkpoint_min=5.0, restart_min=10)
    a = scale_analysis(s, p)
    assert a.throughput == training_throughput(s, 0.43)
    assert a.checkpoint.checkpoint_seconds == 300.0 and a.checkpoint.restart_seconds == 600.0
    assert a.checkpoint.n_gpus == s.n_gpus
    th = a.throughput
    assert th.attention_flops_per_token == pytest.approx(th.flops_per_token - th.flops_per_token_6n)


def test_simulate_failures_reproduces_the_engine_calls():
    c = checkpoint_study(16384, 60.0, 300.0)
    seen = []
    sim = simulate_failures(c, progress=lambda f, text: seen.append((f, text)))
    m, d, r = c.failure_key
    assert sim.key == c.failure_key and sim.mean.shape == sim.std.shape == (len(PROBE_FACTORS),)
    for i, tau in enumerate(c.probes_seconds):
        mean, std = monte_carlo_goodput([tau], WORK_MTBFS * m, d, r, m, runs=MC_RUNS, seed=1 + i)
        assert sim.mean[i] == mean[0] and sim.std[i] == std[0]
    run = simulate_run(WORK_MTBFS * m, c.daly_seconds, d, r, m, seed=7, causes=llama3_interruptions())
    assert sim.run.wall_seconds == run.wall_seconds and len(sim.run.failures) == len(run.failures)
    assert "kind_arrays" in sim.run.__dict__            # built in the worker, not on the GUI thread
    assert [f for f, _ in seen] == sorted(f for f, _ in seen) and seen[-1][1] == "simulating one run"


def test_simulate_failures_stops_when_cancelled():
    with pytest.raises(Cancelled):
        simulate_failures(checkpoint_study(64, 60.0, 300.0), cancelled=lambda: True)


def test_throughput_names_the_sequence_length_and_recomputation_it_is_for():
    """The MFU gauge's formula is drawn from the result alone (no scenario): T and the recompute mode."""
    s = Scenario(seq_len=2048, recompute="full")
    th = scale_analysis(s, Params()).throughput
    assert (th.seq_len, th.recompute) == (2048, "full")
    assert th.hfu > th.mfu                      # full recomputation adds a forward pass to the hardware FLOPs
