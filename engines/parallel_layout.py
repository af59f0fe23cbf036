"""Compatibility module: the TP split and the rank grid now live in :mod:`engines.pipeline.layout`."""
from engines.pipeline.layout import (COLLECTIVES, Group, Layout3D, RankPlace, TPStep,  # noqa: F401
                                     collective_counts, layout_from_scenario, rank_grid, ring_bytes, tp_layer_steps,
                                     verify_tp_split)

__all__ = ["COLLECTIVES", "Group", "Layout3D", "RankPlace", "TPStep", "collective_counts", "layout_from_scenario",
           "rank_grid", "ring_bytes", "tp_layer_steps", "verify_tp_split"]
