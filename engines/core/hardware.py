"""The GPU catalogue (memory, HBM bandwidth, dense tensor peaks, board power), loaded from ``assets/presets/gpus.json``."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.assets import load_json_asset
from engines.core.errors import require_choice


@dataclass(frozen=True)
class GPU:
    key: str
    label: str
    memory_gb: float       # 1e9 bytes
    bandwidth_gbps: float  # HBM GB/s
    bf16_tflops: float     # dense
    fp8_tflops: float      # dense, 0 = unsupported
    int8_tops: float       # dense
    int4_tops: float       # dense, 0 = no int4 tensor-core MMA (Ampere and Ada have it; Hopper, Blackwell, CDNA3 do not)
    nvlink_gbps: float     # intra-node per-GPU bandwidth
    source: str
    tdp_w: float = 0.0     # board power (TDP/TGP) in W from the datasheet, 0 = unknown
    tdp_source: str = ""

    @property
    def memory_bytes(self) -> float:
        return self.memory_gb * 1e9

    def peak_flops(self, precision: str = "bf16") -> float:
        """Dense peak in FLOP/s (OP/s for integers) for ``bf16`` (also fp16), ``fp8``, ``int8`` or ``int4``;
        0 where the card has no tensor-core path for that format."""
        precision = {"fp16": "bf16"}.get(precision, precision)
        require_choice(precision, "precision", ("bf16", "fp8", "int8", "int4"))
        return {"bf16": self.bf16_tflops, "fp8": self.fp8_tflops, "int8": self.int8_tops,
                "int4": self.int4_tops}[precision] * 1e12


GPUS: dict[str, GPU] = {k: GPU(key=k, **v) for k, v in load_json_asset("presets", "gpus.json").items()
                        if not k.startswith("_")}


def gpu(key: str) -> GPU:
    require_choice(key, "gpu", tuple(GPUS))
    return GPUS[key]
