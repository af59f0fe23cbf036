"""Moved to :mod:`engines.core.errors` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import errors as _moved

sys.modules[__name__] = _moved
