"""Moved to :mod:`engines.core.device` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import device as _moved

sys.modules[__name__] = _moved
