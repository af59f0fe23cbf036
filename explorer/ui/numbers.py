"""Number formats for labels read from across a room."""
from __future__ import annotations


def eng(x: float, unit: str = "", digits: int = 3) -> str:
    """1.23e+23 → '1.23×10²³' style compact text for FLOP counts, flipped-bit values and the like."""
    if x == 0 or x != x:
        return f"0 {unit}".strip()
    s = f"{x:.{digits - 1}e}"
    mant, exp = s.split("e")
    sup = str(int(exp)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{mant}×10{sup} {unit}".strip()
