"""How many CPU threads torch's operators use, for the length of one computation.

Loops of small tensor operations (GPTQ's column updates, a 384×5 regression, one pipeline rank)
run fastest on one thread: each operator's hand-off to a thread pool costs more than it saves, and
on a busy machine (two test workers, or the window's job slots, on two cores) the pool's threads
spin waiting for each other, which made GPTQ 25-50 times slower. ``torch.set_num_threads`` is
process-wide, so the caller's count is put back afterwards.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from engines.core.errors import require_int


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the ``with`` block with ``n`` intra-op threads, then restore the previous count."""
    import torch

    n = require_int(n, "threads", 1, 1024)
    before = torch.get_num_threads()
    if n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
