"""The one error type engines raise for bad input, so panels can show it next to the control."""
from __future__ import annotations


class Cancelled(Exception):
    """Raised inside long engine work when its ``cancelled()`` callback turned true (one type for every engine)."""


class ValidationError(ValueError):
    """Bad input: names the offending ``field`` and what is allowed.

    Subclasses ``ValueError`` so callers that only know the standard library still catch it.
    """

    def __init__(self, field: str, message: str, allowed: str | None = None) -> None:
        self.field = field
        self.allowed = allowed
        text = f"{field}: {message}"
        if allowed:
            text += f" (allowed: {allowed})"
        super().__init__(text)


def require(condition: bool, field: str, message: str, allowed: str | None = None) -> None:
    """Raise :class:`ValidationError` unless ``condition`` holds."""
    if not condition:
        raise ValidationError(field, message, allowed)


def require_bool(value: object, field: str) -> bool:
    """Check that ``value`` is a real bool: JSON "false" (a non-empty string) would read as true."""
    require(isinstance(value, bool), field, f"expected true or false, got {value!r}", "true, false")
    return value


INT_CEILING = 2**53  # the engines compute in float: past 2^53 an integer is no longer exact (and 10^400 overflows)


def require_int(value: object, field: str, lo: int, hi: int | None = None) -> int:
    """Check that ``value`` is an int (not bool) in ``[lo, hi]`` (``hi`` defaults to 2^53) and return it."""
    allowed = f"integer {lo}…{hi}" if hi is not None else f"integer {lo}…2^53"
    hi = INT_CEILING if hi is None else hi
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numpy as np  # numpy ints are fine

            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise ValidationError(field, f"expected an integer, got {value!r}", allowed)
        except ImportError:  # pragma: no cover
            raise ValidationError(field, f"expected an integer, got {value!r}", allowed)
    if value < lo or value > hi:
        raise ValidationError(field, "is too large" if value > INT_CEILING else f"{value} is out of range", allowed)
    return value


def require_number(value: object, field: str, lo: float | None = None, hi: float | None = None,
                   lo_open: bool = False) -> float:
    """Check that ``value`` is a finite real number in range and return it as float."""
    import math

    lo_s = "" if lo is None else (f"> {lo}" if lo_open else f"≥ {lo}")
    hi_s = "" if hi is None else f"≤ {hi}"
    allowed = " and ".join(s for s in (lo_s, hi_s) if s) or "a finite number"
    import numpy as np

    if isinstance(value, (bool, np.bool_, str, bytes)):  # "50" would pass float() but stay a str in a dataclass
        raise ValidationError(field, f"expected a number, got {value!r}", allowed)
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValidationError(field, f"expected a number, got {value!r}", allowed) from None
    except OverflowError:   # an int past the float range (10**400)
        raise ValidationError(field, "too large to compute with", allowed) from None
    if not math.isfinite(x):
        raise ValidationError(field, f"{x} is not finite", allowed)
    if lo is not None and (x <= lo if lo_open else x < lo):
        raise ValidationError(field, f"{x:g} is out of range", allowed)
    if hi is not None and x > hi:
        raise ValidationError(field, f"{x:g} is out of range", allowed)
    return x


def require_choice(value: object, field: str, choices) -> object:
    """Check that ``value`` is one of ``choices`` and return it."""
    try:     # JSON true == 1 in Python: a bool is a choice only where the choices are bools
        known = value in choices and (not isinstance(value, bool) or any(isinstance(c, bool) for c in choices))
    except TypeError:  # unhashable value (a list from JSON) tested against a dict or set
        known = False
    if not known:
        raise ValidationError(field, f"{value!r} is not a known option",
                              ", ".join(repr(c) for c in choices))
    return value
