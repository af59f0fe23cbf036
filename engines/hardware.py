"""Moved to :mod:`engines.core.hardware` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import hardware as _moved

sys.modules[__name__] = _moved
