"""Pure computation behind every panel: numpy, torch (imported lazily), networkx; never Qt.

Old names, kept for outside scripts; the project itself uses the package paths. Modules that moved
into a topic package stay importable under their old dotted name through one alias table
(:data:`OLD_NAMES`, and ``explorer.OLD_NAMES`` for the shell's toolkit) instead of a file each:
``import engines.mfu`` gives the very module object ``engines.scale.mfu``, imported only when asked.
"""
from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

#: Old names, kept for outside scripts; the project itself uses the package paths.
#: ``tests/test_old_names.py`` checks each resolves to its target and that the project uses none.
OLD_NAMES: dict[str, str] = {
    "engines.assets": "engines.core.assets",
    "engines.decode_bench": "engines.serving.decode_bench",
    "engines.device": "engines.core.device",
    "engines.errors": "engines.core.errors",
    "engines.fsdp_probe": "engines.memory.fsdp_probe",
    "engines.hardware": "engines.core.hardware",
    "engines.memory_measure": "engines.memory.measure",
    "engines.mfu": "engines.scale.mfu",
    "engines.models": "engines.core.models",
    "engines.parallel_layout": "engines.pipeline.layout",
    "engines.params": "engines.core.params",
    "engines.pipeline_exec": "engines.pipeline.execution",
    "engines.presets": "engines.core.presets",
    "engines.reliability": "engines.scale.reliability",
    "engines.scenario": "engines.core.scenario",
    "engines.versioned": "engines.core.versioned",
}


class OldNameFinder:
    """A meta-path finder that imports an old dotted name as its new module (the same object).

    importlib stamps the spec it found onto the module it loads (``_init_module_attrs`` always
    overwrites ``__spec__``), so :meth:`exec_module` puts the real module's own spec back: the
    module keeps ``__name__`` and ``__spec__`` of its package path."""

    def __init__(self) -> None:
        self.table: dict[str, str] = {}

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        if fullname not in self.table:
            return None
        return ModuleSpec(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.table[spec.name])
        spec.loader_state = module.__spec__          # the real spec, put back by exec_module
        return module

    def exec_module(self, module: ModuleType) -> None:
        # _init_module_attrs has just set module.__spec__ to the alias spec: restore the real one
        alias = module.__spec__
        if alias is not None and alias.loader is self and alias.loader_state is not None:
            module.__spec__ = alias.loader_state


def add_old_names(table: dict[str, str]) -> None:
    """Register ``old dotted name -> new dotted name`` pairs with the one finder on ``sys.meta_path``."""
    # by class name, so a reloaded engines finds the finder it installed before instead of adding one
    finder = next((f for f in sys.meta_path if type(f).__qualname__ == "OldNameFinder"), None)
    if finder is None:
        finder = OldNameFinder()
        sys.meta_path.insert(0, finder)
    finder.table.update(table)


add_old_names(OLD_NAMES)
