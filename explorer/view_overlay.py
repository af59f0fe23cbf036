"""Moved to :mod:`explorer.ui.view_overlay` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import view_overlay as _moved

sys.modules[__name__] = _moved
