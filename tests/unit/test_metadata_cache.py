"""Deterministic unit tests of MetadataCache on the fake clock (M1-M6, M8, B1)."""

from __future__ import annotations

import math
import time
from collections.abc import Hashable
from typing import Any

import pytest

from hicache import MetadataCache
from spec.world.clock import FakeClock


@pytest.mark.clauses("M4", "M5")
def test_added_key_is_contained_and_removed_key_is_not(clock: FakeClock) -> None:
    cache = MetadataCache(10, clock=clock)
    assert not cache.contains("k")
    cache.add("k")
    assert cache.contains("k")
    assert "k" in cache
    assert len(cache) == 1
    cache.remove("k")
    assert not cache.contains("k")
    assert len(cache) == 0
    cache.remove("k")  # removing an absent key is not an error


@pytest.mark.clauses("M2")
def test_key_is_alive_at_exactly_birth_plus_ttl_and_dead_one_tick_later(clock: FakeClock) -> None:
    cache = MetadataCache(5, clock=clock)
    cache.add("k")
    clock.advance(5)
    assert cache.contains("k"), "the boundary is inclusive"
    clock.advance(0.125)
    assert not cache.contains("k")
    assert len(cache) == 0


@pytest.mark.clauses("M2")
def test_zero_ttl_key_lives_only_at_its_birth_instant(clock: FakeClock) -> None:
    cache = MetadataCache(0, clock=clock)
    cache.add("k")
    assert cache.contains("k")
    clock.advance(0.125)
    assert not cache.contains("k")


@pytest.mark.clauses("M3")
def test_readding_a_live_key_does_not_extend_its_life(clock: FakeClock) -> None:
    cache = MetadataCache(5, clock=clock)
    cache.add("k")
    clock.advance(4)
    cache.add("k")
    clock.advance(1.5)  # 5.5 s after the first add, 1.5 s after the re-add
    assert not cache.contains("k")


@pytest.mark.clauses("M3")
def test_readding_an_expired_key_starts_a_new_lifetime_born_now(clock: FakeClock) -> None:
    cache = MetadataCache(5, clock=clock)
    cache.add("k")
    clock.advance(6)
    assert not cache.contains("k")  # expired but perhaps not yet purged
    cache.add("k")
    clock.advance(5)
    assert cache.contains("k"), "a stale birth was kept on re-add"


@pytest.mark.clauses("M2", "M3")
def test_readding_an_expired_key_that_was_never_purged_starts_a_new_lifetime(
    clock: FakeClock,
) -> None:
    cache = MetadataCache(5, clock=clock)
    cache.add("k")
    clock.advance(6)
    cache.add("k")  # no contains() in between: nothing had a chance to purge lazily
    clock.advance(5)
    assert cache.contains("k")


@pytest.mark.clauses("M2")
def test_ttl_minus_one_never_expires(clock: FakeClock) -> None:
    cache = MetadataCache(-1, clock=clock)
    cache.add("k")
    clock.advance(1e12)
    assert cache.contains("k")
    assert len(cache) == 1


@pytest.mark.clauses("M5")
def test_clear_forgets_everything(clock: FakeClock) -> None:
    cache = MetadataCache(5, clock=clock)
    for key in "abc":
        cache.add(key)
    cache.clear()
    assert len(cache) == 0
    assert not any(cache.contains(key) for key in "abc")


@pytest.mark.clauses("M6")
def test_full_cache_evicts_the_oldest_birth(clock: FakeClock) -> None:
    cache = MetadataCache(100, max_entries=2, clock=clock)
    cache.add("a")
    clock.advance(1)
    cache.add("b")
    clock.advance(1)
    cache.add("a")  # live: no new lifetime, so "a" stays the oldest
    cache.add("c")
    assert not cache.contains("a")
    assert cache.contains("b") and cache.contains("c")


@pytest.mark.clauses("M6")
def test_full_cache_drops_expired_entries_before_evicting_a_live_one(clock: FakeClock) -> None:
    cache = MetadataCache(5, max_entries=2, clock=clock)
    cache.add("old")
    clock.advance(3)
    cache.add("young")
    clock.advance(3)  # "old" expired, "young" alive
    cache.add("new")
    assert cache.contains("young") and cache.contains("new")
    assert cache.stats().evictions == 0


@pytest.mark.clauses("M6")
def test_expired_keys_are_reclaimed_without_being_asked_about(clock: FakeClock) -> None:
    cache = MetadataCache(1, clock=clock)
    for round_ in range(100):
        for i in range(100):
            cache.add((round_, i))
        clock.advance(2)
    cache.add("last")
    # Each round's keys expired before the next round's adds: only the last key is stored.
    cache.check_invariants()
    assert len(cache) == 1
    assert cache._births.keys() == {"last"}  # memory, not just the answer


@pytest.mark.clauses("M6")
def test_bound_is_never_exceeded_with_ttl_minus_one(clock: FakeClock) -> None:
    cache = MetadataCache(-1, max_entries=3, clock=clock)
    for i in range(50):
        cache.add(i)
        assert len(cache) <= 3
    assert [i for i in range(50) if cache.contains(i)] == [47, 48, 49]


