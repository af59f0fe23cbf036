"""Moved to :mod:`engines.core.presets` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import presets as _moved

sys.modules[__name__] = _moved
