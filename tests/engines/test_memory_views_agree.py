"""Every view of the memory panel shows ONE per-GPU figure: the headline (the scenario's own
breakdown), the strategy bars, the sharding animation's key frames, the sweep over GPU counts and
the memory verdict the step-time views draw must agree for every scenario and every offload
combination. Qt-free: each view draws an engine result, so the results are what is compared."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import memory as mem
from engines.core.models import PRESETS
from engines.core.scenario import STRATEGIES, Scenario
from engines.memory.analytic import hybrid_valid
from engines.memory.study import SWEEP_MAX_GPUS, memory_study

OFFLOADS = list(itertools.product((False, True), (False, True), ("cpu", "nvme")))
REL = 1e-12   # the views must agree to float rounding


@st.composite
def scenarios(draw, offload_optimizer: bool, offload_params: bool, target: str):
    model = draw(st.sampled_from(sorted(PRESETS)))
    arch = PRESETS[model]
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if arch.heads % t == 0]))
    pp = draw(st.sampled_from([p for p in (1, 2, 4) if p <= arch.layers]))
    dp = draw(st.sampled_from([1, 2, 4, 8, 16, 64]))
    per_node = draw(st.sampled_from([8, 16]))
    strategies = [s for s in STRATEGIES if s != "fsdp-hybrid" or hybrid_valid(dp, per_node, tp, pp)]
    sc = Scenario(model=model, arch=arch, tp=tp, pp=pp, n_gpus=tp * pp * dp, gpus_per_node=per_node,
                  strategy=draw(st.sampled_from(strategies)),
                  micro_batch=draw(st.integers(1, 4)), seq_len=draw(st.sampled_from([512, 2048, 8192])),
                  grad_accum=draw(st.integers(1, 8)),
                  precision=draw(st.sampled_from(["bf16", "fp16", "fp32"])),
                  optimizer=draw(st.sampled_from(["adamw", "sgd-momentum", "adam-8bit"])),
                  recompute=draw(st.sampled_from(["none", "selective", "full"])),
                  sequence_parallel=draw(st.booleans()) and tp > 1,
                  offload_optimizer=offload_optimizer, offload_params=offload_params, offload_target=target)
    options = mem.Options(fp32_grad_accum=draw(st.booleans()), wrap_blocks=draw(st.sampled_from([1, 2, 0])),
                          prefetch=draw(st.booleans()))
    return sc, options


def _key_frame(study, strategy: str) -> int:
    """The animation frame that shows ``strategy``'s stage sharded: the end of its chapter."""
    stage = mem.STAGE_OF[strategy]
    return len(study.frames) - 1 if stage == 3 else study.chapters[stage + 1][0] - 1


def _check_views_agree(sc: Scenario, options: mem.Options) -> None:
    study = memory_study(sc, options)
    headline = study.own
    assert headline.total == mem.breakdown(sc, sc.strategy, options).total
    n = sc.n_gpus
    for row, (s, bar) in enumerate(zip(study.strategies, study.breakdowns)):
        if bar is None:
            continue
        if s == sc.strategy:
            assert bar.total == headline.total
        # the sweep over GPU counts, at the scenario's own count (the sweep spans 1…1024)
        if n <= SWEEP_MAX_GPUS:
            assert study.sweep.totals[row, n - 1] == pytest.approx(bar.total, rel=REL), ("sweep", s)
        # the step-time views' memory verdict (the throughput chart's solid stretch)
        assert bool(study.fits_at(s, np.array([n]))[0]) == bar.fits, ("fits", s)
    # the sharding animation: the frame the panel opens on is the headline, block by block
    opening = study.frames[study.default_frame]
    assert opening.total == pytest.approx(headline.total, rel=REL), "animation"
    for c in mem.CATEGORIES:
        assert opening.bytes[c] == pytest.approx(getattr(headline, c), rel=REL, abs=1e-6), c
    blocks = study.shard_blocks(study.default_frame)
    assert sum(b.total for b in blocks) == pytest.approx(headline.total, rel=REL)
    # its last frame is the bar of the stage-3 strategy it ends on
    last = study.frames[-1]
    final = sc.strategy if sc.strategy == "fsdp-hybrid" else "zero3"
    assert last.total == pytest.approx(study.by_strategy()[final].total, rel=REL)
    for s in ("dp", "zero1", "zero2"):
        assert study.frames[_key_frame(study, s)].total == pytest.approx(study.by_strategy()[s].total, rel=REL)


@pytest.mark.parametrize("offload_optimizer, offload_params, target", OFFLOADS)
def test_every_view_shows_the_same_bytes_per_gpu(offload_optimizer, offload_params, target):
    @settings(max_examples=25, deadline=None)
    @given(scenarios(offload_optimizer, offload_params, target))
    def check(case):
        _check_views_agree(*case)

    check()


def test_the_reported_case_llama3_8b_zero3_offload_optimizer():
    """Llama 3 8B on 8 H100s, ZeRO-3, optimizer offloaded: the headline put 0 optimizer bytes on the
    GPU while the animation ended at 40.24 GB with 12.05 GB of optimizer states."""
    sc = Scenario().with_changes(model="llama3-8b", gpu="h100-sxm", n_gpus=8, tp=1, pp=1, strategy="zero3",
                                 offload_optimizer=True)
    study = memory_study(sc)
    assert study.own.optimizer == 0 and study.own.cpu > 0
    assert study.frames[-1].bytes["optimizer"] == 0
    assert study.frames[-1].total == study.own.total
    assert study.frames[-1].host == pytest.approx(study.own.cpu)


@pytest.mark.parametrize("target, where", [("cpu", "CPU"), ("nvme", "NVMe")])
def test_offloaded_states_leave_the_gpu_in_the_animation(target, where):
    sc = Scenario().with_changes(model="llama3-8b", n_gpus=8, tp=1, pp=1, strategy="zero3", offload_optimizer=True,
                                 offload_params=True, offload_target=target)
    study = memory_study(sc)
    first = {b.category: b for b in study.shard_blocks(0)}
    assert all(b.where == "GPU" and b.label == mem.CATEGORY_LABELS[b.category] for b in first.values())   # DP keeps it all on the GPU
    for category, stage in (("optimizer", "zero1"), ("grads", "zero2"), ("params", "zero3")):
        end = _key_frame(study, stage)
        start = study.chapters[mem.TIMELINE_STAGES.index(stage)][0]
        moving = {b.category: b for b in study.shard_blocks(start)}[category]
        assert moving.where == where and f"→ {where}" in moving.label and 0 < moving.total
        gone = {b.category: b for b in study.shard_blocks(end)}[category]
        assert gone.total == 0 and gone.kept == 0 and gone.label.endswith(f"on {where}"), gone.label
        assert mem.CATEGORY_LABELS[category] in gone.label
    assert study.frames[-1].host > 0
    plain = memory_study(sc.with_changes(offload_optimizer=False, offload_params=False))
    assert all(b.where == "GPU" for b in plain.shard_blocks(len(plain.frames) - 1))
    assert plain.frames[-1].host == 0


def test_the_verdict_for_gpu_counts_beyond_the_sweep():
    """The throughput chart prices GPU counts past the sweep's 1…1024: its memory verdict comes
    from the same computation."""
    sc = Scenario().with_changes(model="llama3-8b", n_gpus=2048, tp=1, pp=1, strategy="zero3")
    study = memory_study(sc)
    assert SWEEP_MAX_GPUS < 2048
    assert bool(study.fits_at("zero3", np.array([2048]))[0]) == study.own.fits
