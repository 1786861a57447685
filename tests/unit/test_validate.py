"""The shared argument checks (B1): exact messages naming the parameter, the expected kind and the value."""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hicache._validate import SHOWN_MAX, _check_ttl_contracts, check_int, check_ttl, shown


@pytest.mark.clauses("B1")
@pytest.mark.parametrize(
    ("value", "allow_none", "message"),
    [
        ("3", False, "n must be an int, got str '3'"),
        (True, False, "n must be an int, got bool True"),
        (1.5, True, "n must be an int or None, got float 1.5"),
        (None, False, "n must be an int, got NoneType None"),
    ],
)
def test_a_non_int_is_a_type_error_naming_the_parameter_the_kind_and_the_value(
    value: Any, allow_none: bool, message: str
) -> None:
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        check_int("n", value, minimum=0, allow_none=allow_none)


@pytest.mark.clauses("B1")
def test_none_is_accepted_only_when_allowed_and_the_default_is_not_to_allow_it() -> None:
    assert check_int("n", None, minimum=1, allow_none=True) is None
    with pytest.raises(TypeError):
        check_int("n", None, minimum=1)


@pytest.mark.clauses("B1")
def test_an_int_below_the_minimum_is_a_value_error_and_the_minimum_itself_passes() -> None:
    assert check_int("n", 2, minimum=2) == 2
    with pytest.raises(ValueError, match=r"^n must be >= 2, got 1$"):
        check_int("n", 1, minimum=2)


@pytest.mark.clauses("B1", "M1")
@pytest.mark.parametrize(("value", "expected"), [(-1, -1.0), (0, 0.0), (2, 2.0), (0.5, 0.5)])
def test_a_valid_ttl_comes_back_as_a_float(value: float, expected: float) -> None:
    got = check_ttl("ttl", value)
    assert got == expected and type(got) is float


@pytest.mark.clauses("B1", "M1")
@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("5", TypeError, "ttl must be a real number (int, float, Fraction or Decimal), got str '5'"),
        (False, TypeError, "ttl must be a real number (int, float, Fraction or Decimal), got bool False"),
        (1j, TypeError, "ttl must be a real number (int, float, Fraction or Decimal), got complex 1j"),
        (-2, ValueError, "ttl must be -1 (never expires) or a finite number >= 0, got -2"),
        (math.inf, ValueError, "ttl must be -1 (never expires) or a finite number >= 0, got inf"),
        (math.nan, ValueError, "ttl must be -1 (never expires) or a finite number >= 0, got nan"),
        (-0.5, ValueError, "ttl must be -1 (never expires) or a finite number >= 0, got -0.5"),
    ],
)
def test_a_bad_ttl_is_rejected_with_an_exact_message(
    value: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        check_ttl("ttl", value)


BIG = 10**400  # finite, but beyond the largest float: float(BIG) raises OverflowError
BIG_SHOWN = "10000000000000000000...0000000000 (401 digits)"
HUGE = 10**5000  # beyond the int-to-text limit (4300 digits): repr(HUGE) raises ValueError
NOT_A_TTL = "ttl must be -1 (never expires) or a finite number >= 0, got "
TOO_LARGE = f"ttl must fit in a float (at most {sys.float_info.max:g}), got "


@pytest.mark.clauses("B1", "M1")
@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(BIG, TOO_LARGE + BIG_SHOWN, id="10**400"),
        pytest.param(-BIG, NOT_A_TTL + "-" + BIG_SHOWN[:19] + BIG_SHOWN[20:], id="-10**400"),
        pytest.param(HUGE, TOO_LARGE + "<an int of 16610 bits>", id="10**5000"),
        pytest.param(-HUGE, NOT_A_TTL + "-<an int of 16610 bits>", id="-10**5000"),
        (Fraction(BIG), TOO_LARGE + "Fraction(10000000000...000000, 1) (414 characters)"),
        (Decimal("1e400"), TOO_LARGE + "Decimal('1E+400')"),
        (Decimal("NaN"), NOT_A_TTL + "Decimal('NaN')"),
        (Decimal("sNaN"), NOT_A_TTL + "Decimal('sNaN')"),
        (Decimal("-Infinity"), NOT_A_TTL + "Decimal('-Infinity')"),
        (Fraction(-1, 3), NOT_A_TTL + "Fraction(-1, 3)"),
        (Fraction(-1) + Fraction(1, 10**30), NOT_A_TTL + "Fraction(-9999999999...000000000) (74 characters)"),
        (-math.inf, NOT_A_TTL + "-inf"),
    ],
)
def test_a_number_out_of_range_of_any_size_or_kind_is_a_value_error_naming_the_parameter(
    value: Any, message: str
) -> None:
    """Regression: MetadataCache(10**400) and (-10**400) raised OverflowError from math.isfinite, naming
    nothing; a Decimal NaN raised decimal.InvalidOperation."""
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check_ttl("ttl", value)


@pytest.mark.clauses("B1", "M1")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Fraction(1, 2), 0.5),
        (Fraction(1, 3), 1 / 3),
        (Fraction(-1), -1.0),
        (Decimal("0.25"), 0.25),
        (Decimal("-1"), -1.0),
        (Decimal("-0"), 0.0),
        (2**1000, 2.0**1000),
        (sys.float_info.max, sys.float_info.max),
        (Fraction(1, 10**400), 0.0),
    ],
)
def test_any_finite_real_number_is_a_ttl_converted_to_float(value: Any, expected: float) -> None:
    got = check_ttl("ttl", value)
    assert got == expected and type(got) is float


