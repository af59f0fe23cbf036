"""Scenario validation, presets and the versioned JSON form (Qt-free)."""
from __future__ import annotations

import json

import pytest

from engines.core.errors import ValidationError
from engines.core.models import PRESETS, ModelArch
from engines.core.presets import apply_preset, preset_names
from engines.core.scenario import SCHEMA_VERSION, Scenario


def test_llama3_parameter_counts_from_architecture():
    # Reference sheet §4: computed from the HF config.json shapes.
    assert PRESETS["llama3-8b"].param_count() == 8_030_261_248
    assert PRESETS["llama3-70b"].param_count() == 70_553_706_496
    assert PRESETS["llama3-405b"].param_count() == 405_853_388_800


def test_smollm2_count_matches_loaded_model():
    # SmolLM2-135M (tied embeddings) loads as 134,515,008 parameters.
    assert PRESETS["smollm2-135m"].param_count() == 134_515_008


def test_gpt3_count_is_175b_class():
    # 12·L·h² dominates: 96 · 12 · 12288² ≈ 173.9B, plus embeddings and biases.
    p = PRESETS["gpt3-175b"].param_count()
    assert 174e9 < p < 176e9
    arch = PRESETS["gpt3-175b"]
    assert arch.layers * 12 * arch.hidden ** 2 < p


def test_tied_embeddings_subtract_v_times_h():
    a = PRESETS["llama3-8b"]
    tied = ModelArch(**{**a.to_dict(), "tied_embeddings": True})
    assert a.param_count() - tied.param_count() == a.vocab * a.hidden


@pytest.mark.parametrize("changes, field", [
    ({"n_gpus": 0}, "n_gpus"), ({"tp": 3}, "n_gpus"), ({"strategy": "zero5"}, "strategy"),
    ({"pp": 64, "n_gpus": 64, "model": "llama3-8b"}, "pp"), ({"tp": 64, "n_gpus": 64, "model": "smollm2-135m"}, "tp"),
    ({"sequence_parallel": True}, "sequence_parallel"), ({"weight_bits": 3}, "weight_bits"),
])
def test_invalid_scenarios_name_the_field(changes, field):
    with pytest.raises(ValidationError) as info:
        Scenario().with_changes(**changes)
    assert info.value.field == field
    assert isinstance(info.value, ValueError)


def test_dp_is_derived():
    s = Scenario().with_changes(n_gpus=64, tp=8, pp=2)
    assert s.dp == 4


def test_json_round_trip_and_version():
    s = Scenario().with_changes(model="llama3-70b", n_gpus=128, tp=8, strategy="zero1")
    doc = json.loads(s.to_json())
    assert doc["schema_version"] == SCHEMA_VERSION
    assert Scenario.from_json(s.to_json()) == s


@pytest.mark.parametrize("text, field", [
    ("{", "file"), ("[]", "file"), ('{"scenario": {}}', "schema_version"),
    ('{"schema_version": 99, "scenario": {}}', "schema_version"),
    ('{"schema_version": 1, "scenario": {"n_gpus": "many"}}', "n_gpus"),
    ('{"schema_version": 1, "scenario": {"wat": 1}}', "wat"),
])
def test_broken_files_explain_themselves(text, field):
    with pytest.raises(ValidationError) as info:
        Scenario.from_json(text)
    assert info.value.field == field


def test_every_preset_is_a_valid_scenario():
    for name in preset_names():
        s = apply_preset(Scenario(), name)
        assert s.n_gpus % (s.tp * s.pp) == 0


def test_the_custom_preset_keeps_the_architecture_to_edit():
    base = apply_preset(Scenario(), "llama3-70b")
    custom = apply_preset(base, "custom")
    assert custom.model == "custom" and custom.arch == base.arch
    assert "custom" in preset_names()
    assert Scenario.from_json(custom.to_json()).arch == base.arch       # and it saves and loads as such


def test_gpu_catalogue_has_sources_and_required_parts():
    from engines.core.hardware import GPUS

    for key in ("a100-80gb", "h100-sxm", "h200", "b200", "mi300x", "rtx4090"):
        g = GPUS[key]
        assert g.source and g.memory_gb > 0 and g.bandwidth_gbps > 0 and g.bf16_tflops > 0
    assert GPUS["h100-sxm"].peak_flops("bf16") == pytest.approx(989.4e12)


