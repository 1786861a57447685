"""Argument checks shared by the production classes (SEMANTICS.md B1).

Every check names the parameter and the offending value, raises ``TypeError``
for a wrong type and ``ValueError`` for a wrong value, and never asserts.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["check_int", "check_ttl"]


def check_int(name: str, value: Any, *, minimum: int, allow_none: bool = False) -> int | None:
    """Return ``value`` if it is an int ``>= minimum`` (or None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return value


def check_ttl(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is -1 or a finite number ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if value == -1:
        return -1.0
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be -1 (never expires) or a finite number >= 0, got {value!r}")
    return float(value)
