"""A MetadataCache batch is one atomic call under threads (M9, M7), shown by construction.

Thread A runs a batch over an iterator of keys.  Between two of its keys the iterator meets a
rendezvous: it lets thread B start one operation and waits until B has attempted it, that is until B
has finished it, or the cache's lock is held (by A, whose batch is still under way, so B is or will
be waiting for it; an implementation that takes the lock per key does not hold it between keys).
No sleep and no timing: the interleaving is forced, and only a batch atomic under the lock gives
an answer some sequential order allows.  The deliberately wrong batch (the single operations one
after another, each taking the lock) is caught the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

import pytest

from hicache import MetadataCache

pytestmark = pytest.mark.threads

WATCHDOG = 60.0  # seconds; only ever reached if a thread died (never a timing assumption)


class LockPerKey(MetadataCache):
    """Wrong: each key a single call, taking the lock for it alone."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        return [self.contains(key) for key in keys]

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        count = 0
        for key in keys:
            if not self.contains(key):
                break
            count += 1
        return count

    def add_many(self, keys: Iterable[Hashable]) -> None:
        for key in keys:
            self.add(key)

    def remove_many(self, keys: Iterable[Hashable]) -> None:
        for key in keys:
            self.remove(key)


def interleaved(
    cache: MetadataCache, batch: Callable[[Iterator[str]], Any], keys: list[str], other: Callable[[], Any]
) -> tuple[Any, Any]:
    """Run ``batch`` over ``keys`` in this thread; before its last key, thread B runs ``other()``.

    Returns (the batch's answer, B's answer).  B's operation has been attempted before the batch asks
    for its last key: it has finished, or it is held off by the lock the batch holds.
    """
    go, attempting, done = threading.Event(), threading.Event(), threading.Event()
    answers: dict[str, Any] = {}
    failures: list[BaseException] = []

    def thread_b() -> None:
        try:
            assert go.wait(WATCHDOG), "the batch never reached its rendezvous"
            attempting.set()
            answers["other"] = other()
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
        finally:
            attempting.set()
            done.set()

    def gated() -> Iterator[str]:
        yield from keys[:-1]
        go.set()
        assert attempting.wait(WATCHDOG), "thread B never started"
        if not cache._lock.locked():  # not held between keys: B can run, and must have run
            assert done.wait(WATCHDOG), "thread B never finished"
        yield keys[-1]

    b = threading.Thread(target=thread_b)
    b.start()
    try:
        answers["batch"] = batch(gated())
    finally:
        go.set()
        b.join(WATCHDOG)
    assert not b.is_alive() and not failures, failures
    return answers["batch"], answers["other"]


def contains_many_against_clear(cls: type[MetadataCache]) -> list[bool]:
    cache = cls(-1)
    cache.add_many(["x", "y"])
    found, _ = interleaved(cache, cache.contains_many, ["x", "y"], cache.clear)
    return list(found)


def prefix_against_clear(cls: type[MetadataCache]) -> int:
    cache = cls(-1, eviction="lru")
    cache.add_many(["x", "y", "z"])
    count, _ = interleaved(cache, cache.contains_prefix, ["x", "y", "z"], cache.clear)
    return int(count)


def add_many_against_contains_many(cls: type[MetadataCache]) -> list[bool]:
    cache = cls(-1)
    _, seen = interleaved(cache, cache.add_many, ["x", "y"], lambda: cache.contains_many(["x", "y"]))
    return list(seen)


def remove_many_against_contains_many(cls: type[MetadataCache]) -> list[bool]:
    cache = cls(-1)
    cache.add_many(["x", "y"])
    _, seen = interleaved(cache, cache.remove_many, ["x", "y"], lambda: cache.contains_many(["x", "y"]))
    return list(seen)


CASES: dict[str, tuple[Callable[[type[MetadataCache]], Any], list[Any], Any]] = {
    # name: (the scenario, the answers some sequential order allows, the torn answer of a per-key batch)
    "contains_many vs clear": (contains_many_against_clear, [[True, True], [False, False]], [True, False]),
    "contains_prefix vs clear": (prefix_against_clear, [3, 0], 2),
    "add_many vs contains_many": (
        add_many_against_contains_many,
        [[False, False], [True, True]],
        [True, False],
    ),
    "remove_many vs contains_many": (
        remove_many_against_contains_many,
        [[True, True], [False, False]],
        [False, True],
    ),
}


@pytest.mark.clauses("M9", "M7")
@pytest.mark.parametrize("case", CASES)
def test_a_batch_is_atomic_against_a_call_forced_between_its_keys(case: str) -> None:
    scenario, allowed, _ = CASES[case]
    assert scenario(MetadataCache) in allowed


@pytest.mark.clauses("M9", "M7")
@pytest.mark.parametrize("case", CASES)
def test_a_batch_that_takes_the_lock_per_key_is_torn_by_the_call_forced_between_its_keys(case: str) -> None:
    scenario, allowed, torn = CASES[case]
    answer = scenario(LockPerKey)
    assert answer == torn and answer not in allowed
