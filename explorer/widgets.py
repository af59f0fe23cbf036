"""Moved to :mod:`explorer.ui.widgets` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import widgets as _moved

sys.modules[__name__] = _moved
