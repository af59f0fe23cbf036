"""Compatibility: the MFU engine moved to :mod:`engines.scale.mfu`. Every name it defines (private
helpers included) stays importable from here, as scripts and tests use ``engines.mfu.mfu``."""
import importlib

_impl = importlib.import_module("engines.scale.mfu")

globals().update({k: v for k, v in vars(_impl).items() if not k.startswith("__")})
__all__ = _impl.__all__
del _impl, importlib
