"""Moved to :mod:`engines.core.models` (the shared core); this name stays importable as the same module."""
import sys

from engines.core import models as _moved

sys.modules[__name__] = _moved
