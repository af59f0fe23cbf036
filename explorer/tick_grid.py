"""Moved to :mod:`explorer.ui.tick_grid` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import tick_grid as _moved

sys.modules[__name__] = _moved
