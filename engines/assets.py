"""Moved to :mod:`engines.core.assets` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import assets as _moved

sys.modules[__name__] = _moved
