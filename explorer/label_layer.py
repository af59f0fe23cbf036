"""Moved to :mod:`explorer.ui.label_layer` (the toolkit package); this name stays importable as the same module."""
import sys

from explorer.ui import label_layer as _moved

sys.modules[__name__] = _moved
