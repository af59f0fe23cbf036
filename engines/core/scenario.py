"""The shared scenario every panel reads: model, cluster, training set-up, serving set-up.

Pure data with validation and a versioned JSON form; the Qt evented wrapper lives in
``explorer/scenario_model.py``. Dataclass fields are flat so each one can carry its own signal.
Every editable field is declared with :func:`engines.core.params.param` (label, unit, range or
choices, tooltip), as a panel's ``Params`` are: validation, the scenario dock's controls and their
error messages all read that one declaration.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from engines.core.errors import ValidationError, require
from engines.core.hardware import GPUS
from engines.core.models import PRESETS, ModelArch
from engines.core.params import param, spec_of, validate_fields
from engines.core.versioned import Step, upgrade

SCHEMA_VERSION = 1
MIGRATIONS: dict[int, Step] = {}
"""Scenario file migrations, ``{v: step}`` turning version v into v + 1 (none yet: version 1 is current)."""

STRATEGIES = ("dp", "zero1", "zero2", "zero3", "fsdp", "fsdp-hybrid")
PRECISIONS = ("bf16", "fp16", "fp32")
OPTIMIZERS = ("adamw", "sgd-momentum", "adam-8bit")
RECOMPUTE = ("none", "selective", "full")
WEIGHT_BITS = (16, 8, 4)
KV_BITS = (16, 8, 4)
OFFLOAD_TARGETS = ("cpu", "nvme")       # where offloaded states live: CPU RAM (ZeRO-Offload) or NVMe (ZeRO-Infinity)
STRATEGY_LABELS = {   # the long names every view that names a strategy shows (engines.memory.labels re-exports)
    "dp": "DP (no sharding)",
    "zero1": "ZeRO-1 (P_os)",
    "zero2": "ZeRO-2 (P_os+g)",
    "zero3": "ZeRO-3 (P_os+g+p)",
    "fsdp": "FSDP full shard",
    "fsdp-hybrid": "FSDP hybrid shard",
}
_BITS_LABELS = {b: f"{b}-bit" for b in (16, 8, 4)}


@dataclass(frozen=True)
class Scenario:
    """One coherent set-up. Construct with keywords; every field is validated."""

    # model
    model: str = "llama3-8b"                    # a key of engines.core.models.PRESETS, or "custom"
    arch: ModelArch = field(default_factory=lambda: PRESETS["llama3-8b"])
    # cluster
    gpu: str = param("h100-sxm", label="GPU", choices=tuple(GPUS), choice_labels={k: g.label for k, g in GPUS.items()})
    n_gpus: int = param(64, 1, 1_000_000, label="GPUs", tip="Total GPU count = DP × TP × PP")
    gpus_per_node: int = param(8, 1, 64, label="GPUs per node", tip="GPUs joined by NVLink inside one server")
    tp: int = param(1, 1, 1024, label="Tensor parallel (TP)", tip="Splits each layer's matrices; must divide the heads")
    pp: int = param(1, 1, 1024, label="Pipeline parallel (PP)", tip="Splits the layers into stages")
    internode_gbps: float = param(50.0, 0, 100_000, lo_open=True, decimals=2, label="Network per GPU", unit="GB/s",
                                  tip="Inter-node bandwidth per GPU (400 Gb/s ≈ 50 GB/s)")
    # training
    strategy: str = param("zero3", label="Sharding", choices=STRATEGIES, choice_labels=STRATEGY_LABELS)
    micro_batch: int = param(1, 1, 65_536, label="Micro-batch", tip="Sequences per forward pass per GPU")
    seq_len: int = param(4096, 1, 10_000_000, label="Sequence length", tip="Tokens per training sequence")
    grad_accum: int = param(1, 1, 100_000, label="Gradient accumulation", tip="Micro-batches per optimizer step")
    precision: str = param("bf16", label="Precision", choices=PRECISIONS)
    optimizer: str = param("adamw", label="Optimizer", choices=OPTIMIZERS,
                           choice_labels={"adamw": "AdamW (12 B/param)", "sgd-momentum": "SGD + momentum",
                                          "adam-8bit": "8-bit Adam"})
    recompute: str = param("selective", label="Recomputation", choices=RECOMPUTE)
    # a check box's text is short (it does not wrap: a 1280-px projector's dock at presenter size); the tip is full
    sequence_parallel: bool = param(False, label="Sequence parallel",
                                    tip="Sequence parallelism: LayerNorm and dropout activations split over the "
                                        "tensor-parallel group (Korthikanti et al. 2022)")
    offload_optimizer: bool = param(False, label="Offload optimizer",
                                    tip="Offload the optimizer states (fp32 master weights and Adam moments) to the "
                                        "target below (ZeRO-Offload)")
    offload_params: bool = param(False, label="Offload parameters",
                                 tip="Offload the parameter shards to the target below (ZeRO-3 / FSDP only; "
                                     "ZeRO-Infinity)")
    offload_target: str = param("cpu", label="Offload to", choices=OFFLOAD_TARGETS,    # for both offload flags
                                choice_labels={"cpu": "CPU RAM (ZeRO-Offload)", "nvme": "NVMe (ZeRO-Infinity)"})
    # serving
    weight_bits: int = param(16, label="Weight bits", choices=WEIGHT_BITS, choice_labels=_BITS_LABELS)
    kv_bits: int = param(16, label="KV-cache bits", choices=KV_BITS, choice_labels=_BITS_LABELS)
    serve_batch: int = param(8, 1, 100_000, label="Serving batch", tip="Concurrent sequences per replica")
    serve_context: int = param(8192, 1, 10_000_000, label="Serving context", tip="Tokens of context per sequence")

    def __post_init__(self) -> None:
        require(isinstance(self.model, str) and (self.model == "custom" or self.model in PRESETS), "model", f"unknown preset {self.model!r}",
                ", ".join([*PRESETS, "custom"]))
        require(isinstance(self.arch, ModelArch), "arch", "must be a ModelArch")
        validate_fields(self)          # each declared field against its range or choices
        require(self.n_gpus % (self.tp * self.pp) == 0, "n_gpus",
                f"{self.n_gpus} GPUs cannot be split into TP {self.tp} × PP {self.pp}", "a multiple of tp × pp")
        require(self.arch.heads % self.tp == 0, "tp", f"TP {self.tp} does not divide {self.arch.heads} heads",
                "a divisor of the head count")
        require(self.pp <= self.arch.layers, "pp", f"PP {self.pp} exceeds {self.arch.layers} layers",
                f"1…{self.arch.layers}")
        require(not self.sequence_parallel or self.tp > 1, "sequence_parallel",
                "sequence parallelism needs TP > 1", "off when tp = 1")

    @classmethod
    def spec(cls, name: str) -> dict:
        """The declaration of editable field ``name`` (label, unit, lo, hi, choices, choice_labels, tip)."""
        return spec_of(cls, name)

    @classmethod
    def limits(cls, name: str) -> tuple[int, int]:
        """The allowed range ``(lo, hi)`` of integer field ``name``, for engines that take it as an argument."""
        m = spec_of(cls, name)
        return m["lo"], m["hi"]

    # --- derived, cheap -------------------------------------------------------------------
    @property
    def dp(self) -> int:
        """Data-parallel degree: GPUs / (TP × PP)."""
        return self.n_gpus // (self.tp * self.pp)

    @property
    def zero_stage(self) -> int:
        """ZeRO stage equivalent of the strategy (FSDP full shard ≈ 3)."""
        return {"dp": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "fsdp-hybrid": 3}[self.strategy]

    def with_changes(self, **changes: Any) -> "Scenario":
        """A validated copy; choosing a preset model also loads its architecture."""
        if "model" in changes and changes["model"] != "custom" and "arch" not in changes:
            name = changes["model"]
            require(isinstance(name, str) and name in PRESETS, "model", f"unknown preset {name!r}",
                    ", ".join([*PRESETS, "custom"]))
            changes["arch"] = PRESETS[name]
        unknown = set(changes) - FIELD_NAMES
        if unknown:
            raise ValidationError(sorted(unknown)[0], "is not a scenario field", ", ".join(sorted(FIELD_NAMES)))
        return replace(self, **changes)

    # --- JSON ---------------------------------------------------------------------------
    def to_json_dict(self) -> dict:
        data = asdict(self)
        data["arch"] = self.arch.to_dict()
        return {"schema_version": SCHEMA_VERSION, "scenario": data}

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json_dict(cls, doc: Any) -> "Scenario":
        """Rebuild from :meth:`to_json_dict` output, explaining exactly what is wrong otherwise."""
        doc = upgrade(doc, SCHEMA_VERSION, MIGRATIONS, "scenario")
        body = doc.get("scenario")
        if not isinstance(body, Mapping):
            raise ValidationError("scenario", "missing or not an object")
        unknown = set(body) - FIELD_NAMES
        if unknown:
            raise ValidationError(sorted(unknown)[0], "is not a scenario field", ", ".join(sorted(FIELD_NAMES)))
        values = dict(body)
        if "arch" in values:
            if not isinstance(values["arch"], Mapping):
                raise ValidationError("arch", "must be an object")
            values["arch"] = ModelArch.from_dict(values["arch"])
        elif isinstance(values.get("model", "llama3-8b"), str) and values.get("model", "llama3-8b") in PRESETS:
            values["arch"] = PRESETS[values.get("model", "llama3-8b")]
        return cls(**values)

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        from engines.core.reading import load_json   # deep nesting, 5,000-digit integers: refused, named

        try:
            doc = load_json(text, "file")
        except ValidationError as exc:
            raise ValidationError("file", f"not a scenario file: {str(exc).split(': ', 1)[-1]}") from None
        return cls.from_json_dict(doc)


FIELD_NAMES: frozenset[str] = frozenset(f.name for f in fields(Scenario))
