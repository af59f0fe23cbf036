"""Frozen engine results to JSON trees and back, exactly and without pickle.

Dataclasses, enums, tuples, sets, dicts with any plain keys, numpy arrays and scalars (and torch tensors,
as arrays) are tagged objects (``{"$dc": ...}``, ``{"$nd": ...}``); plain JSON values stay as they are.
Decoding builds dataclasses and enums only from ``engines.*`` modules (a file names no other code) and
restores every field as stored, without re-running ``__init__``. Anything else (a function, a model, an
open file) raises :class:`CodecError`: the caller then simply does not store it.
"""
from __future__ import annotations

import base64
import dataclasses
import enum
import functools
import hashlib
import importlib
import json
import math
import sys
from pathlib import Path, PurePath
from typing import Any

MODULE_PREFIX = "engines."
MAX_DEPTH = 200
KEY_ARRAY_BYTES = 64 << 10    # in a cache key a larger array stands as its digest (the key stays small)


class CodecError(ValueError):
    """A value this codec cannot write or read back exactly."""


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _lookup(name: object) -> type:
    if not isinstance(name, str) or ":" not in name:
        raise CodecError(f"bad type name {name!r}")
    return _lookup_type(name)


@functools.lru_cache(maxsize=512)
def _lookup_type(name: str) -> type:
    module, qualname = name.split(":", 1)
    if not module.startswith(MODULE_PREFIX):
        raise CodecError(f"{name}: only engine types are read back")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise CodecError(f"{name} is not a type")
    return obj


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


def encode(obj: Any, files: bool = False, _depth: int = 0) -> Any:
    """A JSON tree for ``obj``. With ``files`` (cache keys) a path stands for its file's content too, so an
    edited input file is a different key."""
    if _depth > MAX_DEPTH:
        raise CodecError("nested too deeply")
    d = _depth + 1
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return {"$enum": _name(type(obj)), "v": encode(obj.value, files, d)}
    if type(obj) is int:
        return obj
    if type(obj) is float:
        return obj if math.isfinite(obj) else {"$float": repr(obj)}
    np = sys.modules.get("numpy")
    if np is not None and hasattr(np, "generic"):
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                raise CodecError("an array of Python objects")
            arr = np.ascontiguousarray(obj)
            if files and arr.nbytes > KEY_ARRAY_BYTES:     # a key: a large input array by its digest
                digest = hashlib.sha256(arr.tobytes()).hexdigest()
                return {"$nd": arr.dtype.str, "shape": list(arr.shape), "sha256": digest}
            return {"$nd": arr.dtype.str, "shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode()}
        if isinstance(obj, np.generic):
            return {"$np": obj.dtype.str, "b64": base64.b64encode(obj.tobytes()).decode()}
    tensor = getattr(sys.modules.get("torch"), "Tensor", None)    # None too while another thread imports torch
    if isinstance(tensor, type) and isinstance(obj, tensor):
        return {"$tensor": encode(obj.detach().cpu().numpy(), files, d)}
    if isinstance(obj, (int, float)):          # an int/float subclass that is no enum: keep its value only
        raise CodecError(f"a {type(obj).__name__} is not a plain number")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"$dc": _name(type(obj)),
                "f": {f.name: encode(getattr(obj, f.name), files, d) for f in dataclasses.fields(obj)}}
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return {"$tuple": [encode(x, files, d) for x in obj]}
    if isinstance(obj, list):
        return [encode(x, files, d) for x in obj]
    if isinstance(obj, (set, frozenset)):
        items = sorted((encode(x, files, d) for x in obj), key=lambda t: json.dumps(t, sort_keys=True))
        return {"$frozenset" if isinstance(obj, frozenset) else "$set": items}
    if isinstance(obj, dict):
        return {"$dict": [[encode(k, files, d), encode(v, files, d)] for k, v in obj.items()]}
    if isinstance(obj, PurePath):
        if files:
            return {"$file": str(obj), "sha256": _file_digest(Path(obj))}
        return {"$path": str(obj)}
    raise CodecError(f"a {type(obj).__module__}.{type(obj).__qualname__} cannot be stored")


