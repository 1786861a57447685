"""The refinement mapping's input: ``MetadataCache.snapshot`` lists live entries in eviction order."""

from __future__ import annotations

import pytest

from hicache import MetadataCache
from spec.world.clock import FakeClock


@pytest.mark.clauses("M2", "M4")
def test_snapshot_lists_live_keys_oldest_first_and_leaves_expired_ones_out(clock: FakeClock) -> None:
    cache = MetadataCache(1, clock=clock)
    cache.add("old")
    clock.advance(0.5)
    cache.add("new")
    assert cache.snapshot() == (("old", 100.0), ("new", 100.5))
    clock.advance(0.5)  # "old" is exactly at its boundary: still live
    assert cache.snapshot() == (("old", 100.0), ("new", 100.5))
    clock.advance(0.25)
    assert cache.snapshot() == (("new", 100.5),)


@pytest.mark.clauses("M2")
def test_snapshot_of_a_never_expiring_cache_lists_every_key(clock: FakeClock) -> None:
    cache = MetadataCache(-1, clock=clock)
    cache.add("k")
    clock.advance(1e9)
    assert cache.snapshot() == (("k", 100.0),)
