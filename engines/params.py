"""Moved to :mod:`engines.core.params` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import params as _moved

sys.modules[__name__] = _moved
