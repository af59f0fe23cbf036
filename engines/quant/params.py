"""The quantization panel's knobs as data: tensor, bits, group, activation profile, α, KV block and bits."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import ValidationError
from engines.core.params import ParamsBase, param

PACK_LAYERS = ("smollm2.l20.q_proj", "smollm2.l11.down_proj", "minilm.l2.query", "minilm.l2.ffn_in",
               "minilm.l0.ffn_out")
"""The shipped pack's layers, in its order (``tensors.layer_keys()``; a test keeps the two equal)."""
KV_BLOCKS = (0, 11, 20, 29)
"""SmolLM2 blocks whose keys and values the pack holds (``tensors.kv_layers()``)."""
GROUP_SIZES = (None, 32, 64, 128, 256)
"""``None``: one scale per output row."""
PROFILE_SITES = {"down_in": "down_proj input", "attn_in": "q/k/v input", "mlp_in": "MLP input",
                 "attn_out_in": "o_proj input", "residual": "residual stream"}
PROFILE_MODELS = ("smollm2", "minilm")
USER_PREFIX = "file:"
ALPHA_STEP = 0.05
"""SmoothQuant α moves on the grid the analysis sweeps (``explore.SQ_ALPHAS``)."""


def user_tensor_ref(path: str, name: str) -> str:
    """The ``tensor`` value naming 2-D tensor ``name`` of the user file ``path``."""
    return f"{USER_PREFIX}{path}::{name}"


def parse_user_ref(ref: str) -> tuple[str, str] | None:
    """``(path, name)`` of a user-tensor reference, ``None`` for a pack layer."""
    if not ref.startswith(USER_PREFIX):
        return None
    path, sep, name = ref[len(USER_PREFIX):].rpartition("::")
    return (path, name) if sep and path and name else None


@dataclass(frozen=True)
class Params(ParamsBase):
    """One quantization view. α comes first: the figure it moves is redrawn without re-analysing."""

    sq_alpha: float = param(0.5, 0.0, 1.0, label="SmoothQuant α", step=ALPHA_STEP, decimals=2,
                            tip="Migration strength: s_j = max|X_j|^α / max|W_j|^(1−α), in steps of 0.05")
    tensor: str = param("minilm.l2.ffn_in", label="Tensor",
                        tip="A layer of the shipped pack, or file:<path>::<name> for a 2-D tensor of your file")
    bits: int = param(4, 2, 8, label="bits")
    group_size: int | None = param(128, label="group", choices=GROUP_SIZES)
    profile_model: str = param("minilm", label="Profile", choices=PROFILE_MODELS)
    profile_site: str = param("mlp_in", label="Linear-input site", choices=tuple(PROFILE_SITES))
    kv_block: int = param(11, label="KV block", choices=KV_BLOCKS)
    kv_bits: int = param(4, 2, 8, label="KV bits")

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "sq_alpha", round(round(self.sq_alpha / ALPHA_STEP) * ALPHA_STEP, 2))
        if not isinstance(self.tensor, str) or (self.tensor not in PACK_LAYERS and parse_user_ref(self.tensor) is None):
            raise ValidationError("tensor", f"{self.tensor!r} is neither a pack layer nor a file tensor",
                                  ", ".join(PACK_LAYERS) + ", file:<path>::<name>")


GROUP_LABELS = {g: "per row" if g is None else str(g) for g in GROUP_SIZES}
KV_BLOCK_LABELS = {b: f"SmolLM2 block {b}" for b in KV_BLOCKS}
