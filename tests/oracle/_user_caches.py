"""Metadata caches written the way people write them, not taken from the catalogue (O10, O11).

Each has only the seed's four methods (``add``, ``contains``, ``remove``, ``clear``), some ``__len__``;
none takes ``max_entries`` or has batches, counters or a ``snapshot()``; each reads ``time.monotonic``
through its module (the oracle patches that name).  None validates its input, so the tests leave B1
out (O3).
"""

from __future__ import annotations

import threading
import time
from typing import Any


class LockedCache:
    """Right, and every method under one lock; ``__len__`` counts the live keys."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl = ttl_seconds
        self.cache: dict[Any, float] = {}
        self.lock = threading.Lock()

    def _live(self, key: Any, now: float) -> bool:
        birth = self.cache.get(key)
        return birth is not None and (self.ttl == -1 or now - birth <= self.ttl)

    def add(self, key: Any) -> None:
        with self.lock:
            now = time.monotonic()
            if not self._live(key, now):
                self.cache[key] = now

    def remove(self, key: Any) -> None:
        with self.lock:
            self.cache.pop(key, None)

    def contains(self, key: Any) -> bool:
        with self.lock:
            if self._live(key, time.monotonic()):
                return True
            self.cache.pop(key, None)
            return False

    def clear(self) -> None:
        with self.lock:
            self.cache.clear()

    def __len__(self) -> int:
        with self.lock:
            now = time.monotonic()
            return sum(self._live(key, now) for key in list(self.cache))


class SeedShapedCache:
    """As the seed writes it: ``add`` keeps an entry that is there, expired or not (a re-add after expiry
    keeps the stale birth: M3); ``contains`` purges an expired entry when asked; one lock."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl_seconds = ttl_seconds
        self.cache: dict[Any, float] = {}
        self.lock = threading.Lock()

    def add(self, key: Any) -> None:
        with self.lock:
            if key not in self.cache:
                self.cache[key] = time.monotonic()

    def remove(self, key: Any) -> None:
        with self.lock:
            self.cache.pop(key, None)

    def contains(self, key: Any) -> bool:
        with self.lock:
            if key not in self.cache:
                return False
            if self.ttl_seconds == -1.0:
                return True
            if time.monotonic() - self.cache[key] > self.ttl_seconds:
                del self.cache[key]
                return False
            return True

    def clear(self) -> None:
        with self.lock:
            self.cache.clear()


class LockFreeCache:
    """Right one call at a time, and no lock: ``contains`` reads the birth, then the clock, and purges the
    key it read as expired, which may be a life another thread's ``add`` has just begun (M7)."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl = ttl_seconds
        self.cache: dict[Any, float] = {}

    def add(self, key: Any) -> None:
        birth = self.cache.get(key)
        now = time.monotonic()
        if birth is None or (self.ttl != -1 and now - birth > self.ttl):
            self.cache[key] = now

    def remove(self, key: Any) -> None:
        self.cache.pop(key, None)

    def contains(self, key: Any) -> bool:
        birth = self.cache.get(key)
        if birth is None:
            return False
        if self.ttl != -1 and time.monotonic() - birth > self.ttl:
            self.cache.pop(key, None)
            return False
        return True

    def clear(self) -> None:
        self.cache.clear()
