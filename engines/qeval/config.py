"""One configuration of further quantization applied to the whole SmolLM2 model (frozen, validated).

Weights: asymmetric min-max round-to-nearest (``rtn``), GPTQ (Frantar et al., ICLR'23, arXiv
2210.17323) or AWQ (Lin et al., MLSys'24, arXiv 2306.00978), as implemented in
:mod:`engines.quant`, on every linear layer of every block; the output head (tied to the embedding
in SmolLM2) is quantized only with ``include_head``. ``group_size=None`` is one scale per output
channel; otherwise ``group_size`` consecutive input columns share a scale and zero.
KV cache: keys and values rounded to ``k_bits``/``v_bits`` inside attention, with scales per token
(across a head's channels) or per channel (across a block of tokens, as KIVI, Liu et al. 2024, arXiv
2402.02750); ``*-pre-rope`` quantizes keys before the rotary embedding (KVQuant, Hooper et al.
2024, arXiv 2401.18079). 16 bits means "left as they are". Calibration (GPTQ, AWQ only):
``calib_tokens`` tokens of ``calib_domain`` text, disjoint from the evaluation text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engines.core.params import ParamsBase, param

WEIGHT_BITS = (16, 8, 6, 5, 4, 3, 2)
GROUP_SIZES = (None, 32, 64, 128)
METHODS = ("rtn", "gptq", "awq", "bf16")   # bf16: weights rounded to bfloat16 (the noise floor)
KV_BITS = (16, 8, 6, 5, 4, 3, 2)
K_AXES = ("token", "channel", "token-pre-rope", "channel-pre-rope")
V_AXES = ("token", "channel")
CALIB_DOMAINS = ("prose", "code", "chat")
CALIB_TOKENS = (128, 256, 512, 1024, 2048)
BUDGETS = ("quick", "full")
KV_CHANNEL_BLOCK = 32   # tokens that share one per-channel scale (KIVI's group along tokens)


@dataclass(frozen=True)
class QuantConfig(ParamsBase):
    """What is quantized and how; ``QuantConfig()`` is the baseline (the shipped weights as they are)."""

    version: ClassVar[int] = 1

    weight_bits: int = param(16, label="Weight bits", choices=WEIGHT_BITS,
                             tip="16 = the baseline weights (GGUF Q4_1 de-quantized), not re-quantized")
    group_size: int | None = param(None, label="Group size", choices=GROUP_SIZES,
                                   tip="None = one scale per output channel")
    method: str = param("rtn", label="Method", choices=METHODS)
    include_head: bool = param(False, label="Quantize output head")
    k_bits: int = param(16, label="Key bits", choices=KV_BITS)
    k_axis: str = param("token", label="Key scales", choices=K_AXES)
    v_bits: int = param(16, label="Value bits", choices=KV_BITS)
    v_axis: str = param("token", label="Value scales", choices=V_AXES)
    calib_tokens: int = param(1024, label="Calibration tokens", choices=CALIB_TOKENS)
    calib_domain: str = param("prose", label="Calibration text", choices=CALIB_DOMAINS)

    def __post_init__(self) -> None:
        super().__post_init__()
        from engines.core.errors import require

        require(self.method != "bf16" or self.weight_bits == 16, "method",
                "bf16 rounds the 16-bit weights: set weight_bits to 16", "rtn, gptq or awq below 16 bits")

    @property
    def quantizes_weights(self) -> bool:
        return self.weight_bits < 16

    @property
    def calibrated(self) -> bool:
        """True when the weights depend on calibration text (GPTQ or AWQ at < 16 bits)."""
        return self.quantizes_weights and self.method != "rtn"

    def canonical(self) -> "QuantConfig":
        """The same configuration with fields that cannot matter reset, so equal effects share one cache entry."""
        kw = self.to_dict()
        if not self.quantizes_weights:
            kw.update(group_size=None, method="bf16" if self.method == "bf16" else "rtn", include_head=False)
        if not self.calibrated:
            kw.update(calib_tokens=1024, calib_domain="prose")
        if self.k_bits == 16:
            kw["k_axis"] = "token"
        if self.v_bits == 16:
            kw["v_axis"] = "token"
        return QuantConfig(**kw)

    def label(self) -> str:
        """A short name such as ``W4 g128 GPTQ (prose 1024) · K4/ch V4/tok``."""
        parts = ["bf16 weights"] if self.method == "bf16" else []
        if self.quantizes_weights:
            w = f"W{self.weight_bits} " + ("per channel" if self.group_size is None else f"g{self.group_size}")
            if self.method != "rtn":
                w += f" {self.method.upper()} ({self.calib_domain} {self.calib_tokens})"
            if self.include_head:
                w += " +head"
            parts.append(w)
        axis = {"token": "tok", "channel": "ch", "token-pre-rope": "tok pre-RoPE", "channel-pre-rope": "ch pre-RoPE"}
        if self.k_bits < 16:
            parts.append(f"K{self.k_bits}/{axis[self.k_axis]}")
        if self.v_bits < 16:
            parts.append(f"V{self.v_bits}/{axis[self.v_axis]}")
        return " · ".join(parts) or "baseline"
