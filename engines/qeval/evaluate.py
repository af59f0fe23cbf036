"""Measure one configuration against the baseline: perplexity, flips and KL, survival, tasks.

* Perplexity (Jelinek et al. 1977; as in GPTQ's evaluation): exp of the mean next-token negative
  log-likelihood over non-overlapping windows of held-out text, per domain and over both.
* Flips and KL under teacher forcing: at every position of the same text, whether the top-1 token
  differs from the baseline's, and KL(P_baseline ‖ P_config) = Σ p_b (log p_b − log p_c) in nats
  (the measures of Dutta et al., "Accuracy is Not All You Need", NeurIPS 2024, arXiv 2407.09141).
* Survival of greedy continuations: the baseline decodes ``new_tokens`` tokens greedily after each
  prompt; a configuration's greedy decoding stays on that path through n tokens exactly when its
  top-1 token equals the baseline's at each of the first n positions of one teacher-forced pass over
  the baseline's continuation (until the first difference both decode the same inputs). One pass
  per configuration therefore gives the whole curve, with no generation.
* Tasks: few-shot prompts written for the app; an item is right when the greedy answer is exactly
  the expected tokens followed by the end of the line (checked the same teacher-forced way).
"""
from __future__ import annotations

import datetime
import random
import time
from dataclasses import dataclass
from typing import Callable

from engines.core import errors
from engines.core.errors import ValidationError, require_choice
from engines.qeval.config import BUDGETS, QuantConfig
from engines.qeval.model import LM, KVSpec
from engines.qeval.result import Evaluation

Progress = Callable[[float, str], None]
Cancelled = Callable[[], bool]
DOMAINS = ("prose", "code")


@dataclass(frozen=True)
class Budget:
    """How much is measured. ``evaluate`` takes "quick", "full" or a Budget of one's own (tests and
    benchmarks use smaller ones); ``prompts=0`` or ``items=0`` leaves survival or tasks out."""

    name: str
    windows: int          # perplexity windows per domain
    window: int           # tokens per window
    prompts: int          # greedy continuations
    new_tokens: int       # tokens per continuation
    items: int            # items per task (at most what the task has)


BUDGET = {"quick": Budget("quick", windows=2, window=512, prompts=8, new_tokens=128, items=16),
          "full": Budget("full", windows=4, window=512, prompts=20, new_tokens=256, items=40)}
PROFILE_BIN = 64


class EvalCancelled(errors.Cancelled):
    """The caller's ``cancelled()`` turned true during an evaluation."""


def evaluate(lm: LM, config: QuantConfig, budget: str | Budget = "quick", progress: Progress | None = None,
             cancelled: Cancelled | None = None) -> Evaluation:
    """Quantize as ``config`` says, measure against the baseline, cache and return the result."""
    import torch

    if not isinstance(lm, LM):
        raise ValidationError("lm", f"expected a model from engines.qeval.load(), got {type(lm).__name__}")
    if not isinstance(config, QuantConfig):
        raise ValidationError("config", f"expected a QuantConfig, got {type(config).__name__}")
    if not isinstance(budget, Budget):
        require_choice(budget, "budget", BUDGETS)
    b = budget if isinstance(budget, Budget) else BUDGET[budget]
    config = config.canonical()
    key = ("eval", config, b)
    if key in lm.cache:
        return lm.cache[key]
    progress = progress or (lambda f, t="": None)
    cancelled = cancelled or (lambda: False)
    from engines.qeval.quantize import QuantCancelled, bits_per_weight, quantized_weights

    with torch.no_grad():
        ref = _reference(lm, b, progress, cancelled)
        try:
            weights, werr, qsec = quantized_weights(
                lm, config, lambda f, t="": progress(0.3 * f, t), cancelled)
        except QuantCancelled:
            raise EvalCancelled() from None
        kv = KVSpec(config.k_bits, config.k_axis, config.v_bits, config.v_axis)
        t0 = time.perf_counter()
        ppl = _perplexity(lm, ref, weights, kv, lambda f, t: progress(0.3 + 0.35 * f, t), cancelled)
        survival = _survival(lm, ref, weights, kv, b)
        progress(0.75, "tasks")
        acc, items = _tasks(lm, ref, weights, kv, cancelled)
        seconds = time.perf_counter() - t0
    result = Evaluation(config=config, budget=b.name, perplexity=ppl["all"],
                        perplexity_by_domain={d: ppl[d] for d in DOMAINS}, flip_rate=ppl["flips"],
                        mean_kl=ppl["kl"], survival=survival, task_accuracy=acc, task_items=items,
                        flip_profile=tuple(ppl["profile"]), profile_bin=PROFILE_BIN, eval_tokens=ppl["tokens"],
                        weight_error=werr, bits_per_weight=bits_per_weight(lm, config), device=lm.device,
                        seconds=seconds, quantize_seconds=qsec, measured=measured_note(lm.device))
    lm.cache[key] = result
    progress(1.0, "done")
    return result


