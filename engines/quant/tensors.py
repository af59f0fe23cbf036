"""The shipped real-tensor pack (``assets/tensors/quant_pack.safetensors``) and user tensor files.

The pack is built by ``scripts/extract_tensor_pack.py`` from SmolLM2-135M-Instruct (Apache-2.0,
weights already GGUF Q4_1, so used for activations) and all-MiniLM-L6-v2 (Apache-2.0, fp32, used
for clean weights); see assets/tensors/README.md. User files: ``.safetensors``, ``.npy`` (no
pickle) or torch files loaded with ``weights_only=True``; anything else is a ValidationError.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engines.core.assets import asset_path
from engines.core.errors import ValidationError, require

PACK_FILE = ("tensors", "quant_pack.safetensors")
USER_SUFFIXES = (".safetensors", ".npy", ".pt", ".pth", ".bin")


@dataclass(frozen=True)
class PackLayer:
    key: str
    model: str
    module: str
    weight: object            # (out, in) float32
    calib: object             # (tokens, in) float32
    heldout: object           # (tokens, in) float32
    norm_weight: object = None
    first_token: object = None  # (calib tokens,) bool: first token of each text

    @property
    def group_size(self) -> int:
        """The largest of 128 / 64 / 32 that divides the input width (576 = 9 · 64)."""
        return next(g for g in (128, 64, 32, 1) if self.weight.shape[1] % g == 0)


@lru_cache(maxsize=1)
def _pack():
    from safetensors import safe_open

    path = asset_path(*PACK_FILE)
    if not path.exists():
        raise ValidationError("pack", f"the tensor pack {path} is missing",
                              "run scripts/extract_tensor_pack.py")
    with safe_open(str(path), framework="pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata() or {})


def pack_metadata() -> dict:
    meta = dict(_pack()[1])
    for key in ("layers", "kv_layers", "texts"):
        if key in meta:
            meta[key] = json.loads(meta[key])
    return meta


def layer_keys() -> list[str]:
    return list(pack_metadata()["layers"])


def load_layer(key: str, device: str = "cpu") -> PackLayer:
    """One shipped layer with its calibration and held-out activations, as float32 on ``device``."""
    layers = pack_metadata()["layers"]
    if key not in layers:
        raise ValidationError("layer", f"{key!r} is not in the pack", ", ".join(layers))
    t = _pack()[0]
    get = lambda name: t[f"layer/{key}/{name}"].float().to(device) if f"layer/{key}/{name}" in t else None  # noqa: E731
    first = t.get(f"layer/{key}/calib_first_token")
    return PackLayer(key=key, model=layers[key]["model"], module=layers[key]["module"], weight=get("weight"),
                     calib=get("calib"), heldout=get("heldout"), norm_weight=get("norm_weight"),
                     first_token=None if first is None else first.bool())


def profile(model: str, site: str):
    """(blocks, channels) per-channel max|x| for a linear-input site, or SmolLM2's 'residual'."""
    t = _pack()[0]
    name = f"profile/{model}/{site}"
    if name not in t:
        sites = sorted(k.split("/")[2] for k in t if k.startswith(f"profile/{model}/"))
        raise ValidationError("site", f"no profile {model}/{site}", ", ".join(sites) or "none for this model")
    return t[name].float()


def profile_sites(model: str) -> list[str]:
    return [k.split("/")[2] for k in _pack()[0] if k.startswith(f"profile/{model}/")]


def kv_layers() -> list[int]:
    return list(pack_metadata()["kv_layers"])


def load_kv(block: int):
    """SmolLM2 pre-RoPE keys and values (tokens, 3 heads · 64) of one block, float32."""
    t = _pack()[0]
    if f"kv/smollm2.l{block}/k" not in t:
        raise ValidationError("kv_layer", f"block {block} is not in the pack", ", ".join(map(str, kv_layers())))
    return t[f"kv/smollm2.l{block}/k"].float(), t[f"kv/smollm2.l{block}/v"].float()


# --- user files ----------------------------------------------------------------------------
def _from_state(obj, path: Path) -> dict:
    import torch

    if isinstance(obj, torch.Tensor):
        return {"tensor": obj}
    if isinstance(obj, dict):
        flat = {}
        for k, v in obj.items():
            if isinstance(v, torch.Tensor):
                flat[str(k)] = v
            elif isinstance(v, dict):
                flat.update({f"{k}.{kk}": vv for kk, vv in _from_state(v, path).items()})
        if flat:
            return flat
    raise ValidationError("file", f"{path.name} holds no tensors (found {type(obj).__name__})",
                          "a tensor or a dict of tensors")


def read_user_file(path) -> dict:
    """All tensors of a user file by name (CPU). Broken or unsupported files raise ValidationError."""
    import numpy as np
    import torch

    path = Path(path)
    require(path.is_file(), "file", f"{path} does not exist or is not a file", "an existing file")
    suffix = path.suffix.lower()
    require(suffix in USER_SUFFIXES, "file", f"{suffix or 'no extension'} is not supported",
            ", ".join(USER_SUFFIXES))
    try:
        if suffix == ".safetensors":
            from safetensors.torch import load_file

            return load_file(str(path))
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
            require(np.issubdtype(arr.dtype, np.number), "file", f"array dtype {arr.dtype} is not numeric",
                    "a numeric array")
            return {"array": torch.from_numpy(np.ascontiguousarray(arr))}
        return _from_state(torch.load(path, map_location="cpu", weights_only=True), path)
    except ValidationError:
        raise
    except Exception as exc:  # corrupt header, truncated file, pickled objects refused by weights_only
        raise ValidationError("file", f"cannot read {path.name}: {type(exc).__name__}: {str(exc)[:200]}",
                              ".safetensors, .npy (no pickle) or a torch file loadable with weights_only=True") from None


def matrices(tensors: dict) -> dict[str, tuple[int, int]]:
    """The 2-D floating/integer tensors of a file, name → shape (what the panel offers to pick)."""
    return {k: tuple(v.shape) for k, v in tensors.items() if v.ndim == 2 and v.numel() > 1}


def user_matrix(tensors: dict, name: str):
    """A chosen 2-D tensor as float32, or a ValidationError naming the 2-D tensors available."""
    import torch

    options = matrices(tensors)
    if name not in tensors:
        raise ValidationError("tensor", f"{name!r} is not in the file", ", ".join(options) or "no 2-D tensors")
    t = tensors[name]
    require(name in options, "tensor", f"{name!r} has shape {tuple(t.shape)}, not 2-D",
            ", ".join(options) or "no 2-D tensors")
    t = t.to(torch.float32)
    require(bool(torch.isfinite(t).all()), "tensor", f"{name!r} contains NaN or infinity", "finite values")
    return t
