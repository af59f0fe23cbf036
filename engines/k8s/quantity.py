"""Kubernetes resource quantities ("500m", "1.5Gi", "2e3") as numbers.

Grammar and suffixes follow ``k8s.io/apimachinery/pkg/api/resource/quantity.go``: binary suffixes
Ki Mi Gi Ti Pi Ei (powers of 1024), decimal suffixes n u m "" k M G T P E (powers of 1000) and
decimal exponents. ``Value()`` and ``MilliValue()`` round *up* to the next integer there, so
``cpu_millis`` and ``to_bytes`` do too.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from engines.core.errors import ValidationError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_PATTERN = re.compile(r"^([+-]?[0-9]*\.?[0-9]+|[+-]?[0-9]+\.)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE])?$")
_ALLOWED = "a number with an optional suffix: m, k, M, G, Ki, Mi, Gi, … (e.g. 500m, 1.5Gi)"


def parse_quantity(value: object, field: str = "quantity") -> Fraction:
    """Exact value of a quantity (a string, int or float) as a Fraction; negative is rejected."""
    if isinstance(value, bool):
        raise ValidationError(field, f"{value!r} is not a quantity", _ALLOWED)
    if isinstance(value, int):
        number = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(field, f"{value!r} is not finite", _ALLOWED)
        number = Fraction(value).limit_denominator(10**9)
    elif isinstance(value, str):
        match = _PATTERN.match(value.strip())
        if not match:
            raise ValidationError(field, f"{value!r} is not a quantity", _ALLOWED)
        digits, suffix = match.group(1), match.group(2) or ""
        number = Fraction(digits)
        if suffix in _BINARY:
            number *= _BINARY[suffix]
        elif len(suffix) > 1:           # e3, E-2: a decimal exponent ("E" alone is exa, 10^18)
            number *= Fraction(10) ** int(suffix[1:])
        else:
            number *= _DECIMAL[suffix]
    else:
        raise ValidationError(field, f"{value!r} is not a quantity", _ALLOWED)
    if number < 0:
        raise ValidationError(field, f"{value!r} is negative", "≥ 0")
    return number


def cpu_millis(value: object, field: str = "cpu") -> int:
    """CPU quantity in millicores, rounded up like ``Quantity.MilliValue``."""
    return math.ceil(parse_quantity(value, field) * 1000)


def to_int(value: object, field: str = "quantity") -> int:
    """Byte or count quantity rounded up like ``Quantity.Value``."""
    return math.ceil(parse_quantity(value, field))


_AMOUNTS: dict[tuple[bool, type, object], int] = {}   # valid quantities already parsed (bounded)


def resource_amount(name: str, value: object, field: str | None = None) -> int:
    """Canonical integer amount of resource ``name``: millicores for cpu, whole units otherwise.

    Controllers re-read the same few strings ("250m", "256Mi") millions of times, so valid
    (hashable) values are memoised; the key carries the type so ``True`` never aliases ``1``.
    Invalid values are never cached and raise with ``field`` every time."""
    is_cpu = name == "cpu"
    key = (is_cpu, type(value), value)
    try:
        return _AMOUNTS[key]
    except KeyError:
        pass
    except TypeError:   # unhashable: parse (and reject) below
        return cpu_millis(value, field or name) if is_cpu else to_int(value, field or name)
    amount = cpu_millis(value, field or name) if is_cpu else to_int(value, field or name)
    if len(_AMOUNTS) < 4096:
        _AMOUNTS[key] = amount
    return amount


def format_bytes(n: float) -> str:
    """Short binary form for labels: 512Mi, 1.5Gi."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(n) >= size:
            value = n / size
            return f"{value:.0f}{unit}" if abs(value - round(value)) < 0.05 else f"{value:.1f}{unit}"
    return f"{n:.0f}"


def format_cpu(millis: float) -> str:
    """Millicores as kubectl prints them: 250m, 2."""
    return f"{millis / 1000:g}" if millis % 1000 == 0 else f"{millis:.0f}m"
