"""The pipeline panel's own knobs as data (p, m and the TP degree are scenario fields, not here)."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.params import ParamsBase, param
from engines.pipeline.schedules import KINDS

KIND_LABELS = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved-1f1b": "Interleaved 1F1B", "zb-h1": "ZB-H1",
               "zb-v": "ZB-V"}
"""How each schedule kind is named in the papers (and on screen)."""


@dataclass(frozen=True)
class Params(ParamsBase):
    """The two schedules compared, their per-stage costs, and the executed mode's model width."""

    left_kind: str = param("1f1b", label="Left", choices=KINDS, tip="Schedule on the left")
    right_kind: str = param("interleaved-1f1b", label="Right", choices=KINDS, tip="Schedule on the right")
    v: int = param(2, 2, 8, label="v chunks", tip="v: model chunks per rank (interleaved only)")
    t_f: float = param(1.0, 0.1, 4, label="T_F forward", step=0.1, decimals=1)
    t_b: float = param(2.0, 0.1, 8, label="T_B full backward", step=0.1, decimals=1)
    w_share_pct: int = param(50, 10, 90, label="W share of backward", unit="%", step=5,
                             tip="The weight-gradient part W of the full backward; the rest is the "
                                 "input-gradient part I (Qi et al., arXiv 2401.10241)")
    t_comm: float = param(0.0, 0, 2, label="p2p latency", step=0.05, decimals=2)
    hidden: int = param(256, 32, 4096, label="hidden width", step=64, tip="hidden width of the small model")
