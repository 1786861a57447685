"""Argument checks shared by the production classes (docs/SEMANTICS.md B1).

Every check names the parameter and the offending value, raises ``TypeError``
for a wrong type and ``ValueError`` for a wrong value, and never asserts.  No
input escapes as another exception: an int too large for a float is a
``ValueError`` like any other out-of-range value, and a value whose text would
be huge (or that Python refuses to print, like an int beyond
``sys.get_int_max_str_digits()``) is shown shortened.

The checks carry PEP 316 contracts (``pre:`` / ``post:`` / ``raises:``) that
``make verify`` has CrossHair check (``tests/contracts/test_crosshair.py``), like the spec's.
"""

from __future__ import annotations

import math
import numbers
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

__all__ = ["check_int", "check_ttl", "shown"]

SHOWN_MAX = 40  # a value's text longer than this is shortened in messages


def shown(value: object) -> str:
    """B1: the value as a message shows it: its ``repr``, shortened when longer than ``SHOWN_MAX``.

    A long int keeps its first and last digits and says how many it has; an int Python will not
    convert to text (``sys.get_int_max_str_digits()``) is described by its size in bits.

    post: len(__return__) <= 2 * SHOWN_MAX
    """
    try:
        text = repr(value)
    except ValueError:  # only an int (or a number holding one) beyond the int-to-text digit limit
        if isinstance(value, int):
            return f"{'-' if value < 0 else ''}<an int of {value.bit_length()} bits>"
        return f"<a {type(value).__name__} too large to show>"[: 2 * SHOWN_MAX]
    if len(text) <= SHOWN_MAX:
        return text
    size = f"{len(text.lstrip('-'))} digits" if isinstance(value, int) else f"{len(text)} characters"
    return f"{text[:20]}...{text[-10:]} ({size})"


def check_int(name: str, value: Any, *, minimum: int, allow_none: bool = False) -> int | None:
    """B1: return ``value`` if it is an int ``>= minimum`` (of any size; not a bool), or None when allowed.

    pre: isinstance(name, str)
    raises: TypeError, ValueError
    post: __return__ is value
    post: __return__ is not None or allow_none
    post: __return__ is None or (isinstance(__return__, int) and not isinstance(__return__, bool))
    post: __return__ is None or __return__ >= minimum
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__} {shown(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {shown(value)}")
    return value


def check_ttl(name: str, value: float | Fraction | Decimal) -> float:
    """M1, B1: return ``value`` as a float if it is -1 or a finite real number ``>= 0`` that fits a float.

    Accepted: any real number but a bool (``int``, ``float``, ``fractions.Fraction``, ``decimal.Decimal``,
    or another ``numbers.Real``), converted with ``float()`` (so ``Fraction(1, 3)`` is rounded).  A string
    is refused, not parsed.  Any value is checked at run time; the annotation names what is accepted (for
    mypy ``float`` admits ``int``).  The PEP 316 contracts are stated on ``_check_ttl_contracts`` (below),
    whose annotation names the kinds CrossHair can explore.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
        raise TypeError(
            f"{name} must be a real number (int, float, Fraction or Decimal),"
            f" got {type(value).__name__} {shown(value)}"
        )
    # A Decimal NaN or infinity refuses to be compared (a signaling NaN even with ==): decided first.
    finite_decimal = not isinstance(value, Decimal) or value.is_finite()
    if finite_decimal and value == -1:
        return -1.0
    if not finite_decimal or not value >= 0 or value == math.inf:  # `not >=` is also True for NaN
        raise ValueError(f"{name} must be -1 (never expires) or a finite number >= 0, got {shown(value)}")
    try:
        as_float = float(value)
    except OverflowError:  # an int or Fraction beyond the largest float
        as_float = math.inf
    if as_float == math.inf:  # a finite value (a Decimal too) that is too large for a float
        raise ValueError(f"{name} must fit in a float (at most {sys.float_info.max:g}), got {shown(value)}")
    return as_float


def _check_ttl_contracts(name: str, value: int | float | Decimal) -> float:
    """M1, B1: ``check_ttl``'s contracts, for CrossHair (``make verify``) to check on int, float and Decimal.

    They are not on ``check_ttl`` itself because CrossHair generates a value of each kind its annotation
    names, and crosshair-tool 0.0.113 crashes while generating a symbolic ``Fraction``
    (``CrossHairInternal: Attempted to call assert_true on a non-symbolic``, in
    ``crosshair.libimpl.fractionlib._make_fraction``): its int factory may realize the denominator to a
    concrete int, and ``force_true(d > 0)`` then gets a plain bool.  The crash ends the whole run, so no
    contract of this module would be checked.  Here ``int`` is named beside ``float`` because CrossHair,
    unlike mypy, does not generate ints for ``float``.  Fraction (and other ``numbers.Real``) inputs are
    covered by the unit tests instead (tests/unit/test_validate.py: exact values and messages, and these
    same postconditions as a Hypothesis property over Fractions and Decimals).

    pre: isinstance(name, str)
    raises: TypeError, ValueError
    post: type(__return__) is float
    post: (__return__ == -1.0) == (value == -1)
    post: __return__ == -1.0 or (math.isfinite(__return__) and __return__ >= 0)
    post: __return__ == float(value)
    """
    return check_ttl(name, value)
