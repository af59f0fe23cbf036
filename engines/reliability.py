"""Compatibility: the reliability engine moved to :mod:`engines.scale.reliability`. Every name it
defines (private helpers included) stays importable from here, as scripts use
``engines.reliability.young_interval``."""
import importlib

_impl = importlib.import_module("engines.scale.reliability")

globals().update({k: v for k, v in vars(_impl).items() if not k.startswith("__")})
__all__ = _impl.__all__
del _impl, importlib
