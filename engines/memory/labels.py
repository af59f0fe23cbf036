"""Names of the sharding strategies and memory categories: the one source every memory view reads.

``STRATEGY_LABELS`` are the long names (combo boxes, verdicts, timeline chapters), ``STRATEGY_SHORT``
the legend and axis names, ``STRATEGY_TICKS`` progressively shorter axis names for narrow charts
(HSDP is PyTorch's name for hybrid sharding).
"""
from __future__ import annotations

from engines.core.scenario import STRATEGY_LABELS  # noqa: F401  (declared with the scenario's strategy field)

STRATEGY_SHORT = {"dp": "DP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "fsdp": "FSDP",
                  "fsdp-hybrid": "FSDP hybrid"}
_TICK = {**STRATEGY_SHORT, "fsdp-hybrid": "hybrid"}
_TICK_COMPACT = {**_TICK, "zero1": "Z1", "zero2": "Z2", "zero3": "Z3"}
STRATEGY_TICKS = (_TICK, _TICK_COMPACT, {**_TICK_COMPACT, "fsdp-hybrid": "HSDP"})
"""Axis names from widest to narrowest: a chart takes the first whose labels fit."""

CATEGORY_LABELS = {"params": "weights", "grads": "gradients", "optimizer": "optimizer states",
                   "activations": "activations", "buffers": "comm buffers", "reserve": "fragmentation reserve"}
CATEGORY_LETTERS = {"params": "W", "grads": "G", "optimizer": "O", "activations": "A", "buffers": "B",
                    "reserve": "R"}