# Every kind of real number check_ttl accepts, with the edges its contracts turn on: -1 of each kind, values
# past the largest float, and Decimal's NaN, sNaN and infinities.
REAL_NUMBERS = st.one_of(
    st.fractions(),
    st.integers(min_value=2**1020, max_value=2**1030).map(Fraction),
    st.decimals(),
    st.decimals(allow_nan=False).map(lambda d: d.scaleb(400)),
    st.integers(),
    st.floats(),
    st.sampled_from([Fraction(-1), Decimal(-1), Decimal("-1.000"), Decimal("sNaN"), Decimal("-Infinity")]),
)


@pytest.mark.clauses("B1", "M1")
@given(REAL_NUMBERS)
def test_the_ttl_contracts_hold_for_every_kind_of_real_number(value: Any) -> None:
    """check_ttl's PEP 316 contracts (on ``_check_ttl_contracts``), here for Fractions and Decimals too:
    CrossHair (make verify) checks them on int, float and Decimal only, because crosshair-tool 0.0.113
    crashes generating a symbolic Fraction."""
    try:
        got = check_ttl("ttl", value)
    except (TypeError, ValueError) as error:  # raises: TypeError, ValueError (and nothing else)
        assert str(error).startswith("ttl must ")
        return
    assert type(got) is float
    assert (got == -1.0) == (value == -1)
    assert got == -1.0 or (math.isfinite(got) and got >= 0)
    assert got == float(value)


@pytest.mark.clauses("B1", "M1")
@pytest.mark.parametrize(
    "value", [-1, 0, 2, 0.5, -0.5, math.nan, Decimal("2.5"), Decimal("NaN"), 10**400, "x"]
)
def test_the_function_crosshair_checks_is_check_ttl(value: Any) -> None:
    """``_check_ttl_contracts`` carries check_ttl's contracts for CrossHair: it answers as check_ttl does."""
    try:
        expected: object = check_ttl("ttl", value)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error), match=f"^{re.escape(str(error))}$"):
            _check_ttl_contracts("ttl", value)
    else:
        assert _check_ttl_contracts("ttl", value) == expected


@pytest.mark.clauses("B1")
@pytest.mark.parametrize(
    ("value", "allow_none", "error", "message"),
    [
        pytest.param(
            -BIG, False, ValueError, "n must be >= 0, got -" + BIG_SHOWN[:19] + BIG_SHOWN[20:], id="-10**400"
        ),
        pytest.param(-HUGE, True, ValueError, "n must be >= 0, got -<an int of 16610 bits>", id="-10**5000"),
        (math.inf, False, TypeError, "n must be an int, got float inf"),
        pytest.param(
            "x" * 100,
            True,
            TypeError,
            "n must be an int or None, got str 'xxxxxxxxxxxxxxxxxxx...xxxxxxxxx' (102 characters)",
            id="x*100",
        ),
    ],
)
def test_a_huge_or_long_bad_value_is_rejected_with_its_text_shortened(
    value: Any, allow_none: bool, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        check_int("n", value, minimum=0, allow_none=allow_none)


@pytest.mark.clauses("B1")
def test_an_int_of_any_size_at_or_above_the_minimum_is_accepted_as_itself() -> None:
    assert check_int("n", HUGE, minimum=1) is HUGE
    assert check_int("n", -BIG, minimum=-BIG) == -BIG


@pytest.mark.clauses("B1")
def test_a_value_is_shown_whole_up_to_the_limit_and_shortened_beyond_it() -> None:
    assert SHOWN_MAX == 40
    assert shown("a" * 38) == repr("a" * 38)  # exactly 40 characters with the quotes
    assert shown("a" * 39) == "'aaaaaaaaaaaaaaaaaaa...aaaaaaaaa' (41 characters)"
    assert shown(10**39) == "1" + "0" * 39  # 40 digits
    assert shown(-(10**39)) == "-1000000000000000000...0000000000 (40 digits)"
    assert shown(HUGE) == "<an int of 16610 bits>"


class _Unprintable:
    def __repr__(self) -> str:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")


class _UnprintableInt(int):
    def __repr__(self) -> str:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")


@pytest.mark.clauses("B1")
def test_a_value_python_refuses_to_print_is_described_by_its_type() -> None:
    assert shown(_Unprintable()) == "<a _Unprintable too large to show>"
    assert shown(Fraction(HUGE)) == "<a Fraction too large to show>"
    long_name = type("N" * 100, (_Unprintable,), {})()
    assert shown(long_name) == ("<a " + "N" * 100)[:80]  # never longer than twice SHOWN_MAX


@pytest.mark.clauses("B1")
def test_an_unprintable_int_is_described_by_its_sign_and_size_in_bits() -> None:
    assert shown(_UnprintableInt(0)) == "<an int of 0 bits>"
    assert shown(_UnprintableInt(-1)) == "-<an int of 1 bits>"
    assert shown(_UnprintableInt(5)) == "<an int of 3 bits>"