def machine_label(device: str) -> str:
    """The GPU's name, or the CPU with the threads torch uses: what a measured time depends on."""
    import os

    from engines.core.device import torch_module

    torch = torch_module()
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(0)
    n = torch.get_num_threads()
    return f"CPU ({n} thread{'s' * (n != 1)} of {os.cpu_count()} cores)"


def measured_note(device: str) -> str:
    """Where and when, for the result's ``measured`` line."""
    from engines.core.device import torch_module

    return f"measured {datetime.date.today().isoformat()} on {machine_label(device)}, torch {torch_module().__version__}"


# ---- shared baseline references ------------------------------------------------------------------
def _reference(lm: LM, b: Budget, progress: Progress, cancelled: Cancelled) -> dict:
    """Baseline log-probabilities, greedy continuations and task items for one budget (cached)."""
    key = ("ref", b)
    if key in lm.cache:
        return lm.cache[key]
    import torch

    from engines.core.assets import asset_path, load_json_asset

    ref: dict = {"budget": b, "text": {}}
    for d in DOMAINS:
        ids = lm.encode(asset_path(f"qeval/texts/{d}_eval.txt").read_text(encoding="utf-8"))
        need = b.windows * b.window
        if len(ids) < need:
            raise ValidationError("budget", f"the shipped {d} text has {len(ids)} tokens, {need} needed")
        windows = torch.tensor(ids[:need], device=lm.device).view(b.windows, b.window)
        logp, top = [], []
        for w in windows:
            if cancelled():
                raise EvalCancelled()
            progress(0.0, f"baseline on {d} text")
            lp = torch.log_softmax(lm.forward(w[None])[0][0, :-1].float(), dim=-1)
            logp.append(lp.half())
            top.append(lp.argmax(-1))
        ref["text"][d] = (windows, logp, top)
    ref["continuation"] = None
    if b.prompts:
        prompts = load_json_asset("qeval", "prompts.json")
        n_prompt = int(prompts["prompt_tokens"])
        pids = torch.tensor([lm.encode(p)[:n_prompt] for p in prompts["prompts"][:b.prompts]], device=lm.device)
        progress(0.1, "baseline greedy continuations")
        cont = _greedy(lm, pids, b.new_tokens, cancelled)
        seq = torch.cat([pids, cont], dim=1)
        logits, _ = lm.forward(seq[:, :-1])
        ref["continuation"] = (seq, n_prompt, logits[:, n_prompt - 1:].argmax(-1))
    ref["tasks"] = _task_items(lm, load_json_asset("qeval", "tasks.json"), b.items) if b.items else None
    lm.cache[key] = ref
    return ref


def _greedy(lm: LM, prompt, new_tokens: int, cancelled: Cancelled):
    """Greedy decoding of the baseline with a KV cache: (batch, new_tokens) token ids."""
    import torch

    logits, past = lm.forward(prompt)
    out = [logits[:, -1].argmax(-1)]
    for _ in range(new_tokens - 1):
        if cancelled():
            raise EvalCancelled()
        logits, past = lm.forward(out[-1][:, None], past=past)
        out.append(logits[:, -1].argmax(-1))
    return torch.stack(out, dim=1)


