"""Transformer architectures and their exact parameter counts.

Llama-style count (untied, RMSNorm, SwiGLU, no biases), with d = h / n_heads:
    P = 2·V·h + L·[h·n_h·d + 2·h·n_kv·d + n_h·d·h + 3·h·ffn + 2h] + h
minus V·h when the embeddings are tied. GPT-style (GeLU MLP, LayerNorm, biases, learned
positions) is counted term by term in :meth:`ModelArch.param_count`. Sources: the models'
``config.json`` files and Brown et al. 2020 Table 2.1 (GPT-3).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Mapping

from engines.core.assets import load_json_asset
from engines.core.errors import ValidationError, require, require_bool, require_choice, require_int


@dataclass(frozen=True)
class ModelArch:
    """A decoder-only transformer's shape. Validated on construction."""

    label: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    tied_embeddings: bool = False
    mlp: str = "swiglu"          # "swiglu" (3 matrices) or "gelu" (2 matrices)
    norm: str = "rmsnorm"        # "rmsnorm" (weight) or "layernorm" (weight + bias)
    bias: bool = False           # linear-layer biases (GPT-2/3 style)
    max_positions: int = 0       # learned absolute position embeddings (0: rotary, none)
    params_override: int | None = None  # when a paper states only Ψ (ZeRO's 7.5B)
    source: str = ""

    def __post_init__(self) -> None:
        require_int(self.layers, "layers", 1, 100_000)
        require_int(self.hidden, "hidden", 1, 1_000_000)
        require_int(self.heads, "heads", 1, 100_000)
        require_int(self.kv_heads, "kv_heads", 1, self.heads)
        require_int(self.ffn, "ffn", 1, 10_000_000)
        require_int(self.vocab, "vocab", 1, 10_000_000)
        require_int(self.max_positions, "max_positions", 0, 100_000_000)
        require(self.hidden % self.heads == 0, "heads", f"hidden {self.hidden} is not divisible by heads {self.heads}",
                "a divisor of hidden")
        require(self.heads % self.kv_heads == 0, "kv_heads", f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}",
                "a divisor of heads")
        require_choice(self.mlp, "mlp", ("swiglu", "gelu"))
        require_choice(self.norm, "norm", ("rmsnorm", "layernorm"))
        require(isinstance(self.label, str) and self.label != "", "label", f"expected a name, got {self.label!r}",
                "non-empty text")
        require_bool(self.tied_embeddings, "tied_embeddings")
        require_bool(self.bias, "bias")
        if self.params_override is not None:
            require_int(self.params_override, "params_override", 1)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def layer_params(self) -> int:
        """Parameters in one transformer block (attention + MLP + its norms)."""
        h, d = self.hidden, self.head_dim
        attn = h * self.heads * d + 2 * h * self.kv_heads * d + self.heads * d * h
        if self.bias:
            attn += self.heads * d + 2 * self.kv_heads * d + h
        n_mats = 3 if self.mlp == "swiglu" else 2
        mlp = n_mats * h * self.ffn
        if self.bias:
            mlp += (2 if self.mlp == "swiglu" else 1) * self.ffn + h
        norm = 2 * (2 * h if self.norm == "layernorm" else h)
        return attn + mlp + norm

    def embedding_params(self) -> int:
        """Token embedding, learned positions and (if untied) the output head."""
        emb = self.vocab * self.hidden + self.max_positions * self.hidden
        if not self.tied_embeddings:
            emb += self.vocab * self.hidden
        return emb

    def param_count(self) -> int:
        """Exact integer parameter count from the architecture (or the paper's Ψ when overridden)."""
        if self.params_override is not None:
            return self.params_override
        final_norm = 2 * self.hidden if self.norm == "layernorm" else self.hidden
        return self.embedding_params() + self.layers * self.layer_params() + final_norm

    def largest_layer_params(self) -> int:
        """Largest single parameter tensor group gathered at once by ZeRO-3/FSDP (one block, or the embedding)."""
        return max(self.layer_params(), self.vocab * self.hidden)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> "ModelArch":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValidationError("model", f"unknown architecture keys {sorted(unknown)}", ", ".join(sorted(known)))
        try:
            return cls(**dict(data))
        except TypeError as exc:
            raise ValidationError("model", str(exc)) from None


def _load_presets() -> dict[str, ModelArch]:
    raw = load_json_asset("presets", "models.json")
    return {key: ModelArch.from_dict(val) for key, val in raw.items() if not key.startswith("_")}


PRESETS: dict[str, ModelArch] = _load_presets()
"""Named architectures: llama3-8b, llama3-70b, llama3-405b, gpt3-175b, zero-7.5b, smollm2-135m."""
