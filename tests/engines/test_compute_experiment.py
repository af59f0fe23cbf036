"""The live scaling-law experiment: deterministic for a seed, loss falls with size and compute,
cancel stops it, the cache and the shipped file round-trip, bad input names its field."""
import dataclasses
import json

import pytest

from engines.compute.experiment import (QUICK, SCHEMA_VERSION, Params, Point, late_speedup, load_result,
                                        result_from_dict, result_to_dict, run_experiment, save_result,
                                        shipped_result)
from engines.core.errors import Cancelled, ValidationError


@pytest.fixture(scope="module")
def quick():
    return run_experiment(QUICK)


def test_same_seed_same_losses_other_seed_other_losses(quick):
    again = run_experiment(QUICK)
    assert [p.loss for p in again.points] == [p.loss for p in quick.points]
    other = run_experiment(dataclasses.replace(QUICK, seed=7))
    assert [p.loss for p in other.points] != [p.loss for p in quick.points]


def test_loss_falls_with_compute_and_size(quick):
    sizes = sorted({p.n_params for p in quick.points})
    assert len(sizes) == QUICK.n_sizes and len(quick.points) == QUICK.n_sizes * QUICK.n_budgets
    for n in sizes:
        runs = sorted((p for p in quick.points if p.n_params == n), key=lambda p: p.tokens)
        assert all(b.loss < a.loss for a, b in zip(runs, runs[1:])), n
    longest = max(p.tokens for p in quick.points)
    at_longest = sorted((p for p in quick.points if p.tokens == longest), key=lambda p: p.n_params)
    assert at_longest[-1].loss < at_longest[0].loss
    for p in quick.points:   # C = 6ND with D the characters predicted
        assert p.tokens == p.steps * QUICK.batch * QUICK.context
        assert p.flops == pytest.approx(6 * p.n_params * p.tokens)


def test_fit_and_frontier_come_from_the_measured_points(quick):
    fit = quick.fit
    assert fit.n_points == len(quick.points) and fit.alpha > 0 and fit.beta > 0
    for c, n, d, loss in quick.frontier:
        assert 6 * n * d == pytest.approx(c) and loss == pytest.approx(fit.loss(n, d))
    assert quick.frontier[0][0] == pytest.approx(min(p.flops for p in quick.points))


def test_progress_reaches_the_end_and_cancel_stops_the_run(tmp_path):
    seen = []
    run_experiment(QUICK, progress=lambda f, m: seen.append(f))
    assert seen[-1] == 1.0 and all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)
    calls = {"n": 0}

    def cancelled():
        calls["n"] += 1
        return calls["n"] > 5

    with pytest.raises(Cancelled):
        run_experiment(QUICK, cancelled=cancelled, cache_dir=tmp_path)
    assert calls["n"] == 6 and not list(tmp_path.iterdir())     # stopped at once; nothing cached


def test_cache_round_trips_and_a_broken_entry_is_recomputed(tmp_path, monkeypatch, quick):
    first = run_experiment(QUICK, cache_dir=tmp_path)
    (path,) = tmp_path.iterdir()
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION
    import engines.compute.experiment as exp

    def no_training(*a, **k):
        raise AssertionError("the cached result should have been used")

    monkeypatch.setattr(exp, "_train_size", no_training)
    assert run_experiment(QUICK, cache_dir=tmp_path) == first
    assert result_from_dict(result_to_dict(quick)) == quick
    path.write_text("{ not json")
    monkeypatch.undo()
    again = run_experiment(QUICK, cache_dir=tmp_path)
    assert [p.loss for p in again.points] == [p.loss for p in first.points]
    assert again.seconds != first.seconds and load_result(path) == again    # recomputed and cached anew


def test_a_broken_file_says_what_is_wrong(tmp_path, quick):
    path = save_result(quick, tmp_path / "r.json")
    doc = json.loads(path.read_text())
    for mutate, field in [(lambda d: d.update(schema_version=99), "schema_version"),
                          (lambda d: d.pop("fit"), "fit"),
                          (lambda d: d["points"][0].update(loss=-1.0), "points[0]"),
                          (lambda d: d["params"].update(n_sizes=99), "n_sizes")]:
        bad = json.loads(json.dumps(doc))
        mutate(bad)
        path.write_text(json.dumps(bad))
        with pytest.raises(ValidationError) as err:
            load_result(path)
        assert err.value.field == field
    path.write_text("nope")
    with pytest.raises(ValidationError) as err:
        load_result(path)
    assert err.value.field == "file"


@pytest.mark.parametrize("kw, field", [(dict(n_sizes=9), "n_sizes"), (dict(lr=1.0), "lr"),
                                       (dict(warmup_steps=200), "warmup_steps"), (dict(device="tpu"), "device")])
def test_bad_params_name_the_field(kw, field):
    with pytest.raises(ValidationError) as err:
        Params(**kw)
    assert err.value.field == field


def test_shipped_result_is_the_default_experiment_from_the_build_machine():
    shipped = shipped_result()
    assert shipped.where == "build machine" and shipped.params == Params(device=shipped.params.device)
    assert len(shipped.points) == Params().n_sizes * Params().n_budgets
    assert shipped.fit.alpha > 0 and shipped.fit.beta > 0 and shipped.date and shipped.device_name


def test_late_speedup_names_sizes_whose_last_doubling_helped_most():
    def pts(size, losses):
        return [Point(size, 1, 16, 100, 200, 10 * 2 ** k, 2 ** k, 600.0 * 2 ** k, loss, loss, 1.0)
                for k, loss in enumerate(losses)]

    points = pts("a", [3.0, 2.8, 2.5]) + pts("b", [3.0, 2.7, 2.6]) + pts("c", [3.0, 2.9])
    assert late_speedup(points) == ("a",)


@pytest.mark.gpu
def test_the_quick_run_on_cuda():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    params = dataclasses.replace(QUICK, device="cuda")
    a, b = run_experiment(params), run_experiment(params)
    assert a.device == "cuda" and "CUDA" in a.device_name
    assert [p.loss for p in a.points] == pytest.approx([p.loss for p in b.points], rel=1e-4)
    cpu = run_experiment(QUICK)
    assert [p.loss for p in a.points] == pytest.approx([p.loss for p in cpu.points], rel=0.02)
    assert a.fit.alpha > 0 and a.fit.beta > 0
