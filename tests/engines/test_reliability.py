"""Checkpoint-interval formulas against Daly's published captions and the Llama 3 worked case."""

import numpy as np
import pytest

from engines.core.errors import ValidationError
from engines.scale.reliability import (daly_interval, expected_goodput, goodput_vs_cluster, interruptions_per_day,
                                 job_mtbf, llama3_interruptions, monte_carlo_goodput, simulate_run,
                                 young_interval, young_waste, checkpoint_seconds)

MIN, HOUR = 60.0, 3600.0
LLAMA3_MTBF = 54 * 86400 / 419          # 185.6 minutes


def test_llama3_worked_case_delta_1_minute():
    assert LLAMA3_MTBF / MIN == pytest.approx(185.6, abs=0.05)
    assert young_interval(1 * MIN, LLAMA3_MTBF) / MIN == pytest.approx(19.27, abs=0.005)
    assert daly_interval(1 * MIN, LLAMA3_MTBF) / MIN == pytest.approx(18.60, abs=0.005)
    assert young_waste(young_interval(MIN, LLAMA3_MTBF), MIN, LLAMA3_MTBF) == pytest.approx(0.104, abs=0.001)


def test_llama3_worked_case_delta_5_minutes():
    assert young_interval(5 * MIN, LLAMA3_MTBF) / MIN == pytest.approx(43.08, abs=0.005)
    assert daly_interval(5 * MIN, LLAMA3_MTBF) / MIN == pytest.approx(39.81, abs=0.005)


@pytest.mark.parametrize("mtbf,published_minutes,tol", [(24 * HOUR, 117, 0.5), (6 * HOUR, 57, 0.5),
                                                        (15 * MIN, 9.1, 0.05)])
def test_daly_reproduces_his_figure_captions_for_5_minute_dumps(mtbf, published_minutes, tol):
    assert daly_interval(5 * MIN, mtbf) / MIN == pytest.approx(published_minutes, abs=tol)


def test_daly_saturates_at_mtbf_when_checkpoint_exceeds_twice_mtbf():
    assert daly_interval(100.0, 40.0) == 40.0
    assert young_interval(2.0, 100.0) == pytest.approx(20.0)


def test_daly_optimum_maximizes_exact_goodput_without_restart():
    d, m = 5 * MIN, 6 * HOUR
    grid = np.linspace(10 * MIN, 120 * MIN, 4001)
    best = grid[np.argmax(expected_goodput(grid, d, m))]
    assert best == pytest.approx(daly_interval(d, m), rel=0.01)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "x"])
def test_bad_input_names_the_field(bad):
    with pytest.raises(ValidationError) as exc:
        young_interval(bad, 100)
    assert exc.value.field == "checkpoint_seconds"
    with pytest.raises(ValidationError) as exc:
        daly_interval(60, bad)
    assert exc.value.field == "mtbf_seconds"


def test_llama3_table_counts_and_inconsistency():
    data = llama3_interruptions()
    assert data.total == 419 and data.unexpected == 419 and data.planned == 47
    assert data.job_mtbf_seconds == pytest.approx(LLAMA3_MTBF)
    faulty = next(c for c in data.causes if c.cause == "Faulty GPU")
    assert faulty.count / data.total == pytest.approx(0.353, abs=0.001)
    assert faulty.published_pct == 30.1
    assert sum(c.published_pct for c in data.causes) == pytest.approx(94.9, abs=0.05)
    assert data.category_shares()["GPU"] == pytest.approx(0.640, abs=0.001)
    assert sum(c.published_pct for c in data.causes if c.category == "GPU") == pytest.approx(58.7, abs=0.05)


def test_cluster_scaling_is_linear_in_gpus():
    gpu_mtbf = llama3_interruptions().gpu_mtbf_seconds
    assert job_mtbf(16384, gpu_mtbf) == pytest.approx(LLAMA3_MTBF)
    assert interruptions_per_day(16384, gpu_mtbf) == pytest.approx(419 / 54)
    pts = goodput_vs_cluster([1024, 16384, 131072], gpu_mtbf, MIN, 5 * MIN)
    assert pts[0].goodput > pts[1].goodput > pts[2].goodput
    assert pts[2].interruptions_per_day == pytest.approx(8 * pts[1].interruptions_per_day)


def test_monte_carlo_agrees_with_dalys_expected_goodput():
    d, r, m = MIN, 5 * MIN, LLAMA3_MTBF
    intervals = np.array([5, 18.6, 60]) * MIN
    mean, std = monte_carlo_goodput(intervals, 3 * 86400, d, r, m, runs=300, seed=7)
    exact = expected_goodput(intervals, d, m, r)
    assert np.all(np.abs(mean - exact) < 0.01)
    assert np.argmax(mean) == 1


