"""Moved to :mod:`explorer.ui.live_text` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import live_text as _moved

sys.modules[__name__] = _moved
