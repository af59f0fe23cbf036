"""Analytic training memory: published figures (ZeRO Fig. 1, Korthikanti Table 2 / §4 example),
exact Llama 3 counts, hand-worked cases, validation, and the vectorised sweep."""
from __future__ import annotations

import time

import numpy as np
import pytest

from engines import memory as mem
from engines.core.errors import ValidationError
from engines.core.models import PRESETS
from engines.core.scenario import STRATEGIES, Scenario

GB = 1e9


# --- ZeRO paper (Rajbhandari et al. 2020), Figure 1: Ψ = 7.5B, N_d = 64, K = 12 ----------------
@pytest.mark.parametrize("stage, published_gb", [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_figure1_7_5b_on_64_gpus(stage, published_gb):
    states = mem.model_state_bytes(7.5e9, 64, stage)
    assert round(states.total / GB, 1) == published_gb


def test_zero_stage_formulas_hand_worked():
    s = mem.model_state_bytes(7.5e9, 4, 2)  # 2Ψ + 14Ψ/4 = 15 + 26.25 GB
    assert s.params == 15e9 and s.grads == pytest.approx(3.75e9) and s.optimizer == pytest.approx(22.5e9)
    assert s.total == pytest.approx(41.25e9)
    assert mem.model_state_bytes(7.5e9, 16, 1).total / GB == pytest.approx(35.625)
    assert mem.model_state_bytes(1e12, 1024, 3).total / GB == pytest.approx(15.625)


def test_seventy_b_lesson_figures():
    assert mem.model_state_bytes(70e9, 1, 0).total / GB == pytest.approx(1120)
    assert mem.model_state_bytes(70e9, 64, 3).total / GB == pytest.approx(17.5)
    assert mem.model_state_bytes(70e9, 64, 0).total / GB == pytest.approx(1120)  # DP keeps N copies


def test_all_stages_equal_on_one_gpu_and_optimizer_bytes_respected():
    totals = {mem.model_state_bytes(1e9, 1, st, 6).total for st in range(4)}
    assert totals == {10e9}


def test_model_state_validation():
    with pytest.raises(ValidationError) as e:
        mem.model_state_bytes(1e9, 0, 1)
    assert e.value.field == "n_gpus"
    with pytest.raises(ValidationError) as e:
        mem.model_state_bytes(1e9, -4, 1)
    assert e.value.field == "n_gpus"
    with pytest.raises(ValidationError) as e:
        mem.model_state_bytes(1e9, 8, 5)
    assert e.value.field == "stage"
    with pytest.raises(ValidationError) as e:
        mem.model_state_bytes(-1, 8, 1)
    assert e.value.field == "params"


# --- Korthikanti et al. 2022: GPT-3 175B, s=2048, b=1, h=12288, a=96, t=8 --------------------
@pytest.mark.parametrize("tp, sp, recompute, published_gb", [
    (1, False, "none", 2.869),
    (8, False, "none", 0.579),
    (8, True, "none", 0.359),
    (8, False, "selective", 0.327),
    (8, True, "selective", 0.107),
    (8, False, "full", 0.050),
])
def test_korthikanti_gpt3_per_layer(tp, sp, recompute, published_gb):
    got = mem.activation_bytes_per_layer(2048, 1, 12288, 96, tp=tp, sequence_parallel=sp, recompute=recompute)
    assert got / GB == pytest.approx(published_gb, abs=0.0006)


def test_korthikanti_34_plus_5as_over_h_and_selective_saving():
    # sbh(34 + 5as/h) with 5as/h = 80 for GPT-3: selective keeps 34/114 → saves 70 %
    full = mem.activation_bytes_per_layer(2048, 1, 12288, 96)
    sel = mem.activation_bytes_per_layer(2048, 1, 12288, 96, recompute="selective")
    assert full == 2048 * 12288 * 114
    assert 1 - sel / full == pytest.approx(0.70, abs=0.01)


def test_generalised_layer_formula_reduces_to_korthikanti_for_gpt3():
    arch = PRESETS["gpt3-175b"]
    for tp, sp, rc in [(1, False, "none"), (8, False, "none"), (8, True, "selective"), (8, False, "full")]:
        assert mem.layer_activation_bytes(arch, 2048, 1, tp, sp, rc) == pytest.approx(
            mem.activation_bytes_per_layer(2048, 1, 12288, 96, tp, sp, rc))


def test_fp32_activations_double_every_full_precision_term_of_gpt3():
    """At 4-byte elements the softmax output and the dropout output double; the 1-byte masks do not.
    Korthikanti's none-case sbh(34 + 5as/h) becomes sbh(66 + 9as/h) (masks: 2sbh and as²b)."""
    s, b, h, a = 2048, 1, 12288, 96
    got = mem.layer_activation_bytes(PRESETS["gpt3-175b"], s, b, 1, False, "none", element_bytes=4)
    assert got == pytest.approx(s * b * h * (66 + 9 * a * s / h))


def test_tp_past_the_kv_head_count_keeps_one_kv_head_per_gpu():
    """Llama 3 8B has 8 KV heads: at TP 16 each GPU still holds a whole K and V head (4sb·d), so
    the K/V activations stop shrinking at TP 8."""
    arch = PRESETS["llama3-8b"]
    s, d = 4096, arch.head_dim
    per_tp = {t: mem.layer_activation_bytes(arch, s, 1, t, True, "selective") for t in (8, 16)}
    kv_8, kv_16 = 4 * s * d * 8 / 8, 4 * s * d
    rest_8 = per_tp[8] - kv_8
    assert kv_16 == kv_8 and per_tp[16] == pytest.approx(rest_8 / 2 + kv_16)


def test_flags_and_huge_numbers_are_validated():
    with pytest.raises(ValidationError) as e:
        mem.activation_bytes_per_layer(2048, 1, 12288, 96, tp=8, sequence_parallel="false")
    assert e.value.field == "sequence_parallel"
    with pytest.raises(ValidationError) as e:
        mem.model_state_bytes(10**400, 1, 0)
    assert e.value.field == "params"
    with pytest.raises(ValidationError) as e:
        mem.model_state_bytes(1e9, 10**400, 3)
    assert e.value.field == "n_gpus"
    arch = PRESETS["smollm2-135m"].to_dict()
    with pytest.raises(ValidationError) as e:
        type(PRESETS["smollm2-135m"]).from_dict({**arch, "tied_embeddings": "false"})   # JSON "false" is truthy
    assert e.value.field == "tied_embeddings"


def test_llama_layer_terms_hand_worked():
    # Llama 3 8B, s=b=1 per token: replicated 8h, Q 2h, K+V 4·1024, proj 2h, SwiGLU 8f; core 2as
    arch = PRESETS["llama3-8b"]
    h, f = 4096, 14336
    expected = 8 * h + 2 * h + 4 * 1024 + 2 * h + 8 * f + 2 * 32 * 1
    assert mem.layer_activation_bytes(arch, 1, 1) == expected


def test_activation_validation():
    with pytest.raises(ValidationError) as e:
        mem.activation_bytes_per_layer(2048, 1, 12288, 96, tp=7)
    assert e.value.field == "tp"
    with pytest.raises(ValidationError) as e:
        mem.activation_bytes_per_layer(2048, 1, 12288, 96, recompute="some")
    assert e.value.field == "recompute"
    with pytest.raises(ValidationError) as e:
        mem.activation_bytes_per_layer(0, 1, 12288, 96)
    assert e.value.field == "seq_len"


# --- Llama 3 parameter counts (engines.core.models, lead-owned; used here) -------------------------
@pytest.mark.parametrize("key, count", [("llama3-8b", 8_030_261_248), ("llama3-70b", 70_553_706_496),
                                        ("llama3-405b", 405_853_388_800)])
def test_llama3_counts(key, count):
    assert PRESETS[key].param_count() == count


def test_stage_params_sum_to_model():
    for key in ("llama3-8b", "gpt3-175b", "smollm2-135m"):
        arch = PRESETS[key]
        assert sum(mem.stage_param_counts(arch, 1)) == arch.param_count()
    arch = PRESETS["llama3-70b"]
    assert sum(mem.stage_param_counts(arch, 4)) == arch.param_count()
    assert mem.stage_layers(80, 3) == [27, 27, 26]


# --- optimizers and precision ----------------------------------------------------------------
def test_optimizer_bytes():
    assert mem.optimizer_bytes_per_param("adamw", "bf16") == 12
    assert mem.optimizer_bytes_per_param("adamw", "fp32") == 8
    assert mem.optimizer_bytes_per_param("sgd-momentum", "bf16") == 8
    assert mem.optimizer_bytes_per_param("adam-8bit", "bf16") == pytest.approx(6 + 8 / 2048)


def test_fp32_grad_accumulation_is_20_bytes_per_param():
    sc = Scenario(n_gpus=1, strategy="dp", tp=1, pp=1)
    base = mem.breakdown(sc)
    acc = mem.breakdown(sc, options=mem.Options(fp32_grad_accum=True))
    psi = PRESETS["llama3-8b"].param_count()
    assert base.params + base.grads + base.optimizer == pytest.approx(16 * psi)
    assert acc.params + acc.grads + acc.optimizer == pytest.approx(20 * psi)


# --- whole breakdown -------------------------------------------------------------------------
def test_breakdown_model_states_match_zero_formula():
    sc = Scenario(model="llama3-70b", arch=PRESETS["llama3-70b"], n_gpus=64, strategy="zero3")
    b = mem.breakdown(sc)
    assert b.params + b.grads + b.optimizer == pytest.approx(16 * 70_553_706_496 / 64)
    assert b.total > b.params + b.grads + b.optimizer  # activations, buffers, reserve on top


def test_tp_pp_divide_parameters():
    arch = PRESETS["llama3-70b"]
    sc = Scenario(model="llama3-70b", arch=arch, n_gpus=64, tp=8, pp=4, strategy="dp")
    stages = mem.per_stage_memory(sc)
    assert len(stages) == 4
    assert sum(s.params for s in stages) * 8 == pytest.approx(2 * arch.param_count())
    # 1F1B: the first stage holds p in-flight micro-batches, the last one
    sc_acc = sc.with_changes(grad_accum=8)
    acts = [s.activations for s in mem.per_stage_memory(sc_acc)]
    assert acts[0] > acts[1] > acts[2]


def test_hybrid_shards_within_a_node():
    sc = Scenario(n_gpus=64, gpus_per_node=8, strategy="fsdp-hybrid")
    b = mem.breakdown(sc)
    assert b.shard == 8
    full = mem.breakdown(sc, "fsdp")
    assert b.params == pytest.approx(full.params * 64 / 8)
    assert b.comm.inter_bytes > 0 and b.comm.intra_bytes > 0


def test_offload_moves_optimizer_to_cpu():
    sc = Scenario(n_gpus=8, strategy="zero2", offload_optimizer=True)
    b = mem.breakdown(sc)
    psi = PRESETS["llama3-8b"].param_count()
    assert b.optimizer == 0 and b.grads == 0
    assert b.cpu == pytest.approx(16 * psi / 8)  # DeepSpeed estimator: (4 + 12)Ψ/N per GPU


def test_optimizer_offload_needs_a_zero_stage():
    """ZeRO-Offload (Ren et al. 2021) offloads the partitioned optimizer of a ZeRO stage; DeepSpeed
    has no optimizer offload for plain data parallelism. Under DP the flag is ignored, with a note,
    and DP keeps its full replica on the GPU, as parameter offload does below stage 3."""
    sc = Scenario(model="gpt3-175b", n_gpus=512, tp=8, pp=8, strategy="zero1", offload_optimizer=True)
    dp, z1 = mem.breakdown(sc, "dp"), mem.breakdown(sc, "zero1")
    plain = mem.breakdown(sc.with_changes(offload_optimizer=False), "dp")
    assert (dp.optimizer, dp.cpu, dp.total) == (plain.optimizer, 0, plain.total)
    assert any("optimizer offload needs ZeRO" in n for n in dp.notes)
    assert z1.optimizer == 0 and z1.cpu > 0 and not any("optimizer offload" in n for n in z1.notes)
    assert dp.total > z1.total          # before: DP with offload showed less than ZeRO-1 (179.6 < 181.7 GB)


def test_nvme_offload_moves_the_same_bytes_to_nvme():
    """ZeRO-Infinity places the offloaded states on NVMe: the GPU side is unchanged, CPU RAM → NVMe."""
    psi = PRESETS["llama3-8b"].param_count()
    for strategy, flags, expected in (("zero2", {"offload_optimizer": True}, 16 * psi / 8),
                                      ("zero3", {"offload_optimizer": True, "offload_params": True}, 18 * psi / 8)):
        on_cpu = mem.breakdown(Scenario(n_gpus=8, strategy=strategy, **flags))
        on_nvme = mem.breakdown(Scenario(n_gpus=8, strategy=strategy, offload_target="nvme", **flags))
        assert on_cpu.cpu == pytest.approx(expected) and on_cpu.nvme == 0      # (4 + 12)Ψ/N, + 2Ψ/N params
        assert on_nvme.nvme == pytest.approx(expected) and on_nvme.cpu == 0
        assert on_nvme.total == pytest.approx(on_cpu.total)
        assert any("NVMe" in n for n in on_nvme.notes)
    assert mem.breakdown(Scenario(n_gpus=8, offload_target="nvme")).nvme == 0   # no offload flag: nothing moves
    with pytest.raises(ValidationError) as err:
        Scenario(offload_target="tape")
    assert err.value.field == "offload_target"


def test_communication_volumes():
    sc = Scenario(n_gpus=64, gpus_per_node=8)
    dp = mem.communication(sc, "dp")
    z3 = mem.communication(sc, "zero3")
    assert dp.psi_multiple == pytest.approx(2 * 63 / 64)
    assert z3.psi_multiple / dp.psi_multiple == pytest.approx(1.5)
    psi = PRESETS["llama3-8b"].param_count()
    assert dp.total_bytes == pytest.approx(2 * 63 / 64 * psi * 2)
    assert dp.seconds == pytest.approx(dp.total_bytes / 50e9)  # crosses nodes: NIC bandwidth
    inside = mem.communication(Scenario(n_gpus=8, gpus_per_node=8), "dp")
    assert inside.seconds == pytest.approx(inside.total_bytes / 450e9)  # H100 NVLink 900/2
    acc = sc.with_changes(grad_accum=4)
    assert mem.communication(acc, "zero1").psi_multiple == dp.psi_multiple
    assert mem.communication(acc, "zero3").psi_multiple == pytest.approx(4 * z3.psi_multiple)


def test_fit_verdict_and_smallest_count():
    # 70B at seq 4096: ~109 GB of activations without recompute; full recompute keeps 2sbh per layer
    sc = Scenario(model="llama3-70b", arch=PRESETS["llama3-70b"], n_gpus=64, strategy="dp", recompute="full")
    assert not mem.breakdown(sc).fits
    assert not mem.breakdown(sc.with_changes(recompute="none"), "zero3").fits
    assert mem.breakdown(sc, "zero3").fits
    smallest = mem.smallest_fitting_gpus(sc)
    assert smallest["dp"] is None
    n = smallest["zero3"]
    assert n is not None
    assert mem.breakdown(sc.with_changes(n_gpus=n, strategy="zero3")).fits
    if n > 1:
        assert not mem.breakdown(sc.with_changes(n_gpus=n - 1, strategy="zero3")).fits


def test_sweep_matches_breakdown_and_is_fast():
    sc = Scenario(model="llama3-70b", arch=PRESETS["llama3-70b"], tp=2, pp=2, n_gpus=64, grad_accum=4)
    sw = mem.sweep(sc)
    assert sw.totals.shape == (len(STRATEGIES), 1024)
    assert np.isnan(sw.totals[0, 2])  # 3 GPUs is not a multiple of tp·pp
    for row, strategy in enumerate(STRATEGIES):
        for n in (4, 64, 1024):
            expected = mem.breakdown(sc.with_changes(n_gpus=n), strategy).total
            assert sw.totals[row, n - 1] == pytest.approx(expected, rel=1e-9)
    mem.sweep(sc)
    start = time.perf_counter()
    for _ in range(5):
        mem.sweep(sc)
    assert (time.perf_counter() - start) / 5 < 0.05  # target 5 ms; loose bound for shared CI


def test_timeline_ends_at_each_zero_stage():
    sc = Scenario(n_gpus=64)
    frames, chapters = mem.zero_timeline(sc)
    assert [c[1] for c in chapters] == [mem.STRATEGY_LABELS[s] for s in mem.TIMELINE_STAGES]
    for (start, _), stage in zip(chapters[1:], mem.TIMELINE_STAGES[1:]):
        end = next((s for s, _ in chapters if s > start), len(frames)) - 1
        b = mem.breakdown(sc, stage)
        got = frames[end].bytes
        assert got["params"] + got["grads"] + got["optimizer"] == pytest.approx(b.params + b.grads + b.optimizer)


def test_scenario_validation_names_fields():
    with pytest.raises(ValidationError) as e:
        Scenario(tp=3)
    assert e.value.field in ("n_gpus", "tp")
    with pytest.raises(ValidationError) as e:
        Scenario(model="llama3-8b", n_gpus=64, pp=64)
    assert e.value.field == "pp"
    with pytest.raises(ValidationError) as e:
        mem.breakdown(Scenario(), "zero5")
    assert e.value.field == "strategy"


def test_hybrid_needs_whole_nodes():
    sc = Scenario(n_gpus=12, gpus_per_node=8, strategy="fsdp-hybrid")  # DP 12: one and a half nodes
    with pytest.raises(ValidationError) as e:
        mem.breakdown(sc)
    assert e.value.field == "n_gpus"
    sw = mem.sweep(sc)
    row = sw.strategies.index("fsdp-hybrid")
    assert np.isnan(sw.totals[row, 11]) and not np.isnan(sw.totals[row, 15])
    assert mem.breakdown(sc.with_changes(n_gpus=4)).shard == 4  # part of one node: shard over all of it


def test_per_stage_total_is_sum_of_categories():
    sc = Scenario(model="llama3-70b", arch=PRESETS["llama3-70b"], n_gpus=64, tp=8, pp=4, grad_accum=4)
    for st in mem.per_stage_memory(sc):
        parts = st.params + st.grads + st.optimizer + st.activations + st.buffers + st.reserve
        assert st.total == pytest.approx(parts)
        assert st.reserve == pytest.approx(mem.DEFAULT_RESERVE_FRACTION * (parts - st.reserve))


def test_hybrid_shard_group_counts_dp_ranks_per_node_with_pipeline_stages():
    """Megatron's rank order (TP, then DP, then PP): a node of 8 with TP 2 holds 4 DP ranks of one
    pipeline stage whatever PP is, so hybrid sharding shards over those 4 (it used to divide by PP
    as well and shard over 1, i.e. not at all)."""
    sc = Scenario(n_gpus=64, gpus_per_node=8, tp=2, pp=4, strategy="fsdp-hybrid")   # DP 8
    b = mem.breakdown(sc)
    assert b.shard == 4
    from engines.pipeline.layout import rank_grid

    layout_node_dp = {r.dp_rank for r in rank_grid(64, 2, 4, 8).ranks if r.node == 0}
    assert len(layout_node_dp) == b.shard
    full = mem.breakdown(sc, "fsdp")                                  # FSDP shards over all DP 8
    assert b.params == pytest.approx(full.params * 8 / 4)


def test_embedding_dropout_mask_is_split_by_sequence_parallelism():
    """Korthikanti §4.3: the first stage's extra is sbhp/t with sequence parallelism (sbhp without)."""
    arch = PRESETS["gpt3-175b"]
    s, b, h = 2048, 1, 12288
    assert mem.embedding_activation_bytes(arch, s, b) == s * b * h
    assert mem.embedding_activation_bytes(arch, s, b, tp=8, sequence_parallel=True) == s * b * h / 8
    assert mem.embedding_activation_bytes(arch, s, b, tp=8, sequence_parallel=False) == s * b * h
    sc = Scenario(model="gpt3-175b", arch=arch, n_gpus=64, tp=8, pp=8, seq_len=2048, micro_batch=1,
                  grad_accum=64, sequence_parallel=True, recompute="selective")
    per_layer = mem.layer_activation_bytes(arch, s, b, 8, True, "selective")
    first = mem.stage_activations(sc)[0]
    assert first == pytest.approx(per_layer * 12 * 8 + s * b * h / 8 * 8)    # 12 layers × 8 in flight


@pytest.mark.parametrize("call, field", [
    (lambda: mem.communication(Scenario(), dp=0), "dp"),
    (lambda: mem.communication(Scenario(), "fsdp-hybrid", dp=0), "dp"),
    (lambda: mem.communication(Scenario(), dp=2.5), "dp"),
    (lambda: mem.embedding_activation_bytes(PRESETS["gpt3-175b"], 2048, 1, tp=0, sequence_parallel=True), "tp"),
    (lambda: mem.output_activation_bytes(PRESETS["llama3-8b"], 2048, 1, tp=0), "tp"),
    (lambda: mem.output_activation_bytes(PRESETS["llama3-8b"], -5, 1), "seq_len"),
    (lambda: mem.stage_layers(32, 0), "pp"),
    (lambda: mem.stage_layers(32, 33), "pp"),
    (lambda: mem.layer_activation_bytes(PRESETS["llama3-8b"], "5", 1), "seq_len"),
    (lambda: mem.layer_activation_bytes(PRESETS["llama3-8b"], -5, 1), "seq_len"),
    (lambda: mem.layer_activation_bytes(PRESETS["llama3-8b"], 5, 0), "micro_batch"),
    (lambda: mem.layer_activation_bytes(PRESETS["llama3-8b"], 5, 1, element_bytes=-2), "element_bytes"),
    (lambda: mem.layer_activation_bytes(PRESETS["llama3-8b"], 5, 1, tp=0), "tp"),
    (lambda: mem.model_state_bytes(1e308, 1, 0), "params"),
    (lambda: mem.model_state_bytes(1e300, 1, 0, optimizer_bytes_per_param=1e10), "optimizer_bytes_per_param"),
])
def test_public_building_blocks_reject_bad_input_naming_the_field(call, field):
    with pytest.raises(ValidationError) as e:
        call()
    assert e.value.field == field