# ---- measurements --------------------------------------------------------------------------------
def _perplexity(lm: LM, ref: dict, weights: dict, kv: KVSpec, progress: Progress, cancelled: Cancelled) -> dict:
    import math

    import torch

    nll_all = n_all = flips = kl = 0.0
    out: dict = {}
    b = ref["budget"]
    bins = [[0, 0] for _ in range(-(-(b.window - 1) // PROFILE_BIN))]
    for k, d in enumerate(DOMAINS):
        windows, base_lp, base_top = ref["text"][d]
        nll = n = 0.0
        for j, w in enumerate(windows):
            if cancelled():
                raise EvalCancelled()
            progress((k * len(windows) + j) / (len(DOMAINS) * len(windows)), f"perplexity on {d} text")
            lp = torch.log_softmax(lm.forward(w[None], weights, kv)[0][0, :-1].float(), dim=-1)
            target = w[1:]
            nll += float(-lp.gather(1, target[:, None]).sum())
            n += target.numel()
            flip = (lp.argmax(-1) != base_top[j])
            flips += float(flip.sum())
            pb = base_lp[j].float()
            kl += float((pb.exp() * (pb - lp)).sum())
            for i, c in enumerate(flip.view(-1).tolist()):
                bins[i // PROFILE_BIN][0] += c
                bins[i // PROFILE_BIN][1] += 1
        out[d] = math.exp(nll / n)
        nll_all += nll
        n_all += n
    out.update(all=math.exp(nll_all / n_all), flips=flips / n_all, kl=max(0.0, kl / n_all), tokens=int(n_all),
               profile=[f / c for f, c in bins])
    return out


def _survival(lm: LM, ref: dict, weights: dict, kv: KVSpec, b: Budget) -> dict[int, float]:
    """Share of continuations whose greedy tokens match the baseline's through n tokens."""
    if ref["continuation"] is None:
        return {}
    seq, n_prompt, base_top = ref["continuation"]
    logits, _ = lm.forward(seq[:, :-1], weights, kv)
    same = (logits[:, n_prompt - 1:].argmax(-1) == base_top).int()
    alive = same.cumprod(dim=1).float().mean(dim=0)       # alive[t-1]: identical through t tokens
    return {t + 1: float(alive[t]) for t in range(b.new_tokens)}


def _task_items(lm: LM, spec: dict, n_items: int) -> dict:
    """Token ids per task: (prefix ids, [(prompt ids, answer ids)])."""
    import torch

    out = {}
    newline = torch.tensor([lm.decode([i]).startswith("\n") for i in range(lm.tokenizer.vocab_size)],
                           device=lm.device)
    for name, task in spec["tasks"].items():
        if "copy_words" in task:
            c = spec["copy"]
            rng = random.Random(c["seed"] * 100 + task["copy_words"])
            pairs = []
            for _ in range(n_items):
                words = " ".join(rng.sample(c["words"], task["copy_words"]))
                pairs.append((words, words))
            prefix, template, answer = c["prefix"], c["template"], c["answer"]
        elif "add_digits" in task:
            a = spec["add"]
            rng = random.Random(a["seed"] * 100 + task["add_digits"])
            lo, hi = 10 ** (task["add_digits"] - 1) if task["add_digits"] > 1 else 0, 10 ** task["add_digits"] - 1
            pairs = []
            for _ in range(n_items):
                x, y = rng.randint(lo, hi), rng.randint(lo, hi)
                pairs.append((f"{x}+{y}", str(x + y)))
            prefix, template, answer = a["prefix"], a["template"], a["answer"]
        else:
            pairs = [tuple(p) for p in task["items"][:n_items]]
            prefix, template, answer = task["prefix"], task["template"], task["answer"]
        items = [(lm.encode(template.format(x=x)), lm.encode(answer.format(y=y))) for x, y in pairs]
        out[name] = (lm.encode(prefix), items)
    return {"items": out, "newline": newline}


def _tasks(lm: LM, ref: dict, weights: dict, kv: KVSpec, cancelled: Cancelled) -> tuple[dict, dict]:
    """Exact-match accuracy per task; the few-shot prefix is computed once and its cache reused."""
    import torch

    if ref["tasks"] is None:
        return {}, {}
    newline = ref["tasks"]["newline"]
    acc, counts = {}, {}
    for name, (prefix, items) in ref["tasks"]["items"].items():
        if cancelled():
            raise EvalCancelled()
        _, past = lm.forward(torch.tensor([prefix], device=lm.device), weights, kv)
        seqs = [p + a for p, a in items]
        width = max(map(len, seqs))
        batch = torch.tensor([s + [lm.tokenizer.eos_id] * (width - len(s)) for s in seqs], device=lm.device)
        past_b = [(k.expand(len(items), -1, -1, -1), v.expand(len(items), -1, -1, -1)) for k, v in past]
        logits, _ = lm.forward(batch, weights, kv, past=past_b)
        top = logits.argmax(-1)
        right = 0
        for r, (p, a) in enumerate(items):
            pred = top[r, len(p) - 1:len(p) + len(a) - 1].tolist()
            stop = int(top[r, len(p) + len(a) - 1]) if len(p) + len(a) - 1 < width else None
            ok = pred == a and (stop is None or bool(newline[stop]))
            right += ok
        acc[name] = right / len(items)
        counts[name] = len(items)
    return acc, counts
