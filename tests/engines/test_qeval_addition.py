"""The self-trained addition model: data format, determinism, quantization and the shipped checkpoint."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from engines.core.errors import ValidationError  # noqa: E402
from engines.qeval import addition as A  # noqa: E402


def test_encoding_reverses_digits_and_marks_the_answer():
    tok, pos, seg, mask = A.encode([47], [85], 2)          # 47 + 85 = 132, written 2 3 1
    assert tok[0].tolist() == [7, 4, A.PLUS, 5, 8, A.EQUALS, 2, 3, 1, A.END]
    # digit place: operands 1..n; "=" predicts digit 1; answer digit j predicts digit j + 1
    assert pos[0].tolist() == [1, 2, 0, 1, 2, 1, 2, 3, 4, 5]
    assert seg[0].tolist() == [0, 0, 3, 1, 1, 3, 2, 2, 2, 2]
    # positions whose next token is an answer digit or the end mark
    assert mask[0].nonzero().flatten().tolist() == [5, 6, 7, 8]


def test_model_is_about_0_4_million_parameters():
    model = A.build_model(A.ModelShape())
    assert 350_000 < A.parameter_count(model) < 450_000


def test_training_is_deterministic_for_a_seed():
    cfg = A.TrainConfig(seed=7, steps=6, batch=8, warmup=2)
    one = A.train(cfg).model.state_dict()
    two = A.train(cfg).model.state_dict()
    other = A.train(A.TrainConfig(seed=8, steps=6, batch=8, warmup=2)).model.state_dict()
    assert all(torch.equal(one[k], two[k]) for k in one)
    assert not all(torch.equal(one[k], other[k]) for k in one)


def test_checkpoint_round_trip_and_broken_files(tmp_path):
    run = A.train(A.TrainConfig(seed=1, steps=2, batch=4, warmup=1))
    path = A.save_checkpoint(run, tmp_path / "m.safetensors", {"note": "test"})
    ck = A.load_checkpoint(path)
    assert ck.config == run.config and ck.meta["extra"] == {"note": "test"}
    assert ck.meta["device"] == "cpu" and ck.meta["date"]
    for k, v in run.model.state_dict().items():
        assert torch.equal(ck.model.state_dict()[k], v)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a safetensors file")
    with pytest.raises(ValidationError) as err:
        A.load_checkpoint(bad)
    assert err.value.field == "path"
    with pytest.raises(ValidationError):
        A.load_checkpoint(tmp_path / "missing.safetensors")


def test_rtn_copy_leaves_the_original_and_embeddings_alone():
    model = A.build_model(A.ModelShape())
    q = A.quantized_copy(model, 2, 32)
    assert torch.equal(q.tok.weight, model.tok.weight) and torch.equal(q.head.weight, model.head.weight)
    w, wq = model.blocks[0].fc1.weight, q.blocks[0].fc1.weight
    assert not torch.equal(w, wq)
    # 2 bits: at most four levels in each group of 32 inputs
    assert all(torch.unique(g).numel() <= 4 for g in wq.reshape(-1, 32)[:50])
    assert torch.equal(A.quantized_copy(model, 16).blocks[0].fc1.weight, w)


def test_bad_settings_name_the_field():
    for kwargs, field in (({"seed": -1}, "seed"), ({"steps": 0}, "steps"), ({"lr": 1.0}, "lr")):
        with pytest.raises(ValidationError) as err:
            A.TrainConfig(**kwargs)
        assert err.value.field == field
    model = A.build_model(A.ModelShape())
    with pytest.raises(ValidationError) as err:
        A.quantized_copy(model, 7)
    assert err.value.field == "weight_bits"
    with pytest.raises(ValidationError) as err:
        A.quantized_copy(model, 4, 48)
    assert err.value.field == "group_size"


@pytest.fixture(scope="module")
def shipped():
    torch.set_num_threads(min(2, torch.get_num_threads()))
    return A.load_checkpoint()


def test_shipped_checkpoint_names_how_it_was_made(shipped):
    meta = shipped.meta
    assert meta["extra"]["script"] == "scripts/train_addition.py"
    assert shipped.config.seed == int(meta["extra"].get("seed", shipped.config.seed))
    assert meta["date"] and meta["device"]
    assert 350_000 < A.parameter_count(shipped.model) < 450_000


def test_shipped_model_adds_in_float32(shipped):
    s = A.score(shipped.model, per_length=200)
    em = s.exact_match()
    assert all(em[n] >= 0.99 for n in range(1, 6)) and em[6] >= 0.96, em   # 99.8 % of 1,000 6-digit sums
    assert s.answer_perplexity < 1.01


def test_two_bits_hurt_long_sums_more_while_perplexity_barely_moves(shipped):
    """Issue 24: rounded to 2 bits in groups of 32, the shipped model loses far more exact match on 6-digit
    than on 1-digit sums, and more than its answer perplexity rises (+21.8 % on the shipped sweep, +21.1 %
    on these 400 sums a length; 6-digit exact match 99.8 % -> 51.9 %): one wrong carry spoils a long answer."""
    base = A.score(shipped.model, per_length=400)
    two = A.score(A.quantized_copy(shipped.model, 2, 32), per_length=400)
    b_em, q_em = base.exact_match(), two.exact_match()
    assert b_em[6] - q_em[6] > b_em[1] - q_em[1] + 0.1, (b_em, q_em)
    assert math.isfinite(two.answer_perplexity)
    rise = two.answer_perplexity / base.answer_perplexity - 1
    assert 0 < rise < 0.30 and b_em[6] - q_em[6] > rise, (rise, b_em, q_em)
    # the loss grows with length: the longest sums are the worst
    assert q_em[6] == min(q_em.values())


def test_the_b4_caption_quotes_the_shipped_sweep():
    """The tour's figures are the shipped sweep's (1,000 sums a length): retraining the checkpoint must come
    with a new caption."""
    import json

    from engines.core.assets import asset_path

    run = A.shipped_run(32)
    caption = next(s["caption"] for s in json.loads(asset_path("tours", "B4.json").read_text(encoding="utf-8"))["steps"]
                   if s.get("focus") == "addition")
    base, two = run.rows[0].score.exact_match(), run.row(2).score.exact_match()
    assert f"(seed {run.seed})" in caption
    assert ("near-perfect in float32" in caption) == (min(base.values()) >= 0.99)
    assert f"{100 * run.perplexity_change(run.row(2)):+.1f} %" in caption
    assert f"from {100 * two[1]:.1f} % on 1-digit sums to {100 * two[6]:.1f} % on 6-digit" in caption


def test_shipped_sweep_matches_the_checkpoint(shipped):
    run = A.shipped_run(32)
    assert run.shipped and run.seed == shipped.config.seed
    assert [r.weight_bits for r in run.rows] == [16, 8, 4, 3, 2]
    two = run.row(2).score.exact_match()
    assert two[6] < two[1]
    assert run.rows[0].score.exact_match()[6] >= 0.96 and run.unlearned_lengths() == ()


@pytest.mark.slow
@pytest.mark.parametrize("bits", [16, 2])
def test_the_stored_sweep_is_this_checkpoints_score(shipped, bits):
    """Re-score the shipped weights on the stored sweep's own problems (1,000 sums a length, seed 12345):
    a checkpoint retrained or a quantizer changed without re-measuring the sweep fails here. Float32 and
    2 bits in groups of 32 (the row most sensitive to a change); a few sums may round differently on
    another BLAS, so counts agree within 3 of 1,000."""
    stored = A.shipped_run(32).row(bits).score
    again = A.score(A.quantized_copy(shipped.model, bits, None if bits == 16 else 32), per_length=1000)
    assert [s.problems for s in again.by_length] == [s.problems for s in stored.by_length]
    assert all(abs(a.exact - s.exact) <= 3 for a, s in zip(again.by_length, stored.by_length)), (
        [s.exact for s in stored.by_length], [a.exact for a in again.by_length])
    assert again.answer_perplexity == pytest.approx(stored.answer_perplexity, rel=1e-4)


def test_a_seed_that_did_not_learn_long_sums_is_named():
    """Measured 2026-12-02 (weight decay 0.01): of seeds 2-9 at 5,000 steps only 2 and 4 got 6-digit sums
    right in float32; seed 3 stopped at 78 %. The sweep says so rather than blaming the rounding."""
    def row(bits, exact):
        lengths = tuple(A.LengthScore(n, 100, e, e / 100) for n, e in enumerate(exact, 1))
        return A.BitsRow(f"W{bits}", bits, 32, A.AdditionScore(lengths, 1.03))

    run = A.HardTaskRun(seed=3, steps=5000, trained="t", measured="m", group_size=32, shipped=False,
                        rows=(row(16, (100, 100, 100, 100, 96, 78)), row(2, (94, 91, 91, 87, 44, 22))))
    assert run.unlearned_lengths() == (6,)
    assert A.shipped_run(32).unlearned_lengths() == ()


@pytest.mark.gpu
def test_retrain_on_cuda_learns_addition():
    run = A.retrain(seed=3, steps=A.TrainConfig().steps, device="cuda", per_length=200)
    assert run.rows[0].score.exact_match()[1] > 0.95
    assert "CPU" not in run.measured