@pytest.mark.clauses("M1")
def test_clock_is_read_at_most_once_per_operation() -> None:
    reads = []

    def counting_clock() -> float:
        reads.append(1)
        return 0.0

    cache = MetadataCache(5, clock=counting_clock)
    for operation in (
        lambda: cache.add("k"),
        lambda: cache.contains("k"),
        lambda: len(cache),
        lambda: cache.remove("k"),
        lambda: cache.contains("k"),
    ):
        reads.clear()
        operation()
        assert len(reads) <= 1


@pytest.mark.clauses("M8")
def test_counters_count_hits_misses_expirations_and_evictions(clock: FakeClock) -> None:
    cache = MetadataCache(5, max_entries=2, clock=clock, stats=True)
    cache.add("a")
    cache.add("b")
    cache.add("c")  # evicts "a"
    assert cache.contains("b")
    assert not cache.contains("a")
    clock.advance(10)
    assert not cache.contains("b")
    cache.add("d")  # reclaims the expired "b" and "c"
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.expirations, stats.evictions) == (1, 2, 2, 1)


@pytest.mark.clauses("M8")
def test_counters_are_off_unless_asked_for(clock: FakeClock) -> None:
    """Regression: with stats=False an eviction and an expiry were still counted (1 and 1)."""
    cache = MetadataCache(5, max_entries=1, clock=clock)
    cache.add("a")
    cache.contains("a")
    cache.contains("b")
    cache.add("b")  # evicts the live "a"
    clock.advance(10)
    cache.add("c")  # reclaims the expired "b"
    assert cache.snapshot() == (("c", clock()),)
    assert cache.stats() == (0, 0, 0, 0)


@pytest.mark.clauses("M2", "M4")
def test_smoke_on_the_real_monotonic_clock() -> None:
    cache = MetadataCache(3600)
    start = time.monotonic()
    cache.add("k")
    assert cache.contains("k")
    assert time.monotonic() - start < 3600  # the assertion above was inside the lifetime
    cache.remove("k")
    assert not cache.contains("k")


@pytest.mark.clauses("M1")
@pytest.mark.parametrize("ttl", [-1, -1.0, 0, 0.0, 0.5, 5, 1e9])
def test_valid_ttls_are_accepted(ttl: float) -> None:
    assert MetadataCache(ttl).ttl_seconds == float(ttl)


@pytest.mark.clauses("M1", "B1")
@pytest.mark.parametrize(
    ("ttl", "error"),
    [
        (math.nan, ValueError),
        (math.inf, ValueError),
        (-math.inf, ValueError),
        (-0.5, ValueError),
        (-2, ValueError),
        (True, TypeError),
        (False, TypeError),
        ("5", TypeError),
        (None, TypeError),
    ],
)
def test_invalid_ttl_is_rejected_naming_the_parameter(ttl: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="ttl_seconds") as info:
        MetadataCache(ttl)
    assert repr(ttl) in str(info.value)


@pytest.mark.clauses("M1", "B1")
@pytest.mark.parametrize(
    ("bound", "error"),
    [(0, ValueError), (-1, ValueError), (1.5, TypeError), ("3", TypeError), (True, TypeError)],
)
def test_invalid_max_entries_is_rejected_naming_the_parameter(bound: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_entries") as info:
        MetadataCache(5, max_entries=bound)
    assert repr(bound) in str(info.value)


@pytest.mark.clauses("M1", "B1")
@pytest.mark.parametrize(("name", "value"), [("clock", 3.0), ("stats", 1)])
def test_invalid_keyword_arguments_are_type_errors_naming_the_parameter(name: str, value: Any) -> None:
    with pytest.raises(TypeError, match=name):
        MetadataCache(5, **{name: value})


@pytest.mark.clauses("M1")
def test_valid_max_entries_are_accepted() -> None:
    assert MetadataCache(5, max_entries=1).max_entries == 1
    assert MetadataCache(5).max_entries is None


@pytest.mark.clauses("M4")
def test_a_subclass_that_overrides_contains_is_answered_by_its_override(clock: FakeClock) -> None:
    """Regression: __init__ put the specialized closure on the instance, hiding the subclass's method."""

    class AlwaysBelieved(MetadataCache):
        def contains(self, key: Hashable) -> bool:
            return key == "x" or super().contains(key)

    cache = AlwaysBelieved(5, clock=clock)
    assert cache.contains("x") and "x" in cache
    assert not cache.contains("y")
    cache.add("y")
    assert cache.contains("y")


@pytest.mark.clauses("M4")
def test_a_subclass_that_keeps_contains_still_gets_the_fast_path(clock: FakeClock) -> None:
    class Plain(MetadataCache):
        pass

    cache = Plain(5, clock=clock)
    assert "contains" in vars(cache)  # the specialized closure
    cache.add("k")
    assert cache.contains("k")
    clock.advance(5.5)
    assert not cache.contains("k")
