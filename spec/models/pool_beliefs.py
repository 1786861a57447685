"""Executable model of the per-pool beliefs and their registry (docs/SEMANTICS.md P1-P5).

A pool is the E model restricted to one pool (P2 says exactly that, so the
model reuses ``spec.models.existence_cache``'s functions) plus ``inflight``: a mapping
from page hash to its positive reference count.  The registry is a mapping
from pool name to pool.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

from . import existence_cache as e
from .refusals import refuse_bad_name

__all__ = [
    "PoolContainsWithoutRefresh",
    "PoolExistenceBeliefsSpec",
    "PooledContainsWithoutRefresh",
    "PooledExistenceCacheSpec",
    "refuse_bad_name",
    "track",
    "untrack",
]

POOL = "pool"  # the one pool of the E model that a P pool is
InFlight = dict[Hashable, int]


def track(inflight: InFlight, hashes: list[Hashable]) -> InFlight:
    """P3: one more reference per occurrence.

    pre: all(n >= 1 for n in inflight.values())
    post: all(n >= 1 for n in __return__.values())
    post: all(h in __return__ for h in hashes)
    post: sum(__return__.values()) == sum(inflight.values()) + len(hashes)
    """
    after = dict(inflight)
    for h in hashes:
        after[h] = after.get(h, 0) + 1
    return after


def untrack(inflight: InFlight, hashes: list[Hashable]) -> InFlight:
    """P3: one reference fewer per occurrence; at zero a hash is no longer in flight.

    pre: all(n >= 1 for n in inflight.values())
    post: all(n >= 1 for n in __return__.values())
    post: all(h in inflight for h in __return__)
    post: sum(__return__.values()) <= sum(inflight.values())
    """
    after = dict(inflight)
    for h in hashes:
        if h in after:
            after[h] -= 1
            if after[h] == 0:
                del after[h]
    return after


class PoolExistenceBeliefsSpec:
    """One pool (P2-P5) behind the production constructor: ``PoolExistenceBeliefsSpec(max_entries)``."""

    def __init__(self, max_entries: int) -> None:
        e.refuse_bad_capacity(max_entries)  # B1 (P1 as E1)
        self.max_entries = max_entries
        self.beliefs: e.Beliefs = []
        self.inflight: InFlight = {}

    def add(self, hashes: Iterable[Hashable]) -> None:
        """P2 as E2."""
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        self.beliefs = e.add(self.beliefs, POOL, list(hashes), self.max_entries)

    def contains(self, page_hash: Hashable) -> bool:
        """P2 as E3."""
        found, self.beliefs = e.contains(self.beliefs, POOL, page_hash)
        return found

    def contains_all(self, hashes: Iterable[Hashable]) -> bool:
        """P2 as E4."""
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        covered, self.beliefs = e.covers_all(self.beliefs, POOL, list(hashes), frozenset())
        return covered

    def covered(self, hashes: Iterable[Hashable]) -> bool:
        """P4: E5 with the hashes in flight as the extra cover."""
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        covered, self.beliefs = e.covers_all(self.beliefs, POOL, list(hashes), self.inflight.keys())
        return covered

    def track_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        self.inflight = track(self.inflight, list(hashes))

    def untrack_inflight(self, hashes: Iterable[Hashable]) -> None:
        e.refuse_bad_input(POOL, hashes=hashes)  # B1 (E8)
        self.inflight = untrack(self.inflight, list(hashes))

    def invalidate_beyond(self, hashes: Sequence[Hashable], keep_pages: int) -> None:
        """P2 as E6."""
        e.refuse_bad_input(POOL, keep_pages, hashes)  # B1 (E6, E8)
        self.beliefs = e.invalidate_beyond(self.beliefs, POOL, list(hashes), keep_pages)

    def clear(self) -> None:
        """P5."""
        self.beliefs, self.inflight = [], {}

    def clear_inflight(self) -> None:
        """P5."""
        self.inflight = {}

    def __len__(self) -> int:
        return len(self.beliefs)

    def snapshot(self) -> tuple[list[Hashable], dict[Hashable, int]]:
        """(beliefs least recently used first, in-flight reference counts)."""
        return [h for _, h in self.beliefs], dict(self.inflight)


class PooledExistenceCacheSpec:
    """The registry (P1): one pool per name, created on first use."""

    pool_class = PoolExistenceBeliefsSpec  # what a pool is (O11's wrong form of P2 has its own)

    def __init__(self, max_entries: int) -> None:
        e.refuse_bad_capacity(max_entries)  # B1 (P1 as E1)
        self.max_entries = max_entries
        self.pools: dict[Hashable, PoolExistenceBeliefsSpec] = {}

    def pool(self, name: Hashable) -> PoolExistenceBeliefsSpec:
        refuse_bad_name(name)
        if name not in self.pools:
            self.pools[name] = self.pool_class(self.max_entries)
        return self.pools[name]

    def clear(self) -> None:
        for pool in self.pools.values():
            pool.clear()

    def clear_inflight(self) -> None:
        for pool in self.pools.values():
            pool.clear_inflight()

    def snapshot(self) -> dict[Hashable, tuple[list[Hashable], dict[Hashable, int]]]:
        return {name: pool.snapshot() for name, pool in self.pools.items()}


class PoolContainsWithoutRefresh(PoolExistenceBeliefsSpec):
    """P2 (as E3) in its known wrong form (O11): a pool's ``contains`` hit answers True and leaves the
    belief where it is in the pool's LRU order."""

    def contains(self, page_hash: Hashable) -> bool:
        return (POOL, page_hash) in self.beliefs


class PooledContainsWithoutRefresh(PooledExistenceCacheSpec):
    """The registry of :class:`PoolContainsWithoutRefresh` pools: P2's wrong form as the oracle replays it."""

    pool_class = PoolContainsWithoutRefresh
