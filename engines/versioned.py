"""Moved to :mod:`engines.core.versioned` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import versioned as _moved

sys.modules[__name__] = _moved
