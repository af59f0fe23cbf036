"""Size-limited reads of the shell's small files, and the atomic writes every save goes through
(:mod:`engines.core.writing`): a crash mid-save never destroys the old file."""
from __future__ import annotations

import os

from engines.core import reading
from engines.core.writing import (TEMP_PATTERN, FileProblem, SaveProblem, atomic_write_bytes,  # noqa: F401
                                  atomic_write_text, remove_stale_temps)

MAX_SCENARIO_BYTES = 1_000_000  # a scenario is a few KB; refuse anything absurd before reading it


def _problem(name: str, why: str) -> FileProblem:
    return FileProblem(f"{name} {why}")


def read_text_limited(path: str | os.PathLike, limit: int = MAX_SCENARIO_BYTES) -> str:
    """Read a small UTF-8 text file, explaining any failure instead of raising OSError/UnicodeError.

    Bounded whatever ``stat`` says, regular files only (:func:`engines.core.reading.read_bytes`)."""
    return reading.read_text(path, limit, _problem)