def test_simulated_run_accounts_for_every_second():
    data = llama3_interruptions()
    run = simulate_run(2 * 86400, daly_interval(MIN, LLAMA3_MTBF), MIN, 5 * MIN, LLAMA3_MTBF, seed=3, causes=data)
    kept = sum(s.end - s.start for s in run.spans if s.kind == "compute")
    assert kept == pytest.approx(2 * 86400)
    assert run.wall_seconds == pytest.approx(kept + run.lost_seconds + run.checkpoint_total + run.restart_total)
    assert all(a.end <= b.start + 1e-6 for a, b in zip(run.spans, run.spans[1:]))
    assert len(run.failures) > 5 and {f.cause for f in run.failures} <= {c.cause for c in data.causes}
    assert run.progress_at(run.wall_seconds) == pytest.approx(2 * 86400)


def test_checkpoint_write_time():
    # 405.85B params × 14 B at 1 TB/s aggregate = 5.68 s
    assert checkpoint_seconds(405_853_388_800, 1000) == pytest.approx(5.682, abs=0.001)


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), None, True, "x", 1 + 2j, 1.5, [8, -1]])
def test_interruptions_per_day_rejects_bad_gpu_counts(bad):
    with pytest.raises(ValidationError) as exc:
        interruptions_per_day(bad, 1e6)
    assert exc.value.field == "n_gpus"
    assert interruptions_per_day(np.array([8, 16]), 1e6) == pytest.approx([0.6912, 1.3824])


@pytest.mark.parametrize("bad", [float("inf"), "5", True, np.True_, 1 + 2j, __import__("decimal").Decimal("sNaN"),
                                 [100.0, float("inf")], 0])
def test_expected_goodput_rejects_bad_intervals(bad):
    with pytest.raises(ValidationError) as exc:
        expected_goodput(bad, 60, 11136)
    assert exc.value.field == "interval_seconds"


@pytest.mark.parametrize("bad", [float("inf"), "500", None])
def test_monte_carlo_rejects_bad_intervals(bad):
    with pytest.raises(ValidationError) as exc:
        monte_carlo_goodput([bad], 86400, 60, 300, 11136, runs=5)
    assert exc.value.field == "interval_seconds"


@pytest.mark.parametrize("bad", [-1, "x", 1.5, True])
def test_seed_is_validated(bad):
    with pytest.raises(ValidationError) as exc:
        monte_carlo_goodput([500], 86400, 60, 300, 11136, runs=5, seed=bad)
    assert exc.value.field == "seed"
    with pytest.raises(ValidationError) as exc:
        simulate_run(86400, 500, 60, 300, 11136, seed=bad)
    assert exc.value.field == "seed"


def test_simulate_run_names_max_failures():
    with pytest.raises(ValidationError) as exc:
        simulate_run(86400, 500, 60, 300, 11136, max_failures=-1)
    assert exc.value.field == "max_failures"


@pytest.mark.parametrize("bad", [1.5, True, float("nan"), "x", float("inf"), None, 0, 2**60])
def test_goodput_vs_cluster_validates_sizes(bad):
    with pytest.raises(ValidationError) as exc:
        goodput_vs_cluster([8, bad], 1e8, 60, 300)
    assert exc.value.field == "sizes"
    assert [p.n_gpus for p in goodput_vs_cluster(np.array([8, 16]), 1e8, 60, 300)] == [8, 16]


def test_numpy_bool_is_not_a_number():
    with pytest.raises(ValidationError) as exc:
        young_interval(np.True_, 100)
    assert exc.value.field == "checkpoint_seconds"


@pytest.mark.parametrize("d,m", [(1e200, 1e200), (1e-200, 1e-200), (1e-300, 1e300), (5e-324, 5e-324), (1.999999, 1.0)])
def test_intervals_stay_finite_and_positive_at_extremes(d, m):
    y, dl = young_interval(d, m), daly_interval(d, m)
    assert 0 < y < float("inf") and 0 < dl <= m
    assert y == pytest.approx(2**0.5 * d**0.5 * m**0.5, rel=1e-12)


def test_daly_is_the_published_expression_in_stable_form():
    # 2M·s·(1 − s/3)² with s = √(δ/2M) is √(2δM)·[1 + s/3 + s²/9] − δ, rearranged
    for d, m in [(60.0, 11136.0), (300.0, 21600.0), (1.0, 1.9), (7.0, 1e8)]:
        x = d / (2 * m)
        assert daly_interval(d, m) == pytest.approx((2 * d * m) ** 0.5 * (1 + x**0.5 / 3 + x / 9) - d, rel=1e-12)
    with pytest.raises(ValidationError) as exc:
        young_interval(1.7e308, 1.7e308)     # √(2δM) is past the float range
    assert exc.value.field == "mtbf_seconds"
