"""Moved to :mod:`explorer.ui.flow_layout` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import flow_layout as _moved

sys.modules[__name__] = _moved