def test_files_from_before_the_offload_target_field_load_with_cpu():
    doc = Scenario(offload_optimizer=True).to_json_dict()
    del doc["scenario"]["offload_target"]                    # a version-1 file written before NVMe offload
    assert Scenario.from_json_dict(doc).offload_target == "cpu"
    doc["scenario"]["offload_target"] = "nvme"
    assert Scenario.from_json_dict(doc).offload_target == "nvme"


def test_llama3_405b_preset_has_table_4s_batch():
    """Dubey et al. 2024, Table 4 (16,384 GPUs): DP 128, batch 16 per DP group, 16M tokens per step."""
    from engines.scale.mfu import training_throughput

    s = apply_preset(Scenario(), "llama3-405b-16k")
    assert (s.tp, s.pp, s.dp, s.seq_len) == (8, 16, 128, 8192)
    assert s.micro_batch * s.grad_accum == 16
    assert training_throughput(s, 0.41).global_batch_tokens == 128 * 16 * 8192   # 16.8M ≈ the paper's "16M"


def test_switching_model_adapts_a_layout_the_new_shape_cannot_take():
    """TP splits whole heads (Megatron-LM §3): SmolLM2-135M's 9 heads take no TP 8, so the switch
    drops TP to the largest divisor of 8 that divides 9 (1), turns sequence parallelism off with it
    and says so; the GPU count stays a multiple of TP × PP."""
    from engines.core.presets import switch_model

    base = apply_preset(Scenario(), "llama3-405b-16k")            # TP 8, PP 16, SP on, 16,384 GPUs
    new, note = switch_model(base, "smollm2-135m")
    assert (new.model, new.tp, new.pp, new.sequence_parallel) == ("smollm2-135m", 1, 16, False)
    assert new.n_gpus == base.n_gpus and new.n_gpus % (new.tp * new.pp) == 0
    assert "TP 8 → 1" in note and "9 attention heads" in note and "sequence parallelism off" in note
    assert apply_preset(base, "smollm2-135m") == new              # the preset path takes the same rule
    same, none = switch_model(base, "llama3-8b")                   # 32 heads, 32 layers: TP 8 × PP 16 fits
    assert (same.tp, same.pp, same.sequence_parallel, none) == (8, 16, True, None)


def test_switching_model_keeps_the_largest_fitting_divisor():
    from engines.core.presets import switch_model

    six = Scenario().with_changes(model="gpt3-175b", n_gpus=48, tp=6, pp=1)    # 96 heads: TP 6 fits
    new, note = switch_model(six, "llama3-8b")                                   # 32 heads: 6 → 2, not 1
    assert new.tp == 2 and "TP 6 → 2" in note
    deep = Scenario().with_changes(model="llama3-405b", n_gpus=64, tp=1, pp=64)  # 126 layers
    new, note = switch_model(deep, "smollm2-135m")                               # 30 layers: 64 → 16
    assert new.pp == 16 and "PP 64 → 16" in note and "30 layers" in note
    with pytest.raises(ValidationError, match="model"):
        switch_model(deep, "no-such-model")


def test_every_model_switch_from_every_preset_gives_a_valid_scenario():
    from engines.core.presets import scenario_presets, switch_model

    for start in scenario_presets():
        base = apply_preset(Scenario(), start)
        for key, arch in PRESETS.items():
            new, _note = switch_model(base, key)
            assert arch.heads % new.tp == 0 and new.pp <= arch.layers and new.n_gpus == base.n_gpus
            assert base.tp % new.tp == 0 and base.pp % new.pp == 0


def test_editable_fields_are_declared_and_their_range_is_the_one_enforced():
    """One declaration (engines.core.params.param) gives the dock its control and the engine its check."""
    import pytest
    from engines.core.errors import ValidationError
    from engines.core.params import declared_fields
    from engines.core.scenario import FIELD_NAMES, STRATEGY_LABELS, Scenario

    assert set(declared_fields(Scenario)) == FIELD_NAMES - {"model", "arch"}
    lo, hi = Scenario.limits("gpus_per_node")
    Scenario(gpus_per_node=hi, n_gpus=hi)
    with pytest.raises(ValidationError) as exc:
        Scenario(gpus_per_node=hi + 1)
    assert exc.value.field == "gpus_per_node" and f"{lo}…{hi}" in str(exc.value)
    assert Scenario.spec("strategy")["choice_labels"] == STRATEGY_LABELS
    with pytest.raises(ValidationError, match="internode_gbps"):
        Scenario(internode_gbps=0.0)                 # the declared lower bound is open
