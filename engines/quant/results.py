"""The quantization analysis of one layer as typed, frozen results: one entry per method with its
own fields (method key, bits, block size, α, threshold, error) and a display label made here, so no
view ever parses a label back into numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

WEIGHT_METHODS = ("rtn", "nf4", "fp8_e4m3", "gptq", "gptq_act_order", "awq")
"""Weight-only method keys, in the order the analysis runs them."""
FIX_METHODS = ("naive", "per_channel", "smoothquant", "rotation", "llm_int8")
"""W8A8 method keys: the naive baseline, per-channel scales and the three fixes."""


@dataclass(frozen=True)
class MethodError:
    """One weight-only method on the layer: its error and what it stores per weight."""

    method: str                    # a WEIGHT_METHODS key
    name: str                      # "RTN", "NF4", "FP8 E4M3", "GPTQ", "GPTQ act-order", "AWQ"
    bits: int                      # nominal code width
    block_size: int | None         # weights per scale (None: per tensor or per row)
    error: float                   # relative output error (weight-only ‖W−Ŵ‖/‖W‖ without activations)
    bits_per_weight: float         # codes plus scales and zeros
    scale_note: str | None = None  # how the scales are laid out when it is not the layer's group
    alpha: float | None = None     # AWQ's chosen α

    @property
    def label(self) -> str:
        """As shown: "NF4 (blocks of 64)"."""
        return f"{self.name} ({self.scale_note})" if self.scale_note else self.name


_FIX_NAMES = {"naive": "naive per-tensor W8A8", "per_channel": "per-channel W / per-token A",
              "rotation": "Hadamard rotation"}


@dataclass(frozen=True)
class FixError:
    """One W8A8 variant: the held-out relative output error, with α or the outlier threshold it used."""

    method: str                    # a FIX_METHODS key
    error: float
    alpha: float | None = None     # SmoothQuant's migration strength
    threshold: float | None = None  # LLM.int8's outlier threshold

    @property
    def label(self) -> str:
        """As shown: "SmoothQuant α=0.50", "LLM.int8 (threshold 6)"."""
        if self.method == "smoothquant":
            return f"SmoothQuant α={self.alpha:.2f}"
        if self.method == "llm_int8":
            return f"LLM.int8 (threshold {self.threshold:g})"
        return _FIX_NAMES[self.method]

    @property
    def legacy_key(self) -> str:
        """The key this entry had in the old ``LayerAnalysis.w8a8`` dict (α printed with ``:g``)."""
        return f"SmoothQuant α={self.alpha:g}" if self.method == "smoothquant" else self.label


@dataclass(frozen=True)
class WeightHistogram:
    """Counts of the weights over shared bin ``edges``: original, RTN and (with activations) AWQ."""

    edges: list
    original: list
    rtn: list
    awq: list | None = None


@dataclass(frozen=True)
class LayerAnalysis:
    """Everything the quantization panel draws for one layer (``explore.analyse``)."""

    name: str
    shape: tuple[int, int]
    rows_used: int
    bits: int
    group_size: int | None
    has_activations: bool
    weight_hist: WeightHistogram | None = None
    methods: tuple[MethodError, ...] = ()               # weight-only methods, WEIGHT_METHODS order
    awq_alpha: float | None = None
    awq_curve: list = field(default_factory=list)       # [(alpha, loss)]
    gptq_trace: list = field(default_factory=list)      # per processed column
    group_sweep: list = field(default_factory=list)     # {group, bpw, error, bpw_scale_only}
    fixes: tuple[FixError, ...] = ()                    # W8A8: naive, per-channel and the three fixes
    int8_fp16_fraction: float | None = None             # share of input columns LLM.int8 keeps in fp16
    sq_curve: list = field(default_factory=list)        # [(alpha, error)]
    act_max: list = field(default_factory=list)         # per-channel max|x| (held-out)
    rotated_max: list = field(default_factory=list)
    calib_act_max: tuple = ()                           # per-channel max|x| (calibration): SmoothQuant previews
    weight_col_max: tuple = ()                          # per-input-channel max|w| of the whole layer
    collapse: dict = field(default_factory=dict)
    schemes: list = field(default_factory=list)
    calib_tokens: int = 0                               # calibration tokens (0 without activations)
    heldout_tokens: int = 0                             # held-out tokens the errors are measured on

    def method(self, key: str) -> MethodError:
        """The weight-only entry of method ``key`` (a WEIGHT_METHODS key); KeyError if it did not run."""
        for m in self.methods:
            if m.method == key:
                return m
        raise KeyError(key)

    def fix(self, key: str) -> FixError:
        """The W8A8 entry of method ``key`` (a FIX_METHODS key); KeyError without activations."""
        for f in self.fixes:
            if f.method == key:
                return f
        raise KeyError(key)

    def lowest(self, keys=("rtn", "gptq", "gptq_act_order", "awq")) -> MethodError:
        """The method among ``keys`` with the lowest error."""
        return min((m for m in self.methods if m.method in keys), key=lambda m: m.error)

    def fixes_at(self, alpha: float) -> tuple[FixError, ...]:
        """The W8A8 entries with SmoothQuant at ``alpha`` when the sweep has it (else as analysed)."""
        error = dict(self.sq_curve).get(round(alpha, 2))
        if error is None:
            return self.fixes
        return tuple(FixError("smoothquant", error, alpha) if f.method == "smoothquant" else f for f in self.fixes)

    # The dicts this result had before it was typed, for scripts; keyed by label, derived, not stored.
    @property
    def weight_only(self) -> dict[str, float]:
        """Compatibility: {label: error} of the weight-only methods (use ``methods``)."""
        return {m.label: m.error for m in self.methods}

    @property
    def bpw(self) -> dict[str, float]:
        """Compatibility: {label: bits per weight} (use ``methods``)."""
        return {m.label: m.bits_per_weight for m in self.methods}

    @property
    def w8a8(self) -> dict[str, float]:
        """Compatibility: {label: error} of the W8A8 variants and ``_int8_fp16_fraction`` (use ``fixes``)."""
        out = {f.legacy_key: f.error for f in self.fixes}
        if self.int8_fp16_fraction is not None:
            out["_int8_fp16_fraction"] = self.int8_fp16_fraction
        return out
