"""The training-memory panel's own knobs as data (everything else it shows is a scenario field)."""
from __future__ import annotations

from dataclasses import dataclass

from engines.memory.analytic import Options
from engines.core.params import ParamsBase, param


@dataclass(frozen=True)
class Params(ParamsBase):
    """Accounting choices of one training-memory view."""

    fp32_grad_accum: bool = param(False, label="fp32 grad acc.",
                                  tip="Keep a 4-byte fp32 gradient accumulator beside the 16-bit gradient "
                                      "(20 B/param)")

    @property
    def options(self) -> Options:
        """The analytic engine's options for these knobs."""
        return Options(fp32_grad_accum=self.fp32_grad_accum)
