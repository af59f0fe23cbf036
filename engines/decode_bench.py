"""Moved to :mod:`engines.serving.decode_bench`; this name stays importable as the same module."""
import sys

from engines.serving import decode_bench as _moved

sys.modules[__name__] = _moved
