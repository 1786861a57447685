"""Caches built on ``cachetools`` (a library no one here wrote) the way a user would wrap it for the oracle.

``cachetools`` is imported when a cache is built, from the wheel ``tests/oracle/test_cachetools.py`` puts on
``sys.path`` (downloaded once from the package registry and cached, never installed or copied here).
None validates its input, so the tests leave B1 out (O3).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any


class TTLSet:
    """A metadata cache over ``cachetools.TTLCache``: ``-1`` (never expires) is an infinite TTL, no
    ``max_entries`` an infinite ``maxsize``; ``add`` stores the key, ``contains`` is ``in``."""

    def __init__(
        self, ttl_seconds: float, max_entries: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        import cachetools

        ttl = math.inf if ttl_seconds == -1 else ttl_seconds
        maxsize = math.inf if max_entries is None else max_entries
        self.cache: Any = cachetools.TTLCache(maxsize=maxsize, ttl=ttl, timer=clock)

    def add(self, key: Hashable) -> None:
        self.cache[key] = True

    def contains(self, key: Hashable) -> bool:
        return key in self.cache

    def remove(self, key: Hashable) -> None:
        self.cache.pop(key, None)

    def clear(self) -> None:
        self.cache.clear()

    def __len__(self) -> int:
        return len(self.cache)


class LRUBeliefs:
    """An existence cache over ``cachetools.LRUCache`` keyed by ``(pool, hash)``; ``contains`` asks ``in``,
    which ``cachetools`` answers without touching the recency (only a read of the value does)."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        import cachetools

        self.cache: Any = cachetools.LRUCache(maxsize=max_entries)

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            if self.cache.maxsize:  # an LRUCache of size 0 refuses every item ("value too large")
                self.cache[(pool, h)] = True

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        return (pool, page_hash) in self.cache

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        return all(self.cache.get((pool, h)) is not None for h in hashes)

    def clear(self) -> None:
        self.cache.clear()

    def __len__(self) -> int:
        return len(self.cache)


class LRUBeliefsRead(LRUBeliefs):
    """The same, with ``contains`` reading the value (``get``), which moves the belief to most recent."""

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        return self.cache.get((pool, page_hash)) is not None
