"""The shared argument checks (B1): exact messages naming the parameter, the expected kind and the value."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from hicache._validate import check_int, check_ttl


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
        ("5", TypeError, "ttl must be a number, got str '5'"),
        (False, TypeError, "ttl must be a number, got bool False"),
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
