"""The application shell: main window, scenario model, timeline player, exports, CLI, workers.

Old names, kept for outside scripts; the project itself uses the package paths: the toolkit modules
that moved into :mod:`explorer.ui` stay importable under their old names through :data:`OLD_NAMES`
(the same module objects, imported only when asked; see ``engines.OLD_NAMES``).
"""
from engines import add_old_names

__version__ = "0.1.0"

#: Old names, kept for outside scripts; the project itself uses the package paths.
OLD_NAMES: dict[str, str] = {f"explorer.{name}": f"explorer.ui.{name}" for name in (
    "fast_items", "flow_layout", "label_layer", "live_text", "tick_grid", "view_overlay", "widgets")}

add_old_names(OLD_NAMES)