@functools.lru_cache(maxsize=512)
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def decode(tree: Any, _depth: int = 0) -> Any:
    """The value :func:`encode` was given (dataclasses rebuilt field by field)."""
    if _depth > MAX_DEPTH:
        raise CodecError("nested too deeply")
    d = _depth + 1
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    if isinstance(tree, list):
        return [decode(x, d) for x in tree]
    if not isinstance(tree, dict) or len(tree) == 0:
        raise CodecError(f"unexpected {type(tree).__name__}")
    tag = next(iter(tree))
    if tag == "$dc":
        cls = _lookup(tree["$dc"])
        if not dataclasses.is_dataclass(cls):
            raise CodecError(f"{tree['$dc']} is not a dataclass")
        stored, names = tree["f"], _field_names(cls)
        if not isinstance(stored, dict) or set(stored) != names:
            raise CodecError(f"{tree['$dc']}: fields differ from this program's")
        obj = cls.__new__(cls)
        for name, value in stored.items():
            object.__setattr__(obj, name, decode(value, d))
        return obj
    if tag == "$enum":
        cls = _lookup(tree["$enum"])
        if not issubclass(cls, enum.Enum):
            raise CodecError(f"{tree['$enum']} is not an enum")
        return cls(decode(tree["v"], d))
    if tag == "$float":
        if tree["$float"] not in ("nan", "inf", "-inf"):
            raise CodecError(f"bad float {tree['$float']!r}")
        return float(tree["$float"])
    if tag in ("$nd", "$np"):
        import numpy as np

        if "b64" not in tree:
            raise CodecError("an array stored by its digest only (a cache key's input)")
        dtype = np.dtype(tree[tag])
        if dtype.hasobject:
            raise CodecError("an array of Python objects")
        raw = base64.b64decode(tree["b64"], validate=True)
        if tag == "$np":
            return np.frombuffer(raw, dtype=dtype)[0]
        shape = tuple(int(n) for n in tree["shape"])
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if tag == "$tensor":
        import torch

        return torch.from_numpy(decode(tree["$tensor"], d))
    if tag == "$tuple":
        return tuple(decode(x, d) for x in tree["$tuple"])
    if tag == "$set":
        return {decode(x, d) for x in tree["$set"]}
    if tag == "$frozenset":
        return frozenset(decode(x, d) for x in tree["$frozenset"])
    if tag == "$dict":
        return {decode(k, d): decode(v, d) for k, v in tree["$dict"]}
    if tag == "$path":
        return Path(tree["$path"])
    if tag == "$file":                       # a key's file argument: the path (its digest was for the key)
        return Path(tree["$file"])
    raise CodecError(f"unknown tag {tag!r}")


def _without(tree: Any, names: frozenset[str]) -> Any:
    if isinstance(tree, list):
        return [_without(x, names) for x in tree]
    if isinstance(tree, dict):
        if "$dc" in tree:
            return {"$dc": tree["$dc"], "f": {k: _without(v, names) for k, v in tree["f"].items() if k not in names}}
        return {k: _without(v, names) for k, v in tree.items()}
    return tree


def same(a: Any, b: Any, ignore: frozenset[str] = frozenset()) -> bool:
    """Exact equality as stored: arrays bit for bit, NaN equal to NaN, types included; dataclass fields
    named in ``ignore`` (wall-clock measurements) are left out."""
    ta, tb = encode(a), encode(b)
    if ignore:
        ta, tb = _without(ta, ignore), _without(tb, ignore)
    return ta == tb


def close(a: Any, b: Any, ignore: frozenset[str] = frozenset(), rel: float = 1e-6) -> bool:
    """Like :func:`same`, with floats and float arrays equal within ``rel``: torch's sums follow its
    thread count, so a result computed with two threads and again with one differ in the last bits."""
    ta, tb = encode(a), encode(b)
    if ignore:
        ta, tb = _without(ta, ignore), _without(tb, ignore)
    return _close(ta, tb, rel)


def _close(x: Any, y: Any, rel: float) -> bool:
    import numpy as np

    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=rel, abs_tol=1e-12) or (math.isnan(x) and math.isnan(y))
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_close(p, q, rel) for p, q in zip(x, y))
    if isinstance(x, dict) and isinstance(y, dict):
        if x.keys() != y.keys():
            return False
        if x.get("$nd") or x.get("$np"):
            if x == y:
                return True
            if "b64" not in x or "b64" not in y or x.get("$nd", x.get("$np")) != y.get("$nd", y.get("$np")):
                return False
            u, v = decode(x), decode(y)
            if not np.issubdtype(np.asarray(u).dtype, np.floating):
                return False
            return bool(np.allclose(u, v, rtol=rel, atol=1e-12, equal_nan=True))
        return all(_close(x[k], y[k], rel) for k in x)
    return x == y
