"""A real FSDP2 (fully_shard) run on 2 CPU processes over gloo: each rank holds 1/N of the states."""
from __future__ import annotations

import pytest

from engines.core.models import PRESETS

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs torch.distributed gloo")
def test_fsdp2_two_ranks_hold_half_the_states_each():
    from engines.memory.fsdp_probe import run_fsdp_probe

    result = run_fsdp_probe(PRESETS["smollm2-135m"], world_size=2)
    assert len(result.ranks) == 2
    psi = result.param_count
    # dim-0 sharding pads, so the shards sum to at least Ψ and each rank is within 5 % of Ψ/2
    assert sum(r.params for r in result.ranks) >= 4 * psi
    for r in result.ranks:
        assert r.params == pytest.approx(r.analytic_params, rel=0.05)
        assert r.grads == pytest.approx(r.analytic_grads, rel=0.05)
        assert r.optimizer == pytest.approx(r.analytic_optimizer, rel=0.05)
        # FSDP2's 4 + 4 + 8 per sharded parameter has the same total as ZeRO-3's 2 + 2 + 12
        assert r.params + r.grads + r.optimizer == pytest.approx(16 * psi / 2, rel=0.05)


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs torch.distributed gloo")
def test_fsdp2_probe_times_the_weight_all_gather_zero3_runs():
    from engines.memory.fsdp_probe import run_fsdp_probe

    result = run_fsdp_probe(PRESETS["smollm2-135m"], world_size=2)
    assert result.allgather_buffer_bytes == 2.0 * result.param_count          # the 16-bit weights, 2Ψ
    assert result.allgather_bytes_per_rank == pytest.approx(result.param_count)   # (N − 1)/N of it at N = 2
    assert result.allgather_seconds > 0
    assert result.allgather_gbps == pytest.approx(result.param_count / result.allgather_seconds / 1e9)
