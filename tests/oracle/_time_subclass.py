"""Fixture: targets that reach the clock-reading classes of ``_time_targets`` from another module.

This module does not import ``time``: patching only the target's own module
leaves the inherited ``time.monotonic()`` calls on the real clock.
"""

from __future__ import annotations

from collections.abc import Hashable

from tests.oracle._time_targets import MonotonicTTLSet, MonotonicTTLSetExclusive

__all__ = [
    "CounterTTLSet",
    "CountingSubclass",
    "CountingSubclassExclusive",
    "make",
    "make_exclusive",
]


class CountingSubclass(MonotonicTTLSet):
    """Correct: a subclass defined here, the clock read by its base in ``_time_targets``."""

    def __init__(self, ttl_seconds: float) -> None:
        super().__init__(ttl_seconds)
        self.adds = 0

    def add(self, key: Hashable) -> None:
        self.adds += 1
        super().add(key)


class CountingSubclassExclusive(MonotonicTTLSetExclusive):
    """M2 (``<`` for ``<=``), reached the same way."""


def make(ttl_seconds: float) -> MonotonicTTLSet:
    """A factory target returning another module's (correct) class."""
    return MonotonicTTLSet(ttl_seconds)


def make_exclusive(ttl_seconds: float) -> MonotonicTTLSet:
    """A factory target returning another module's wrong (M2) class."""
    return MonotonicTTLSetExclusive(ttl_seconds)


class CounterTTLSet:
    """No clock parameter and no reference to the time anywhere (its "time" is a call counter): the
    oracle cannot control its time and must say so instead of running it."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl = ttl_seconds
        self.ticks = 0
        self.births: dict[Hashable, int] = {}

    def add(self, key: Hashable) -> None:
        self.ticks += 1
        self.births.setdefault(key, self.ticks)

    def contains(self, key: Hashable) -> bool:
        self.ticks += 1
        return key in self.births
