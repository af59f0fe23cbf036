"""Compatibility: the FSDP2 probe moved to :mod:`engines.memory.fsdp_probe`.

``python -m engines.fsdp_probe`` still runs one rank: the probe starts its ranks by this name, the
one the frozen app serves (``scripts/explorer_entry.py``)."""
from engines.memory.fsdp_probe import (FsdpProbeResult, RankBytes, _free_port, _rank_main, main,  # noqa: F401
                                       run_fsdp_probe)

if __name__ == "__main__":
    main()
