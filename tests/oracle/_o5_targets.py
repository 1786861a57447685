"""Fixture targets for O4 and O5: a constructor that refuses a capacity, a method with another
signature, clocks bound at import or kept where patching cannot reach, and one imported by name."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from time import monotonic

from spec.models.existence_cache import refuse_bad_capacity
from spec.models.metadata_cache import refuse_bad_key, refuse_bad_settings
from spec.variants.existence_cache import TextbookExistenceLRU
from spec.variants.metadata_cache import TextbookHardTTL

__all__ = [
    "ClockInAClassAttribute",
    "ContainsTakesTwo",
    "NamedMonotonic",
    "NowBoundAtImport",
    "RefusesZero",
    "TimerBoundAtImport",
]


class RefusesZero(TextbookExistenceLRU):
    """Like a C LRU library's ``LRU(0)``: capacity 0 is refused (E1 allows it: it remembers nothing)."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        refuse_bad_capacity(max_entries)  # B1 as E1 says (its one mistake is refusing 0)
        if max_entries < 1:
            raise ValueError(f"capacity must be >= 1, got {max_entries}")
        super().__init__(max_entries)


class ContainsTakesTwo(TextbookHardTTL):
    """``contains(key, default)``: not the component's ``contains(key)``."""

    def contains(self, key: Hashable, default: bool) -> bool:  # type: ignore[override]
        return super().contains(key) or default


class _TTLSet:
    """A correct hard-TTL set (add and contains), refusing bad input as M says (B1)."""

    def __init__(self, ttl_seconds: float, read: Callable[[], float]) -> None:
        refuse_bad_settings(ttl_seconds, clock=read)
        self.ttl = ttl_seconds
        self.read = read
        self.births: dict[Hashable, float] = {}

    def live(self, key: Hashable, now: float) -> bool:
        birth = self.births.get(key)
        return birth is not None and (self.ttl == -1 or now - birth <= self.ttl)

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)
        now = self.read()
        if not self.live(key, now):
            self.births[key] = now

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)
        return self.live(key, self.read())


class TimerBoundAtImport(_TTLSet):
    """Reads ``timer``, whose default ``time.monotonic`` was bound when this module was imported."""

    def __init__(self, ttl_seconds: float, timer: Callable[[], float] = time.monotonic) -> None:
        super().__init__(ttl_seconds, timer)


class ClockInAClassAttribute(_TTLSet):
    """Keeps the real clock in a class attribute: nothing the oracle patches reaches it."""

    now = staticmethod(time.monotonic)

    def __init__(self, ttl_seconds: float) -> None:
        super().__init__(ttl_seconds, lambda: type(self).now())


class NamedMonotonic(_TTLSet):
    """Reads ``monotonic`` imported by name (``from time import monotonic``): the oracle patches it."""

    def __init__(self, ttl_seconds: float) -> None:
        super().__init__(ttl_seconds, lambda: monotonic())


class KeepPagesUnchecked(TextbookExistenceLRU):
    """Does not validate ``keep_pages`` (as the engine's caches): a negative one slices from the end."""

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        for h in hashes[keep_pages:]:
            self.beliefs.pop((pool, h), None)


class ExclusiveAndLenCountsExpired(TextbookHardTTL):
    """Two mistakes: ``<`` for ``<=`` (M2), and ``len`` counting expired entries (M5)."""

    def live(self, birth: float, now: float) -> bool:
        return self.ttl == -1 or now - birth < self.ttl

    def __len__(self) -> int:
        return len(self.births)


class NowBoundAtImport(_TTLSet):
    """Reads ``now``, whose default ``time.monotonic`` was bound when this module was imported."""

    def __init__(self, ttl_seconds: float, now: Callable[[], float] = time.monotonic) -> None:
        super().__init__(ttl_seconds, now)
