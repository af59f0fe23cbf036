"""Moved to :mod:`explorer.ui.fast_items` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import fast_items as _moved

sys.modules[__name__] = _moved
