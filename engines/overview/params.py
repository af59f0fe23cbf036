"""The overview panel has no knobs of its own: everything it shows follows from the scenario."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.params import ParamsBase


@dataclass(frozen=True)
class Params(ParamsBase):
    """No fields: the overview is a pure function of the shared scenario."""
