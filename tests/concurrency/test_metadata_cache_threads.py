"""Real threads hammer one MetadataCache (M7); selected with ``-m threads``.

These tests check that concurrent use never corrupts the structure and that
answers stay within what some sequential order allows; they never sleep.
"""

from __future__ import annotations

import sys
import threading

import pytest

from hicache import MetadataCache
from spec.world.clock import FakeClock

pytestmark = pytest.mark.threads

THREADS = 8
ROUNDS = 3000


@pytest.fixture(autouse=True)
def _switch_threads_often() -> object:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # many more interleavings per run
    yield
    sys.setswitchinterval(old)


def _hammer(cache: MetadataCache, seed: int, clock: FakeClock | None, errors: list[str]) -> None:
    keys = [f"k{(seed * 7 + i) % 16}" for i in range(64)]
    for i in range(ROUNDS):
        key = keys[i % len(keys)]
        op = (i * 31 + seed) % 5
        if op == 0:
            cache.add(key)
        elif op == 1:
            cache.contains(key)
        elif op == 2:
            cache.remove(key)
        elif op == 3:
            size = len(cache)
            if cache.max_entries is not None and size > cache.max_entries:
                errors.append(f"len {size} exceeds the bound")
        elif clock is not None:
            clock.advance(0.125)


@pytest.mark.clauses("M7", "M6")
@pytest.mark.parametrize("ttl", [-1, 0.5, 30])
@pytest.mark.parametrize("bound", [None, 5])
def test_threads_hammering_add_contains_remove_keep_the_invariants(ttl: float, bound: int | None) -> None:
    clock = FakeClock()
    cache = MetadataCache(ttl, max_entries=bound, clock=clock, stats=True)
    errors: list[str] = []
    threads = [threading.Thread(target=_hammer, args=(cache, seed, clock, errors)) for seed in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    cache.check_invariants()
    stats = cache.stats()
    # Every contains() was counted exactly once: no lost counter updates under the lock.
    expected_contains = sum(1 for seed in range(THREADS) for i in range(ROUNDS) if (i * 31 + seed) % 5 == 1)
    assert stats.hits + stats.misses == expected_contains


@pytest.mark.clauses("M7", "M3")
def test_concurrent_adds_of_one_key_create_exactly_one_lifetime() -> None:
    clock = FakeClock()
    cache = MetadataCache(10, max_entries=1, clock=clock, stats=True)
    barrier = threading.Barrier(THREADS, timeout=120.0)  # only ever reached if a thread died

    def add_many() -> None:
        barrier.wait()
        for _ in range(ROUNDS):
            cache.add("same")

    threads = [threading.Thread(target=add_many) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # A second lifetime would have evicted the first (bound 1): exactly zero evictions.
    assert cache.stats().evictions == 0
    assert len(cache) == 1
