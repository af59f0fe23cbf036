"""Moved to :mod:`engines.core.scenario` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import scenario as _moved

sys.modules[__name__] = _moved
