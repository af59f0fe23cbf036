"""The shared scenario every panel reads: model, cluster, training set-up, serving set-up.

Pure data with validation and a versioned JSON form; the Qt evented wrapper lives in
``explorer/scenario_model.py``. Dataclass fields are flat so each one can carry its own signal.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from engines.core.errors import ValidationError, require, require_bool, require_choice, require_int, require_number
from engines.core.hardware import GPUS
from engines.core.models import PRESETS, ModelArch
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


INT_RANGES: dict[str, tuple[int, int]] = {  # the allowed range of each integer field (editors use it too)
    "n_gpus": (1, 1_000_000),
    "gpus_per_node": (1, 64),
    "tp": (1, 1024),
    "pp": (1, 1024),
    "micro_batch": (1, 65_536),
    "seq_len": (1, 10_000_000),
    "grad_accum": (1, 100_000),
    "serve_batch": (1, 100_000),
    "serve_context": (1, 10_000_000),
}


@dataclass(frozen=True)
class Scenario:
    """One coherent set-up. Construct with keywords; every field is validated."""

    # model
    model: str = "llama3-8b"                    # a key of engines.core.models.PRESETS, or "custom"
    arch: ModelArch = field(default_factory=lambda: PRESETS["llama3-8b"])
    # cluster
    gpu: str = "h100-sxm"
    n_gpus: int = 64
    gpus_per_node: int = 8
    tp: int = 1
    pp: int = 1
    internode_gbps: float = 50.0                # per-GPU network bandwidth, GB/s (400 Gb/s NIC)
    # training
    strategy: str = "zero3"
    micro_batch: int = 1
    seq_len: int = 4096
    grad_accum: int = 1
    precision: str = "bf16"
    optimizer: str = "adamw"
    recompute: str = "selective"
    sequence_parallel: bool = False
    offload_optimizer: bool = False
    offload_params: bool = False
    offload_target: str = "cpu"                 # one of OFFLOAD_TARGETS, for both offload flags
    # serving
    weight_bits: int = 16
    kv_bits: int = 16
    serve_batch: int = 8
    serve_context: int = 8192

    def __post_init__(self) -> None:
        require(isinstance(self.model, str) and (self.model == "custom" or self.model in PRESETS), "model", f"unknown preset {self.model!r}",
                ", ".join([*PRESETS, "custom"]))
        require(isinstance(self.arch, ModelArch), "arch", "must be a ModelArch")
        require_choice(self.gpu, "gpu", tuple(GPUS))
        require_int(self.n_gpus, "n_gpus", *INT_RANGES["n_gpus"])
        require_int(self.gpus_per_node, "gpus_per_node", *INT_RANGES["gpus_per_node"])
        require_int(self.tp, "tp", *INT_RANGES["tp"])
        require_int(self.pp, "pp", *INT_RANGES["pp"])
        require_number(self.internode_gbps, "internode_gbps", 0, 100_000, lo_open=True)
        require(self.n_gpus % (self.tp * self.pp) == 0, "n_gpus",
                f"{self.n_gpus} GPUs cannot be split into TP {self.tp} × PP {self.pp}", "a multiple of tp × pp")
        require(self.arch.heads % self.tp == 0, "tp", f"TP {self.tp} does not divide {self.arch.heads} heads",
                "a divisor of the head count")
        require(self.pp <= self.arch.layers, "pp", f"PP {self.pp} exceeds {self.arch.layers} layers",
                f"1…{self.arch.layers}")
        for flag in ("sequence_parallel", "offload_optimizer", "offload_params"):
            require_bool(getattr(self, flag), flag)
        require_choice(self.strategy, "strategy", STRATEGIES)
        require_choice(self.offload_target, "offload_target", OFFLOAD_TARGETS)
        require_int(self.micro_batch, "micro_batch", *INT_RANGES["micro_batch"])
        require_int(self.seq_len, "seq_len", *INT_RANGES["seq_len"])
        require_int(self.grad_accum, "grad_accum", *INT_RANGES["grad_accum"])
        require_choice(self.precision, "precision", PRECISIONS)
        require_choice(self.optimizer, "optimizer", OPTIMIZERS)
        require_choice(self.recompute, "recompute", RECOMPUTE)
        require(not self.sequence_parallel or self.tp > 1, "sequence_parallel",
                "sequence parallelism needs TP > 1", "off when tp = 1")
        require_choice(self.weight_bits, "weight_bits", WEIGHT_BITS)
        require_choice(self.kv_bits, "kv_bits", KV_BITS)
        require_int(self.serve_batch, "serve_batch", *INT_RANGES["serve_batch"])
        require_int(self.serve_context, "serve_context", *INT_RANGES["serve_context"])

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
