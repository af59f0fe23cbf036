"""The overview topic: a scenario's headline numbers in one call (:func:`summarize` → :class:`Overview`).

The shape every topic package follows: ``Params`` (the panel's knobs, here none) and computations
that return frozen results a view draws.
"""
from engines.overview.params import Params
from engines.overview.summary import BYTES_PER_PARAM_MIXED_ADAM, Overview, human_bytes, human_count, summarize

__all__ = ["Params", "Overview", "summarize", "human_bytes", "human_count", "BYTES_PER_PARAM_MIXED_ADAM"]
