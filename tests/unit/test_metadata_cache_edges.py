"""MetadataCache edges pinned for mutation testing (docs/MUTATION.md): exact messages, counters that
accumulate, and invariant checks that do fire on a corrupted structure."""

from __future__ import annotations

import re
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from hicache import MetadataCache
from spec.world.clock import FakeClock


@pytest.mark.clauses("B1", "M1")
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"ttl_seconds": "5"},
            TypeError,
            "ttl_seconds must be a real number (int, float, Fraction or Decimal), got str '5'",
        ),
        (
            {"ttl_seconds": 10**400},
            ValueError,
            f"ttl_seconds must fit in a float (at most {sys.float_info.max:g}),"
            " got 10000000000000000000...0000000000 (401 digits)",
        ),
        (
            {"ttl_seconds": -(10**400)},
            ValueError,
            "ttl_seconds must be -1 (never expires) or a finite number >= 0,"
            " got -1000000000000000000...0000000000 (401 digits)",
        ),
        (
            {"ttl_seconds": 1, "max_entries": -(10**400)},
            ValueError,
            "max_entries must be >= 1, got -1000000000000000000...0000000000 (401 digits)",
        ),
        ({"ttl_seconds": 1, "max_entries": 0}, ValueError, "max_entries must be >= 1, got 0"),
        ({"ttl_seconds": 1, "clock": 3}, TypeError, "clock must be callable, got int 3"),
        ({"ttl_seconds": 1, "stats": 1}, TypeError, "stats must be a bool, got int 1"),
    ],
)
def test_bad_constructor_arguments_are_rejected_with_exact_messages(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        MetadataCache(**kwargs)


@pytest.mark.clauses("M1", "M2")
def test_a_fraction_or_decimal_ttl_is_accepted_as_the_nearest_float(clock: FakeClock) -> None:
    assert MetadataCache(Fraction(1, 2)).ttl_seconds == 0.5
    assert MetadataCache(Decimal(-1)).ttl_seconds == -1.0
    cache = MetadataCache(Decimal("2.5"), clock=clock)
    cache.add("k")
    clock.advance(2.5)
    assert cache.contains("k")


@pytest.mark.clauses("M6", "M8")
def test_evictions_accumulate_one_per_live_entry_dropped_by_the_bound(clock: FakeClock) -> None:
    cache = MetadataCache(-1, max_entries=1, clock=clock, stats=True)
    for key in "abcd":
        cache.add(key)
    assert cache.stats().evictions == 3
    assert cache.snapshot() == (("d", 100.0),)


@pytest.mark.clauses("M6")
def test_check_invariants_reports_births_out_of_order(clock: FakeClock) -> None:
    cache = MetadataCache(10, clock=clock)
    cache.add("a")
    cache._births["early"] = 50.0  # corrupt: born before the entry ahead of it
    with pytest.raises(AssertionError, match=r"^births out of order$"):
        cache.check_invariants()


@pytest.mark.clauses("M6")
def test_check_invariants_reports_an_exceeded_bound(clock: FakeClock) -> None:
    cache = MetadataCache(10, max_entries=1, clock=clock)
    cache.add("a")
    cache._births["b"] = 100.0  # corrupt: a second entry behind the bound's back
    with pytest.raises(AssertionError, match=r"^bound exceeded$"):
        cache.check_invariants()
